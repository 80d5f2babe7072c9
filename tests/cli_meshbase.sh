#!/bin/sh
# CLI tests of `rotor simulate --expr ... --baseline summa|cannon|gemv`: the
# mesh baselines (src/sim/meshbase.c, docs/mesh.md "Baselines"): text and
# JSON, each baseline's figures, and the one-line refusals.
# Run by `make test` as `ROTOR=build/rotor sh tests/cli_meshbase.sh`.
. "$(dirname "$0")/lib.sh"
gemm='C[m,n] += A[m,k] * B[k,n]'
mesh="--set cores_per_chip=64 --topology mesh:8x8"

s=$tmpdir/s
run_saved "$s" -- simulate --expr "$gemm" --dim m=256,k=256,n=256 $mesh --baseline summa
expect_saved summa-head "summa on ipu-mk2 (mesh 8x8, 64 cores): C\[m,n\] += A\[m,k\] \* B\[k,n\], m=256,k=256,n=256" "$s"
expect_saved summa-grid "grid 8 x 8 (64 cores), tile m=32 k=32 n=32, 8 k-panels, 14336 bytes of SRAM per core" "$s"
# ipu-mk2's links have no latency: SUMMA's prediction is the simulation's time
expect_saved summa-time "simulated 2.996 us, predicted 2.996 us: +0.00%" "$s"
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

# refusals: one line each
expect_error all-to-all 2 "summa: chip ipu-mk2 is all-to-all; the mesh baselines need a 2D mesh" -- simulate --expr "$gemm" --dim m=64,k=64,n=64 --baseline summa
expect_error not-gemm 2 "cannon: not a GEMM: axis b is in C, A and B (a batch axis)" -- simulate --expr 'C[b,m,n] += A[b,m,k] * B[b,k,n]' --dim b=2,m=8,k=8,n=8 $mesh --baseline cannon
expect_error gemv-shape 2 "gemv: needs m = 1 or n = 1" -- simulate --expr "$gemm" --dim m=64,k=64,n=64 $mesh --baseline gemv
expect_error sram 1 "cannon: no grid's tiles fit the SRAM: the smallest need" -- simulate --expr "$gemm" --dim m=8192,k=8192,n=8192 $mesh --baseline cannon
expect_error no-baseline 2 "--expr needs --baseline summa, cannon or gemv" -- simulate --expr "$gemm" --dim m=8,k=8,n=8
expect_error no-expr 2 "--baseline needs --expr" -- simulate --baseline summa
expect_error bad-baseline 2 "--baseline: expected summa, cannon or gemv, got 'sumam' (did you mean 'summa'?)" -- simulate --expr "$gemm" --dim m=8,k=8,n=8 --baseline sumam
expect_error bad-dim 2 "--dim" -- simulate --expr "$gemm" --dim m=8,k=8 $mesh --baseline summa
expect_error stray 2 "unexpected argument 'prog.json'" -- simulate prog.json --expr "$gemm" --dim m=8,k=8,n=8 $mesh --baseline summa

finish cli_meshbase
