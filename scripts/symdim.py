#!/usr/bin/python3
# Writes examples/symdim.onnx: a 16-wide linear layer and its ReLU on an input
# of symbolic shape [batch, seq, 16] (weights drawn with seed 7), the sample of
# `rotor model --dim` and `--input` (docs/onnx.md), which the zoo's and
# onnxgen's fixed-shape models cannot show.  Needs Debian's python3-onnx and numpy.
# Usage: /usr/bin/python3 scripts/symdim.py examples/symdim.onnx
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)
w = numpy_helper.from_array((rng.standard_normal((16, 16)) * 0.25).astype(np.float32), 'w')
nodes = [helper.make_node('MatMul', ['x', 'w'], ['h'], name='fc'),
         helper.make_node('Relu', ['h'], ['y'], name='relu')]
g = helper.make_graph(nodes, 'symdim', [helper.make_tensor_value_info('x', TensorProto.FLOAT, ['batch', 'seq', 16])],
                      [helper.make_tensor_value_info('y', TensorProto.FLOAT, ['batch', 'seq', 16])], [w])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]), sys.argv[1])
