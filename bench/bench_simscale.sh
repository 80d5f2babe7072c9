#!/bin/sh
# bench_simscale.sh ROTOR: the simulator at scale (issue 23), end to end:
# time and peak RSS of streamed replays that held the whole task graph
# before (BERT-Large b8: 525 MB; Llama2-70B b32 on ipu-pod4: 5.0 GB), the
# schedule on ipu-pod16, and a filtered trace.  Target: every one under
# 1 GB peak RSS; a line says PASS or FAIL.
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
exit $fail
