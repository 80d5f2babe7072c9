#!/bin/sh
# CLI tests of `rotor run` (docs/run.md): every libonnx-testdata model run
# with --check against its reference outputs (N passed, 0 failed; the ones
# rotor cannot run are listed by reason), the real models of ../shared/onnx
# run with their own weights against a direct execution, and bad input.
# Run by `make test` as `ROTOR=build/rotor sh tests/cli_run.sh`.
. "$(dirname "$0")/lib.sh"
SHARED=../shared/onnx
TESTDATA=/usr/share/libonnx-testdata/data

expect_out help "--check DIR" -- run --help
expect_error no-model 2 "a model file is required" -- run
expect_error not-dir 2 "--check: no/such: not a directory" -- run --check no/such
expect_error bad-data 2 "--data: expected NAME=FILE.pb" -- run x.onnx --data nothing
expect_error missing 2 "no/such.onnx: No such file or directory" -- run no/such.onnx
expect_error zoo 2 "rotor run executes ONNX files" -- run bert-base

# Under the sanitizers (build/san/rotor, several times slower) the sweep runs
# one model per kernel, view and lowering fix, and the real models only mnist,
# so that CI stays within its time; the full sweep runs in the plain build.
case $ROTOR in
*/san/*) san=1 ;;
*) san=0 ;;
esac
SAN_MODELS='/test_(maxpool_2d_pads|averagepool_2d_pads|averagepool_2d_same_upper|conv_with_strides_padding|slice_neg_steps|slice|gather_0|gather_elements_0|concat_2d_axis_0|split_equal_parts_1d|edge_pad|reflect_pad|reduce_max_default_axes_keepdim_example|argmax_default_axis_example|layer_normalization_2d_axis0|instancenorm_example|tril|cumsum_1d_exclusive|depthtospace_example|tile|expand_dim_changed|softmax_large_number|batchnorm_epsilon|clip_default_max|globalmaxpool|dropout_default|training_dropout|loop11|operator_clip|selu|prelu_broadcast|hardsigmoid|nllloss_NCd1d2d3_sum_weight_high_ii|sce_NCd1_mean_weight_negative_ii_log_prob|convtranspose_output_shape|ConvTranspose2d)/$'

if [ -d "$TESTDATA" ]; then
    passed=0 failed=0 cannot=0 total=0
    : >"$tmpdir/reasons"
    # two at a time (CI has two cores); each run's output kept by index
    for d in "$TESTDATA"/*/*/; do
        [ -f "$d/model.onnx" ] && echo "$d"
    done >"$tmpdir/dirs"
    [ "$san" -eq 1 ] && sel=$SAN_MODELS || sel=.
    grep -E "$sel" "$tmpdir/dirs" | awk '{ print NR, $0 }' >"$tmpdir/list"
    # Each shell runs 20 models, and the tally below reads each result with
    # the shell's own read and case: a process costs about 10 ms on CI's
    # machine, and a cat, wc, grep and sed for each of 1,088 models took a
    # third of the suite's CPU.
    ROTOR="$ROTOR" T="$tmpdir" xargs -P 2 -n 40 sh -c '
        while [ $# -ge 2 ]; do
            "$ROTOR" run --check "$2" >"$T/o.$1" 2>"$T/e.$1"
            echo $? >"$T/rc.$1"
            shift 2
        done' sh <"$tmpdir/list"
    while read -r i d; do
        total=$((total + 1))
        rc=
        read -r rc <"$tmpdir/rc.$i"
        # stderr's first line, and n: its lines, 2 meaning two or more
        n=0
        { IFS= read -r line1 && n=1 && IFS= read -r more && n=2; } <"$tmpdir/e.$i"
        if [ "$rc" -eq 0 ]; then
            passed=$((passed + 1))
        elif [ "$rc" -eq 1 ]; then
            failed=$((failed + 1))
            bad "run --check $d: $(grep FAIL "$tmpdir/o.$i" | head -2)"
        elif [ "$rc" -eq 2 ] && [ "$n" -eq 1 ] && [ "${line1#rotor run: }" != "$line1" ]; then
            cannot=$((cannot + 1))
            printf '%s\n' "$line1" >>"$tmpdir/reasons"
        else
            bad "run --check $d: exit $rc: $(head -c 300 "$tmpdir/e.$i")"
        fi
    done <"$tmpdir/list"
    echo "cli_run.sh: libonnx-testdata: $total models: $passed passed, $failed failed, $cannot not run:"
    # the reasons without names and numbers, tallied
    sed -e "s/^rotor run: //" -e "s/^op '[^']*' (\([A-Za-z.]*\)): /\1: /" \
        -e "s/^[^ ]*model.onnx: node '[^']*' (op \([A-Za-z]*\), [^)]*): /import \1: /" \
        -e "s/'[^']*'/'X'/g" -e "s/[0-9][0-9]*/N/g" "$tmpdir/reasons" | sort | uniq -c | sort -rn | head -25 | sed 's/^/    /'
    want=717
    [ "$san" -eq 1 ] && want=32
    if [ "$failed" -eq 0 ] && [ "$passed" -eq "$want" ]; then ok; else bad "testdata: $passed passed (want $want)"; fi
    # -o writes each output as a TensorProto: here byte for byte the reference
    # (same name, dims, type, raw float data)
    mp=$TESTDATA/node/test_maxpool_2d_pads
    expect_out check-line "PASS  y  *1x3x30x30 .*vs reference 'y': max |err| 0 (0 beyond)" -- run --check "$mp"
    expect_out write "PASS" -- run "$mp/model.onnx" --data "x=$mp/test_data_set_0/input_0.pb" -o "$tmpdir"
    if cmp -s "$tmpdir/y.pb" "$mp/test_data_set_0/output_0.pb"; then ok; else bad "-o: y.pb differs from the reference"; fi
    expect_out json '"format":	"rotor-run"' -- run --check "$mp" --json
    expect_error data-size 2 "--data x: shape 3x4x5; input 'x' is 1x3x28x28" -- \
        run "$mp/model.onnx" --data "x=$TESTDATA/node/test_abs/test_data_set_0/input_0.pb"
    expect_error not-pb 2 "not a serialized TensorProto" -- run "$mp/model.onnx" --data "x=$mp/model.onnx"
    # an input file named NAME=FILE is not replaced by the output of that name,
    # refused before a line is printed (check_outputs)
    abs="$TESTDATA/node/test_abs"
    cp "$abs/test_data_set_0/input_0.pb" "$tmpdir/y.pb"
    expect_error data-is-output 2 "^rotor run: -o: $tmpdir/y.pb: is the file 'x=$tmpdir/y.pb' this run reads" -- \
        run "$abs/model.onnx" --data "x=$tmpdir/y.pb" -o "$tmpdir"
    if cmp -s "$abs/test_data_set_0/input_0.pb" "$tmpdir/y.pb"; then ok
    else bad "data-is-output: the input was replaced"; fi
    rm -f "$tmpdir/y.pb"
    # --check: a file of the check folder (a set's reference, the model) is
    # not replaced either, however it is reached (a hard link, a symlink)
    cp -r "$abs" "$tmpdir/chk"
    ln "$tmpdir/chk/test_data_set_0/output_0.pb" "$tmpdir/chk/test_data_set_0/y.pb"
    expect_error check-reference-is-output 2 \
        "^rotor run: -o: $tmpdir/chk/test_data_set_0/y.pb: is the file '$tmpdir/chk/test_data_set_0/output_0.pb' this run reads" -- \
        run --check "$tmpdir/chk" -o "$tmpdir/chk/test_data_set_0"
    if cmp -s "$abs/test_data_set_0/output_0.pb" "$tmpdir/chk/test_data_set_0/output_0.pb"; then ok
    else bad "check-reference-is-output: the reference was replaced"; fi
    rm "$tmpdir/chk/test_data_set_0/y.pb"
    mkdir "$tmpdir/chko"
    ln -s "$tmpdir/chk/model.onnx" "$tmpdir/chko/y.pb"
    expect_error check-model-is-output 2 "^rotor run: -o: $tmpdir/chko/y.pb: is the file '$tmpdir/chk/model.onnx' this run reads" -- \
        run --check "$tmpdir/chk" -o "$tmpdir/chko"
    rm "$tmpdir/chko/y.pb"
    # several sets: each set's outputs in a folder of its own, none replacing
    # another's (the second set a copy of the first)
    cp -r "$tmpdir/chk/test_data_set_0" "$tmpdir/chk/test_data_set_1"
    expect_out check-sets-each-a-folder "^PASS$" -- run --check "$tmpdir/chk" -o "$tmpdir/chko"
    if cmp -s "$tmpdir/chko/test_data_set_0/y.pb" "$tmpdir/chko/test_data_set_1/y.pb" &&
        [ "$(ls "$tmpdir/chko")" = "$(printf 'test_data_set_0\ntest_data_set_1')" ]; then ok
    else bad "check-sets-each-a-folder: $(ls -R "$tmpdir/chko" | tr '\n' ' ')"; fi
    rm -rf "$tmpdir/chk" "$tmpdir/chko"
else
    bad "$TESTDATA is absent (apt-get install libonnx-testdata)"
fi

if [ -d "$SHARED/real" ]; then
    # light_resnet50 (41 s of CPU, a fifth of CI's plain CLI phase) runs in
    # `make bench` (bench/bench_run.sh), beside the ResNet-18 figure: its
    # operators are these models' (convolutions, pools, adds, a Gemm)
    models="mnist light_squeezenet light_shufflenet"
    [ "$san" -eq 1 ] && models=mnist
    for m in $models; do
        expect_out "real-$m" "^PASS$" -- run "$SHARED/real/$m.onnx"
    done
    expect_out mnist-line "PASS  Plus214_Output_0 *1x10 *vs direct" -- run "$SHARED/real/mnist.onnx"
    expect_out mnist-time "mnist on ipu-mk2: 9 operators emulated, 2 vendor ops" -- run "$SHARED/real/mnist.onnx"
    # the program `rotor compile --group none` writes is the one rotor run executes, Softmax's
    # row maximum included (93 operators against the planning import's 92: refused before)
    if "$ROTOR" compile "$SHARED/real/light_squeezenet.onnx" --group none -o "$tmpdir/sq.json" >/dev/null 2>"$err"; then ok
    else bad "compile --group none squeezenet: $(cat "$err")"; fi
    expect_out real-program "^PASS$" -- run "$SHARED/real/light_squeezenet.onnx" --program "$tmpdir/sq.json"
else
    echo "cli_run.sh: skipping the real models: $SHARED is absent"
fi

# The repository's sample (examples/tiny-cnn.onnx, written by tools/onnxgen):
# it runs, and the generator writes it again byte for byte.  ResNet-18 from
# the generator has torchvision's 11.7 M parameters (batch norm folded into
# the convolutions' biases) and 1.8 G multiply-adds.
expect_out tiny-cnn "^PASS  logits  *1x10  *vs direct" -- run examples/tiny-cnn.onnx
# --program runs a program of the graph as the run executes it, ungrouped:
# rotor compile --group none writes one (a grouped program was refused, and
# the help named plain rotor compile -o; found by an audit helper), and the
# run takes the chip the program carries (it was read against ipu-mk2)
expect_out group-none "^examples/tiny-cnn.onnx, .* plans by the exact solver; 7 operators, not grouped (--group none)" -- compile examples/tiny-cnn.onnx --group none --set sram_bytes=100000 -o "$tmpdir/tiny-none.json"
expect_out program-none "^PASS  logits  *1x10  *vs direct" -- run examples/tiny-cnn.onnx --program "$tmpdir/tiny-none.json"
expect_error program-chip 2 "tiny-none.json: sram_bytes: expected 638976 (the chip's sram_bytes), got 100000" -- run examples/tiny-cnn.onnx --program "$tmpdir/tiny-none.json" --chip ipu-mk2
"$ROTOR" compile examples/tiny-cnn.onnx -q -o "$tmpdir/tiny-fused.json" >/dev/null 2>"$err" || bad "compile tiny-cnn: $(cat "$err")"
expect_error program-fused 2 "run: the program has 3 operators, the model 7 (the run executes the graph ungrouped: its program is rotor compile --group none's)" -- run examples/tiny-cnn.onnx --program "$tmpdir/tiny-fused.json"
ONNXGEN=${ONNXGEN:-build/onnxgen}
if "$ONNXGEN" tiny-cnn "$tmpdir/tiny.onnx" && cmp -s "$tmpdir/tiny.onnx" examples/tiny-cnn.onnx; then ok
else bad "onnxgen tiny-cnn differs from examples/tiny-cnn.onnx"; fi
if "$ONNXGEN" resnet-18 "$tmpdir/r18.onnx"; then ok; else bad "onnxgen resnet-18 failed"; fi
expect_out r18-size "11684712 weights (46.74 MB)" -- model "$tmpdir/r18.onnx"
expect_out r18-ops "histogram: Add 29, Conv 20, Relu 17, Flatten 1, Gemm 1, GlobalAveragePool 1, MaxPool 1" -- \
    model "$tmpdir/r18.onnx"
expect_out r18-flops "3.635 GFLOP" -- model "$tmpdir/r18.onnx"
rm -f "$tmpdir/r18.onnx"
# Pipelined segments (docs/run.md): the generator's MLP at 1,024 rows on a
# 256-core IPU, compiled with --pipeline, streams its second and third
# MatMuls into their bias Adds in 16 micro-batches; every stage runs its
# plan run by run on its group.  Its
# output must match the unpipelined program's (written by -o and checked as
# the reference of a --check set; the inputs are the same deterministic
# values) and the direct execution's, each within the run's tolerance.
mkdir -p "$tmpdir/mlp/test_data_set_0"
if "$ONNXGEN" mlp "$tmpdir/mlp/model.onnx" --batch 1024; then ok; else bad "onnxgen mlp failed"; fi
expect_out mlp-flat "^PASS$" -- run "$tmpdir/mlp/model.onnx" --set cores_per_chip=256 -o "$tmpdir/mlp/test_data_set_0"
if grep -q "segment" "$out"; then bad "mlp-flat: an unpipelined program ran segments"; else ok; fi
mv "$tmpdir/mlp/test_data_set_0/y.pb" "$tmpdir/mlp/test_data_set_0/output_0.pb"
expect_out mlp-pipelined "^PASS  y  *1024x4  *vs direct: .*(0 beyond tolerance)  vs reference 'y': .*(0 beyond)$" -- \
    run --check "$tmpdir/mlp" --pipeline --set cores_per_chip=256
for line in "segment 1 ran pipelined: fc2.matmul .. fc2, 2 stages, 16 micro-batches over output dimension 1:" \
    "pipelined: 2 segments, 64 stage runs emulated on their groups" "^PASS$"; do
    if grep -q -- "$line" "$out"; then ok; else bad "mlp-pipelined: stdout lacks '$line': $(tail -4 "$out")"; fi
done
expect_error pipeline-direct 2 "--pipeline and --direct: --pipeline compiles the program" -- \
    run "$tmpdir/mlp/model.onnx" --pipeline --direct
expect_error objective-alone 2 "--objective needs --pipeline" -- run "$tmpdir/mlp/model.onnx" --objective throughput
rm -rf "$tmpdir/mlp"
# GraphTurbo's instances on core groups (docs/run.md, "Instances on core
# groups"): the generator's MLP at 8 rows on the whole IPU, where gticca
# runs four sub-graphs of the ungrouped graph as instances; each instance
# runs its rows with its own program on its group, and the output matches
# the direct execution's and the unsimplified graph's.
if "$ONNXGEN" mlp "$tmpdir/mlp8.onnx" --batch 8; then ok; else bad "onnxgen mlp --batch 8 failed"; fi
expect_out gt-icca "^PASS  y  *8x4  *vs direct: .*(0 beyond tolerance)  vs unsimplified: .*(0 beyond)$" -- \
    run "$tmpdir/mlp8.onnx" --group graphturbo
for line in "graphturbo: 4 sub-graphs run as 24 instances on core groups" \
    "sub-graph 2: relu1 .. fc2.matmul, 4 instances of 368 cores" \
    "^time: emulated 0.253 us, model 0.257 us, simulated 0.265 us$" "^PASS$"; do
    if grep -q -- "$line" "$out"; then ok; else bad "gt-icca: stdout lacks '$line': $(tail -4 "$out")"; fi
done
expect_error gt-mesh 2 "chip 'ipu-mk2-mesh' is not one all-to-all chip without a global buffer" -- \
    run "$tmpdir/mlp8.onnx" --group graphturbo --chip ipu-mk2-mesh
rm -f "$tmpdir/mlp8.onnx"
if "$ONNXGEN" vgg "$tmpdir/x.onnx" 2>"$err"; then bad "onnxgen vgg: exit 0"
elif grep -q "onnxgen: unknown model 'vgg' (known: resnet-18, tiny-cnn, mlp)" "$err"; then ok
else bad "onnxgen vgg: $(cat "$err")"; fi

# NaN and the infinities (docs/run.md, "Tolerance"): a NaN matches only NaN
# and an infinity only itself, so a reference full of NaN fails (once it
# passed: |x - NaN| > tol is false), and an output that is all NaN passes
# only against a reference that says so.  The files are written with
# Debian's python3-onnx.
# expect_fail NAME PATTERN -- ARGS...: exits 1 (a failed check) and stdout has PATTERN.
expect_fail() {
    name=$1 pattern=$2
    shift 3
    run_saved "$tmpdir/failed" -- "$@"
    if [ "$(cat "$tmpdir/failed.rc")" -ne 1 ]; then bad "$name: exit $(cat "$tmpdir/failed.rc"), want 1"
    elif grep -q -- "$pattern" "$tmpdir/failed"; then ok
    else bad "$name: stdout lacks '$pattern': $(tail -3 "$tmpdir/failed")"; fi
}
PY=${PYTHON3:-/usr/bin/python3}
if [ -d "$TESTDATA/node/test_relu" ] && "$PY" -c 'import numpy, onnx.helper, onnx.numpy_helper' 2>/dev/null; then
    for c in nan inf; do
        cp -r "$TESTDATA/node/test_relu" "$tmpdir/relu_$c"
        chmod -R u+w "$tmpdir/relu_$c"
    done
    # every reference element NaN; one reference element +inf
    "$PY" - "$tmpdir" <<'PYEOF'
import sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto
d = sys.argv[1]
def rewrite(path, change):
    t = onnx.TensorProto()
    t.ParseFromString(open(path, 'rb').read())
    a = numpy_helper.to_array(t).copy()
    change(a)
    open(path, 'wb').write(numpy_helper.from_array(a, t.name).SerializeToString())
def all_nan(a): a[...] = np.nan
def one_inf(a): a.flat[7] = np.inf
rewrite(d + '/relu_nan/test_data_set_0/output_0.pb', all_nan)
rewrite(d + '/relu_inf/test_data_set_0/output_0.pb', one_inf)
# y = x + w with every weight NaN, and a set whose reference is all NaN
w = numpy_helper.from_array(np.full((2, 3), np.nan, np.float32), 'w')
g = helper.make_graph([helper.make_node('Add', ['x', 'w'], ['y'], name='add')], 'nanw',
                      [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, 3])],
                      [helper.make_tensor_value_info('y', TensorProto.FLOAT, [2, 3])], [w])
import os
os.makedirs(d + '/nanw/test_data_set_0')
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]), d + '/nanw/model.onnx')
x = numpy_helper.from_array(np.ones((2, 3), np.float32), 'x')
y = numpy_helper.from_array(np.full((2, 3), np.nan, np.float32), 'y')
open(d + '/nanw/test_data_set_0/input_0.pb', 'wb').write(x.SerializeToString())
open(d + '/nanw/test_data_set_0/output_0.pb', 'wb').write(y.SerializeToString())
# y = Identity(x), z = Relu(x): output y is input x under its own name
g = helper.make_graph([helper.make_node('Identity', ['x'], ['y']), helper.make_node('Relu', ['x'], ['z'])],
                      'alias', [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, 3])],
                      [helper.make_tensor_value_info('y', TensorProto.FLOAT, [2, 3]),
                       helper.make_tensor_value_info('z', TensorProto.FLOAT, [2, 3])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]), d + '/alias.onnx')
# outputs 'a/b' and 'a_b': one file under -o DIR
g = helper.make_graph([helper.make_node('Relu', ['x'], ['a/b']), helper.make_node('Neg', ['x'], ['a_b'])], 'clash',
                      [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, 3])],
                      [helper.make_tensor_value_info('a/b', TensorProto.FLOAT, [2, 3]),
                       helper.make_tensor_value_info('a_b', TensorProto.FLOAT, [2, 3])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]), d + '/clash.onnx')
PYEOF
    expect_fail nan-reference "^FAIL  y  *3x4x5 .*vs reference 'y': max |err| inf (60 beyond, 60 of them NaN or infinity mismatches)$" -- \
        run --check "$tmpdir/relu_nan" -q
    expect_fail inf-reference "vs reference 'y': max |err| inf (1 beyond, 1 of them NaN or infinity mismatches)$" -- \
        run --check "$tmpdir/relu_inf" -q
    expect_fail nan-json '"nonfinite_mismatches_vs_reference":	60' -- run --check "$tmpdir/relu_nan" -q --json
    # NaN weights: the planned and the direct run agree on NaN, which no
    # reference confirms: a failure, said so
    expect_fail nan-weights "^FAIL  y  *2x3 .*(0 beyond tolerance)  all NaN, which no reference confirms$" -- \
        run "$tmpdir/nanw/model.onnx" -q
    expect_fail nan-weights-json '"nonfinite":	"all NaN"' -- run "$tmpdir/nanw/model.onnx" -q --json
    expect_out nan-confirmed "^PASS  y  *2x3 .*vs reference 'y': max |err| 0 (0 beyond)  all NaN$" -- \
        run --check "$tmpdir/nanw" -q
    # every graph output under its own name, even one an Identity forwards
    # from an input (issue 47): reported and written as y, never as x
    mkdir "$tmpdir/aliasout"
    expect_out alias-name "^PASS  y  *2x3 " -- run "$tmpdir/alias.onnx" -q -o "$tmpdir/aliasout"
    if [ "$(cd "$tmpdir/aliasout" && ls | tr '\n' ' ')" = "y.pb z.pb " ]; then ok
    else bad "alias -o wrote: $(ls "$tmpdir/aliasout")"; fi
    # two outputs whose files would be one (docs/run.md): refused before any
    # file is written
    mkdir "$tmpdir/clashout"
    expect_error clash 2 "^rotor run: -o: outputs 'a/b' and 'a_b' would both be written as $tmpdir/clashout/a_b.pb$" -- \
        run "$tmpdir/clash.onnx" -q -o "$tmpdir/clashout"
    if [ -z "$(ls "$tmpdir/clashout")" ]; then ok; else bad "clash -o wrote: $(ls "$tmpdir/clashout")"; fi
    rm -rf "$tmpdir/relu_nan" "$tmpdir/relu_inf" "$tmpdir/nanw" "$tmpdir/aliasout" "$tmpdir/alias.onnx" \
        "$tmpdir/clash.onnx" "$tmpdir/clashout"
else
    echo "cli_run.sh: skipping the NaN checks: $TESTDATA/node/test_relu or $PY's onnx is absent"
fi

# -o names a Loop's final state by its graph name (res_y.pb), not by the
# unrolled body value it once aliased (y_out#4.pb)
if [ -d "$TESTDATA/node/test_loop11" ]; then
    mkdir "$tmpdir/loop11"
    expect_out loop-names "^PASS  res_y  *1 " -- run --check "$TESTDATA/node/test_loop11" -q -o "$tmpdir/loop11"
    if [ "$(ls "$tmpdir/loop11" | tr '\n' ' ')" = "res_scan.pb res_y.pb " ]; then ok
    else bad "loop-names: -o wrote $(ls "$tmpdir/loop11" | tr '\n' ' ')"; fi
    rm -rf "$tmpdir/loop11"
fi

# ---- what a test set says, all of it (found by an audit helper) ----
# 20 sets: every one runs (16 did, in directory order, and PASS was printed); the last one's
# reference has another shape, which no output takes: FAIL
rc20=$tmpdir/rc20
mkdir -p "$rc20/s" "$rc20/m2"
"$ONNXGEN" mlp "$rc20/model.onnx" --batch 4 >/dev/null && "$ONNXGEN" mlp "$rc20/m2/model.onnx" --batch 2 >/dev/null ||
    bad "onnxgen mlp"
"$ROTOR" run "$rc20/model.onnx" --direct -o "$rc20/s" -q >/dev/null && "$ROTOR" run "$rc20/m2/model.onnx" --direct -o "$rc20/m2" -q >/dev/null ||
    bad "run -o for the sets"
for k in 00 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15 16 17 18 19; do
    mkdir -p "$rc20/test_data_set_$k" && cp "$rc20/s/y.pb" "$rc20/test_data_set_$k/output_0.pb"
done
cp "$rc20/m2/y.pb" "$rc20/test_data_set_19/output_0.pb"
run_saved "$tmpdir/rc20.out" -- run --check "$rc20" -q
if [ "$(cat "$tmpdir/rc20.out.rc")" = 1 ] && [ "$(grep -c '^test_data_set_' "$tmpdir/rc20.out")" = 20 ] &&
   grep -q "^FAIL  $rc20/test_data_set_19/output_0.pb ('y', 2x4): a reference no output of that name and shape takes" "$tmpdir/rc20.out"
then ok; else bad "20 sets: rc $(cat "$tmpdir/rc20.out.rc"), $(grep -c '^test_data_set_' "$tmpdir/rc20.out") sets: $(grep FAIL "$tmpdir/rc20.out" | head -2)"; fi
if grep -q "^inputs the set has no file for get deterministic pseudo-random values" "$tmpdir/rc20.out"; then ok
else bad "rc20: the random inputs unsaid"; fi
cp "$rc20/s/y.pb" "$rc20/test_data_set_19/output_0.pb"
# a file past a gap, an extra unnamed input, --data twice, --data beside the set's file
cp "$rc20/s/y.pb" "$rc20/test_data_set_00/output_2.pb"
expect_error rc-gap 2 "test_data_set_00/output_2.pb: output_1.pb is missing (a set's files are numbered from 0, without a gap" -- \
    run --check "$rc20" -q
rm "$rc20/test_data_set_00/output_2.pb"
printf '\010\001\020\001J\004\000\000\200?' >"$rc20/x1.pb" # an unnamed float tensor [1]
cp "$rc20/x1.pb" "$rc20/test_data_set_00/input_0.pb" && cp "$rc20/x1.pb" "$rc20/test_data_set_00/input_1.pb"
expect_error rc-extra 2 "test_data_set_00/input_0.pb: shape 1; input 'x' is 4x64" -- run --check "$rc20" -q
# a [4,64] float input of zeros, unnamed (TensorProto: dims 4, 64; FLOAT; raw_data 1,024 bytes),
# then one more: the second feeds no input
if command -v python3 >/dev/null; then
    python3 -c 'import sys; sys.stdout.buffer.write(b"\x08\x04\x08\x40\x10\x01\x4a\x80\x08" + bytes(1024))' >"$rc20/x.pb"
    cp "$rc20/x.pb" "$rc20/test_data_set_00/input_0.pb"
    expect_error rc-unused 2 "test_data_set_00/input_1.pb: the model has no input it feeds" -- run --check "$rc20" -q
    # --data beside the set's file for the same input
    rm "$rc20/test_data_set_00/input_1.pb"
    cp "$rc20/x.pb" "$rc20/test_data_set_00/input_0.pb"
    expect_error rc-data-beside 2 "--data x: the test set gives it (.*input_0.pb): give one" -- \
        run --check "$rc20" -q --data "x=$rc20/x.pb"
fi
rm -f "$rc20/test_data_set_00/input_0.pb" "$rc20/test_data_set_00/input_1.pb"
"$ROTOR" run --check "$rc20" --json -q >"$out" 2>"$err"
if [ "$(grep -c '"random_inputs":	true' "$out")" = 20 ]; then ok; else bad "--json: random_inputs on 20 sets: $(cat "$err")"; fi
expect_error direct-chip 2 "--direct executes the graph with no plans, on no chip: it takes no --chip" -- \
    run "$rc20/model.onnx" --direct --chip wse2
expect_error data-twice 2 "--data x: given twice" -- run "$rc20/model.onnx" --data "x=$rc20/x1.pb" --data "x=/nonexistent.pb"

finish cli_run
