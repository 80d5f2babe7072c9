#!/bin/sh
# CLI tests of `rotor compile --group graphturbo` (issue 42; docs/graphturbo.md):
# GraphTurbo's five schedules of one cluster's share on stcp920, the table and
# its JSON, and the one-line refusals (a chip without a global buffer, an
# unknown grouping, the options it cannot take).
# Run by `make test` as `ROTOR=build/rotor sh tests/cli_graphturbo.sh`.
. "$(dirname "$0")/lib.sh"
tiny="$(dirname "$0")/../examples/tiny-cnn.onnx"

# ResNet-18, 8 images a cluster: the schedules as docs/graphturbo.md's
# table gives them (numbers of the model as implemented: a change to the
# model changes them on purpose)
run_saved "$tmpdir/r18" -- compile resnet-18 --batch 8 --chip stcp920 --group graphturbo -q
expect_saved r18-head "resnet-18, batch 8 a cluster x 4 clusters on stcp920: GraphTurbo's schedules" "$tmpdir/r18"
expect_saved r18-bn "69 operators simplified and grouped into 23 (20 BatchNormalizations folded)" "$tmpdir/r18"
expect_saved r18-per-layer "^per-layer        4512.857    1.00x        7090.9         23        23    bfs     0     0    23" "$tmpdir/r18"
expect_saved r18-graphturbo "^graphturbo       1275.706    3.54x       25084.1         22        97    dfs     1    21     1" "$tmpdir/r18"
# every step at least as fast as the one before (Fig. 15's steps gain), in the first table (one pass)
if awk '/^loop execution/ { exit } /^(per-layer|gb|lb|instances|graphturbo) / { if (prev && $2 > prev + 1e-9) bad = 1; prev = $2 } END { exit bad }' "$tmpdir/r18"; then
    ok
else
    bad "r18: a step slower than the one before: $(cat "$tmpdir/r18")"
fi

# JSON: the same numbers, machine-readable
run_saved "$tmpdir/r18.json" -- compile resnet-18 --batch 8 --chip stcp920 --group graphturbo --json
expect_saved json-format '"format":	"rotor-graphturbo"' "$tmpdir/r18.json"
expect_saved json-steps '"step":	"instances"' "$tmpdir/r18.json"
if /usr/bin/python3 - "$tmpdir/r18.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
steps = {s["step"]: s for s in d["steps"]}
assert d["version"] == 2 and d["clusters"] == 4 and d["batch_per_cluster"] == 8
assert [s["step"] for s in d["steps"]] == ["per-layer", "gb", "lb", "instances", "graphturbo"]
g = steps["graphturbo"]
assert abs(g["seconds"] * 1e6 - 1275.706) < 5e-4, g["seconds"]
assert abs(g["speedup"] - steps["per-layer"]["seconds"] / g["seconds"]) < 1e-12
assert abs(g["throughput"] - 32 / g["seconds"]) < 1e-6
assert g["tensors"] == {"lb": 1, "gb": 21, "ddr": 1, "inputs": 1}
PY
then ok; else bad "json: the numbers differ from the table's"; fi

# the DDR column leaves out the model's input, and says so
expect_saved r18-input "^(LB, GB, DDR: the activation values the operators write, as GraphTurbo's Table 3 counts them; the model's 1 input, written by the host, is in DDR too)$" "$tmpdir/r18"
# §5.1's loop execution within a cluster: ResNet-18 at 8 runs fastest in one pass
expect_saved r18-loops "^graphturbo: one pass of 8 is the fastest$" "$tmpdir/r18"
expect_saved r18-loop-row "^graphturbo       1      8      1275.706    3.54x       25084.1     1    21     1       26.0$" "$tmpdir/r18"
# BERT-128 at 8 a cluster: two passes of 4 keep its values on the chip (none in DDR but the
# model's output; its input, the host's, the column leaves out as the paper's Table 3 does)
run_saved "$tmpdir/bert" -- compile bert-large --seq 128 --batch 8 --chip stcp920 --group graphturbo -q
expect_saved bert-loops "^graphturbo: 2 passes of 4 take 4.29x less time than one pass of 8$" "$tmpdir/bert"
expect_saved bert-loop-row "^graphturbo       2      4     41861.936    7.14x         764.4     1   218     1     1217.7$" "$tmpdir/bert"
expect_saved bert-loop-base "^per-layer        1      8    298961.693    1.00x         107.0     0     0   220     9779.8$" "$tmpdir/bert"
run_saved "$tmpdir/bert.json" -- compile bert-large --seq 128 --batch 8 --chip stcp920 --group graphturbo --json
if /usr/bin/python3 - "$tmpdir/bert.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
one = {s["step"]: s for s in d["steps"]}
lo = d["loops"]
loops = {s["step"]: s for s in lo["steps"]}
assert lo["tried"] == 4 and lo["file_batch"] is False
g = loops["graphturbo"]
assert g["passes"] == 2 and g["batch_per_pass"] == 4 and g["tensors"]["ddr"] == 1 and g["tensors"]["inputs"] == 1
assert g["seconds"] == 2 * g["pass_seconds"]
assert one["graphturbo"]["tensors"]["ddr"] == 73
assert loops["per-layer"]["passes"] == 1 and loops["per-layer"]["seconds"] == one["per-layer"]["seconds"]
assert abs(g["speedup"] - loops["per-layer"]["seconds"] / g["seconds"]) < 1e-12
for s in lo["steps"]:
    assert s["seconds"] <= one[s["step"]]["seconds"]
PY
then ok; else bad "bert json: the loops differ from the table's"; fi

# --no-loops: the one pass only; refused without --group graphturbo
run_saved "$tmpdir/bert1" -- compile bert-large --seq 128 --batch 8 --chip stcp920 --group graphturbo -q --no-loops
if [ "$(cat "$tmpdir/bert1.rc")" -eq 0 ] && ! grep -q "loop execution" "$tmpdir/bert1" &&
    [ "$(grep -c '^graphturbo ' "$tmpdir/bert1")" -eq 1 ]; then ok; else bad "--no-loops: $(cat "$tmpdir/bert1" "$tmpdir/bert1.err")"; fi
expect_error no-loops-alone 2 "--no-loops applies to --group graphturbo" -- compile bert-large --no-loops
# batch 1: nothing to choose, said in one line
expect_out one-image "^loop execution within a cluster (GraphTurbo §5.1): a batch of 1 a cluster, one pass$" -- compile resnet-18 --chip stcp920 --group graphturbo -q

# an ONNX file: the file's batch is one cluster's, and it is not split into passes
run_saved "$tmpdir/tiny" -- compile "$tiny" --chip stcp920 --group graphturbo -q
expect_saved onnx "tiny-cnn.onnx, the file's batch a cluster x 4 clusters on stcp920" "$tmpdir/tiny"
expect_saved onnx-loops "^loop execution within a cluster (GraphTurbo §5.1): not tried, an ONNX file's batch is its own$" "$tmpdir/tiny"
run_saved "$tmpdir/tiny.json" -- compile "$tiny" --chip stcp920 --group graphturbo --json
if /usr/bin/python3 -c 'import json, sys; lo = json.load(open(sys.argv[1]))["loops"]; assert lo == {"tried": 1, "file_batch": True}, lo' "$tmpdir/tiny.json"
then ok; else bad "onnx json loops: $(grep -A4 loops "$tmpdir/tiny.json")"; fi

# refusals, one line each, exit 2
# (a chip without a GB: instances on core groups, tests/cli_gticca.sh)
# DDR holds the weights once and each of the 4 clusters' activations (docs/graphturbo.md, "DDR's capacity")
expect_error ddr-full 1 "step 'per-layer': DDR would hold 60330960 bytes at once, more than the chip's 40000000 (hbm_bytes): the weights' 23369424 and 9240384 bytes of activations in each of 4 clusters" -- compile resnet-18 --chip stcp920 --group graphturbo --batch 4 --set hbm_bytes=40000000
expect_error bad-group 2 "--group: expected fused, none or graphturbo, got 'turbo'" -- compile resnet-18 --chip stcp920 --group turbo
# the schedules are timed by formula on a chip with a GB: a solver would change nothing
expect_error solver-no-search 2 "--solver: on stcp920 (a chip with a global buffer) --group graphturbo times GraphTurbo's schedules and searches no plans$" -- compile resnet-18 --chip stcp920 --group graphturbo --solver fast
expect_error with-compare 2 "--group graphturbo times GraphTurbo's schedules: it conflicts with --compare" -- compile resnet-18 --chip stcp920 --group graphturbo --compare
expect_error with-pipeline 2 "it conflicts with --pipeline" -- compile resnet-18 --chip stcp920 --group graphturbo --pipeline
expect_error with-o 2 "it conflicts with -o" -- compile resnet-18 --chip stcp920 --group graphturbo -o "$tmpdir/p.json"
expect_error sweep 2 "--group graphturbo takes one --batch" -- compile resnet-18 --chip stcp920 --group graphturbo --batch 1,2
# the chip's element size sizes the values (zoo f16 at 4 bytes: the weights twice)
expect_out elem4 "the weights' 46.7 MB once" -- compile resnet-18 --chip stcp920 --group graphturbo --batch 4 --no-loops -q --set element_bytes=4
# a --set of a field the DSA timing does not read is refused (link_gbps=1 gave the same
# schedules); one it reads, or the element size, changes them
expect_error unread-set 2 "--set link_gbps: on stcp920 (a chip with a global buffer) --group graphturbo times its schedules by the clusters' compute, LB, GB and DDR" -- \
    compile bert-base --layers 1 --chip stcp920 --group graphturbo --set link_gbps=1
expect_error unread-set-sim 2 "--set link_latency_ns: on stcp920" -- \
    simulate bert-base --layers 1 --chip stcp920 --group graphturbo --set link_latency_ns=100
expect_out read-set "^graphturbo  *482.225 " -- compile bert-base --layers 1 --chip stcp920 --group graphturbo --set gb_gbps=500
expect_error two-chips 2 "chip 'stcp920' has 2 chips: GraphTurbo's DSA schedule times one chip of clusters (set chips=1" -- compile resnet-18 --chip stcp920 --set chips=2 --set interchip_gbps=100 --group graphturbo
expect_error no-ddr 2 "has no off-chip memory (hbm_gbps 0)" -- compile resnet-18 --chip stcp920 --set hbm-bw=0 --set hbm_bytes=0 --set hbm_controllers=0 --group graphturbo
# --values: where the graphturbo step keeps each value, in the pass the loops
# chose (ResNet-50 at 16: 2 passes of 8; 3 values in DDR, as the table counts)
run_saved "$tmpdir/r50v" -- compile resnet-50 --batch 16 --chip stcp920 --group graphturbo --values -q
expect_saved values-head "^values of the graphturbo step, in one of its 2 passes of 8 " "$tmpdir/r50v"
expect_saved values-s1b3 "^s1.b3.relu                         DDR      6422528        32          0/7/25  s1.b3.conv3$" "$tmpdir/r50v"
expect_saved values-fc "^fc.biased                          DDR        16000         1           0/0/1  fc (a model output)$" "$tmpdir/r50v"
if [ "$(awk '/^values of/ { on = 1 } on && $2 == "DDR"' "$tmpdir/r50v" | wc -l)" -eq 3 ] &&
    [ "$(awk '/^values of/ { on = 1; next } on && $2 ~ /^(LB|GB|DDR)$/' "$tmpdir/r50v" | wc -l)" -eq 56 ]; then
    ok
else bad "--values: not 3 of 56 values in DDR: $(cat "$tmpdir/r50v")"; fi
run_saved "$tmpdir/r50v.json" -- compile resnet-50 --batch 16 --chip stcp920 --group graphturbo --values --json
if /usr/bin/python3 - "$tmpdir/r50v.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
v = d["values"]
assert v["step"] == "graphturbo" and v["passes"] == 2, v
ddr = [(r["value"], r["blocks"]["ddr"]) for r in v["rows"] if r["level"] == "DDR"]
assert ddr == [("s1.b3.relu", 25), ("s2.b0.conv3.bn", 6), ("fc.biased", 1)], ddr
loop = [s for s in d["loops"]["steps"] if s["step"] == "graphturbo"][0]
for level in ("lb", "gb", "ddr"):
    assert sum(r["level"] == level.upper() for r in v["rows"]) == loop["tensors"][level], level
PY
then ok; else bad "--values --json: $(head -c 400 "$tmpdir/r50v.json")"; fi
expect_error values-alone 2 "--values applies to --group graphturbo" -- compile resnet-50 --values
expect_error values-icca 2 "--values: ipu-mk2 has no global buffer" -- compile resnet-18 --group graphturbo --values
# --group fused is today's grouping: the same table as without it
"$ROTOR" compile "$tiny" -q >"$tmpdir/a" 2>&1 && "$ROTOR" compile "$tiny" --group fused -q >"$tmpdir/b" 2>&1 &&
    cmp -s "$tmpdir/a" "$tmpdir/b" && ok || bad "--group fused differs from the default"
finish cli_graphturbo
