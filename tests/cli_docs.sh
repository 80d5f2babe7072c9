#!/bin/sh
# The documentation's examples, run as printed, their output compared with
# what the docs show (issue 24: docs drift fails the build; issue 46: not only
# the exit status).  Run by `make test` as `ROTOR=build/rotor sh tests/cli_docs.sh`.
#
# An example is a line beginning with "$ " inside a fenced code block of
# README.md or docs/*.md; what follows the prompt is the command, as a shell
# runs it (pipes, redirections, && and a trailing # comment included).  Lines
# without the prompt are output.  A fenced line that starts like a command
# ("rotor plan --expr ...") but has no prompt is refused, so that no example
# escapes the test; synopses with [optional] parts, | or ... are not examples.
#
# The output an example shows is the lines after it, up to the next "$ " line
# or the closing fence.  When it shows some, what the command printed (its
# stderr, then its stdout: a terminal's order for notes printed while rotor
# works) must match them line by line, trailing blanks ignored, where
#   ...        a line of its own stands for any number of lines (none too);
#   ...        inside a line stands for any text in that line (a time, a
#              path, a thread count: what legitimately varies).
# An example followed directly by another, or by the fence, shows nothing and
# is checked for its exit status alone.
#
# Where it runs: the examples of one file run in order, in one fresh
# temporary directory holding build/rotor (this build: $ROTOR), build/onnxgen,
# examples/ and chips/ (the repository's), so a file an example writes
# (-o bert.json) is there for the next one and nothing lands in the tree.
# Examples use the files of examples/, never ../shared.  Each must exit 0,
# unless its comment starts with a marker:
#   # exits N     it must exit with status N (a documented failure)
#   # slow        over 30 s (a full reproduce): skipped and counted
# Examples naming /usr/share/libonnx-testdata are skipped (with one line) when
# it is absent, and under the sanitizers (a ROTOR under */san/*) only plan,
# verify, model and --list/--help examples run (not the Python package's:
# the sanitizer build makes no shared library).  DOCS_TIMES=1 prints each
# example's seconds; DOCS_FILES="docs/explore.md" runs one file's alone.  The
# set that runs (74 examples, 21 with output shown) took 57 s user + 10 s
# system CPU on 2 cores (2026-11-29); shrink a new example that takes more
# than a few seconds (--layers 1, a smaller batch or model) rather than mark
# it slow.
. "$(dirname "$0")/lib.sh"
repo=$(cd "$(dirname "$0")/.." && pwd)
case "$ROTOR" in /*) rotor_abs=$ROTOR ;; *) rotor_abs=$(pwd)/$ROTOR ;; esac
case "$ROTOR" in */san/*) san=1 ;; *) san=0 ;; esac

# FILE<TAB>LINE<TAB>COMMAND for every example (its shown output in
# $want_dir/FILE_LINE, when it shows some); FILE<TAB>LINE<TAB>!TEXT for an
# unprompted one
want_dir=$tmpdir/want
mkdir -p "$want_dir"
extract() {
    awk -v dir="$want_dir" '
        function close_ex() { if (ex != "") close(ex); ex = "" }
        /^[ \t]*```/ { fence = !fence; close_ex(); next }
        !fence { next }
        /^\$ / {
            close_ex()
            printf "%s\t%d\t%s\n", FILENAME, FNR, substr($0, 3)
            name = FILENAME "_" FNR; gsub(/\//, "_", name); ex = dir "/" name
            next
        }
        /^(build\/)?rotor (plan|verify|compile|model|simulate|run|schedule|explore|reproduce|report|chip)( |$)/ {
            if ($0 !~ /[[|]|\.\.\./) printf "%s\t%d\t!%s\n", FILENAME, FNR, $0
        }
        ex != "" { print > ex }
    ' "$@"
}

# same WANT GOT: GOT matches WANT's lines, "..." as above; else prints the
# first shown line no run of the output matched, and the output line there
same() {
    awk '
        function rtrim(s) { sub(/[ \t]+$/, "", s); return s }
        # one line: WANT with "..." for any text
        function line_ok(w, g,   n, p, i, k, at) {
            n = split(w, p, /\.\.\./)
            if (n == 1) return w == g
            if (substr(g, 1, length(p[1])) != p[1]) return 0
            at = length(p[1]) + 1
            for (i = 2; i < n; i++) {
                k = index(substr(g, at), p[i])
                if (k == 0) return 0
                at += k - 1 + length(p[i])
            }
            return length(g) - at + 1 >= length(p[n]) && substr(g, length(g) - length(p[n]) + 1) == p[n]
        }
        function m(i, j,   k, key, r) {
            key = i SUBSEP j
            if (key in memo) return memo[key]
            if (i > ng_w) r = (j > ng_g)
            else if (W[i] == "...") { r = 0; for (k = j; k <= ng_g + 1 && !r; k++) r = m(i + 1, k) }
            else {
                r = j <= ng_g && line_ok(W[i], G[j]) && m(i + 1, j + 1)
                if (!r && j <= ng_g + 1 && (i > far_i || (i == far_i && j > far_j))) { far_i = i; far_j = j }
            }
            return memo[key] = r
        }
        FNR == NR { W[++ng_w] = rtrim($0); next }
        { G[++ng_g] = rtrim($0) }
        END {
            if (m(1, 1)) exit 0
            printf "  shown line %d: %s\n  printed %s\n", far_i, W[far_i], (far_j <= ng_g ? "line " far_j ": " G[far_j] : "no more lines")
            exit 1
        }
    ' "$1" "$2"
}

cd "$repo" || exit 2
run=0 slow=0 absent=0 sanskip=0 compared=0 prev=
start=$(date +%s)
tab=$(printf '\t')
# shellcheck disable=SC2086 # a list of files
extract ${DOCS_FILES:-README.md docs/*.md} >"$tmpdir/examples"
while IFS="$tab" read -r file line cmd; do
    where="$file:$line"
    case "$cmd" in
    !*) bad "$where: an example without its '\$ ' prompt: ${cmd#!}"; continue ;;
    *../shared*) bad "$where: an example naming ../shared (use a file of examples/): \$ $cmd"; continue ;;
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
    */usr/share/libonnx-testdata*) [ -d /usr/share/libonnx-testdata ] || { absent=$((absent + 1)); continue; } ;;
    esac
    if [ "$san" -eq 1 ]; then
        case "$cmd" in
        *python3*) sanskip=$((sanskip + 1)); continue ;; # the package loads build/librotor.so, not built
        *"rotor plan "* | *"rotor verify "* | *"rotor model "* | *--list* | *--help*) ;;
        *) sanskip=$((sanskip + 1)); continue ;;
        esac
    fi
    t0=$(date +%s)
    (cd "$dir" && sh -c "$cmd") >"$out" 2>"$err" </dev/null
    got=$?
    [ -n "$DOCS_TIMES" ] && echo "$(($(date +%s) - t0)) s  $where"
    run=$((run + 1))
    if [ "$got" -ne "$want" ]; then
        bad "$where: exit $got, want $want: \$ $cmd
$(tail -n 3 "$err")"
        continue
    fi
    shown="$want_dir/$(echo "${file}_$line" | tr / _)"
    if [ -f "$shown" ]; then
        compared=$((compared + 1))
        cat "$err" "$out" >"$tmpdir/printed"
        if ! same "$shown" "$tmpdir/printed" >"$tmpdir/diff"; then
            bad "$where: the output differs from the one shown: \$ $cmd
$(cat "$tmpdir/diff")"
            continue
        fi
    fi
    ok
done <"$tmpdir/examples"
[ "$absent" -gt 0 ] && echo "cli_docs: $absent examples need libonnx-testdata, absent here: skipped"
[ "$sanskip" -gt 0 ] && echo "cli_docs: $sanskip examples skipped under the sanitizers (the plain build runs them)"
echo "cli_docs: $run examples run ($compared with their output compared), $slow marked slow and skipped, $(($(date +%s) - start)) s"
finish cli_docs
