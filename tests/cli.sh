#!/bin/sh
# CLI tests: exit statuses, one-line errors, and the benchmark's output format.
# Run by `make test` as `ROTOR=build/rotor sh tests/cli.sh` (build/san/rotor under SAN=1).
. "$(dirname "$0")/lib.sh"
MM='C[m,n] += A[m,k] * B[k,n]'
BENCH_DIMS=m=32,k=5120,n=15360

expect_error malformed-expr 2 "column 8: expected an axis name, got '='" -- plan --expr 'C[m,n += A[m,k] * B[k,n]' --dims $BENCH_DIMS
expect_error missing-op 2 "expected '=' or '+='" -- plan --expr 'C[m,n] A[m,k]' --dims m=1,k=2,n=3
expect_error axis-without-extent 2 "column 13: axis 'q' has no extent" -- plan --expr 'C[m,n] += A[q,m] * B[q,n]' --dims m=32,n=4
expect_error unknown-axis 2 "axis 'q' is not in the expression" -- plan --expr "$MM" --dims m=32,k=5120,n=15360,q=4
expect_error zero-dim 2 "k=0: extent must be at least 1" -- plan --expr "$MM" --dims m=32,k=0,n=15360
expect_error negative-dim 2 "k=-5: extent must be at least 1" -- plan --expr "$MM" --dims m=32,k=-5,n=15360
expect_error huge-dim 2 "extent exceeds the limit" -- plan --expr "$MM" --dims m=32,k=1000000000000000,n=15360
expect_error text-dim 2 "expected a positive integer" -- plan --expr "$MM" --dims m=32,k=lots,n=15360
expect_error unknown-chip 2 "unknown chip 'ipu-mk9'" -- plan --expr "$MM" --dims $BENCH_DIMS --chip ipu-mk9
expect_error chip-bad-key 2 "chips/bad-key.json: link_gbs: unknown key" -- plan --expr "$MM" --dims $BENCH_DIMS --chip chips/bad-key.json
expect_error chip-bad-type 2 "chips/bad-type.json: link_gbps: expected a positive number" -- plan --expr "$MM" --dims $BENCH_DIMS --chip chips/bad-type.json
expect_error chip-missing-file 2 "cannot open" -- plan --expr "$MM" --dims $BENCH_DIMS --chip chips/none.json
expect_error set-bad-value 2 "link_gbps: expected a positive number" -- plan --expr "$MM" --dims $BENCH_DIMS --set link_gbps=fast
expect_error set-unknown-key 2 "warp: unknown key" -- plan --expr "$MM" --dims $BENCH_DIMS --set warp=9
expect_error conflict-t10-pareto 2 "--pareto conflicts with --format t10" -- plan --expr "$MM" --dims $BENCH_DIMS --format t10 --pareto
expect_error conflict-twice 2 "--chip given twice" -- plan --expr "$MM" --dims $BENCH_DIMS --chip ipu-mk2 --chip ipu-pod4
expect_error bad-format 2 "expected table, json or t10" -- plan --expr "$MM" --dims $BENCH_DIMS --format yaml
expect_error unknown-option 2 "unknown option '--fast'" -- plan --expr "$MM" --dims $BENCH_DIMS --fast
expect_error missing-expr 2 "--expr is required" -- plan --dims $BENCH_DIMS
expect_error bad-constraint 2 "unknown key 'speed'" -- plan --expr "$MM" --dims $BENCH_DIMS --constraints speed=3
expect_error unknown-command 2 "unknown command 'plot'" -- plot
expect_error did-you-mean-command 2 "unknown command 'compil' (did you mean 'compile'?)" -- compil
# one vocabulary (issue 24): --dim and --json everywhere; the old spellings keep working
MM='C[m,n] += A[m,k] * B[k,n]'
expect_out plan-dim-json '"format":.*"rotor-plan"' -- plan --expr "$MM" --dim m=32,k=64,n=16 --json
expect_out plan-dims-format '"format":.*"rotor-plan"' -- plan --expr "$MM" --dims m=32,k=64,n=16 --format json
expect_error plan-dim-twice 2 "--dim and --dims are the same option; give one" -- plan --expr "$MM" --dim m=3,k=3,n=3 --dims m=3,k=3,n=3
expect_error plan-json-format 2 "--json conflicts with --format t10" -- plan --expr "$MM" --dim m=3,k=3,n=3 --json --format t10
expect_out verify-dim "1 passed, 0 failed" -- verify --expr "$MM" --dim m=16,k=16,n=16 --best
expect_out compile-json '"format":.*"rotor-program"' -- compile nerf-t10 --json
expect_error no-fit 1 "no valid plan fits" -- plan --expr "$MM" --dims $BENCH_DIMS --constraints memory_cap=64

# The benchmark's format: F_op then the six f_t lines, in the documented order,
# and nothing else on stdout.
if "$ROTOR" plan --expr "$MM" --dims $BENCH_DIMS --chip ipu-mk2 --format t10 >"$out" 2>"$err"; then
    keys=$(sed 's/:.*//' "$out" | tr '\n' ' ')
    if [ "$keys" = "F_op f_t_A_m f_t_A_k f_t_B_k f_t_B_n f_t_C_m f_t_C_n " ] &&
        grep -Eq '^F_op: \[[0-9]+, [0-9]+, [0-9]+\]$' "$out" && [ ! -s "$err" ]; then ok
    else bad "t10 format: $(cat "$out")"; fi
else bad "t10 run failed: $(cat "$err")"; fi

# JSON: carries format, version and the same plan as t10.
if "$ROTOR" plan --expr "$MM" --dims $BENCH_DIMS --format json >"$out" 2>"$err" &&
    grep -q '"format":[[:space:]]*"rotor-plan"' "$out" && grep -q '"total_s":' "$out"; then ok
else bad "json format: $(head -c 300 "$out") $(cat "$err")"; fi

# Same plan whatever the thread count.
a=$("$ROTOR" plan --expr "$MM" --dims $BENCH_DIMS --format t10 --threads 1)
b=$("$ROTOR" plan --expr "$MM" --dims $BENCH_DIMS --format t10 --threads 2)
if [ -n "$a" ] && [ "$a" = "$b" ]; then ok; else bad "threads 1 vs 2 differ"; fi

# --help on every command exits 0 and prints usage.
for c in "--help" "plan --help"; do
    # shellcheck disable=SC2086
    if "$ROTOR" $c | grep -q "usage: rotor"; then ok; else bad "$c"; fi
done

finish cli
