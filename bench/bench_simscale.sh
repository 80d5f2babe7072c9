#!/bin/sh
# bench_simscale.sh ROTOR: the simulator at scale (issue 23), end to end:
# time and peak RSS of streamed replays that held the whole task graph
# before (BERT-Large b8: 525 MB; Llama2-70B b32 on ipu-pod4: 5.0 GB), the
# schedule on ipu-pod16, and a filtered trace.  Target: every one under
# 1 GB peak RSS; a line says PASS or FAIL.  Then the replay's speed on
# DiT-XL b256 (its events per second of user time, which depend on the
# machine's hour: reported, not failed).
ROTOR=${1:-build/rotor}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
one() { # LABEL COMMAND...
    label=$1
    shift
    t0=$(date +%s.%N)
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f "%M" -o "$dir/rss" "$@" >"$dir/out" 2>"$dir/err" || { echo "$label: FAILED: $(tail -n 1 "$dir/err")"; fail=1; return; }
        kb=$(tail -n 1 "$dir/rss")
    else
        "$@" >"$dir/out" 2>"$dir/err" || { echo "$label: FAILED: $(tail -n 1 "$dir/err")"; fail=1; return; }
        kb=0
    fi
    t1=$(date +%s.%N)
    verdict=PASS
    [ "$kb" -lt 1048576 ] || { verdict=FAIL; fail=1; }
    awk -v l="$label" -v a="$t0" -v b="$t1" -v k="$kb" -v v="$verdict" \
        'BEGIN { printf "| %s | %.1f s | %.0f MB | %s |\n", l, b - a, k / 1024, v }'
}
echo "bench_simscale: streamed replays, end to end (target: under 1 GB peak RSS)"
echo "| command | time | peak RSS | < 1 GB |"
echo "|---|---:|---:|---|"
one "simulate bert-large --batch 8" "$ROTOR" simulate bert-large --batch 8
one "simulate bert-large --batch 8 --topology mesh:32x46 --trace (default filter)" \
    "$ROTOR" simulate bert-large --batch 8 --topology mesh:32x46 --trace "$dir/t.json"
one "schedule llama2-70b --batch 32 --design full --simulate (ipu-pod4)" \
    "$ROTOR" schedule llama2-70b --batch 32 --design full --simulate
one "schedule llama2-70b --batch 32 --design full --simulate --chip ipu-pod16" \
    "$ROTOR" schedule llama2-70b --batch 32 --design full --simulate --chip ipu-pod16

# The replay's speed end to end on its largest program (issue 23: 25 M
# events/s on one core): DiT-XL b256 on ipu-pod4, compiled once, then
# replayed from the program file; user time, the best of 3 runs.
echo
if [ -x /usr/bin/time ] && "$ROTOR" compile dit-xl --batch 256 --chip ipu-pod4 -o "$dir/dit.json" >/dev/null 2>"$dir/err"; then
    best=""
    events=""
    for i in 1 2 3; do
        /usr/bin/time -f "%U" -o "$dir/t" "$ROTOR" simulate "$dir/dit.json" >"$dir/out" 2>"$dir/err" ||
            { echo "replay dit-xl b256: FAILED: $(tail -n 1 "$dir/err")"; fail=1; break; }
        u=$(tail -n 1 "$dir/t")
        events=$(sed -n '1s/.* \([0-9][0-9]*\) events$/\1/p' "$dir/out")
        best=$(awk -v a="$best" -v b="$u" 'BEGIN { print (a == "" || b < a) ? b : a }')
    done
    if [ -n "$best" ] && [ -n "$events" ]; then
        awk -v e="$events" -v t="$best" 'BEGIN {
            r = e / t
            printf "replay dit-xl b256 on ipu-pod4: %d events in %.2f s user (best of 3): %.3g events/s (issue 23: >= 2.5e7, %s)\n",
                   e, t, r, (r >= 2.5e7 ? "met" : "NOT met") }'
    fi
else
    echo "replay dit-xl b256: skipped ($( [ -x /usr/bin/time ] && tail -n 1 "$dir/err" || echo "no /usr/bin/time"))"
fi
exit $fail
