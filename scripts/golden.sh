#!/bin/bash
# golden.sh ROTOR DIR: runs the golden command set, the 21 commands a
# change with no behaviour change (the house work, issues 27 and 40) must
# leave byte-identical, each one's stdout, stderr and exit status into
# DIR/N.out.  golden.sh --compare DIR1 DIR2 diffs two such folders with the
# wall-clock fields masked (search and schedule seconds, "wall_s") and
# exits 1 on any other difference.
# Covers plan, verify, compile (T10, the VGM baselines, the pipeline, a
# mesh), model (zoo and ONNX), simulate, schedule (Elk's designs, the
# replay), explore, run and reproduce.  Needs libonnx-testdata.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
norm() {
    sed -E 's/"wall_s":[[:space:]]*[0-9.e+-]+/"wall_s": W/; s/[0-9.]+ s$/W s/
        /^(basic|static|dyn|full|ideal|roofline) /{s/[0-9.]+$/W/}
        /^dyn  +[0-9.]+ +[0-9.]+ +[-+][0-9.]+ /{s/^((\S+\s+){6})[0-9.]+/\1W/}' "$1"
}
if [ "${1:-}" = --compare ]; then
    st=0
    for f in "$2"/*.out; do
        b=$(basename "$f")
        if ! diff <(norm "$f") <(norm "$3/$b"); then echo "golden: $b differs"; st=1; fi
    done
    [ $st = 0 ] && echo "golden: all $(ls "$2"/*.out | wc -l) identical (wall-clock fields masked)"
    exit $st
fi
R=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
O=$2
mkdir -p "$O" && rm -f "$O"/*.out
O=$(cd "$O" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2
T=/usr/share/libonnx-testdata/data/node
n=0
g() {
    n=$((n + 1))
    { echo "## $*"; "$R" "$@" 2>&1; echo "rc=$?"; } >"$O/$n.out"
}
mm='C[m,n] += A[m,k] * B[k,n]'
g plan --expr "$mm" --dim m=32,k=5120,n=15360 --chip ipu-mk2 --format t10
g plan --expr "$mm" --dim m=512,k=1024,n=1024 --chip ipu-mk2 --json
g plan --expr "$mm" --dim m=64,k=256,n=256 --chip ipu-mk2 --pareto
g verify --expr "$mm" --dim m=64,k=64,n=64 --chip ipu-mk2 --random 5
g compile bert-large --batch 8 --chip ipu-mk2 --compare
g compile resnet-50 --batch 4 --chip ipu-mk2 --json
g compile bert-base --batch 2 --layers 2 --chip ipu-mk2 --pipeline
g compile bert-base --batch 2 --layers 1 --chip ipu-mk2 --set topology=mesh --set mesh_width=32 --set mesh_height=46
g model bert-large --batch 8
g model "$root/examples/tiny-cnn.onnx" --group
g model llama2-7b --batch 1
g simulate bert-base --batch 2 --layers 2 --chip ipu-mk2 --compare
g simulate bert-base --batch 2 --layers 1 --chip ipu-mk2 --set topology=mesh --set mesh_width=32 --set mesh_height=46
g schedule llama2-13b --batch 8 --design all
g schedule llama2-7b --batch 1 --layers 2 --design full --per-op --json
g schedule llama2-7b --batch 4 --layers 2 --design dyn --simulate
g explore llama2-7b --layers 2 --sweep hbm-bw=4,8,16 --design basic,full -o ex
cat ex*.csv >>"$O/$n.out" 2>&1
g run --check "$T/test_conv_with_strides_padding"
g compile "$root/examples/tiny-cnn.onnx" --chip ipu-mk2
g schedule llama2-70b --batch 32 --design full
g reproduce t10 --models nerf-t10 --max-batch 2 -q -o rep
cat rep/*.csv >>"$O/$n.out" 2>&1
echo "golden: $n commands into $O"
