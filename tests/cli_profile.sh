#!/bin/sh
# CLI tests of --profile (issue 45; docs/performance.md, "Where a compile's
# time goes"): compile, simulate and schedule print each phase's wall
# seconds on stderr; the phases are parts of the total, and stdout (the
# table or the JSON document) is the same bytes as without --profile.
# Run by `make test` as `ROTOR=build/rotor sh tests/cli_profile.sh`.
. "$(dirname "$0")/lib.sh"

# the phases named, each a number or "-" (not run), and their sum within the total
check_profile() { # name file phases...
    name=$1 file=$2
    shift 2
    if head -n 1 "$file" | grep -q "^rotor [a-z]*: profile (wall seconds)$"; then ok; else bad "$name: header: $(head -n 1 "$file")"; fi
    for ph in "$@"; do
        if grep -q "^  $ph  *[0-9][0-9]*\.[0-9][0-9][0-9]$" "$file"; then ok; else bad "$name: no '$ph' seconds: $(cat "$file")"; fi
    done
    # Each number is printed rounded to 1 ms (half a millisecond either way),
    # so the printed phases may exceed the printed total by half a
    # millisecond per number, though the phases' true sum never does.
    if awk '/^  total/ { t = $2 } /^  / && !/^  total/ && $NF != "-" { s += $NF; n++ }
            END { exit !(s <= t + 0.0005 * (n + 1) + 1e-9) }' "$file"
    then ok; else bad "$name: the phases exceed the total: $(cat "$file")"; fi
}

"$ROTOR" compile nerf-t10 --batch 2 --profile -q >"$tmpdir/p.out" 2>"$tmpdir/p.err" || bad "compile --profile failed"
check_profile compile "$tmpdir/p.err" load group search hand-off reconciliation program total
if grep -q "^  VGM  *-$" "$tmpdir/p.err"; then ok; else bad "compile: VGM ran without --compare"; fi
# the searches the walk's searches ahead answered (docs/compile.md): a count
# that depends on timing, of the compile's searches
if grep -q "^    made ahead  *[0-9][0-9]* of [1-9][0-9]* searches$" "$tmpdir/p.err"; then ok
else bad "compile: no 'made ahead' count: $(cat "$tmpdir/p.err")"; fi
"$ROTOR" compile nerf-t10 --batch 2 -q >"$tmpdir/n.out" 2>/dev/null
if cmp -s "$tmpdir/p.out" "$tmpdir/n.out"; then ok; else bad "compile: --profile changed stdout"; fi
"$ROTOR" compile nerf-t10 --batch 2 --compare --json --profile -q >"$tmpdir/pj.out" 2>"$tmpdir/pj.err" || bad "compile --json --profile failed"
check_profile compile-compare "$tmpdir/pj.err" search VGM total
if head -c 1 "$tmpdir/pj.out" | grep -q "{" && grep -q '"format":	"rotor-program"' "$tmpdir/pj.out"; then ok
else bad "compile --json --profile: stdout is not the document"; fi

"$ROTOR" simulate nerf-t10 --profile -q >/dev/null 2>"$tmpdir/s.err" || bad "simulate --profile failed"
check_profile simulate "$tmpdir/s.err" search hand-off reconciliation program replay total
"$ROTOR" schedule llama2-13b --layers 1 --profile -q >/dev/null 2>"$tmpdir/h.err" || bad "schedule --profile failed"
check_profile schedule "$tmpdir/h.err" load group schedule total
if grep -q "^  replay  *-$" "$tmpdir/h.err"; then ok; else bad "schedule: replay without --simulate"; fi

expect_error gt 2 "--profile times T10's phases: it conflicts with --group graphturbo" -- \
    simulate nerf-t10 --group graphturbo --chip stcp920 --profile
expect_out help "--profile" -- compile --help
finish cli_profile
