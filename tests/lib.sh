# Shared helpers of the CLI test scripts (tests/cli*.sh), sourced by each (named so that
# the Makefile's tests/cli*.sh loop does not run it):
#   . "$(dirname "$0")/lib.sh"
# They run $ROTOR (default build/rotor; build/san/rotor under SAN=1), count
# passes and failures, and keep scratch files in $tmpdir (removed on exit).
ROTOR=${ROTOR:-build/rotor}
# no plan cache unless a test names one with --cache (docs/compile.md, "Plan
# cache"): the tests never depend on the cache's state
export ROTOR_NO_CACHE=1
pass=0
fail=0
tmpdir=$(mktemp -d)
out=$tmpdir/out
err=$tmpdir/err
trap 'rm -rf "$tmpdir"' EXIT

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $1" >&2; }

# expect_error NAME STATUS PATTERN -- ARGS...: exits STATUS, prints one stderr
# line matching PATTERN, and nothing on stdout.
expect_error() {
    name=$1 want=$2 pattern=$3
    shift 4
    "$ROTOR" "$@" >"$out" 2>"$err"
    got=$?
    lines=$(wc -l <"$err")
    if [ "$got" -ne "$want" ]; then bad "$name: exit $got, want $want ($(cat "$err"))"; return; fi
    if [ "$lines" -ne 1 ]; then bad "$name: $lines lines on stderr, want 1: $(cat "$err")"; return; fi
    if ! grep -q -- "$pattern" "$err"; then bad "$name: stderr '$(cat "$err")' lacks '$pattern'"; return; fi
    if [ -s "$out" ]; then bad "$name: wrote to stdout"; return; fi
    ok
}

# expect_out NAME PATTERN -- ARGS...: exits 0 and stdout has PATTERN.
expect_out() {
    name=$1 pattern=$2
    shift 3
    "$ROTOR" "$@" >"$out" 2>"$err"
    got=$?
    if [ "$got" -ne 0 ]; then bad "$name: exit $got ($(cat "$err"))"; return; fi
    if ! grep -q -- "$pattern" "$out"; then bad "$name: stdout lacks '$pattern': $(tail -3 "$out")"; return; fi
    ok
}

# run_saved FILE -- ARGS...: runs $ROTOR ARGS once, stdout to FILE, stderr to
# FILE.err, exit status to FILE.rc, for several expect_saved checks of one
# run (a compile takes seconds under the sanitizers: the same one is not
# run again for each pattern).
run_saved() {
    f=$1
    shift 2
    "$ROTOR" "$@" >"$f" 2>"$f.err"
    echo $? >"$f.rc"
}

# expect_saved NAME PATTERN FILE: expect_out's check on a run_saved run: it
# exited 0 and its stdout has PATTERN.
expect_saved() {
    name=$1 pattern=$2 f=$3
    got=$(cat "$f.rc")
    if [ "$got" -ne 0 ]; then bad "$name: exit $got ($(cat "$f.err"))"; return; fi
    if ! grep -q -- "$pattern" "$f"; then bad "$name: stdout lacks '$pattern': $(tail -3 "$f")"; return; fi
    ok
}

# finish SCRIPT: the summary line; the exit status says whether all passed.
finish() {
    echo "$1: $pass passed, $fail failed"
    [ "$fail" -eq 0 ]
}
