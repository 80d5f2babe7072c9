#!/bin/sh
# CLI tests of `rotor reproduce elk`'s Table 2, Figures 23, 24 and 5-8
# (docs/reproduction.md, "Elk") on a small grid: one LLM at batch 1, the
# files and their columns, the JSON keys, Figure 23's invariant (Full never
# slower than Static), and --full-grid's error outside elk.
# Run by `make test` as `ROTOR=build/rotor sh tests/cli_reproduce_elk2.sh`.
. "$(dirname "$0")/lib.sh"
e=$tmpdir/elk

expect_out help "the cores at 2.7 GB/s of HBM each (Figure 23" -- reproduce --help
# one run, as JSON: it writes every file too
"$ROTOR" reproduce elk --models llama2-7b --max-batch 1 -o "$e" --json -q >"$out" 2>"$err"
if [ $? -eq 0 ]; then ok; else bad "elk: $(cat "$err")"; fi
for key in '"table2":' '"fig23":' '"fig24":' '"fig5_8":' '"hbm_gbps_per_core":	2.7' '"paper_full_over_basic":	1.71' \
    '"hbm_tbps_needed":'; do
    if grep -q -- "$key" "$out"; then ok; else bad "json lacks $key"; fi
done
for f in elk-table2.csv elk-fig23.csv elk-fig23.svg elk-fig24.csv elk-fig24.svg elk-fig5.csv elk-fig5.svg \
    elk-fig7-8.csv elk-fig7-8.svg; do
    if [ -s "$e/$f" ]; then ok; else bad "$f missing"; fi
done
for f in elk-fig23.svg elk-fig24.svg elk-fig5.svg elk-fig7-8.svg; do
    if tail -n 1 "$e/$f" | grep -q "</svg>"; then ok; else bad "$f is no whole SVG"; fi
done
# Table 2: the LLM, then dit-xl's row beside the paper's 4/4/123/136/1521
if [ "$(head -n 1 "$e/elk-table2.csv")" = "model,batch,fits,c,h,p,k,n,paper_c,paper_h,paper_p,paper_k,paper_n" ] &&
    [ "$(wc -l <"$e/elk-table2.csv")" -eq 3 ] && grep -q "^llama2-7b,1,1," "$e/elk-table2.csv" &&
    grep -q "^dit-xl,1,1,[0-9]*,[0-9]*,[0-9]*,[0-9]*,[0-9]*,4,4,123,136,1521$" "$e/elk-table2.csv"
then ok; else bad "table2 csv: $(cat "$e/elk-table2.csv")"; fi
# the counters agree with themselves: 1 <= C <= H, N at least 10 a layer
if awk -F, 'NR > 1 && !($4 >= 1 && $4 <= $5 && $6 >= 1 && $7 >= 1 && $8 >= 10) { bad = 1 } END { exit bad }' \
    "$e/elk-table2.csv"; then ok; else bad "table2 factors: $(cat "$e/elk-table2.csv")"; fi
# Figure 23: 3 core counts x (llama2-7b on 4 chips, dit-xl on 1) x 6 designs
if [ "$(head -n 1 "$e/elk-fig23.csv")" = "model,chips,cores_per_chip,batch,hbm_tbps,design,latency_ms,hbm_util,link_util,tflops" ] &&
    [ "$(wc -l <"$e/elk-fig23.csv")" -eq 37 ] && grep -q "^llama2-7b,4,1472,1,15.8976,full," "$e/elk-fig23.csv" &&
    grep -q "^dit-xl,1,1472,1,3.9744,full," "$e/elk-fig23.csv"
then ok; else bad "fig23 csv: $(head -n 3 "$e/elk-fig23.csv")"; fi
# Full is never slower than Static or Basic at any core count (Elk §6.4)
if awk -F, 'NR > 1 { k = $1 "," $3; t[k, $6] = $7 } END {
        for (x in t) { split(x, a, SUBSEP); if (a[2] == "full" && (t[a[1], "full"] > t[a[1], "static"] * 1.000001 ||
            t[a[1], "full"] > t[a[1], "basic"] * 1.000001)) bad = 1 } exit bad }' "$e/elk-fig23.csv"
then ok; else bad "fig23: Full slower than Static: $(grep -e ',static,' -e ',full,' "$e/elk-fig23.csv")"; fi
# Figure 24: 3 matrix rates x 6 HBM bandwidths x 6 designs, prefill of 2048 tokens
if [ "$(head -n 1 "$e/elk-fig24.csv")" = "model,batch,seq,matrix_tflops_per_chip,hbm_tbps,design,latency_ms,hbm_util,link_util,tflops" ] &&
    [ "$(wc -l <"$e/elk-fig24.csv")" -eq 109 ] && grep -q "^llama2-7b,1,2048,250,0.4,full," "$e/elk-fig24.csv"
then ok; else bad "fig24 csv: $(head -n 3 "$e/elk-fig24.csv")"; fi
# Figures 5, 7, 8: one layer's 10 operators
if [ "$(head -n 1 "$e/elk-fig5.csv")" = "model,op,plan,time_us,space_kb" ] &&
    grep -q "^llama2-7b,l0.qkv,0," "$e/elk-fig5.csv"; then ok; else bad "fig5 csv: $(head -n 3 "$e/elk-fig5.csv")"; fi
if [ "$(head -n 1 "$e/elk-fig7-8.csv")" = "model,index,op,hbm_mb,exec_us,intercore_min_gbps,intercore_max_gbps,total_min_gbps,total_max_gbps" ] &&
    [ "$(wc -l <"$e/elk-fig7-8.csv")" -eq 11 ] &&
    awk -F, 'NR > 1 && $6 < $7 { bad = 1 } END { exit bad }' "$e/elk-fig7-8.csv"
then ok; else bad "fig7-8 csv (MinPreload below MaxPreload?): $(cat "$e/elk-fig7-8.csv")"; fi
if ls "$e" | grep -q '\.tmp\.'; then bad "a temporary is left: $(ls "$e")"; else ok; fi

expect_error full-grid 2 "--full-grid: only elk takes it" -- reproduce t10 --full-grid --models nerf-t10

finish cli_reproduce_elk2
