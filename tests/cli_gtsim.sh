#!/bin/sh
# CLI tests of `rotor simulate --group graphturbo` (docs/simulator.md,
# "GraphTurbo's instances"): the five steps' model and simulated times, the
# JSON, the model times equal rotor compile --group graphturbo's, and the
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
m1=$(awk '$1 == "graphturbo" { printf "%.0f", $2 * 1000 }' "$t") m2=$(awk '$1 == "graphturbo" { printf "%.0f", $2; exit }' "$c")
if [ -n "$m1" ] && [ "$m1" = "$m2" ]; then ok; else bad "model $m1 us, compile says $m2 us"; fi

run_saved "$j" -- simulate resnet-18 --chip stcp920 --group graphturbo --batch 2 -q --json
if grep -q '"format":	"rotor-graphturbo-sim"' "$j" && grep -q '"version":	1' "$j" &&
   [ "$(grep -c '"simulated_s":' "$j")" -eq 5 ] && [ "$(grep -c '"model_s":' "$j")" -eq 5 ] &&
   grep -q '"step":	"graphturbo"' "$j" && grep -q '"DDR":' "$j"; then ok; else bad "json: $(head -20 "$j")"; fi

# a chip without a GB: the instances on core groups (cli_gticca.sh); several chips: refused in one line
expect_error no-gb 2 "chip 'ipu-pod4' is not one all-to-all chip without a global buffer" -- simulate resnet-18 --chip ipu-pod4 --group graphturbo
expect_error bad-group 2 "expected fused or graphturbo, got 'turbo'" -- simulate resnet-18 --group turbo
expect_error trace 2 "it conflicts with --trace" -- simulate resnet-18 --chip stcp920 --group graphturbo --trace x.json
expect_error program 2 "a program file is already compiled" -- simulate prog.json --group graphturbo
expect_out help "--group G" -- simulate --help

finish cli_gtsim
