#!/bin/sh
# CLI tests of a GPU chip (issue 43; docs/gpu.md): `rotor plan` and `rotor
# compile` on a100-80gb (the numbers of the model as implemented: a change to
# the model changes them on purpose), their JSON, and the one-line refusals of
# the commands and options that cannot take a GPU.
# Run by `make test` as `ROTOR=build/rotor sh tests/cli_gpu.sh`.
. "$(dirname "$0")/lib.sh"
mm='C[m,n] += A[m,k] * B[k,n]'

# 8192^3 fp16: tests/test_gpu.c works its tile, waves and traffic by hand (128x128,
# 2 CTAs an SM, 38 tiles on the busiest SM + each SM's last, exposed store)
run_saved "$tmpdir/p8k" -- plan --chip a100-80gb --expr "$mm" --dim m=8192,n=8192,k=8192
expect_saved p8k-chip "^chip          a100-80gb: GPU, 108 SMs at 1410 MHz, fp16 312.0 TFLOP/s, HBM 2039 GB/s, L2 40 MiB, launch 5.0 us" "$tmpdir/p8k"
expect_saved p8k-tile "^tile          128x128, k-slice 32, split-K 1: 4096 tiles, 2 CTAs per SM, 19 waves" "$tmpdir/p8k"
expect_saved p8k-compute "^  compute          3531.612 us" "$tmpdir/p8k"
expect_saved p8k-total "^  total            3536.612 us   bound: compute" "$tmpdir/p8k"

# a GEMV streams its weight from HBM (134250496 B at 1355/1555 x 2039 GB/s = 75.560 us
# + 5); the add moves 402653184 B (226.624 us + 5); a tiny element-wise op is
# launch-bound; H100's 4096^3 is L2-bound (256x128: A*32 + B*16 + C = 1644167168 B at
# 0.75 x 10137.6 GB/s = 216.247 us + 5)
expect_out gemv "^  total              80.560 us   bound: HBM" -- plan --chip a100-80gb --expr "$mm" --dim m=1,n=8192,k=8192
expect_out add "^  total             231.624 us   bound: HBM" -- plan --chip a100-80gb --expr 'Y[m,n] = X[m,n] + R[m,n]' --dim m=8192,n=8192
expect_out tiny "bound: launch" -- plan --chip a100-80gb --expr 'Y[m,n] = X[m,n] + R[m,n]' --dim m=32,n=32
expect_out h100 "^  total             221.247 us   bound: L2" -- plan --chip h100-sxm --expr "$mm" --dim m=4096,n=4096,k=4096
expect_out set "^  total             231.624 us" -- plan --chip a100-80gb --set launch_us=5 --expr 'Y[m,n] = X[m,n] + R[m,n]' --dim m=8192,n=8192

# JSON: the same numbers
run_saved "$tmpdir/p.json" -- plan --chip a100-80gb --expr "$mm" --dim m=8192,n=8192,k=8192 --json
if /usr/bin/python3 - "$tmpdir/p.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "rotor-gpu-plan" and d["version"] == 1 and d["kernel"] == "gemm"
assert d["gemm"]["tile_m"] == 128 and d["gemm"]["tile_n"] == 128 and d["gemm"]["waves"] == 19
assert abs(d["seconds"] * 1e6 - 3536.612) < 1e-3 and d["bound"] == "compute"
PY
then ok; else bad "plan --json: $(cat "$tmpdir/p.json")"; fi

# a whole model: each operator, the fused attention, the total
run_saved "$tmpdir/bert" -- compile bert-base --chip a100-80gb -q
expect_saved bert-head "^bert-base, batch 1, on a100-80gb (GPU, fp16; attention fused, flash-style): 112 operators, 88 kernels" "$tmpdir/bert"
expect_saved bert-fused "^l0.softmax                   Softmax                        -                 in l0.attn_scores" "$tmpdir/bert"
expect_saved bert-total "^total 603.902 us" "$tmpdir/bert"
run_saved "$tmpdir/bert8" -- compile bert-large --chip a100-80gb --batch 8 -q
expect_saved bert8-total "^total 3601.229 us: compute-bound 2599.268" "$tmpdir/bert8"
run_saved "$tmpdir/unfused" -- compile bert-base --chip a100-80gb --set fused_attention=0 -q
expect_saved unfused-head "attention unfused): 112 operators, 112 kernels" "$tmpdir/unfused"
run_saved "$tmpdir/bert.json" -- compile bert-base --chip a100-80gb --json
if /usr/bin/python3 - "$tmpdir/bert.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "rotor-gpu-compile" and d["chip"] == "a100-80gb" and d["fused_attention"] is True
ops = d["operators"]
assert len(ops) == 112
assert abs(sum(o.get("seconds", 0) for o in ops) - d["total"]["seconds"]) < 1e-12
assert sum(1 for o in ops if o["kernel"] == "fused") == 24 and d["total"]["kernels"] == 88
PY
then ok; else bad "compile --json: $(head -c 400 "$tmpdir/bert.json")"; fi

# a GPU chip file: from a preset, and one naming a bad key
printf '{"format": "rotor-chip", "version": 1, "kind": "gpu", "base": "a100-80gb", "name": "a100-half", "sms": 54}\n' >"$tmpdir/half.json"
expect_out file "^chip          a100-half: GPU, 54 SMs" -- plan --chip "$tmpdir/half.json" --expr "$mm" --dim m=64,n=64,k=64
printf '{"format": "rotor-chip", "version": 1, "kind": "gpu", "base": "a100-80gb", "l2_bytes": 0}\n' >"$tmpdir/bad.json"
# Llama 2 70B's 138 GB of FP16 weights do not fit an 80 GB A100: refused, not timed
expect_error gpu-hbm-full 1 "model 'llama2-70b' needs 138339172352 bytes of HBM at once (137953296384 of weights and KV cache, 385875968 of activations at their peak) in fp16, more than a100-80gb's 85899345920 (hbm_bytes)" -- compile llama2-70b --chip a100-80gb
expect_error bad-key 2 "bad.json: l2_bytes: expected a positive integer, got 0" -- plan --chip "$tmpdir/bad.json" --expr "$mm" --dim m=64,n=64,k=64
expect_error bad-set 2 "rotor plan: --set: sms: expected a positive integer, got '0'" -- plan --chip a100-80gb --set sms=0 --expr "$mm" --dim m=64,n=64,k=64

# the commands that model an ICCA refuse a GPU in one line
gpu_line="chip 'a100-80gb' is a GPU (kind gpu): only rotor plan and rotor compile model a GPU (docs/gpu.md)"
expect_error simulate 2 "rotor simulate: $gpu_line" -- simulate bert-base --chip a100-80gb
expect_error schedule 2 "rotor schedule: $gpu_line" -- schedule bert-base --chip a100-80gb
expect_error explore 2 "rotor explore: $gpu_line" -- explore bert-base --chip a100-80gb --sweep batch=1,2
expect_error run 2 "rotor run: $gpu_line" -- run "$(dirname "$0")/../examples/tiny-cnn.onnx" --chip a100-80gb
expect_error sim-file 2 "kind: a GPU chip: only rotor plan and rotor compile model a GPU" -- simulate bert-base --chip "$tmpdir/half.json"
# and the options of an ICCA plan or compile
expect_error pareto 2 "rotor plan: --pareto has no meaning on a GPU chip" -- plan --chip a100-80gb --expr "$mm" --dim m=8,n=8,k=8 --pareto
expect_error compare 2 "rotor compile: --compare has no meaning on a GPU chip" -- compile bert-base --chip a100-80gb --compare
expect_error sweep 2 "rotor compile: a GPU chip takes one --batch" -- compile bert-base --chip a100-80gb --batch 1,2
finish cli_gpu
