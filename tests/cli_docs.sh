#!/bin/sh
# The documentation's examples, run as printed (issue 24: docs drift fails the
# build).  Run by `make test` as `ROTOR=build/rotor sh tests/cli_docs.sh`.
#
# An example is a line beginning with "$ " inside a fenced code block of
# README.md or docs/*.md; what follows the prompt is the command, as a shell
# runs it (pipes, redirections, && and a trailing # comment included).  Lines
# without the prompt are output.  A fenced line that starts like a command
# ("rotor plan --expr ...") but has no prompt is refused, so that no example
# escapes the test; synopses with [optional] parts, | or ... are not examples.
#
# Where it runs: the examples of one file run in order, in one fresh
# temporary directory holding build/rotor (this build: $ROTOR), examples/
# and chips/ (the repository's), so a file an example writes (-o bert.json)
# is there for the next one and nothing lands in the tree; ../shared is the
# repository's ../shared.  Each must exit 0, unless its comment starts with a
# marker:
#   # exits N     it must exit with status N (a documented failure)
#   # slow        too slow for CI (a full reproduce, a 70B sweep): skipped and counted
# Examples naming ../shared are skipped (with one line) when it is absent, and
# under the sanitizers (a ROTOR under */san/*) only plan, verify, model and
# --list/--help examples run.  DOCS_TIMES=1 prints each example's seconds.
# The set that runs takes about 35 s on 2 cores; mark a new example that takes
# more than a few seconds "# slow", or shrink it (--layers 1).
. "$(dirname "$0")/lib.sh"
repo=$(cd "$(dirname "$0")/.." && pwd)
case "$ROTOR" in /*) rotor_abs=$ROTOR ;; *) rotor_abs=$(pwd)/$ROTOR ;; esac
case "$ROTOR" in */san/*) san=1 ;; *) san=0 ;; esac
[ -d "$repo/../shared" ] && shared=1 || shared=0

# FILE<TAB>LINE<TAB>COMMAND for every example; FILE<TAB>LINE<TAB>!TEXT for an unprompted one
extract() {
    awk '
        /^[ \t]*```/ { fence = !fence; next }
        !fence { next }
        /^\$ / { printf "%s\t%d\t%s\n", FILENAME, FNR, substr($0, 3); next }
        /^(build\/)?rotor (plan|verify|compile|model|simulate|run|schedule|explore|reproduce|report)( |$)/ {
            if ($0 !~ /[[|]|\.\.\./) printf "%s\t%d\t!%s\n", FILENAME, FNR, $0
        }
    ' "$@"
}

cd "$repo" || exit 2
work=$tmpdir/work
mkdir -p "$work"
[ "$shared" -eq 1 ] && ln -s "$repo/../shared" "$work/shared"
run=0 slow=0 noshared=0 sanskip=0 prev=
start=$(date +%s)
tab=$(printf '\t')
extract README.md docs/*.md >"$tmpdir/examples"
while IFS="$tab" read -r file line cmd; do
    where="$file:$line"
    case "$cmd" in
    !*) bad "$where: an example without its '\$ ' prompt: ${cmd#!}"; continue ;;
    esac
    case "$cmd" in *rotor*) ;; *) continue ;; esac
    if [ "$file" != "$prev" ]; then # a fresh directory per file
        prev=$file
        dir=$tmpdir/work/$(echo "$file" | tr '/.' '__')
        mkdir -p "$dir/build"
        ln -s "$rotor_abs" "$dir/build/rotor"
        ln -s "$(dirname "$rotor_abs")/onnxgen" "$dir/build/onnxgen" # the model generator, beside rotor
        ln -s "$repo/examples" "$dir/examples"
        ln -s "$repo/chips" "$dir/chips"
    fi
    want=0
    case "$cmd" in
    *"# slow"*) slow=$((slow + 1)); continue ;;
    *"# exits "*) want=$(echo "$cmd" | sed 's/.*# exits \([0-9]*\).*/\1/') ;;
    esac
    case "$cmd" in
    *../shared*) if [ "$shared" -eq 0 ]; then noshared=$((noshared + 1)); continue; fi ;;
    esac
    case "$cmd" in
    */usr/share/libonnx-testdata*) [ -d /usr/share/libonnx-testdata ] || { noshared=$((noshared + 1)); continue; } ;;
    esac
    if [ "$san" -eq 1 ]; then
        case "$cmd" in
        *"rotor plan "* | *"rotor verify "* | *"rotor model "* | *--list* | *--help*) ;;
        *) sanskip=$((sanskip + 1)); continue ;;
        esac
    fi
    # one directory up is $tmpdir/work, whose ../shared is the link above
    t0=$(date +%s)
    (cd "$dir" && sh -c "$cmd") >"$out" 2>"$err" </dev/null
    got=$?
    [ -n "$DOCS_TIMES" ] && echo "$(($(date +%s) - t0)) s  $where"
    run=$((run + 1))
    if [ "$got" -eq "$want" ]; then ok
    else bad "$where: exit $got, want $want: \$ $cmd
$(tail -n 3 "$err")"; fi
done <"$tmpdir/examples"
[ "$noshared" -gt 0 ] && echo "cli_docs: $noshared examples need ../shared or libonnx-testdata, absent here: skipped"
[ "$sanskip" -gt 0 ] && echo "cli_docs: $sanskip examples skipped under the sanitizers (the plain build runs them)"
echo "cli_docs: $run examples run, $slow marked slow and skipped, $(($(date +%s) - start)) s"
finish cli_docs
