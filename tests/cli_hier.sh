#!/bin/sh
# CLI tests of the memory hierarchy in the chip model (issue 42 item 1;
# docs/chip-format.md, "Clusters and the global buffer"): the stcp920
# preset, a chip file with the new keys, --set's validation naming the key,
# and the one stderr line compile and simulate print when a cluster's GB is
# slower than its cores' links together (the cost model does not price
# that contention; the simulator does).
# Run by `make test` as `ROTOR=build/rotor sh tests/cli_hier.sh`.
. "$(dirname "$0")/lib.sh"
tiny="$(dirname "$0")/../examples/tiny-cnn.onnx"
note="note: stcp920's GB serves 128 GB/s, less than its 8 cores' links of a cluster (512 GB/s): the compiler's cost model does not price the GB's contention, the simulator does"

# stcp920: gb_gbps = 8 x link_gbps, so no note, and the replay meets the model
"$ROTOR" compile "$tiny" --chip stcp920 >"$out" 2>"$err" || bad "stcp920 compile: $(cat "$err")"
if [ -s "$err" ]; then bad "stcp920 compile: stderr '$(cat "$err")'"; else ok; fi
expect_out stcp920-sim "simulated 0.127 us, model 0.127 us: +0.00%" -- simulate "$tiny" --chip stcp920
# a GB of 128 GB/s: one line on stderr, from compile and from simulate; the
# simulation is slower than the model (the GB's contention)
for cmd in compile simulate; do
    "$ROTOR" $cmd "$tiny" --chip stcp920 --set gb_gbps=128 >"$out" 2>"$err" || bad "$cmd slow GB: $(cat "$err")"
    if [ "$(wc -l <"$err")" -eq 1 ] && grep -q "^rotor $cmd: $note" "$err"; then ok; else bad "$cmd slow GB: stderr '$(cat "$err")'"; fi
    "$ROTOR" $cmd "$tiny" --chip stcp920 --set gb_gbps=128 -q >"$out" 2>"$err" || bad "$cmd slow GB -q: $(cat "$err")"
    if [ -s "$err" ]; then bad "$cmd slow GB -q: stderr '$(cat "$err")'"; else ok; fi
done
# (the GB is held for a packet's bytes, not its latency too: until 2026-12-04
# this read 0.383 us, +201.19 %, most of it 20 ns of latency a 4 ns packet)
expect_out slow-gb-sim "simulated 0.136 us, model 0.127 us: +6.71%" -- simulate "$tiny" --chip stcp920 --set gb_gbps=128 -q
# no GB (ipu-mk2's kind): no note whatever the links
"$ROTOR" compile "$tiny" --chip stcp920 --set gb_bytes=0 --set gb_gbps=0 >"$out" 2>"$err" || bad "no GB: $(cat "$err")"
if [ -s "$err" ]; then bad "no GB: stderr '$(cat "$err")'"; else ok; fi

# a chip file with every new key, from a preset
cat >"$tmpdir/hier.json" <<'JSON'
{"format": "rotor-chip", "version": 1, "base": "ipu-mk2", "cores_per_chip": 64,
 "clusters": 8, "cores_per_cluster": 8, "compute_units": 2, "gb_bytes": 4194304, "gb_gbps": 44,
 "offchip": "ddr", "hbm_bytes": 1073741824, "hbm_gbps": 50, "hbm_controllers": 1}
JSON
expect_out file "on hier (all-to-all, 64 cores)" -- simulate "$tiny" --chip "$tmpdir/hier.json" -q
# validation names the key, in one line
expect_error set-clusters 2 "chip after --set: clusters \* cores_per_cluster (3 x 8) != cores_per_chip (32)" -- compile "$tiny" --chip stcp920 --set clusters=3
expect_error set-gb 2 "chip after --set: gb_gbps: expected 0 when gb_bytes is 0 (no GB), got 512" -- compile "$tiny" --chip stcp920 --set gb_bytes=0
expect_error set-offchip 2 "offchip: expected \"hbm\" or \"ddr\", got \"gddr6\"" -- compile "$tiny" --chip stcp920 --set offchip=gddr6
sed 's/"clusters": 8/"clusters": 7/' "$tmpdir/hier.json" >"$tmpdir/bad.json"
expect_error file-clusters 2 "bad.json: clusters \* cores_per_cluster (7 x 8) != cores_per_chip (64)" -- compile "$tiny" --chip "$tmpdir/bad.json"
finish cli_hier
