#!/bin/sh
# CLI tests of `rotor reproduce kapla` (docs/reproduction.md, "KAPLA") on two quick networks
# (MLP, LSTM), inference and training (Fig. 7): the tables, the files and their columns, numbers that must be the solvers' own,
# JSON, and one-line errors.
# Run by `make test` as `ROTOR=build/rotor sh tests/cli_reproduce_kapla.sh`.
. "$(dirname "$0")/lib.sh"
d=$tmpdir/kapla

expect_out help "kapla: KAPLA's training and inference evaluation" -- reproduce --help
"$ROTOR" reproduce kapla --models mlp,lstm -o "$d" -q >"$out" 2>"$err"
if [ $? -eq 0 ]; then ok; else bad "two networks: $(cat "$err")"; fi
for pat in "^Figure 7: cost relative to B (exact), training (SGD step: forward, backward dX/dW, update), ipu-mk2, batch 64" \
    "^MLP            10    1.000    1.000    1.266    1.080  4/6; 0; 0, 0" \
    "^LSTM            3    1.000    1.000    1.164    1.009  1/2; 0; 0, 0" \
    "^K by pass: forward 0.00% (5 layers), backward 0.00% (8 layers)" \
    "^paper (Fig. 7): K 2.2% (worst 10%, MLP), M 17.7% (up to 1.5x), R up to 1.9x" \
    "^acceptance (K within 3% of B on average, 10% at worst): met" "^training  " \
    "^K's speed-up, training: over B " "^Figure 9: cost relative to B (exact), inference, ipu-mk2, batch 64, R at rate 0.1" \
    "^MLP             4    1.000    1.000    1.257    1.131  0; 0, 0" \
    "^paper (Fig. 9): K 7.7%, R 59.0%, M 36.1%" \
    "^Figure 10: .*kapla-edge, batch 1, R at rate 0.85 (the edge preset as it is: --chip and --set apply to Figures 7 and 9)$" \
    "^Table IV: solver wall time" "paper: training 518x over B, 265x over M" \
    "^a quarter of the SRAM       64 " "^LSTM           15      9       1    93.3% " \
    "^least pruned: 93.3% (acceptance: at least 85% on every network)" "^k = all  overhead   0.00%"; do
    if grep -q -- "$pat" "$out"; then ok; else bad "tables lack '$pat': $(head -n 12 "$out")"; fi
done
# Table V's labels hold a comma ("the chip, batch 8"): quoted, so every row has 4 fields
if [ "$(awk -F, '!/"/ { if (NF != 4) bad = 1 } /"/ { if (NF != 5) bad = 1 } END { print bad + 0 }' "$d/kapla-table5.csv")" = 0 ] &&
    grep -q '^"the chip, batch 8",8,' "$d/kapla-table5.csv"; then ok; else bad "table5 csv: $(cat "$d/kapla-table5.csv")"; fi
for f in kapla-fig7.csv kapla-fig7.svg kapla-fig9.csv kapla-fig10.csv kapla-table5.csv kapla-table6.csv kapla-fig11.csv \
    kapla-fig9.svg kapla-fig10.svg kapla-fig11.svg; do
    if [ -s "$d/$f" ]; then ok; else bad "$f missing"; fi
done
f=$d/kapla-fig9.csv
if [ "$(head -n 1 "$f")" = "network,layers,b_nofit,r_missed,m_missed,b_rel,k_rel,r_rel,m_rel,b_s,k_s,r_s,m_s" ] &&
    [ "$(wc -l <"$f")" -eq 3 ]; then ok; else bad "fig9 csv: $(cat "$f")"; fi
# MLP-L at batch 64: R 25.7% and M 13.1% off the exact search, K on it
if grep -q "^mlp,4,0,0,0,1.000000,1.000000,1.256983,1.131188," "$f"; then ok; else bad "fig9 mlp: $(cat "$f")"; fi
# training: MLP-L's SGD step, 4 forward and 6 of its gradient contractions (dX, dW) at batch 64
f7=$d/kapla-fig7.csv
if [ "$(head -n 1 "$f7")" = "network,layers,forward,backward,b_nofit,r_missed,m_missed,b_rel,k_rel,r_rel,m_rel,k_layer_worst,b_s,k_s,r_s,m_s" ] &&
    grep -q "^mlp,10,4,6,0,0,0,1.000000,1.000000,1.266344,1.079818,0.000000," "$f7" &&
    grep -q "^lstm,3,1,2,0,0,0,1.000000,1.000000,1.163874,1.008563,0.000000," "$f7"; then ok; else bad "fig7 csv: $(cat "$f7")"; fi
if tail -n 1 "$d/kapla-fig7.svg" | grep -q "</svg>" && grep -q "training" "$d/kapla-fig7.svg"; then ok; else bad "fig7 svg"; fi
if [ "$(head -n 1 "$d/kapla-table6.csv")" = "network,total,valid,pareto,pruned,pareto_loss,paper_total,paper_after" ] &&
    grep -q "^mlp,45,33,1,0.9778,.*,784,18$" "$d/kapla-table6.csv"; then ok; else bad "table6 csv: $(cat "$d/kapla-table6.csv")"; fi
if [ "$(cut -d, -f1 "$d/kapla-fig11.csv" | tr '\n' ' ')" = "k 1 2 4 8 0 " ]; then ok; else bad "fig11 csv"; fi
if tail -n 1 "$d/kapla-fig9.svg" | grep -q "</svg>" && grep -q "MLP R" "$d/kapla-fig9.svg"; then ok; else bad "fig9 svg"; fi

# the R figure is `rotor plan --solver random`'s on the layer (MLP-L's first: 64 x 784 x 1500)
r=$("$ROTOR" plan --expr 'C[m,n] += A[m,k] * B[k,n]' --dim m=64,k=784,n=1500 --solver random -q | awk '/^  total/ { print $2 }')
x=$("$ROTOR" plan --expr 'C[m,n] += A[m,k] * B[k,n]' --dim m=64,k=784,n=1500 -q | awk '/^  total/ { print $2 }')
if [ -n "$r" ] && awk -v r="$r" -v x="$x" 'BEGIN { exit !(r >= x) }'; then ok; else bad "plan --solver random: $r, exact $x"; fi
expect_out plan-random "solver random (KAPLA's baseline R" -- plan --expr 'C[m,n] += A[m,k] * B[k,n]' --dim m=64,k=784,n=1500 --solver random -q
expect_out plan-ml "solver ml (KAPLA's baseline M" -- plan --expr 'C[m,n] += A[m,k] * B[k,n]' --dim m=64,k=784,n=1500 --solver ml -q

# JSON, and the same figures again
cp "$f" "$tmpdir/first.csv"
expect_out json '"format":	"rotor-reproduce-kapla"' -- reproduce kapla --models mlp,lstm -o "$d" --json -q
if grep -q '"least_pruned":' "$out" && grep -q '"name":	"lstm"' "$out" && grep -q '"K_train_mean_overhead":' "$out"; then ok; else bad "json lacks a summary or a network"; fi
# (the wall times, columns 10-13, are the run's own)
if [ "$(cut -d, -f1-9 "$f")" = "$(cut -d, -f1-9 "$tmpdir/first.csv")" ]; then ok; else bad "a second run differs"; fi

expect_error unknown-net 2 "--models: unknown network 'alexnt' (did you mean 'alexnet'?)" -- reproduce kapla --models alexnt
expect_error twice-net 2 "^rotor reproduce: --models: 'mlp' is given twice$" -- reproduce kapla --models mlp,lstm,mlp
expect_error max-batch 2 "--max-batch: kapla runs KAPLA's batches" -- reproduce kapla --max-batch 4
expect_error solver-bogus 2 "--solver: expected exact, fast, random or ml, got 'rnd'" -- plan --expr 'C[m,n] += A[m,k] * B[k,n]' --dim m=8,k=8,n=8 --solver rnd
finish cli_reproduce_kapla.sh
