#!/bin/sh
# CLI tests of `rotor verify`: the acceptance runs, plan files, determinism,
# exit statuses and one-line errors.
# Run by `make test` as `ROTOR=build/rotor sh tests/cli_verify.sh`.
. "$(dirname "$0")/lib.sh"
MM='C[m,n] += A[m,k] * B[k,n]'
BMM='C[b,m,n] += A[b,m,k] * B[b,k,n]'
CONV='O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]'
plan=$tmpdir/plan
out2=$tmpdir/out2

# expect_pass NAME LAST -- ARGS...: exits 0, the last stdout line is LAST,
# and no line says FAIL.
expect_pass() {
    name=$1 last=$2
    shift 3
    "$ROTOR" "$@" >"$out" 2>"$err"
    got=$?
    if [ "$got" -ne 0 ]; then bad "$name: exit $got ($(tail -n 3 "$out") $(cat "$err"))"; return; fi
    if [ "$(tail -n 1 "$out")" != "$last" ]; then bad "$name: last line '$(tail -n 1 "$out")', want '$last'"; return; fi
    if grep -q '^FAIL' "$out"; then bad "$name: $(grep '^FAIL' "$out" | head -n 1)"; return; fi
    ok
}

# Acceptance (issue 3): 200 random valid plans of each operator on ipu-mk2.
# Under the sanitizers 50 (25 of the element-wise ones), the first drawn
# from the same seed: the same emulator code, a quarter of the 14 s these
# runs took under ASan; the plain build verifies all of them.
case $ROTOR in
*/san/*) n=50 ne=25 ;;
*) n=200 ne=100 ;;
esac
expect_pass random-matmul "$n passed, 0 failed" -- verify --expr "$MM" --dim m=64,k=96,n=80 --chip ipu-mk2 --random $n --seed 1
expect_pass random-batch-matmul "$n passed, 0 failed" -- verify --expr "$BMM" --dim b=3,m=24,k=40,n=17 --chip ipu-mk2 --random $n --seed 1
expect_pass random-conv3x3-padded "$n passed, 0 failed" -- verify --expr "$CONV" --dim b=2,f=8,c=6,h=14,w=14,kh=3,kw=3 --chip ipu-mk2 --random $n --seed 1
expect_pass random-layernorm-affine "$ne passed, 0 failed" -- verify --expr 'Y[s,d] = X[s,d] * G[d] + Bb[d]' --dim s=33,d=50 --random $ne --seed 2
expect_pass random-softmax-denominator "$ne passed, 0 failed" -- verify --expr 'Y[s] += exp(X[s,d])' --dim s=21,d=70 --random $ne --seed 2
expect_pass best-matmul "1 passed, 0 failed" -- verify --expr "$MM" --dim m=64,k=96,n=80 --best
expect_pass pareto-matmul-small "$(
    "$ROTOR" plan --expr "$MM" --dim m=32,k=64,n=48 --pareto | sed -n 's/^Pareto frontier.*, \([0-9]*\) plans$/\1/p'
) passed, 0 failed" -- verify --expr "$MM" --dim m=32,k=64,n=48 --pareto

# One line per plan, each OK with its error and the plan, and the exchange
# time equal to the model's.
"$ROTOR" verify --expr "$MM" --dim m=64,k=96,n=80 --random 20 --seed 5 >"$out" 2>"$err"
if [ "$(grep -c '^OK   max error [0-9.e+-]*  exchange [0-9.]* us = model  F_op m=' "$out")" -eq 20 ] &&
    [ "$(wc -l <"$out")" -eq 21 ]; then ok; else bad "line format: $(head -n 2 "$out")"; fi

# Deterministic for a seed; another seed gives other plans.
"$ROTOR" verify --expr "$MM" --dim m=64,k=96,n=80 --random 30 --seed 9 --threads 1 >"$out2" 2>"$err"
"$ROTOR" verify --expr "$MM" --dim m=64,k=96,n=80 --random 30 --seed 9 --threads 2 >"$out" 2>"$err"
if cmp -s "$out" "$out2"; then ok; else bad "--seed 9 is not deterministic across thread counts"; fi
"$ROTOR" verify --expr "$MM" --dim m=64,k=96,n=80 --random 30 --seed 10 >"$out2" 2>"$err"
if cmp -s "$out" "$out2"; then bad "--seed 9 and --seed 10 sampled the same plans"; else ok; fi

# A plan file written by `rotor plan --json` verifies.
if "$ROTOR" plan --expr "$MM" --dim m=64,k=96,n=80 --json >"$plan" 2>"$err"; then
    expect_pass plan-file "1 passed, 0 failed" -- verify --expr "$MM" --dim m=64,k=96,n=80 --plan "$plan"
    # the file names its operator, extents and chip (issue 19: other --dim were
    # once taken, and a plan for 64x96x80 "passed" on another size)
    expect_pass plan-file-alone "1 passed, 0 failed" -- verify --plan "$plan"
    expect_error plan-file-other-dims 2 "--dim: $plan: the plan is for m=64,k=96,n=80" -- verify --plan "$plan" --dim m=65,k=64,n=64
    expect_error plan-file-other-chip 2 "--chip: $plan: the plan is for chip 'ipu-mk2', not 'ipu-pod4'" -- verify --plan "$plan" --chip ipu-pod4
    # (a file written before 2026-12-04 names its chip only; one that carries it must agree)
    sed 's|"chip":[^,]*|"chip":\t"chips/example-mesh.json"|' "$plan" >"$tmpdir/namecf.json"
    expect_error plan-file-chip-name 2 "chip_file.name: 'ipu-mk2' is not the plan's chip, 'chips/example-mesh.json'" -- verify --plan "$tmpdir/namecf.json"
    # a key the plan does not have, and a cost model rotor does not know, are refused
    sed 's/"f_t":\t{/"f_t":\t{"Z": {"m": 1},/' "$plan" >"$tmpdir/badkey.json"
    expect_error plan-file-key 2 "badkey.json: plan.f_t.Z: not a tensor of" -- verify --plan "$tmpdir/badkey.json"
    sed 's/"cost_model":\t"v1"/"cost_model":\t"v9"/' "$plan" >"$tmpdir/badcm.json"
    expect_error plan-file-cost-model 2 "badcm.json: cost_model: expected a cost model rotor has (v1), got \"v9\"" -- verify --plan "$tmpdir/badcm.json"
    sed -e 's|"chip":[^,]*|"chip":\t"chips/example-mesh.json"|' -e '/"chip_file":/d' "$plan" >"$tmpdir/pathchip.json"
    expect_error plan-file-chip-path 2 "chip: 'chips/example-mesh.json' is not a preset; name its chip file with --chip FILE" -- verify --plan "$tmpdir/pathchip.json"
else bad "rotor plan --json failed: $(cat "$err")"; fi

# Help.
if "$ROTOR" verify --help >"$out" 2>"$err" && grep -q -- '--random N' "$out" && [ ! -s "$err" ]; then ok
else bad "verify --help"; fi

# Bad input: exit 2, one line.
expect_error no-mode 2 "give one of --plan FILE, --best, --pareto, --random N" -- verify --expr "$MM" --dim m=4,k=4,n=4
expect_error two-modes 2 "give only one of" -- verify --expr "$MM" --dim m=4,k=4,n=4 --best --pareto
expect_error random-zero 2 "--random: expected 1 to" -- verify --expr "$MM" --dim m=4,k=4,n=4 --random 0
expect_error random-text 2 "--random: expected 1 to" -- verify --expr "$MM" --dim m=4,k=4,n=4 --random many
expect_error seed-negative 2 "--seed: expected a non-negative integer" -- verify --expr "$MM" --dim m=4,k=4,n=4 --random 3 --seed -1
expect_error missing-expr 2 "--expr is required" -- verify --dim m=4,k=4,n=4 --best
expect_error bad-dims 2 "k=0: extent must be at least 1" -- verify --expr "$MM" --dim m=4,k=0,n=4 --best
expect_error malformed-expr 2 "column 8: expected an axis name" -- verify --expr 'C[m,n += A[m,k] * B[k,n]' --dim m=4,k=4,n=4 --best
expect_error unknown-function 2 "function 'bessel' (column 10) is not one the evaluator knows" -- verify --expr 'Y[s,d] = bessel(X[s,d])' --dim s=4,d=4 --best
expect_error missing-plan-file 2 "cannot open" -- verify --expr "$MM" --dim m=4,k=4,n=4 --plan /nonexistent/plan.json
expect_error plan-for-other-expr 2 "the plan is for another expression" -- verify --expr "$BMM" --dim b=2,m=4,k=4,n=4 --plan "$plan"
# Out-of-range numbers in a plan file are refused before any conversion to an
# integer (a double beyond int64_t cast to one is undefined behaviour; clang's
# UBSan checks it).
for huge in 1e300 -1e300 9.5e18 1.5; do
    awk -v v="$huge" '/"F_op"/ { f = 1 } f && /"m":/ { sub(/[0-9]+/, v); f = 0 } { print }' "$plan" >"$tmpdir/huge.json"
    expect_error "plan-file-m-$huge" 2 "F_op.m: expected a positive integer" -- verify --expr "$MM" --dim m=64,k=96,n=80 --plan "$tmpdir/huge.json"
done
expect_error unknown-option 2 "unknown option '--fast'" -- verify --expr "$MM" --dim m=4,k=4,n=4 --best --fast
expect_error unknown-chip 2 "unknown chip 'ipu-mk9'" -- verify --expr "$MM" --dim m=4,k=4,n=4 --best --chip ipu-mk9

# on a mesh the emulated exchange is the all-to-all count (the emulator lays nothing on the grid):
# every frontier plan passes (14 of 20 failed against the mesh's price), and --random draws plans
# the mesh can lay out (8 of 20 were refused as invalid)
expect_out mesh-pareto "^20 passed, 0 failed$" -- verify --expr 'C[m,n] += A[m,k] * B[k,n]' --dim m=256,k=384,n=1536 --chip ipu-mk2-mesh --pareto
expect_out mesh-random "^20 passed, 0 failed$" -- verify --expr 'C[m,n] += A[m,k] * B[k,n]' --dim m=64,k=96,n=128 --chip ipu-mk2-mesh --random 20
# ... and says so: the mesh's own price of that plan is rotor plan's (0.279 us here), not 0.559
# (until 2026-12-04 the line read "= model"; found by an audit helper)
expect_out mesh-label "exchange 0.558545 us = model's all-to-all price (the mesh's: rotor simulate)" -- verify --expr 'C[m,n] += A[m,k] * B[k,n]' --dim m=64,k=64,n=64 --chip ipu-mk2 --set topology=mesh --set mesh_width=4 --set mesh_height=4 --set cores_per_chip=16 --set sram_bytes=2000 --set shift_buffer_bytes=64 --best

# a plan file carries the chip it was searched on: a --set there is verified on that chip (the
# preset of its name priced the exchange at 10.385 us against the file's 114.24, "= model")
"$ROTOR" plan --expr "$MM" --dim m=512,k=768,n=3072 --set link_gbps=0.5 --constraints memory_cap=20000 --json >"$tmpdir/slow.json" 2>"$err" ||
    bad "plan --set --json: $(cat "$err")"
expect_out plan-chip "^OK   max error [0-9.e-]*  exchange 114.240000 us = model" -- verify --plan "$tmpdir/slow.json"

# inputs in the function's domain (acosh and pow failed every plan on [-1, 1)), and --random
# verifies distinct plans, saying when fewer exist than asked
expect_out acosh "^1 passed, 0 failed$" -- verify --expr 'C[m] += acosh(A[m,k])' --dim m=64,k=32 --best
expect_out pow "^1 passed, 0 failed$" -- verify --expr 'C[m,n] += pow(A[m,k], B[k,n])' --dim m=16,k=8,n=8 --best
expect_out random-distinct "^96 passed, 0 failed (96 distinct plans in 10000 draws; 100 asked)$" -- \
    verify --expr "$MM" --dim m=2,k=2,n=1 --random 100

finish cli_verify
