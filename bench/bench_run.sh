#!/bin/sh
# bench_run.sh ROTOR ONNXGEN: `rotor run` of a ResNet-18 forward at batch 1
# (issue 21: "in seconds, not minutes").  The model is written by
# tools/onnxgen (torchvision's ResNet-18 with pseudo-random weights) into
# build/; the run compiles it, emulates every operator's plan on the 1,472
# virtual cores, executes it directly in double, and simulates it.
set -e
ROTOR=${1:-build/rotor}
ONNXGEN=${2:-build/onnxgen}
model=$(dirname "$ROTOR")/resnet-18.onnx
[ -f "$model" ] || "$ONNXGEN" resnet-18 "$model"
echo "bench_run: rotor run $model (ResNet-18, batch 1, ipu-mk2)"
t0=$(date +%s.%N)
if [ -x /usr/bin/time ]; then
    /usr/bin/time -f "peak RSS %M KB" -o "$model.rss" "$ROTOR" run "$model" | tail -n 3
    cat "$model.rss"; rm -f "$model.rss"
else
    "$ROTOR" run "$model" | tail -n 3
fi
t1=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" 'BEGIN { printf "wall %.1f s (compile, emulation, direct execution in double, simulation)\n", b - a }'

# The largest real model the tests have (moved from tests/cli_run.sh: 41 s of
# CPU): its own weights, every output against the direct execution.
real=$(dirname "$0")/../../shared/onnx/real/light_resnet50.onnx
if [ -f "$real" ]; then
    echo "bench_run: rotor run $real"
    t0=$(date +%s.%N)
    "$ROTOR" run "$real" | tail -n 1
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "wall %.1f s\n", b - a }'
else
    echo "bench_run: skipping light_resnet50: ../shared/onnx is absent"
fi
