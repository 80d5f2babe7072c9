#!/bin/sh
# CLI tests of `rotor compile`: the summary, the VGM comparison, program
# files, the batch sweep's "x", and one-line errors with exit status 2.
# Run by `make test` as `ROTOR=build/rotor sh tests/cli_compile.sh`.
. "$(dirname "$0")/lib.sh"
prog=$tmpdir/prog

expect_out list "llama2-70b" -- compile --list
expect_out help "usage: rotor compile MODEL" -- compile --help
# each compile of BERT-Base below runs once (run_saved, lib.sh) and its output
# is read by every check of it
b2=$tmpdir/b2 b2c=$tmpdir/b2c b1=$tmpdir/b1 b1j=$tmpdir/b1.json
run_saved "$b2c" -- compile bert-base --layers 2 --compare
run_saved "$b2" -- compile bert-base --layers 2
expect_saved summary "T10 over VGM: " "$b2c"
expect_saved summary-table "l0.qkv" "$b2"
expect_saved totals "SRAM per core: idle" "$b2"
expect_out vgm "VGM baseline (Roller): total" -- compile bert-base --layers 2 --baseline vgm
expect_out vgm-oracle "VGM oracle (exhaustive): total" -- compile bert-base --layers 2 --baseline vgm-oracle
# --compare reports both baselines; the closing line compares with Roller's
if grep -q "^T10 over the VGM oracle: [0-9.]*x$" "$b2c" && tail -n 1 "$b2c" | grep -q "^T10 over VGM: [0-9.]*x$"
then ok; else bad "compare: $(tail -n 4 "$b2c")"; fi
expect_out decode "l0.attn_scores" -- compile opt-1.3b --layers 1 --decode --seq 256 --batch 4

# program file: written with -o and the same text with --json; -o's stdout is
# the summary a plain compile prints
run_saved "$b1" -- compile bert-base --layers 1 -o "$prog"
[ "$(cat "$b1.rc")" -eq 0 ] || bad "program: $(cat "$b1.err")"
if grep -q '"format":	"rotor-program"' "$prog" && grep -q '"placement":' "$prog"; then ok; else bad "program file lacks format/placement"; fi
run_saved "$b1j" -- compile bert-base --layers 1 --json
if cmp -s "$b1j" "$prog"; then ok; else bad "--json and -o differ"; fi

# the sweep doubles until the model no longer fits and marks it with x
"$ROTOR" compile bert-base --layers 1 --batch 256,512 >"$out" 2>"$err"
if [ $? -eq 0 ] && grep -q "^512 " "$out" && grep -q " x$" "$out"; then ok; else bad "sweep: $(cat "$out" "$err")"; fi

# --pipeline (issue 25 item 2, docs/kapla.md "Pipelining"): the segments and
# their stages are printed, the program carries them, and the options are
# checked
"$ROTOR" compile nerf --batch 8 --pipeline -o "$tmpdir/pipe.json" >"$out" 2>"$err" || bad "pipeline: $(cat "$err")"
if grep -q "^pipelined segments (objective latency): 1, " "$out" &&
   grep -q "^segment 1: sigma .. feature, 1 micro-batches over output dimension 0" "$out" &&
   grep -q "^pipelined total 21.551 us, unpipelined 21.559 us (1.00x)$" "$out" &&
   grep -q "^feature  *MatMul  *2.371  seg 1 " "$out"
then ok; else bad "pipeline table: $(cat "$out")"; fi
if grep -q '"segments":' "$tmpdir/pipe.json" && grep -q '"objective":	"latency"' "$tmpdir/pipe.json"; then ok; else bad "the pipelined program lacks its segments"; fi
expect_out pipeline-micro "^segment 1: l0.qkv .. l0.attn_scores, 2 micro-batches over output dimension 1" -- \
    compile bert-base --batch 4 --seq 32 --layers 1 --pipeline
expect_out pipeline-help "--pipeline " -- compile --help
# a sweep with --pipeline heads its column as the pipelined latency it is (it said T10)
expect_out pipeline-sweep "^batch    pipelined (us)$" -- compile nerf-t10 --batch 1,2 --pipeline -q
# batches back to back pay each batch's input gathers (nerf-t10 at 8 claimed 1.65x without them)
expect_out pipeline-throughput "^batches back to back: 1.303 us per batch, unpipelined 1.635 us (1.25x)$" -- \
    compile nerf-t10 --batch 8 --pipeline --objective throughput -q
# --walk jumps (docs/compile.md, "Jumps"): BERT-Base's walk leaves its
# fixed point, 219.842 -> 201.116 us; bad values and options with no walk refused
expect_out walk-jumps "^SRAM per core: .* reconciliation steps ([0-9]* jumps, --walk jumps)$" -- compile bert-base --walk jumps
if grep -q "^total 201.116 us" "$out"; then ok; else bad "bert-base --walk jumps: $(grep ^total "$out")"; fi
expect_out walk-t10 "^total 219.842 us" -- compile bert-base --walk t10
if grep -q "jumps" "$out"; then bad "T10's walk said jumps"; else ok; fi
expect_error walk-bad 2 "--walk: expected t10 or jumps, got 'jump'" -- compile bert-base --walk jump
expect_error walk-vgm 2 "--walk: --baseline vgm walks no idle layouts" -- compile bert-base --walk jumps --baseline vgm
expect_error walk-gt 2 "--walk: on stcp920 (a chip with a global buffer) --group graphturbo times GraphTurbo's schedules and walks no idle layouts" -- compile resnet-18 --chip stcp920 --group graphturbo --walk jumps
expect_error objective-alone 2 "--objective needs --pipeline" -- compile nerf --objective throughput
expect_error objective-bogus 2 "--objective: expected latency or throughput, got 'speed'" -- compile nerf --pipeline --objective speed
expect_error pipeline-baseline 2 "--pipeline conflicts with --baseline vgm" -- compile nerf --pipeline --baseline vgm
expect_error pipeline-pod 2 "--pipeline: chip 'ipu-pod4' is several chips; pipelining over core groups needs one chip with an all-to-all exchange (docs/kapla.md)" -- compile nerf --chip ipu-pod4 --pipeline

# issue 45: Conformer-M compiles at batch 16. A frontier plan of its l0.mhsa.scores_pos (F_op b4 h4
# m23 n4, k split 4/8/4 in Q/V/P) was refused by op/place.c until the placement learnt independent
# prime slots (docs/placement.md, "Choosing offsets")
expect_out conformer-b16 "^total 2834.661 us: compute 1769.526, " -- compile conformer-m --batch 16 -q
# T10's plan prices one chip's exchange: several chips are refused, not priced at on-chip rates
expect_error several-chips 2 "chip 'ipu-pod4' is 4 chips; T10's plan prices one chip's exchange and would move data between chips at on-chip link rates" -- compile mlp-l --chip ipu-pod4
expect_error several-chips-plan 2 "rotor plan: chip 'ipu-pod4' is 4 chips; T10's plan prices one chip's exchange and would move data between chips at on-chip link rates: plan one chip (--set chips=1)" -- plan --expr 'C[m,n] += A[m,k] * B[k,n]' --dim m=64,k=64,n=64 --chip ipu-pod4
expect_error several-chips-sim 2 "chip 'ipu-pod4' is 4 chips" -- simulate mlp-l --chip ipu-pod4
expect_error unknown-model 2 "unknown model 'bert-huge' (the zoo has bert-base" -- compile bert-huge
expect_error no-model 2 "a model is required" -- compile
expect_error bad-batch 2 "--batch: expected an integer from 1 to 1048576, got '0'" -- compile bert-base --batch 0
expect_error bad-batch-space 2 "--batch: expected an integer from 1 to 1048576, got ' 8'" -- compile bert-base --batch " 8"
expect_error falling-batch 2 "--batch: sizes must increase" -- compile bert-base --batch 4,2
expect_error bad-baseline 2 "--baseline: expected vgm or vgm-oracle, got 'roller'" -- compile bert-base --baseline roller
expect_error oracle-conflict 2 "--baseline vgm-oracle conflicts with --compare" -- compile bert-base --baseline vgm-oracle --compare
expect_error conflict 2 "--baseline vgm conflicts with --compare" -- compile bert-base --baseline vgm --compare
expect_error sweep-json 2 "a --batch sweep writes no program" -- compile bert-base --batch 1,2 --json
expect_error decode-encoder 2 "bert-base has no decode phase" -- compile bert-base --decode
# --json --compare carries the comparison (issue 18: it was dropped),
# and the program still reads back
expect_out json-compare '"t10_over_vgm":' -- compile bert-base --layers 1 --seq 16 --json --compare
expect_out json-compare-oracle '"t10_over_vgm_oracle":' -- compile bert-base --layers 1 --seq 16 --json --compare
"$ROTOR" compile bert-base --layers 1 --seq 16 --json --compare >"$tmpdir/pc.json" 2>"$err"
expect_out json-compare-simulates "simulated" -- simulate "$tmpdir/pc.json"
expect_error unknown-chip 2 "unknown chip 'ipu-mk9'" -- compile bert-base --chip ipu-mk9
expect_error too-big 1 "does not fit in 638976 bytes of SRAM per core: op '" -- compile llama2-7b --layers 4
expect_error bad-option 2 "unknown option '--fast'" -- compile bert-base --fast

# --solver fast (issue 25, docs/kapla.md): the header and the program name
# the solver, the program reads back (simulate replays it), exact is the
# default, and a misspelt solver is one line with the closest name
expect_out solver-fast "plans by the fast solver" -- compile resnet-18 --batch 1 --solver fast
expect_saved solver-exact "plans by the exact solver" "$b1"
"$ROTOR" compile bert-base --layers 1 --solver fast -o "$tmpdir/fast.json" >/dev/null 2>"$err" || bad "solver-program: $(cat "$err")"
if grep -q '"solver":	"fast"' "$tmpdir/fast.json"; then ok; else bad "the fast program lacks \"solver\": \"fast\""; fi
expect_out solver-read "simulated [0-9.]* us" -- simulate "$tmpdir/fast.json"
if grep -q '"solver":	"exact"' "$b1j"; then ok; else bad "the exact program lacks \"solver\": \"exact\""; fi
expect_error solver-bogus 2 "--solver: expected exact, fast, random or ml, got 'bogus'" -- compile bert-base --solver bogus
expect_error solver-near 2 "got 'fsat' (did you mean 'fast'?)" -- compile bert-base --solver fsat
expect_out plan-fast "solver fast" -- plan --expr 'C[m,n] += A[m,k] * B[k,n]' --dim m=32,k=5120,n=15360 --solver fast
expect_error plan-bogus 2 "--solver: expected exact, fast, random or ml, got 'bogus'" -- plan --expr 'C[m,n] += A[m,k] * B[k,n]' --dim m=32,k=64,n=64 --solver bogus
expect_out schedule-fast "shapes searched by the fast solver" -- schedule llama2-7b --layers 1 --solver fast
expect_error schedule-bogus 2 "--solver: expected exact, fast, random or ml, got 'bogus'" -- schedule llama2-7b --solver bogus

# energy (docs/energy.md): a table line per inference with EDP, and an
# "energy" object as the program's last key, which the reader ignores
expect_saved energy-table "^energy [0-9.e+-]* J per inference (compute .*); EDP [0-9.e+-]* J s$" "$b1"
if grep -q '"energy":' "$b1j" && grep -q '"edp_js":' "$b1j" && grep -q '"byte_hops":' "$b1j"; then ok; else bad "--json lacks the energy object"; fi
cp "$prog" "$tmpdir/energy.json"
expect_out energy-read-back "energy [0-9.e+-]* J per inference" -- simulate "$tmpdir/energy.json"

finish cli_compile
