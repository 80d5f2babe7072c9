#!/bin/sh
# CLI tests of `rotor compile --group graphturbo` on an inter-core connected
# chip (issue 42 item 7; docs/graphturbo.md, "On an ICCA chip"): sub-graphs
# as instances on ipu-mk2's core groups, the table and its JSON, never
# slower than T10 alone, and the refusal of a chip it does not model.
# Run by `make test` as `ROTOR=build/rotor sh tests/cli_gticca.sh`.
. "$(dirname "$0")/lib.sh"
tiny="$(dirname "$0")/../examples/tiny-cnn.onnx"
c=$tmpdir/cache # the JSON run reads the table run's searches

# ResNet-18 at batch 2 (batch 8 is docs/graphturbo.md's table; it takes
# seconds more): stage 2's first block runs as two one-image instances on
# 736 cores each (numbers of the model as implemented)
run_saved "$tmpdir/r18" -- compile resnet-18 --batch 2 --group graphturbo --cache "$c" -q
expect_saved head "resnet-18, batch 2, on ipu-mk2 (1472 cores): GraphTurbo's sub-graph instances on core groups" "$tmpdir/r18"
expect_saved bn "69 operators simplified and grouped into 23 (20 BatchNormalizations folded)" "$tmpdir/r18"
expect_saved row "^s2.b0.conv1..s2.b0.downsample               3         2    736      6.491        3.666        6.166        3.666         0.000      74752" "$tmpdir/r18"
expect_saved total "^T10 on the simplified graph 55.606 us (compute 35.549); graphturbo 55.281 us, 1.006x; 1 sub-graphs as instances" "$tmpdir/r18"

# JSON: the same choice; never slower than T10 alone; n groups of N/n cores
run_saved "$tmpdir/r18.json" -- compile resnet-18 --batch 2 --group graphturbo --cache "$c" --json
expect_saved json-format '"format":	"rotor-graphturbo-icca"' "$tmpdir/r18.json"
if /usr/bin/python3 - "$tmpdir/r18.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == 1 and d["cores"] == 1472 and d["batch"] == 2
assert abs(d["total_s"] * 1e6 - 55.281) < 5e-4 and d["total_s"] <= d["t10_s"]
saved = 0
for s in d["subgraphs"]:
    assert s["instances"] * s["group_cores"] == d["cores"]
    assert s["grouped_s"] + s["penalty_s"] < s["t10_s"]
    assert s["peak_bytes"] <= 638976
    saved += s["t10_s"] - s["grouped_s"] - s["penalty_s"]
assert d["total_s"] <= d["t10_s"] - saved + 1e-15
assert [s["first"] for s in d["subgraphs"]] == ["s2.b0.conv1"]
# the room T10 leaves: the SRAM less the peak `rotor compile --simplify` prints
assert d["dropped_for_sram"] == 0 and d["t10_free_bytes"] == 638976 - 73270
PY
then ok; else bad "json: $(head -c 300 "$tmpdir/r18.json")"; fi

# batch 64: the two stage-3 blocks' copies do not fit together in the
# 145,747 B a core T10's schedule leaves (638,976 less its peak, 493,229):
# one is turned away, and the line says what room there was
run_saved "$tmpdir/r18b64" -- compile resnet-18 --batch 64 --group graphturbo --cache "$c" -q
expect_saved dropped "^1 choice turned away: the SRAM could not hold its instances' copies of its weights beside the others' (T10's schedule leaves 145747 B a core at its fullest operator; " "$tmpdir/r18b64"
expect_saved b64-total "^T10 on the simplified graph 1199.901 us (compute 989.482); graphturbo 1193.420 us, 1.005x; 2 sub-graphs as instances" "$tmpdir/r18b64"

# the replay (sim/gticcareplay.c): the instance program replayed on its
# group, beside the model, within 5 % (the same cache: no search again)
run_saved "$tmpdir/sim" -- simulate resnet-18 --batch 2 --group graphturbo --cache "$c" -q
expect_saved sim-row "^s2.b0.conv1..s2.b0.downsample                    2    736       6.166       6.264     +1.59%" "$tmpdir/sim"
expect_saved sim-total "^graphturbo: model 55.281 us, simulated 56.034 us: +1.36%" "$tmpdir/sim"
run_saved "$tmpdir/sim.json" -- simulate resnet-18 --batch 2 --group graphturbo --cache "$c" -q --json
if /usr/bin/python3 - "$tmpdir/sim.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "rotor-graphturbo-icca-sim" and d["version"] == 1 and d["cores"] == 1472
assert abs(d["difference"]) < 0.05 and abs(d["model_s"] * 1e6 - 55.281) < 5e-4
assert [s["first"] for s in d["subgraphs"]] == ["s2.b0.conv1"]
assert all(abs(s["difference"]) < 0.05 for s in d["subgraphs"])
PY
then ok; else bad "sim json: $(head -c 300 "$tmpdir/sim.json")"; fi

# a file of one image: nothing splits, T10 alone
expect_out tiny "graphturbo 0.098 us, 1.000x; 0 sub-graphs as instances" -- compile "$tiny" --group graphturbo -q
# several chips: refused in one line
expect_error pod4 2 "chip 'ipu-pod4' is not one all-to-all chip without a global buffer" -- compile resnet-18 --chip ipu-pod4 --group graphturbo -q
finish cli_gticca
