#!/bin/sh
# bench_pause.sh ROTOR [ROW...]: a compile's first run after the machine
# idles, beside runs back to back (docs/performance.md, "2026-12-02
# (fiftieth session)").  On a VM whose host takes back freed memory about
# 2 s after a process frees it, a process that touches memory after a pause
# pays for each page again (1.3-2.5 ms per MiB on CI's machine); runs that
# follow each other, as farm-bench --vs alternates them, reuse the pages the
# previous run freed and do not.  Each ROW is the arguments of `rotor
# compile` (one word list, quoted); each is run without the plan cache three
# times after PAUSE seconds of idle (3 by default), then once uncounted and
# three times back to back.  One Markdown row per ROW: each run's wall
# seconds (user + system seconds), and the largest peak resident memory.
# Needs GNU time (/usr/bin/time -f -o, Debian's `time`) and GNU sleep for a
# fractional PAUSE.
set -f # a ROW is split into words, never globbed
ROTOR=${1:-build/rotor}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- "densenet-121 --group graphturbo --chip ipu-mk2 --batch 48" \
    "resnet-50 --group graphturbo --chip ipu-mk2 --batch 16" \
    "resnet-18 --group graphturbo --chip ipu-mk2 --batch 8"
PAUSE=${PAUSE:-3}
t=$(mktemp)
trap 'rm -f "$t" "$t.err"' EXIT INT TERM
# one run of `rotor compile $1` into $t: "wall (user + sys)" into $out, the
# largest peak so far (MiB: GNU time's %M is KiB) into $peak (no subshell:
# the caller reads both)
run() {
    # shellcheck disable=SC2086
    if ! ROTOR_NO_CACHE=1 /usr/bin/time -f '%e %U %S %M' -o "$t" "$ROTOR" compile $1 -q >/dev/null 2>"$t.err"; then
        out="failed: $(head -n 1 "$t.err" | cut -c1-90)"
        return
    fi
    out=$(awk '{ printf "%s (%s + %s)", $1, $2, $3 }' "$t")
    peak=$(awk -v p="$peak" '{ m = int($4 / 1024); printf "%d", (m > p + 0 ? m : p) }' "$t")
}
echo "| rotor compile | after a ${PAUSE} s pause: wall (user + sys) | back to back: wall (user + sys) | peak (MiB) |"
echo "|---|---|---|---:|"
for row in "$@"; do
    paused="" back="" peak=""
    for _ in 1 2 3; do
        sleep "$PAUSE"
        run "$row"
        paused="$paused${paused:+, }$out"
        case $out in failed*) break ;; esac
    done
    case $out in failed*)
        echo "| $row | $out | | |"
        continue
        ;;
    esac
    run "$row"
    for _ in 1 2 3; do
        run "$row"
        back="$back${back:+, }$out"
    done
    echo "| $row | $paused | $back | ${peak:-?} |"
done
