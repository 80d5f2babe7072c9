#!/bin/sh
# CLI tests of the command line's one vocabulary (issue 46): no abbreviated
# long options, HBM bandwidth spelt one way (--hbm-bw, --sweep hbm-bw= and
# --set hbm-bw= alike, the old --set hbm_gbps with one deprecation line),
# "did you mean" for --set and --sweep keys, -o/--output, `rotor chip show`
# round-tripping every preset through --chip FILE, and --progress off a
# terminal.  Small workloads only (llama2-13b --layers 1).
# Run by `make test` as `ROTOR=build/rotor sh tests/cli_options.sh`.
. "$(dirname "$0")/lib.sh"
MM="--expr C[m,n]+=A[m,k]*B[k,n] --dim m=64,k=96,n=80"

# expect_line NAME STATUS LINE -- ARGS...: exits STATUS with exactly LINE,
# one line, on stderr (the whole message: its wording is the interface).
expect_line() {
    name=$1 want=$2 line=$3
    shift 4
    "$ROTOR" "$@" >"$out" 2>"$err"
    got=$?
    if [ "$got" -ne "$want" ]; then bad "$name: exit $got, want $want ($(cat "$err"))"; return; fi
    if [ "$(cat "$err")" != "$line" ]; then bad "$name: stderr
  got  $(cat "$err")
  want $line"; return; fi
    ok
}

# ---- no prefix matching: getopt_long would take --lay for --layers ----------
expect_line abbrev-layers 2 "rotor compile: unknown option '--lay' (did you mean '--layers'? options are not abbreviated)" \
    -- compile bert-base --lay 1 --bat 2
expect_line abbrev-eq 2 "rotor compile: unknown option '--batc' (did you mean '--batch'? options are not abbreviated)" \
    -- compile bert-base --batc=2
expect_line abbrev-plan 2 "rotor plan: unknown option '--ch' (did you mean '--chip'? options are not abbreviated)" \
    -- plan $MM --ch ipu-mk2
# an option's value that looks like a prefix is a value, not an option
expect_line abbrev-value 2 "rotor plan: --expr: column 1: expected the output tensor, got '-'" -- plan --expr --ch --dim m=1
expect_out whole-names "total" -- compile bert-base --layers 1 --batch 2 -q
expect_out after-dashes "^operator" -- model -- examples/tiny-cnn.onnx

# ---- HBM bandwidth: one name, the total of all chips, TB/s or with its unit --
run_hbm() { "$ROTOR" schedule llama2-13b --layers 1 --design full "$@" 2>"$err" | head -n 1; }
want="llama2-13b on ipu-pod4: 4 chips x 1472 cores, HBM 2000 GB/s per chip,"
for form in "--hbm-bw 8" "--hbm-bw 8TB/s" "--hbm-bw 8000GB/s" "--set hbm-bw=8" "--set hbm-bw=8000GB/s"; do
    # shellcheck disable=SC2086 # the form is two words, or one
    got=$(run_hbm $form)
    case "$got" in "$want"*) ok ;; *) bad "hbm $form: $got" ;; esac
    [ -s "$err" ] && bad "hbm $form: stderr $(cat "$err")"
done
got=$(run_hbm --set hbm_gbps=2000)
case "$got" in "$want"*) ok ;; *) bad "hbm_gbps: $got" ;; esac
if [ "$(cat "$err")" = "rotor schedule: --set hbm_gbps is deprecated, write --set hbm-bw=BW, the HBM of all chips, a bare number in TB/s (hbm_gbps=136 on one chip is hbm-bw=136GB/s) (--set hbm_gbps goes in the next release)" ]
then ok; else bad "hbm_gbps deprecation: $(cat "$err")"; fi
run_hbm --set hbm_gbps=2000 -q >/dev/null
if [ -s "$err" ]; then bad "hbm_gbps -q: $(cat "$err")"; else ok; fi
# --set applies in order: hbm-bw divides by the chips set before it
got=$("$ROTOR" schedule llama2-13b --layers 1 --design full --set chips=2 --set hbm-bw=8 --tp 2 2>&1 | head -n 1)
case "$got" in *"2 chips x 1472 cores, HBM 4000 GB/s per chip"*) ok ;; *) bad "chips then hbm-bw: $got" ;; esac
expect_line hbm-set-bad 2 'rotor schedule: --set: hbm-bw: expected the bandwidth of all chips in TB/s (16, 16TB/s, 8000GB/s; 0 for none), got "fast"' \
    -- schedule llama2-13b --layers 1 --set hbm-bw=fast
# the sweep takes units too: 8000GB/s is the point 8 (TB/s)
"$ROTOR" explore llama2-13b --layers 1 --sweep hbm-bw=4000GB/s,8TB/s,16 --design full -o "$tmpdir/u" >"$out" 2>"$err"
"$ROTOR" explore llama2-13b --layers 1 --sweep hbm-bw=4,8,16 --design full -o "$tmpdir/n" >/dev/null 2>&1
if cmp -s "$tmpdir/u-hbm-bw.csv" "$tmpdir/n-hbm-bw.csv"; then ok; else bad "sweep hbm-bw with units: $(cat "$err")"; fi
"$ROTOR" explore llama2-13b --layers 1 --sweep hbm-bw=4000GB/s:16TB/s:x2 --design full -o "$tmpdir/r" >/dev/null 2>"$err"
if cmp -s "$tmpdir/r-hbm-bw.csv" "$tmpdir/n-hbm-bw.csv"; then ok; else bad "sweep hbm-bw range with units: $(cat "$err")"; fi

# ---- did you mean, for --set and --sweep keys --------------------------------
expect_error set-near 2 "^rotor plan: --set: hbm_gbs: unknown key (did you mean 'hbm_gbps'?) (known keys: name, " -- plan $MM --set hbm_gbs=3
expect_error set-far 2 "^rotor plan: --set: colour: unknown key (known keys: " -- plan $MM --set colour=3
expect_line sweep-near 2 "rotor explore: --sweep: unknown key 'hmb-bw' (did you mean 'hbm-bw'?) (keys: hbm-bw, noc-bw, cores, flops, sram, chips, topology, batch, seq)" \
    -- explore llama2-13b --layers 1 --sweep hmb-bw=3

# ---- -o and --output: the long name on every command that writes a file ------
for c in compile run explore report reproduce chip; do
    expect_out "output-help-$c" "^  -o, --output " -- "$c" --help
done
"$ROTOR" compile bert-base --layers 1 --output "$tmpdir/p.json" >/dev/null 2>"$err" && [ -s "$tmpdir/p.json" ] && ok ||
    bad "compile --output: $(cat "$err")"

# ---- rotor chip show: a preset as a chip file, which --chip reads back -------
for c in $("$ROTOR" chip --list); do
    "$ROTOR" chip show "$c" >"$tmpdir/$c.json" 2>"$err" || { bad "chip show $c: $(cat "$err")"; continue; }
    "$ROTOR" chip show "$tmpdir/$c.json" >"$tmpdir/again.json" 2>"$err"
    if cmp -s "$tmpdir/$c.json" "$tmpdir/again.json"; then ok; else bad "chip show $c: the file shows differently"; fi
done
[ "$("$ROTOR" chip --list | wc -l)" -ge 7 ] && ok || bad "chip --list: fewer than the 7 presets"
expect_out chip-format '"format":	"rotor-chip"' -- chip show ipu-mk2
# the same chip: the same plan, byte for byte, from the preset and from its file
"$ROTOR" plan $MM --chip ipu-mk2 | grep -v threads >"$tmpdir/p1"
"$ROTOR" plan $MM --chip "$tmpdir/ipu-mk2.json" | grep -v threads >"$tmpdir/p2"
if cmp -s "$tmpdir/p1" "$tmpdir/p2"; then ok; else bad "plan --chip FILE differs from --chip ipu-mk2"; fi
"$ROTOR" chip show ipu-pod4 --set hbm-bw=8 -o "$tmpdir/pod8.json" >"$out" 2>"$err"
if grep -q '"hbm_gbps":	2000,' "$tmpdir/pod8.json" && [ ! -s "$out" ]; then ok; else bad "chip show --set -o: $(cat "$err")"; fi
# -o DIR: DIR/NAME.chip.json, and a name that is not a file name there is refused (it wrote
# two levels up)
mkdir -p "$tmpdir/cdir/in"
"$ROTOR" chip show ipu-mk2 -o "$tmpdir/cdir/in" >"$out" 2>"$err" && [ -s "$tmpdir/cdir/in/ipu-mk2.chip.json" ] && ok ||
    bad "chip show -o DIR: $(cat "$err")"
expect_error chip-name-escape 2 "-o $tmpdir/cdir/in: the chip's name '../../x' is not a file name in that directory; give -o FILE" -- \
    chip show ipu-mk2 --set name=../../x -o "$tmpdir/cdir/in"
if [ -e "$tmpdir/x.chip.json" ]; then bad "chip show wrote outside -o DIR"; else ok; fi
expect_line chip-verb 2 "rotor chip: unknown verb 'shw' (did you mean 'show'?) (rotor chip show NAME; try 'rotor chip --help')" -- chip shw ipu-mk2
expect_line chip-none 2 "rotor chip: expected 'show NAME' (try 'rotor chip --help')" -- chip
expect_line chip-missing 2 "rotor chip: a chip is required (try 'rotor chip --list')" -- chip show
expect_error chip-unknown 2 "^rotor chip: unknown chip 'nope' (presets: ipu-mk2, " -- chip show nope

# ---- --progress: lines in a log (stderr not a terminal) with always ---------
expect_line progress-bad 2 "rotor explore: --progress: expected auto, always or never, got 'alway' (did you mean 'always'?)" \
    -- explore llama2-13b --layers 1 --sweep hbm-bw=4 --progress=alway
# auto and never draw nothing off a terminal; always writes whole lines: one
# at the phase's first step, one every 5 s, and one at its end
sweep="llama2-13b --layers 1 --sweep hbm-bw=2,4,8,16,32 --design full"
# shellcheck disable=SC2086 # the words of the sweep
"$ROTOR" explore $sweep -o "$tmpdir/a" >/dev/null 2>"$err"
if [ -s "$err" ]; then bad "progress auto off a terminal: $(cat "$err")"; else ok; fi
# shellcheck disable=SC2086
"$ROTOR" explore $sweep -o "$tmpdir/a" --progress=always >/dev/null 2>"$err"
if grep -q "^rotor explore: grid points [0-9]/5, [0-9.]* s$" "$err" && grep -q "^rotor explore: grid points: done, [0-9.]* s$" "$err" &&
    ! grep -q "$(printf '\r')" "$err"; then ok; else bad "progress always: $(cat "$err")"; fi
# shellcheck disable=SC2086
"$ROTOR" explore $sweep -o "$tmpdir/a" --progress=always -q >/dev/null 2>"$err"
if [ -s "$err" ]; then bad "progress always -q: $(cat "$err")"; else ok; fi
expect_out progress-help "^  --progress WHEN " -- plan --help

# --prefill on a model with no phases, and --seq on one with no sequence, are refused (both
# were accepted and changed nothing; found by an audit helper)
expect_error prefill-cnn 2 "--prefill: resnet-50 has no prefill phase (only the LLMs do)" -- schedule resnet-50 --prefill
expect_error seq-mlp 2 "mlp-l: seq 16: it has no sequence" -- explore mlp-l --sweep seq=16,1024 --design full -o "$tmpdir/seqmlp"

# an integer past int64 is refused, not read as 2^63 - 1; --pareto-within names its real range
expect_error i64-overflow 2 "--max-model-bytes: expected an integer from 1 to 9223372036854775807, got '36893488147419103233'" -- \
    compile mlp-l --max-model-bytes 36893488147419103233
expect_error pareto-within-range 2 "--pareto-within: expected a ratio from 1 to 1e9, got '1e308'" -- \
    plan --expr 'C[m,n] += A[m,k] * B[k,n]' --dim m=4,k=4,n=4 --pareto-within 1e308

finish cli_options
