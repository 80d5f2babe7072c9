#!/bin/sh
# CLI tests of `rotor run --group graphturbo` (docs/run.md, "GraphTurbo's
# instances on real data"; issue 42 item 8): two 3x3 convolutions (pads 1,
# bias, random weights) on [1, 4, 16, 16], scheduled on STCP920 with an LB
# of 8 x 512 bytes and a DDR a hundred times faster (so that re-reading the
# model input's halo rows costs less than the intermediate's GB round trip:
# docs/run.md), group into one sub-graph of four instances along h that
# recompute their halo rows and give the ungrouped outputs.  The model is
# examples/twoconv.onnx, which scripts/twoconv.py writes.
# Run as `ROTOR=build/rotor sh tests/cli_gtrun.sh`.
. "$(dirname "$0")/lib.sh"

expect_out help "--group graphturbo" -- run --help
expect_error group-fused 2 "--group: rotor run takes graphturbo, got 'fused'" -- run x.onnx --group fused
expect_error group-direct 2 "it conflicts with --direct" -- run x.onnx --group graphturbo --direct

# the model: examples/twoconv.onnx (scripts/twoconv.py writes it)
m="$(dirname "$0")/../examples/twoconv.onnx"
run_saved "$tmpdir/r" -- run "$m" --group graphturbo --chip stcp920 --set element_bytes=4 --set sram_bytes=512 --set shift_buffer_bytes=256 --set hbm-bw=13.6TB/s -q
expect_saved pass "^PASS$" "$tmpdir/r"
expect_saved y-pass "^PASS  y .* vs direct: max |err| 0 (0 beyond tolerance)" "$tmpdir/r"
expect_saved one-line "^graphturbo: 1 sub-graph, 4 instances along h (factor 1x1x4x1), halos recomputed: 2 rows$" "$tmpdir/r"
# conv1 and its bias over 5 + 6 + 6 + 5 rows of 16: 89984 points, not 75776
expect_saved points "^graphturbo: 4 instances run, 89984 points evaluated, 1.188x the ungrouped run's$" "$tmpdir/r"
expect_out json '"halo_rows":[[:space:]]*2' -- run "$m" --group graphturbo --chip stcp920 --set element_bytes=4 --set sram_bytes=512 --set shift_buffer_bytes=256 --set hbm-bw=13.6TB/s -q --json
# the instances' progress, as whole lines off a terminal: the first, and the end
run_saved "$tmpdir/p" -- run "$m" --group graphturbo --chip stcp920 --set element_bytes=4 --set sram_bytes=512 --set shift_buffer_bytes=256 --set hbm-bw=13.6TB/s --progress=always
if grep -q "^rotor run: running GraphTurbo's instances 1/4, " "$tmpdir/p.err" &&
    grep -q "^rotor run: running GraphTurbo's instances: done, " "$tmpdir/p.err"; then ok; else bad "progress: $(cat "$tmpdir/p.err")"; fi
# the LB whole (64 KB per core): one instance, nothing recomputed
expect_out whole "^graphturbo: 1 sub-graph, 1 instance$" -- run "$m" --group graphturbo --chip stcp920 -q
# without a GB (the default ipu-mk2) the run is the ICCA plan's (docs/run.md,
# "Instances on core groups"): at batch 1 no sub-graph splits, so T10's
# program runs alone (tests/cli_run.sh runs one with instances)
expect_out no-gb "^graphturbo: 0 sub-graphs run as 0 instances on core groups" -- run "$m" --group graphturbo -q
# two QLinearMatMuls of 512 rows, the second's A quantized per row: the ICCA
# compile runs them as 16 instances of 32 rows, each reading its rows of the
# per-row zero point and scale, and the uint8 output is the direct run's
PY=${PYTHON3:-/usr/bin/python3}
if "$PY" -c 'import numpy, onnx.helper, onnx.numpy_helper' 2>/dev/null; then
    "$PY" - "$tmpdir/qmm.onnx" <<'PYEOF'
import sys
import numpy as np
import onnx
from onnx import helper, numpy_helper as nh, TensorProto
r = np.random.default_rng(1)
t = lambda a, n: nh.from_array(a, n)
inits = [t(np.array(0.02, np.float32), 'xs'), t(np.array(128, np.uint8), 'xz'),
         t(r.integers(-60, 60, (256, 256)).astype(np.int8), 'w1'), t(r.integers(-60, 60, (256, 256)).astype(np.int8), 'w2'),
         t(np.array(0.004, np.float32), 'ws'), t(np.array(0, np.int8), 'wz'),
         t(np.array(0.5, np.float32), 'hs'), t(np.array(120, np.uint8), 'hz'),
         t(r.integers(100, 140, (512,)).astype(np.uint8), 'hrz'), t((0.4 + 0.001 * np.arange(512)).astype(np.float32), 'hrs'),
         t(np.array(0.6, np.float32), 'ys'), t(np.array(131, np.uint8), 'yz')]
nodes = [helper.make_node('QLinearMatMul', ['x', 'xs', 'xz', 'w1', 'ws', 'wz', 'hs', 'hz'], ['h'], name='mm1'),
         helper.make_node('QLinearMatMul', ['h', 'hrs', 'hrz', 'w2', 'ws', 'wz', 'ys', 'yz'], ['y'], name='mm2')]
g = helper.make_graph(nodes, 'qmm', [helper.make_tensor_value_info('x', TensorProto.UINT8, [512, 256])],
                      [helper.make_tensor_value_info('y', TensorProto.UINT8, [512, 256])], inits)
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]), sys.argv[1])
PYEOF
    run_saved "$tmpdir/q" -- run "$tmpdir/qmm.onnx" --group graphturbo -q
    expect_saved quant-icca-pass "^PASS$" "$tmpdir/q"
    expect_saved quant-icca-y "^PASS  y  .* vs direct: max |err| 0 (0 beyond tolerance)" "$tmpdir/q"
    expect_saved quant-icca-split "^sub-graph 1: mm1 .. mm2, 16 instances of 92 cores$" "$tmpdir/q"
else
    echo "cli_gtrun.sh: skipping the quantized model: $PY lacks numpy or onnx (apt-get install python3-onnx)"
fi
# a transformer's attention mask: its int64 Unsqueeze and Cast are copies of
# integers, which the instances run (docs/run.md, "Types"); with an LB of 8 x
# 512 bytes 27 sub-graphs split
SHARED=../shared/onnx
if [ -d "$SHARED/real" ]; then
    run_saved "$tmpdir/b" -- run "$SHARED/real/bert_toy_optimized.onnx" --dim batch=2,max_seq_len_in_batch=8 --group graphturbo --chip stcp920 --set element_bytes=4 --set sram_bytes=512 --set shift_buffer_bytes=256 -q
    expect_saved bert-pass "^PASS$" "$tmpdir/b"
    expect_saved bert-split "^graphturbo: 65 sub-graphs, 92 instances (27 split; " "$tmpdir/b"
else
    echo "cli_gtrun.sh: skipping the real model: $SHARED is absent"
fi
finish cli_gtrun
