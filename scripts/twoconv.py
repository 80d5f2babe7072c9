#!/usr/bin/python3
# Writes examples/twoconv.onnx: two 3x3 convolutions (pads 1, bias, weights
# drawn with seed 42) on [1, 4, 16, 16] f32, the model of GraphTurbo's
# instance proof (docs/run.md, "GraphTurbo's instances on real data";
# tests/cli_gtrun.sh).  Needs Debian's python3-onnx and numpy.
# Usage: /usr/bin/python3 scripts/twoconv.py examples/twoconv.onnx
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(42)


def t(name, shape, scale):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


inits = [t('w1', (4, 4, 3, 3), 0.3), t('b1', (4,), 0.1), t('w2', (4, 4, 3, 3), 0.3), t('b2', (4,), 0.1)]
nodes = [helper.make_node('Conv', ['x', 'w1', 'b1'], ['h'], name='conv1', kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node('Conv', ['h', 'w2', 'b2'], ['y'], name='conv2', kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
g = helper.make_graph(nodes, 'twoconv', [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 4, 16, 16])],
                      [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 4, 16, 16])], inits)
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]), sys.argv[1])
