#!/bin/sh
# CLI tests of `rotor reproduce t10` (docs/reproduction.md) on a small grid:
# the tables, the files, JSON, and one-line errors.
# Run by `make test` as `ROTOR=build/rotor sh tests/cli_reproduce.sh`.
. "$(dirname "$0")/lib.sh"
d=$tmpdir/r

expect_out help "Figures 12, 13, 14, 19 and 20; the same grid on a GPU, Figure 21" -- reproduce --help
# the T10 grid for one model, batches 1 and 2: every figure's table; and
# Figure 22 for one LLM (its fitted layers, prefill and decode)
"$ROTOR" reproduce t10 --models nerf-t10,opt-1.3b --max-batch 2 -o "$d" >"$out" 2>"$err"
if [ $? -eq 0 ]; then ok; else bad "small grid: $(cat "$err")"; fi
for pat in "^nerf-t10 *1 " "^nerf-t10 *2 " "T10 over VGM: .* over 2 points (paper: 1.69x on average, 3.3x at most)" \
    "T10 over the VGM oracle: .* over 2 points" \
    "Figure 14" "Figure 20" "paper 8%-43%" "^Figure 21: ipu-mk2 (T10) against a100-80gb" \
    "^Figure 22: LLM layers on ipu-mk2 (T10) against a100-80gb" \
    "T10 over a100-80gb: .* over 6 points (paper: 3.10x on average, 16.38x at most)" \
    "^opt-1.3b: [0-9]* of 24 layers fit at batch 16; one more: the model does not fit"; do
    if grep -q -- "$pat" "$out"; then ok; else bad "tables lack '$pat': $(head -n 12 "$out")"; fi
done
# the files, complete and named as the table says
for f in t10-fig12-13.csv t10-fig14.csv t10-fig19.csv t10-fig20.csv t10-fig12.svg t10-fig13.svg t10-fig14.svg \
    t10-fig19.svg t10-fig20.svg t10-fig21.csv t10-fig21.svg t10-fig22.csv t10-fig22.svg; do
    if [ -s "$d/$f" ]; then ok; else bad "$f missing"; fi
done
if [ "$(head -n 1 "$d/t10-fig12-13.csv")" = "model,batch,t10_us,vgm_us,speedup,t10_move_share,vgm_move_share,vgm_oracle_us,speedup_oracle" ] &&
    [ "$(wc -l <"$d/t10-fig12-13.csv")" -eq 3 ]; then ok; else bad "fig12-13 csv: $(cat "$d/t10-fig12-13.csv")"; fi
if [ "$(wc -l <"$d/t10-fig20.csv")" -eq 4 ]; then ok; else bad "fig20 csv: $(cat "$d/t10-fig20.csv")"; fi
# Figure 20 on a mesh: a quarter and a half of wormhole-n150's 72 cores are
# rectangles of its 8x9 mesh (3x6, 6x6; refused until 2026-12-03), the
# columns named by this chip's core counts, not the IPU's
"$ROTOR" reproduce t10 --models resnet-18 --max-batch 1 --chip wormhole-n150 -o "$tmpdir/wh" -q >"$out" 2>"$err" ||
    bad "fig20 on a mesh: $(cat "$err")"
if [ "$(cut -d, -f3 "$tmpdir/wh/t10-fig20.csv" | tr '\n' ' ')" = "cores 18 36 72 " ] &&
    grep -q "^model  *18 T10  *18 VGM  *36 T10  *36 VGM  *72 T10  *72 VGM$" "$out"
then ok; else bad "fig20 on a mesh: $(cat "$tmpdir/wh/t10-fig20.csv") $(grep -A1 'Figure 20' "$out")"; fi
# the share of time moving data leaves out the shifts under compute
# (wormhole-n150 overlaps them): compile's totals give it
"$ROTOR" compile resnet-18 --batch 1 --chip wormhole-n150 --json -q >"$tmpdir/wh.json" 2>"$err" || bad "compile: $(cat "$err")"
share=$(python3 -c "import json,sys; t=json.load(open(sys.argv[1]))['totals']
print('%.6f' % ((t['communication_s'] - t['hidden_s'] + t['reduction_s'] + t['setup_s']) / t['total_s']))" "$tmpdir/wh.json")
if grep -q "^resnet-18,1,[0-9.]*,[0-9.]*,[0-9.]*,$share," "$tmpdir/wh/t10-fig12-13.csv"; then ok
else bad "move share: want $share: $(cat "$tmpdir/wh/t10-fig12-13.csv")"; fi
# Figure 21: each fitting point of the grid on the GPU; Figure 22: 2 phases x 3 batches
if [ "$(wc -l <"$d/t10-fig21.csv")" -eq 3 ] && grep -q "^nerf-t10,2," "$d/t10-fig21.csv"; then ok
else bad "fig21 csv: $(cat "$d/t10-fig21.csv")"; fi
if [ "$(grep -c '^opt-1.3b,' "$d/t10-fig22.csv")" -eq 6 ] && grep -q "^opt-1.3b,[0-9]*,24,decode,16," "$d/t10-fig22.csv"
then ok; else bad "fig22 csv: $(cat "$d/t10-fig22.csv")"; fi
if tail -n 1 "$d/t10-fig12.svg" | grep -q "</svg>" && grep -q "nerf-t10 T10" "$d/t10-fig12.svg"; then ok
else bad "fig12 svg"; fi
if ls "$d" | grep -q '\.tmp\.'; then bad "a temporary is left: $(ls "$d")"; else ok; fi
# the same run as JSON, and the same numbers again (deterministic)
expect_out json '"format":	"rotor-reproduce-t10"' -- reproduce t10 --models nerf-t10 --max-batch 2 -o "$d" --json
cp "$d/t10-fig12-13.csv" "$tmpdir/first.csv"
"$ROTOR" reproduce t10 --models nerf-t10 --max-batch 2 -o "$d" --threads 1 >/dev/null 2>&1
if cmp -s "$d/t10-fig12-13.csv" "$tmpdir/first.csv"; then ok; else bad "a second run (1 thread) differs"; fi

expect_error what 2 "unknown evaluation 'kapa' (did you mean 'kapla'?) (known: t10, elk, graphturbo, kapla)" -- reproduce kapa
expect_error none 2 "which paper? (rotor reproduce t10, rotor reproduce elk, rotor reproduce graphturbo, rotor reproduce kapla)" -- reproduce
expect_error model 2 "--models: unknown model 'gpt2'" -- reproduce t10 --models gpt2
expect_error batch 2 "--max-batch: expected an integer from 1" -- reproduce t10 --max-batch 0
: >"$tmpdir/file"
expect_error outdir 2 "-o: $tmpdir/file/x: cannot create" -- reproduce t10 --models nerf-t10 --max-batch 1 -o "$tmpdir/file/x"

# Elk (issue 22): one LLM at batch 1, the HBM sweep, the paper's regime, the mesh
e=$tmpdir/elk
"$ROTOR" reproduce elk --models llama2-7b --max-batch 1 -o "$e" >"$out" 2>"$err"
if [ $? -eq 0 ]; then ok; else bad "elk: $(cat "$err")"; fi
for pat in "^llama2-7b *1 " "Full over Basic .* over 1 points (paper: 1.87x (1.93x), 1.37x (1.49x), 94.84%)" \
    "Figure 18 (a)" "Figure 18 (b)-(d)" "^full .* 62.40 .* 89.52" \
    "^Figure 19: per-token latency (ms) against the total HBM bandwidth (TB/s), batch 1$" "^llama2-7b *64 " \
    "The paper's regime (Ideal uses 55-75% of HBM" "inter-core writes do not pause a core's SRAM" \
    "^Execution-bound: 16 TB/s with matrix_tflops=83" "^roofline " "^Figure 20: llama2-7b's latency in parts"; do
    if grep -q -- "$pat" "$out"; then ok; else bad "elk tables lack '$pat': $(head -n 12 "$out")"; fi
done
for f in elk-fig17.csv elk-fig19.csv elk-execution-bound.csv elk-fig17.svg elk-fig19.svg; do
    if [ -s "$e/$f" ]; then ok; else bad "$f missing"; fi
done
# 6 designs x 1 batch; 6 designs x 9 bandwidths; 6 designs at one point
if [ "$(wc -l <"$e/elk-fig17.csv")" -eq 7 ] && [ "$(wc -l <"$e/elk-fig19.csv")" -eq 55 ] &&
    [ "$(wc -l <"$e/elk-execution-bound.csv")" -eq 7 ] &&
    head -n 1 "$e/elk-fig19.csv" | grep -q "^model,batch,hbm_tbps,design,latency_ms,hbm_util,link_util,tflops,"
then ok; else bad "elk csv: $(head -n 3 "$e/elk-fig19.csv")"; fi
# Figures 19 (mesh rows), 21 and 22 (issue 41): all-to-all against a 32 x 46 mesh per chip at
# the same batch (here 1, --max-batch), the model's own Figure 22 (llama2-70b not listed)
for pat in "^Figure 19, all-to-all against mesh: per-token latency (ms), batch 1, ipu-pod4 .* 32x46 mesh" \
    "^llama2-7b *1 .*x " "the mesh is no faster at 8 of 8 points" "^Figure 21: interconnect use" \
    "crossed 1.00 links on all-to-all" "^Figure 22: llama2-7b's per-token latency" "^ *32 *44.00 *259.1 "; do
    if grep -q -- "$pat" "$out"; then ok; else bad "elk mesh tables lack '$pat': $(grep -A3 'against mesh' "$out")"; fi
done
for f in elk-fig19-21-mesh.csv elk-fig22.csv elk-fig19-mesh.svg elk-fig21.svg elk-fig22.svg; do
    if [ -s "$e/$f" ]; then ok; else bad "$f missing"; fi
done
mh="model,batch,topology,hbm_tbps,link_gbps,interconnect_tbps,design,latency_ms,hbm_util,link_util,hop_util,tflops,preload_ms,execute_ms,overlap_ms,stall_ms"
# 8 HBM bandwidths x 2 networks x 6 designs; 3 HBM x 6 link bandwidths x 2 x 6
if [ "$(head -n 1 "$e/elk-fig19-21-mesh.csv")" = "$mh" ] && [ "$(wc -l <"$e/elk-fig19-21-mesh.csv")" -eq 97 ] &&
    [ "$(head -n 1 "$e/elk-fig22.csv")" = "$mh" ] && [ "$(wc -l <"$e/elk-fig22.csv")" -eq 217 ]
then ok; else bad "elk mesh csv: $(head -n 2 "$e/elk-fig19-21-mesh.csv"; head -n 2 "$e/elk-fig22.csv")"; fi
# Elk §6.4: the mesh is no faster than all-to-all at the same point (model, HBM and link
# bandwidths, design); prints the pairs compared, or the first that is faster on the mesh
mesh_vs_a2a() {
    awk -F, 'NR > 1 { k = $1 FS $4 FS $5 FS $7; if ($3 == "mesh") m[k] = $8; else a[k] = $8 }
        END { n = 0; for (k in m) { if (!(k in a)) { print "unpaired " k; exit } n++
              if (m[k] + 0 < a[k] + 0) { print "faster " k ": " m[k] " < " a[k]; exit } } print n }' "$1"
}
if [ "$(mesh_vs_a2a "$e/elk-fig19-21-mesh.csv")" = 48 ]; then ok
else bad "fig19-21 mesh against all-to-all: $(mesh_vs_a2a "$e/elk-fig19-21-mesh.csv")"; fi
if [ "$(mesh_vs_a2a "$e/elk-fig22.csv")" = 108 ]; then ok
else bad "fig22 mesh against all-to-all: $(mesh_vs_a2a "$e/elk-fig22.csv")"; fi
# each byte crosses one link on all-to-all (byte-hops = the bytes landing), several on the mesh
if awk -F, 'NR > 1 && $7 == "full" { r = $11 / $10; if ($3 == "mesh") r *= 4; if (($3 == "mesh") != (r > 2) ||
        ($3 != "mesh" && (r < 0.999 || r > 1.001))) bad = 1 } END { exit bad }' "$e/elk-fig19-21-mesh.csv"
then ok; else bad "hop_util against link_util: $(grep ',full,' "$e/elk-fig19-21-mesh.csv" | head -n 4)"; fi
expect_out elk-json '"format":	"rotor-reproduce-elk"' -- reproduce elk --models llama2-7b --max-batch 1 -o "$e" --json
if grep -q '"mesh_no_faster":	8' "$out"; then ok; else bad "elk json lacks the mesh summary"; fi
# Table 2, Figures 23, 24 and 5-8 (issue 44) in the same run: the JSON keys, the files and
# their columns, Figure 23's invariant (Full never slower than Static)
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
# Figure 6: a demand column per preload space (0-512 KB), every row complete, the JSON key
f6h="time_us,demand_gbps_0kb,demand_gbps_32kb,demand_gbps_64kb,demand_gbps_128kb,demand_gbps_256kb,demand_gbps_384kb,demand_gbps_512kb"
if [ "$(head -n 1 "$e/elk-fig6.csv")" = "$f6h" ] && [ "$(wc -l <"$e/elk-fig6.csv")" -gt 10 ] &&
    awk -F, 'NF != 8 { bad = 1 } END { exit bad }' "$e/elk-fig6.csv" && tail -n 1 "$e/elk-fig6.svg" | grep -q "</svg>" &&
    grep -q '"fig6":' "$out"
then ok; else bad "fig6: $(head -n 3 "$e/elk-fig6.csv")"; fi
if ls "$e" | grep -q '\.tmp\.'; then bad "a temporary is left: $(ls "$e")"; else ok; fi
expect_out help "the cores at 2.7 GB/s of HBM each (Figure 23" -- reproduce --help
expect_error full-grid 2 "--full-grid: only elk takes it" -- reproduce t10 --full-grid --models nerf-t10
expect_error elk-no-hbm 2 "elk: chip 'ipu-mk2' has no HBM" -- reproduce elk --chip ipu-mk2 --models llama2-7b -o "$e"

finish cli_reproduce
