#!/bin/sh
# CLI tests of `rotor simulate --group graphturbo` (docs/simulator.md,
# "GraphTurbo's instances"): the five steps' model and simulated times, the
# JSON, the model times equal rotor compile --group graphturbo's, an ONNX
# file's batch named as the file's (first lines, progress, JSON), and the
# one-line errors.  Run by `make test` as `ROTOR=build/rotor sh tests/cli_gtsim.sh`.
. "$(dirname "$0")/lib.sh"
t=$tmpdir/t j=$tmpdir/j c=$tmpdir/c

run_saved "$t" -- simulate resnet-18 --chip stcp920 --group graphturbo --batch 2 -q
[ "$(cat "$t.rc")" -eq 0 ] || bad "table: $(cat "$t.err")"
# one row per step: name, model, simulated, difference (+/-x.xx%), instances, tasks
rows=$(grep -cE '^(per-layer|gb|lb|instances|graphturbo) +[0-9.]+ +[0-9.]+ +[+-][0-9.]+% ' "$t")
if [ "$rows" -eq 5 ]; then ok; else bad "table: $rows step rows: $(cat "$t")"; fi
# every step within 5 % of the model at this size (docs/simulator.md)
if awk '$1 ~ /^(per-layer|gb|lb|instances|graphturbo)$/ { d = $4; sub(/%/, "", d); d += 0; if (d > 5 || d < -5) far = 1 }
        END { exit far }' "$t"; then ok; else bad "a step beyond 5 %: $(cat "$t")"; fi
# the model column is rotor compile --group graphturbo's time
run_saved "$c" -- compile resnet-18 --chip stcp920 --group graphturbo --batch 2 -q
# (simulate prints ms, compile us: compared to the microsecond; compile's first graphturbo row,
# its one pass: the loops' table follows it)
m1=$(awk '$1 == "graphturbo" { printf "%.0f", $2 * 1000; exit }' "$t") m2=$(awk '$1 == "graphturbo" { printf "%.0f", $2; exit }' "$c")
if [ -n "$m1" ] && [ "$m1" = "$m2" ]; then ok; else bad "model $m1 us, compile says $m2 us"; fi

# (five steps, and the five again in their passes: here all one pass)
run_saved "$j" -- simulate resnet-18 --chip stcp920 --group graphturbo --batch 2 -q --json
if grep -q '"format":	"rotor-graphturbo-sim"' "$j" && grep -q '"version":	2' "$j" &&
   [ "$(grep -c '"simulated_s":' "$j")" -eq 10 ] && [ "$(grep -c '"model_s":' "$j")" -eq 10 ] &&
   grep -q '"step":	"graphturbo"' "$j" && grep -q '"DDR":' "$j" && grep -q '"GB read":' "$j" && grep -q '"GB write":' "$j"; then ok; else bad "json: $(head -20 "$j")"; fi

# --no-loops replays the same graph: a float32 file's values at the chip's 2 bytes too (it replayed them at 4)
tc="$(dirname "$0")/../examples/twoconv.onnx"
run_saved "$tmpdir/tc" -- simulate "$tc" --group graphturbo --chip stcp920 -q
run_saved "$tmpdir/tcn" -- simulate "$tc" --group graphturbo --chip stcp920 -q --no-loops
if grep -q "^per-layer         0.260 " "$tmpdir/tc" && [ "$(grep '^per-layer' "$tmpdir/tc" | head -n 1)" = "$(grep '^per-layer' "$tmpdir/tcn" | head -n 1)" ]
then ok; else bad "no-loops sizes: $(grep '^per-layer' "$tmpdir/tc" "$tmpdir/tcn")"; fi

# §5.1's loops replayed as rotor compile chose them: BERT-128 at 8 a cluster in two passes of 4
run_saved "$tmpdir/b" -- simulate bert-large --seq 128 --batch 8 --chip stcp920 --group graphturbo -q
expect_saved loops-head "^with §5.1's loops, as rotor compile --group graphturbo chose them" "$tmpdir/b"
expect_saved loops-gt "^graphturbo       2      41.862          45.455     +8.58%       196    56840$" "$tmpdir/b"
expect_saved loops-base "^per-layer        1     298.962         299.152     +0.06%       220    43340$" "$tmpdir/b"
run_saved "$tmpdir/b1" -- simulate bert-large --seq 128 --batch 8 --chip stcp920 --group graphturbo -q --no-loops
if [ "$(cat "$tmpdir/b1.rc")" -eq 0 ] && ! grep -q "loops" "$tmpdir/b1"; then ok; else bad "--no-loops: $(cat "$tmpdir/b1" "$tmpdir/b1.err")"; fi
run_saved "$tmpdir/b.json" -- simulate bert-large --seq 128 --batch 8 --chip stcp920 --group graphturbo -q --json
if /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
lo = {s["step"]: s for s in d["loops"]}
assert [s["step"] for s in d["loops"]] == ["per-layer", "gb", "lb", "instances", "graphturbo"]
assert lo["graphturbo"]["passes"] == 2 and lo["per-layer"]["passes"] == 1
assert lo["per-layer"]["simulated_s"] == d["steps"][0]["simulated_s"]
assert d["loops_tried"] == 4 and d["loops_file_batch"] is False
' "$tmpdir/b.json"; then ok; else bad "loops json: $(grep -A12 '"loops"' "$tmpdir/b.json")"; fi
# ResNet-18 at batch 2 runs every step in one pass: one line, no table
expect_saved loops-none "^with §5.1's loops: every step is fastest in one pass (2 numbers of passes tried)$" "$t"
if grep -q "as rotor compile --group graphturbo chose them" "$t"; then bad "resnet-18 b2: a loops table"; else ok; fi
expect_error no-loops-alone 2 "--no-loops applies to --group graphturbo" -- simulate resnet-18 --no-loops

# an ONNX file's batch is its own: the first line says so, not --batch's default of 1, and compile
# says what its throughput counts (the MLP at 8 rows: the file's batch)
mlp=$tmpdir/mlp8.onnx
if "$ONNXGEN" mlp "$mlp" --batch 8 >/dev/null 2>&1; then
    run_saved "$t" -- simulate "$mlp" --chip stcp920 --group graphturbo -q
    expect_saved onnx-head "^$mlp, the file's batch a cluster x 4 clusters on stcp920: GraphTurbo's schedules replayed" "$t"
    run_saved "$c" -- compile "$mlp" --chip stcp920 --group graphturbo -q
    expect_saved onnx-throughput "^(throughput/s: runs of the file a second, each cluster running it once at a time)$" "$c"
    run_saved "$c" -- compile resnet-18 --chip stcp920 --group graphturbo --batch 2 -q
    if grep -q "runs of the file" "$c"; then bad "a zoo model's throughput called runs of a file"; else ok; fi
    # the JSON documents say whether the batch is a file's (then 1: one run of it)
    run_saved "$j" -- simulate "$mlp" --chip stcp920 --group graphturbo -q --json
    expect_saved onnx-json-sim '"file_batch":	true' "$j"
    run_saved "$j" -- compile "$mlp" --chip ipu-mk2 --group graphturbo -q --json
    expect_saved onnx-json-icca '"file_batch":	true' "$j"
    run_saved "$j" -- compile resnet-18 --chip stcp920 --group graphturbo --batch 2 -q --json --no-loops
    expect_saved zoo-json '"file_batch":	false' "$j"
    # a plain compile's first line and its progress name the file's batch as well
    run_saved "$c" -- compile "$mlp" --chip ipu-mk2 --progress=always
    expect_saved onnx-compile-head "^$mlp, the file's batch, on ipu-mk2 (1472 cores), plans by the exact solver" "$c"
    if grep -q "^rotor compile: the file's batch: operator shapes searched" "$c.err"; then ok
    else bad "compile progress: $(head -2 "$c.err")"; fi
    # on a chip without a GB too (the instances on core groups replayed)
    run_saved "$t" -- simulate "$mlp" --chip ipu-mk2 --group graphturbo -q
    expect_saved onnx-icca-head "^$mlp, the file's batch, on ipu-mk2 (1472 cores): GraphTurbo's instances on core groups replayed" "$t"
else
    bad "onnxgen mlp failed"
fi

# a chip without a GB: the instances on core groups (cli_gticca.sh); several chips: refused in one line
expect_error no-gb 2 "chip 'ipu-pod4' is not one all-to-all chip without a global buffer" -- simulate resnet-18 --chip ipu-pod4 --group graphturbo
expect_error bad-group 2 "expected fused, none or graphturbo, got 'turbo'" -- simulate resnet-18 --group turbo
expect_error trace 2 "it conflicts with --trace" -- simulate resnet-18 --chip stcp920 --group graphturbo --trace x.json
expect_error program 2 "a program file is already compiled" -- simulate prog.json --group graphturbo
expect_out help "--group G" -- simulate --help

finish cli_gtsim
