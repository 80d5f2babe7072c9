#!/bin/sh
# CLI tests of --train (docs/training.md): compile prints the training step
# of zoo models (forward, loss, backward and update operators, parameters,
# optimizer state, kept activations), simulate and schedule take it, bad
# options are one line, and rotor run --train checks the gradients of an
# MLP, a small CNN with BatchNormalization and one transformer layer
# against finite differences (built with Debian's python3-onnx; skipped
# with one line without it); an operator without a gradient is refused
# naming it.
# Run as `ROTOR=build/rotor sh tests/cli_train.sh`.
. "$(dirname "$0")/lib.sh"
PY=${PYTHON3:-/usr/bin/python3}

for c in compile simulate schedule explore run; do
    expect_out "help-$c" "--train" -- "$c" --help
done
# ResNet-18's 69 operators and 62 parameters (convolutions, BN scales and
# shifts, fc): 20 convolutions' weight gradients and 19 input gradients (the
# stem's input is no parameter's), each input gradient through its window's
# adjoint; one SGD step per parameter (rotor model prints the graph: the
# compile takes 14 s)
expect_out model-r18 "resnet-18: 258 operators (63 vendor)" -- model resnet-18 --train
expect_out model-r18-ops "histogram: SGD 62, ConvGrad 39, BatchNormalization 20, BatchNormalizationGrad 20, Conv 20, ViewGrad 19," \
    -- model resnet-18 --train
# Adam holds two moments per parameter: twice the parameters' 60.11 MiB
expect_out compile-bert-adam "training step (adam): forward 22 ops, loss 1, backward 43, update 57; 19 parameters (60.11 MiB, their gradients as much), optimizer state 120.22 MiB" \
    -- compile bert-base --layers 1 --train --optimizer adam -q
expect_out simulate-bert "utilisation:" -- simulate bert-base --layers 1 --train -q
expect_out schedule-bert "full" -- schedule bert-base --layers 1 --train -q
# the update writes its new weights back to HBM, which Elk's schedule does not price: it says
# how much (31,515,648 parameters at 2 bytes over 4 chips; Adam's two moments too, three times it)
expect_out schedule-writes "^not priced: the training step's update writes 15.8 MB per chip back to HBM" \
    -- schedule bert-base --layers 1 --train --design basic
expect_out schedule-writes-adam "^not priced: the training step's update writes 47.3 MB per chip back to HBM" \
    -- schedule bert-base --layers 1 --train --optimizer adam --design basic
"$ROTOR" schedule bert-base --layers 1 --train --design basic --json >"$out" 2>"$err"
if grep -q '"train_write_bytes_per_chip_not_priced":	15757824,' "$out"; then ok; else bad "schedule --json lacks the writes"; fi
expect_error optimizer-unknown 2 "--optimizer: expected sgd or adam, got 'rmsprop'" -- compile resnet-18 --train --optimizer rmsprop
expect_error optimizer-alone 2 "--optimizer: only with --train" -- compile resnet-18 --optimizer adam
expect_error train-simplify 2 "--train and --simplify" -- compile resnet-18 --train --simplify
expect_error train-twice 2 "--train given twice" -- compile resnet-18 --train --train
# rotor run --train checks gradients and nothing else: the options it would
# ignore are refused (they were ignored, exit 0; found by an audit helper)
for o in --json "-o $tmpdir" --pipeline "--group graphturbo" "--chip stcp920"; do
    expect_error "run-train-${o%% *}" 2 "--train checks the model's gradients in double, on no chip: it takes no ${o%% *} (docs/training.md)" -- run examples/tiny-cnn.onnx --train $o
done

if "$PY" -c 'import numpy, onnx.helper, onnx.numpy_helper' 2>/dev/null; then
    "$PY" - "$tmpdir" <<'PYEOF'
import sys, numpy as np, onnx
from onnx import helper, TensorProto, numpy_helper
d = sys.argv[1]
rng = np.random.default_rng(1)
def t(name, shape, lo=-0.5, s=1.0):
    return numpy_helper.from_array(((rng.random(shape) + lo) * s).astype(np.float32), name)
def save(name, nodes, x, outs, inits, opset=17):
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info('x', TensorProto.FLOAT, x)],
                          [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)]), d + '/' + name + '.onnx')
N = helper.make_node
# MLP: Gemm + Relu + Gemm
save('mlp', [N('Gemm', ['x', 'w1', 'b1'], ['h'], name='fc1'), N('Relu', ['h'], ['a'], name='act'),
             N('Gemm', ['a', 'w2', 'b2'], ['y'], name='fc2')], [4, 6], ['y'],
     [t('w1', (6, 8)), t('b1', (8,)), t('w2', (8, 3)), t('b2', (3,))])
# CNN: Conv + BatchNormalization + Relu + MaxPool + Flatten + Gemm
save('cnn', [N('Conv', ['x', 'w', 'cb'], ['c'], pads=[1, 1, 1, 1], name='conv'),
             N('BatchNormalization', ['c', 'g', 'be', 'mn', 'vr'], ['n'], name='bn'),
             N('Relu', ['n'], ['r'], name='act'), N('MaxPool', ['r'], ['p'], kernel_shape=[2, 2], strides=[2, 2], name='pool'),
             N('Flatten', ['p'], ['f'], name='flat'), N('Gemm', ['f', 'w2'], ['y'], name='fc')], [2, 2, 6, 6], ['y'],
     [t('w', (3, 2, 3, 3), s=0.8), t('cb', (3,), s=0.2), t('g', (3,), 0.5), t('be', (3,), s=0.4),
      t('mn', (3,), 0, 0), t('vr', (3,), 1, 0), t('w2', (27, 4), s=0.6)])
# one transformer layer: 2 heads of 4, softmax attention, LayerNormalization, an erf-GELU FFN
nodes, inits = [], [numpy_helper.from_array(np.array([4, 2, 4], np.int64), 'hs'),
                    numpy_helper.from_array(np.array([4, 8], np.int64), 'ms'),
                    numpy_helper.from_array(np.array(0.5, np.float32), 'sc'),
                    numpy_helper.from_array(np.array(1.4142135, np.float32), 'r2'),
                    numpy_helper.from_array(np.array(1.0, np.float32), 'one'),
                    numpy_helper.from_array(np.array(0.5, np.float32), 'half')]
for p, perm in (('q', [1, 0, 2]), ('k', [1, 2, 0]), ('v', [1, 0, 2])):
    inits += [t('w' + p, (8, 8), s=0.8), t('b' + p, (8,), s=0.2)]
    nodes += [N('MatMul', ['x', 'w' + p], [p + '0'], name=p + '.mm'), N('Add', [p + '0', 'b' + p], [p + '1'], name=p + '.add'),
              N('Reshape', [p + '1', 'hs'], [p + '2'], name=p + '.split'),
              N('Transpose', [p + '2'], [p + '3'], perm=perm, name=p + '.heads')]
inits += [t('wo', (8, 8), s=0.8), t('g1', (8,), 0.5), t('e1', (8,), s=0.2), t('w1', (8, 16), s=0.8), t('w2', (16, 8), s=0.6),
          t('g2', (8,), 0.5), t('e2', (8,), s=0.2)]
nodes += [N('MatMul', ['q3', 'k3'], ['s0'], name='scores'), N('Mul', ['s0', 'sc'], ['s1'], name='scaled'),
          N('Softmax', ['s1'], ['pr'], axis=-1, name='softmax'), N('MatMul', ['pr', 'v3'], ['c0'], name='context'),
          N('Transpose', ['c0'], ['c1'], perm=[1, 0, 2], name='merge'), N('Reshape', ['c1', 'ms'], ['c2'], name='merged'),
          N('MatMul', ['c2', 'wo'], ['o0'], name='o.mm'), N('Add', ['o0', 'x'], ['r1'], name='residual1'),
          N('LayerNormalization', ['r1', 'g1', 'e1'], ['h1'], name='ln1'),
          N('MatMul', ['h1', 'w1'], ['f0'], name='ffn1'), N('Div', ['f0', 'r2'], ['f1'], name='gelu.div'),
          N('Erf', ['f1'], ['f2'], name='gelu.erf'), N('Add', ['f2', 'one'], ['f3'], name='gelu.add'),
          N('Mul', ['f0', 'f3'], ['f4'], name='gelu.mul'), N('Mul', ['f4', 'half'], ['f5'], name='gelu.half'),
          N('MatMul', ['f5', 'w2'], ['f6'], name='ffn2'), N('Add', ['f6', 'h1'], ['r2o'], name='residual2'),
          N('LayerNormalization', ['r2o', 'g2', 'e2'], ['y'], name='ln2')]
save('transformer', nodes, [4, 8], ['y'], inits)
# Concat, one input given twice: each part adds into its gradient
save('concat', [N('MatMul', ['x', 'wa'], ['a'], name='m1'), N('Tanh', ['x'], ['b0'], name='th'),
                N('MatMul', ['b0', 'wb'], ['b'], name='m2'), N('Concat', ['a', 'b', 'a'], ['c'], axis=1, name='cat'),
                N('MatMul', ['c', 'wc'], ['y'], name='m3')], [4, 6], ['y'], [t('wa', (6, 3)), t('wb', (6, 2)), t('wc', (8, 5))])
# Split into three, the third part unused: its slice of the gradient stays 0
save('split', [N('MatMul', ['x', 'ws'], ['a'], name='m1'), N('Split', ['a', 'sp'], ['p', 'q', 'r'], axis=1, name='split'),
               N('Mul', ['p', 'q'], ['pq'], name='mul'), N('Tanh', ['pq'], ['y'], name='th')], [4, 6], ['y'],
     [t('ws', (6, 9)), numpy_helper.from_array(np.array([3, 3, 3], np.int64), 'sp')], 13)
# an operator without a gradient: CumSum on the path
save('cumsum', [N('MatMul', ['x', 'w'], ['m'], name='mm'), N('CumSum', ['m', 'ax'], ['y'], name='cs')], [4, 6], ['y'],
     [t('w', (6, 3)), numpy_helper.from_array(np.array(1, np.int64), 'ax')])
PYEOF
    for m in mlp cnn transformer concat split; do
        run_saved "$tmpdir/$m.out" -- run "$tmpdir/$m.onnx" --train -q
        expect_saved "run-$m" "(limit 1e-3): PASS$" "$tmpdir/$m.out"
    done
    expect_saved run-mlp-params "4 parameters checked" "$tmpdir/mlp.out"
    # BatchNormalization normalises by the batch: the conv's bias cancels
    expect_saved run-cnn-zero "^  cb .* zero " "$tmpdir/cnn.out"
    # softmax ignores a shift of its row: the key bias's gradient is 0
    expect_saved run-transformer-zero "^  bk .* zero " "$tmpdir/transformer.out"
    expect_out compile-onnx "training step (sgd): forward 37 ops, loss 1, backward 70, update 13; 13 parameters" \
        -- compile "$tmpdir/transformer.onnx" --train -q
    expect_error no-gradient 2 "op 'cs' (CumSum): rotor has no gradient for this operator" \
        -- run "$tmpdir/cumsum.onnx" --train -q
    expect_error no-gradient-compile 2 "op 'cs' (CumSum): rotor has no gradient for this operator" \
        -- compile "$tmpdir/cumsum.onnx" --train -q
else
    echo "cli_train: $PY has no onnx module: the rotor run --train cases are skipped"
fi
finish cli_train
