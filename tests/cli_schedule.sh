#!/bin/sh
# CLI tests of `rotor schedule`: the design table, JSON, the trace, the
# options that shape the chip, and one-line errors.
# Run by `make test` as `ROTOR=build/rotor sh tests/cli_schedule.sh`.
. "$(dirname "$0")/lib.sh"
m="llama2-13b --layers 2 --batch 8"

expect_out help "usage: rotor schedule MODEL|FILE.onnx" -- schedule --help
# shellcheck disable=SC2086
run_saved "$tmpdir/table" -- schedule $m
expect_saved header "llama2-13b on ipu-pod4: 4 chips x 1472 cores, HBM 4000 GB/s per chip" "$tmpdir/table"
expect_saved ideal_row "^ideal .* 100.00 " "$tmpdir/table"
# shellcheck disable=SC2086
expect_out one_design "^full " -- schedule $m --design full
# --hbm-bw is the total over the chips: 8 TB/s on 4 chips is 2000 GB/s each
# shellcheck disable=SC2086
expect_out hbm_bw "HBM 2000 GB/s per chip" -- schedule $m --hbm-bw 8TB/s
# shellcheck disable=SC2086
expect_out hbm_gb "HBM 2000 GB/s per chip" -- schedule $m --hbm-bw 8000GB/s
# shellcheck disable=SC2086
expect_out tp1 "1 chip x 1472 cores" -- schedule $m --tp 1
# shellcheck disable=SC2086
expect_out per_op "l1.ffn_down  *reduction" -- schedule $m --design full --per-op

# JSON: the format, every design, Ideal at 100 %, Full no slower than Dyn
# shellcheck disable=SC2086
"$ROTOR" schedule $m --json >"$tmpdir/s.json" 2>"$err" || bad "json: $(cat "$err")"
if python3 - "$tmpdir/s.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "rotor-schedule" and d["version"] == 1, d["format"]
r = {x["design"]: x for x in d["designs"]}
assert list(r) == ["basic", "static", "dyn", "full", "ideal", "roofline"], list(r)
assert abs(r["ideal"]["percent_of_ideal"] - 100) < 1e-9
assert r["full"]["latency_us"] <= r["dyn"]["latency_us"]
for x in r.values():
    assert x["latency_us"] >= r["roofline"]["latency_us"]
    if x["design"] != "roofline":
        assert x["latency_us"] >= r["ideal"]["latency_us"]
    b = x["breakdown_us"]
    assert abs(sum(b.values()) - x["latency_us"]) < 1e-3 * x["latency_us"], (x["design"], b)
EOF
then ok; else bad "json content"; fi
# Execution-bound (issue 22): at matrix_tflops=83 Full is 95.74% of Elk's
# Ideal, which keeps the blocking SRAM's pause for preload writes; the
# roofline without it is 5.6585 ms, a bound no schedule on this chip reaches
"$ROTOR" schedule llama2-13b --batch 32 --set matrix_tflops=83 --design full,roofline --json >"$tmpdir/x.json" 2>"$err" ||
    bad "execution-bound: $(cat "$err")"
if python3 - "$tmpdir/x.json" <<'EOF'
import json, sys
r = {x["design"]: x for x in json.load(open(sys.argv[1]))["designs"]}
assert list(r) == ["full", "roofline"], list(r)
assert abs(r["full"]["percent_of_ideal"] - 95.735) < 0.01, r["full"]["percent_of_ideal"]
assert abs(r["roofline"]["latency_us"] - 5658.5) < 0.1, r["roofline"]["latency_us"]
EOF
then ok; else bad "execution-bound full vs ideal"; fi
# the same schedule whatever the thread count
# shellcheck disable=SC2086
"$ROTOR" schedule $m --json --threads 1 >"$tmpdir/t1.json" 2>"$err" || bad "threads 1: $(cat "$err")"
if cmp -s "$tmpdir/s.json" "$tmpdir/t1.json"; then ok; else bad "--threads 1 changes the JSON"; fi

# the trace holds a preload and an execution per operator
# shellcheck disable=SC2086
"$ROTOR" schedule $m --design full --trace "$tmpdir/trace.json" >/dev/null 2>"$err" || bad "trace: $(cat "$err")"
if python3 -c "
import json, sys
ev = json.load(open(sys.argv[1]))['traceEvents']
names = {e['name'] for e in ev if e['ph'] == 'X' and e['tid'] == 1}
assert 'l1.gate_up' in names and any(e['tid'] == 0 and e['name'] == 'l1.gate_up' for e in ev)
" "$tmpdir/trace.json"; then ok; else bad "trace lacks preload or execute events"; fi

# --no-refine: Elk's induction alone.  On the full Llama2-13B at batch 32 its
# estimate takes one chunk for attn_out's replicated weights, whose link-bound
# preload then stretches beside the shifts; the refinement undoes it
# (docs/preload.md): 5.0360 ms against 4.9848 ms, static's time.
"$ROTOR" schedule llama2-13b --batch 32 --design dyn --no-refine --json >"$tmpdir/e.json" 2>"$err" || bad "no-refine: $(cat "$err")"
"$ROTOR" schedule llama2-13b --batch 32 --design dyn --json >"$tmpdir/r.json" 2>"$err" || bad "refine: $(cat "$err")"
if python3 - "$tmpdir/e.json" "$tmpdir/r.json" <<'EOF'
import json, sys
e = json.load(open(sys.argv[1]))["designs"][0]
r = json.load(open(sys.argv[2]))["designs"][0]
assert e["refine_moves"] == 0 and r["refine_moves"] > 0, (e["refine_moves"], r["refine_moves"])
assert round(e["latency_us"], 1) == 5036.0, e["latency_us"]
assert round(r["latency_us"], 1) == 4984.8, r["latency_us"]
EOF
then ok; else bad "--no-refine: Elk alone 5036.0 us, refined 4984.8 us"; fi

# Dyn and full also time the best static split and report it when it is as
# fast with fewer link bytes (docs/preload.md, "Dyn and the static split"):
# on Llama2-13B at batch 8 all three take 2451.246 us and dyn's own plans
# would move 6,762,173 B into each core, static's 6,724,548 B.
"$ROTOR" schedule llama2-13b --batch 8 --json >"$tmpdir/k.json" 2>"$err" || bad "static kept: $(cat "$err")"
if python3 - "$tmpdir/k.json" "$tmpdir/e.json" "$tmpdir/r.json" <<'EOF'
import json, sys
d = {r["design"]: r for r in json.load(open(sys.argv[1]))["designs"]}
for n in ("dyn", "full"):
    assert d[n]["static_kept"] is True, n
    assert d[n]["latency_us"] == d["static"]["latency_us"], n
    assert d[n]["link_bytes_per_core"] == d["static"]["link_bytes_per_core"] == 6724548, n
assert d["static"]["static_kept"] is False and d["basic"]["static_kept"] is False
assert json.load(open(sys.argv[2]))["designs"][0]["static_kept"] is False, "--no-refine: Elk alone"
assert json.load(open(sys.argv[3]))["designs"][0]["static_kept"] is False, "batch 32: dyn is faster"
EOF
then ok; else bad "dyn and full keep static's schedule on Llama2-13B batch 8"; fi

expect_error no_model 2 "a model is required" -- schedule
expect_error no_hbm 2 "chip 'ipu-mk2' has no HBM" -- schedule llama2-13b --layers 1 --chip ipu-mk2
expect_error bad_design 2 "design" -- schedule llama2-13b --layers 1 --design fastest
expect_error bad_bw 2 "--hbm-bw: expected a positive bandwidth" -- schedule llama2-13b --layers 1 --hbm-bw fast
expect_error bad_bw_unit 2 "--hbm-bw: expected a positive bandwidth" -- schedule llama2-13b --layers 1 --hbm-bw 16PB/s
# below the least bandwidth a chip file takes: said in the words typed, not as
# a per-chip hbm_gbps
expect_error tiny_bw 2 "^rotor schedule: --hbm-bw: expected a positive bandwidth in TB/s (16, 16TB/s, 8000GB/s), got '1e-30'$" -- schedule llama2-13b --layers 1 --hbm-bw 1e-30
# the floor holds per chip: a total at it, shared by a pod's 4 chips, is below
# it, refused in the words typed (--set, --hbm-bw and a sweep alike)
expect_error tiny_bw_per_chip 2 "^rotor schedule: --hbm-bw: '2e-6G' over 4 chips is 5e-07 GB/s a chip, below the least (1e-06 GB/s)$" -- \
    schedule llama2-13b --layers 1 --chip ipu-pod4 --hbm-bw 2e-6G
expect_error tiny_bw_set 2 "^rotor chip: --set: hbm-bw: \"2e-6G\" over 4 chips is 5e-07 GB/s a chip, below the least (1e-06 GB/s)$" -- \
    chip show ipu-pod4 --set hbm-bw=2e-6G
expect_error tiny_bw_sweep 2 "^rotor explore: --sweep hbm-bw=2e-09: hbm-bw: 2e-09 TB/s over 4 chips is 5e-07 GB/s a chip, below the least (1e-06 GB/s)$" -- \
    explore llama2-7b --layers 1 --chip ipu-pod4 --sweep hbm-bw=2e-6G -q -o "$tmpdir/e"
expect_out tiny_bw_enough "\"hbm_gbps\":.1e-06,$" -- chip show ipu-pod4 --set hbm-bw=4e-6G
# HBM holds each chip's share of the weights and KV cache: one layer, 0.58 GB a chip with the
# embedding table whole (its Gather runs replicated)
expect_error hbm_full 1 "one chip's HBM would hold 578713600 bytes of weights and KV cache (its share over 4 chips), more than the chip's 500000000 (hbm_bytes)" -- schedule llama2-13b --layers 1 --set hbm_bytes=500000000
expect_error bad_tp 2 "--tp: expected 1..4 (the chips of ipu-pod4), got 8" -- schedule llama2-13b --layers 1 --tp 8
expect_error bad_batch 2 "--batch: expected an integer" -- schedule llama2-13b --batch 0
expect_error unknown_model 2 "unknown" -- schedule llama9
expect_error onnx_batch 2 "--batch, --seq, --layers, --decode and --prefill shape zoo models" -- schedule x.onnx --batch 2
expect_error unknown_opt 2 "unknown option '--fast'" -- schedule llama2-13b --fast
expect_error trace_dir 2 "--trace: /nonexistent/t.json: cannot write" -- schedule llama2-13b --layers 1 --design full --trace /nonexistent/t.json
expect_error nofit 1 "op 'l0.qkv' (MatMul, one chip's shard): no valid plan fits" -- schedule llama2-13b --layers 1 --batch 8 --set sram_bytes=16384

# energy per token of every design (docs/energy.md, "Schedules")
expect_out energy "^full: energy [0-9.e+-]* J per token (compute .*HBM [0-9.e+-]*" -- schedule llama2-13b --layers 1 --design full
"$ROTOR" schedule llama2-13b --layers 1 --json >"$out" 2>"$err"
if grep -q '"per":	"token"' "$out" && grep -q '"edp_js":' "$out"; then ok; else bad "schedule --json lacks the energy object"; fi
expect_out energy-prefill "J per step" -- schedule llama2-13b --layers 1 --prefill --seq 128 --design full
# a prefill writes its KV cache to HBM, which the schedule does not price: it
# says how much (2 layers x K and V x 2 sentences x 128 positions x 40 heads x
# 128 x 2 bytes = 10,485,760 B over 4 chips, 2.6 MB a chip); a decode step writes none
expect_out prefill-kv "^not priced: the prefill writes 2.6 MB of KV cache per chip to HBM (0.001 ms" -- \
    schedule llama2-13b --layers 2 --batch 2 --prefill --seq 128 --design full
"$ROTOR" schedule llama2-13b --layers 2 --batch 2 --prefill --seq 128 --design full --json >"$out" 2>"$err"
if grep -q '"prefill_kv_bytes_per_chip_not_priced":	2621440' "$out"; then ok; else bad "prefill --json lacks its KV bytes"; fi
"$ROTOR" schedule llama2-13b --layers 1 --design full >"$out" 2>"$err"
if grep -q "not priced" "$out"; then bad "a decode step says its KV cache is not priced"; else ok; fi
# reshards are said and listed: Llama 2 13B's 40 heads cut 16 ways are 3 a chip, padded,
# where qkv's columns lie 960 a chip, so Q and the context move by all-to-all, 720 bytes
# each into the busiest chip (docs/schedule.md, "Reshards"); on 4 chips nothing moves
expect_out reshard-line "^reshards between the chips' cuts: 0.009 us per step" -- \
    schedule llama2-13b --layers 1 --chip ipu-pod16 --design basic
expect_out reshard-per-op "^l0.attn_scores  *output .* 0.004$" -- \
    schedule llama2-13b --layers 1 --chip ipu-pod16 --design basic --per-op
"$ROTOR" schedule llama2-13b --layers 1 --chip ipu-pod16 --design basic --per-op --json >"$out" 2>"$err"
if [ "$(grep -c '"reshard_bytes":	720,' "$out")" = 2 ] && grep -q '"reshard_us_per_step":	0.009,' "$out"; then ok
else bad "schedule --json lacks the reshards"; fi
"$ROTOR" schedule llama2-13b --layers 1 --design basic >"$out" 2>"$err"
if grep -q "reshards" "$out"; then bad "ipu-pod4 says it reshards Llama 2 13B"; else ok; fi
# a decode step at batch 8 makes 8 tokens: its energy is per step (it said per token)
expect_out energy-batch "^full: energy [0-9.e+-]* J per step (" -- schedule llama2-13b --layers 1 --batch 8 --design full

# the analytical preloads price no link latency, which the replay pays: a chip that has one says
# so under the table and in --json (docs/schedule.md, "Link latency"); an IPU (0 ns) does not
expect_out latency-note '^note: with a link latency (20 ns on stcp920) the replay sends a plan.s shifts in 1 KiB packets' -- \
    schedule nerf --chip stcp920 --design full
"$ROTOR" schedule nerf --chip stcp920 --design full --json >"$out" 2>"$err"
if grep -q '"caveat":	"with a link latency (20 ns on stcp920) the replay' "$out"; then ok
else bad "schedule --json on stcp920 lacks its caveat"; fi
"$ROTOR" schedule nerf --design full >"$out" 2>"$err"
if grep -q "link latency" "$out"; then bad "ipu-pod4 (0 ns) says it prices no link latency"; else ok; fi

# --hbm-bw and --set of the same bandwidth: one is refused (--hbm-bw won silently)
expect_error hbm-twice 2 "--hbm-bw and --set hbm-bw: give one" -- schedule llama2-13b --layers 1 --set hbm-bw=4 --hbm-bw 8

# --simulate with only ideal or roofline replays nothing: refused (it ran no simulation, silently);
# the Ideal footnote only where Ideal is shown
expect_error sim-ideal 2 "--simulate replays basic, static, dyn and full; --design ideal,roofline has none of them" -- \
    schedule nerf --design ideal,roofline --simulate
"$ROTOR" schedule nerf --design full >"$out" 2>"$err"
if grep -q "Ideal has its own" "$out"; then bad "the Ideal footnote under --design full"; else ok; fi

finish cli_schedule
