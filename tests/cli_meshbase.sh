#!/bin/sh
# CLI tests of `rotor simulate --expr ... --baseline summa|cannon|gemv|all`:
# the mesh baselines (src/sim/meshbase.c, docs/mesh.md "Baselines") and
# rotor's plan beside them (src/sim/meshcompare.c): text and JSON, each
# baseline's figures, rotor never slower, and the one-line refusals.
# Run by `make test` as `ROTOR=build/rotor sh tests/cli_meshbase.sh`.
. "$(dirname "$0")/lib.sh"
gemm='C[m,n] += A[m,k] * B[k,n]'
mesh="--set cores_per_chip=64 --topology mesh:8x8"

s=$tmpdir/s
run_saved "$s" -- simulate --expr "$gemm" --dim m=256,k=256,n=256 $mesh --baseline summa
expect_saved summa-head "summa on ipu-mk2 (mesh 8x8, 64 cores): C\[m,n\] += A\[m,k\] \* B\[k,n\], m=256,k=256,n=256" "$s"
# ipu-mk2's cores compute or exchange: one panel buffer of A and of B
expect_saved summa-grid "grid 8 x 8 (64 cores), tile m=32 k=32 n=32, 8 k-panels, 10240 bytes of SRAM per core" "$s"
# ipu-mk2's links have no latency: SUMMA's prediction is the simulation's time
expect_saved summa-time "simulated 3.113 us, predicted 3.113 us: +0.00%" "$s"
# where cores compute while links move data, double-buffered panels hide all
# but the first multicast (docs/mesh.md, "SUMMA")
expect_out summa-overlap "8 k-panels, 14336 bytes of SRAM per core" -- simulate --expr "$gemm" --dim m=256,k=256,n=256 \
    $mesh --set compute_overlap=1 --baseline summa
if grep -q "simulated 2.996 us, predicted 2.996 us" "$out"; then ok; else bad "summa-overlap time: $(cat "$out")"; fi
# 8 panels, each multicast along 8 rows and down 8 columns, 32 x 32 FP16
expect_saved summa-moved "moved 262144 bytes in 128 transfers: 128 broadcasts (262144 bytes)" "$s"

expect_out cannon "cannon on ipu-mk2 (mesh 8x8, 64 cores)" -- simulate --expr "$gemm" --dim m=256,k=256,n=256 $mesh --baseline cannon
# skew 2 * 7 * 8 blocks, then 7 rotations of A and B on 64 cores: 1008 shifts of 2 KiB
if grep -q "1008 shifts (2064384 bytes)" "$out" && grep -q "longest route 7 hops" "$out"; then ok; else bad "cannon shifts: $(cat "$out")"; fi
expect_out gemv "reduction groups of 1 rows, tile m=128 k=128 n=1" -- simulate --expr 'y[m] += A[m,k] * x[k]' --dim m=1024,k=1024 $mesh --baseline gemv

"$ROTOR" simulate --expr "$gemm" --dim m=1,k=1024,n=1024 $mesh --baseline gemv --json >"$out" 2>"$err" || bad "json: $(cat "$err")"
if grep -q '"format":	"rotor-baseline"' "$out" && grep -q '"baseline":	"gemv"' "$out" && grep -q '"reduction_hops":	[1-9]' "$out"; then
    ok
else
    bad "json: $(head -c 300 "$out")"
fi

# --baseline all: rotor's own plan (the exact search, replayed from its step-0
# layout) beside every baseline that applies, on an 8 x 8 mesh.  rotor's
# simulated time must be no more than any baseline's: a GEMM and a GEMV.
# no_slower FILE: every baseline row's simulated column (the last but one) is
# at least the rotor row's.
no_slower() {
    awk '$1 == "rotor" { r = $(NF - 1) }
         ($1 == "summa" || $1 == "cannon" || $1 == "gemv") && $2 != "does" { n++; if ($(NF - 1) < r) bad = bad " " $1 }
         END { if (r == "" || n == 0 || bad != "") { print "rotor " r ", slower than:" bad; exit 1 } }' "$1"
}
a=$tmpdir/a
run_saved "$a" -- simulate --expr "$gemm" --dim m=256,k=256,n=256 $mesh --baseline all
expect_saved all-head "rotor against the mesh baselines on ipu-mk2 (mesh 8x8, 64 cores)" "$a"
# 256^3 on 64 cores: every core holds its 32 x 256 rows of A and 256 x 32
# columns of B (replicated 8 times, 34816 bytes with C): no shift at all
expect_saved all-rotor "^rotor  *m=8 k=1 n=8  *64  *34816  *0.134  *0.134  *1.000" "$a"
expect_saved all-summa "^summa  *8x8  *64  *10240  *3.113  *3.113  *23.19" "$a"
expect_saved all-gemv "^gemv  *does not apply: gemv: needs m = 1 or n = 1" "$a"
expect_saved all-verdict "slower in simulation than 0 of the 2 baselines that apply" "$a"
if no_slower "$a" >"$out"; then ok; else bad "gemm: $(cat "$out")"; fi
v=$tmpdir/v
run_saved "$v" -- simulate --expr "$gemm" --dim m=1,k=1024,n=1024 $mesh --baseline all --threads 1
expect_saved all-gemv-runs "^gemv  *8x8 pk 1  *64 " "$v"
expect_saved all-cannon-nofit "^cannon  *does not apply: cannon: no grid's tiles fit the SRAM" "$v"
expect_saved all-gemv-verdict "slower in simulation than 0 of the 2 baselines that apply; with its setup, than 0" "$v"
if no_slower "$v" >"$out"; then ok; else bad "gemv: $(cat "$out")"; fi
"$ROTOR" simulate --expr "$gemm" --dim m=1,k=1024,n=1024 $mesh --baseline all --json >"$out" 2>"$err" || bad "all json: $(cat "$err")"
if grep -q '"format":	"rotor-baseline-table"' "$out" && grep -q '"method":	"rotor+setup"' "$out" &&
    grep -q '"faster":	0' "$out" && grep -q '"applies":	false' "$out"; then
    ok
else
    bad "all json: $(head -c 300 "$out")"
fi
expect_error all-threads 2 "--threads is for --baseline all" -- simulate --expr "$gemm" --dim m=8,k=8,n=8 $mesh --baseline summa --threads 2
expect_error all-all-to-all 2 "baselines: chip ipu-mk2 is all-to-all; the mesh baselines need a 2D mesh" -- simulate --expr "$gemm" --dim m=64,k=64,n=64 --baseline all

# refusals: one line each
expect_error all-to-all 2 "summa: chip ipu-mk2 is all-to-all; the mesh baselines need a 2D mesh" -- simulate --expr "$gemm" --dim m=64,k=64,n=64 --baseline summa
expect_error not-gemm 2 "cannon: not a GEMM: axis b is in C, A and B (a batch axis)" -- simulate --expr 'C[b,m,n] += A[b,m,k] * B[b,k,n]' --dim b=2,m=8,k=8,n=8 $mesh --baseline cannon
expect_error gemv-shape 2 "gemv: needs m = 1 or n = 1" -- simulate --expr "$gemm" --dim m=64,k=64,n=64 $mesh --baseline gemv
expect_error sram 1 "cannon: no grid's tiles fit the SRAM: the smallest need" -- simulate --expr "$gemm" --dim m=8192,k=8192,n=8192 $mesh --baseline cannon
expect_error no-baseline 2 "--expr needs --baseline summa, cannon, gemv or all" -- simulate --expr "$gemm" --dim m=8,k=8,n=8
expect_error no-expr 2 "--baseline needs --expr" -- simulate --baseline summa
expect_error bad-baseline 2 "--baseline: expected summa, cannon, gemv or all, got 'sumam' (did you mean 'summa'?)" -- simulate --expr "$gemm" --dim m=8,k=8,n=8 --baseline sumam
expect_error bad-dim 2 "--dim" -- simulate --expr "$gemm" --dim m=8,k=8 $mesh --baseline summa
expect_error stray 2 "unexpected argument 'prog.json'" -- simulate prog.json --expr "$gemm" --dim m=8,k=8,n=8 $mesh --baseline summa

finish cli_meshbase
