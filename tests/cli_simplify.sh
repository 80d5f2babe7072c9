#!/bin/sh
# CLI tests of --simplify (docs/simplify.md): every subcommand that takes a
# model lists it, rotor model prints the counts, rotor compile plans the
# simplified ResNet-18, and rotor run checks a folded Conv + BatchNormalization
# + Relu against the graph as imported (built with Debian's python3-onnx;
# skipped with one line without it).
# Run as `ROTOR=build/rotor sh tests/cli_simplify.sh`.
. "$(dirname "$0")/lib.sh"
PY=${PYTHON3:-/usr/bin/python3}

for c in model compile simulate schedule explore report run; do
    expect_out "help-$c" "--simplify" -- "$c" --help
done
expect_error twice 2 "--simplify given twice" -- model resnet-18 --simplify --simplify
expect_out model-counts "simplified: 175 operators into 175 (53 BatchNormalizations folded, 53 bias adds made, 0 constants folded)" -- model resnet-50 --simplify
expect_out model-grouped "grouped: 175 operators into 56 " -- model resnet-50 --simplify --group
expect_out compile-r18 "23 operators" -- compile resnet-18 --simplify -q

if "$PY" -c 'import numpy, onnx.helper, onnx.numpy_helper' 2>/dev/null; then
    "$PY" - "$tmpdir" <<'PYEOF'
import sys, numpy as np, onnx
from onnx import helper, TensorProto, numpy_helper
d = sys.argv[1]
rng = np.random.default_rng(1)
def t(name, shape, lo=-0.5):
    return numpy_helper.from_array((rng.random(shape) + lo).astype(np.float32), name)
inits = [t('W', (4, 3, 3, 3)), t('cb', (4,)), t('sc', (4,), 0.5), t('bi', (4,)), t('mn', (4,)), t('vr', (4,), 0.5)]
def save(nodes, outs, path):
    g = helper.make_graph(nodes, 'cbr', [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 3, 6, 6])],
                          [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]), path)
conv = helper.make_node('Conv', ['x', 'W', 'cb'], ['c'], pads=[1, 1, 1, 1], name='conv')
bn = helper.make_node('BatchNormalization', ['c', 'sc', 'bi', 'mn', 'vr'], ['b'], name='bn')
relu = helper.make_node('Relu', ['b'], ['y'], name='relu')
save([conv, bn, relu], ['y'], d + '/cbr.onnx')
save([conv, bn, relu], ['y', 'c'], d + '/cbr2.onnx')
PYEOF
    run_saved "$tmpdir/r" -- run "$tmpdir/cbr.onnx" --simplify -q
    expect_saved run-pass "^PASS$" "$tmpdir/r"
    expect_saved run-vs-unsimplified "vs unsimplified: max |err| .* (0 beyond)" "$tmpdir/r"
    expect_saved run-3-ops "3 operators emulated" "$tmpdir/r"
    expect_out model-folded "1 BatchNormalizations folded" -- model "$tmpdir/cbr.onnx" --simplify
    # the conv's output is a model output too: the BN stays
    expect_out model-kept "0 BatchNormalizations folded" -- model "$tmpdir/cbr2.onnx" --simplify
    expect_out run-kept "^PASS$" -- run "$tmpdir/cbr2.onnx" --simplify -q
else
    echo "cli_simplify: $PY has no onnx module: the rotor run cases are skipped"
fi
finish cli_simplify
