#!/bin/sh
# CLI tests of `rotor explore`: the CSV (header, one row per point and design),
# the SVG (well-formed XML, one polyline per design), the table and JSON, the
# range forms, output independent of --threads, points that do not fit, and
# one-line errors.  Small models only (llama2-13b with --layers 2).
# Run by `make test` as `ROTOR=build/rotor sh tests/cli_explore.sh`.
. "$(dirname "$0")/lib.sh"
M="llama2-13b --layers 2"
x=$tmpdir/x
header="key,value,design,latency_us,percent_of_ideal,preload_us,execute_us,overlap_us,stall_us,hbm_util,link_util,tflops"

expect_out help "usage: rotor explore MODEL" -- explore --help
expect_out help-flops "vector_tflops is scaled by" -- explore --help
expect_out table "sweep hbm-bw (TB/s): 3 points x 6 designs" -- explore $M --sweep hbm-bw=2,8,32 -o "$x"
cp "$out" "$tmpdir/table1"

# the CSV: the header, then 3 points x 6 designs, in point order
csv=$x-hbm-bw.csv
if [ "$(head -n 1 "$csv")" = "$header" ]; then ok; else bad "csv header: $(head -n 1 "$csv")"; fi
if [ "$(wc -l <"$csv")" -eq 19 ]; then ok; else bad "csv: $(wc -l <"$csv") lines, want 19"; fi
if [ "$(sed -n '2p;19p' "$csv" | cut -d, -f1-3 | tr '\n' ' ')" = "hbm-bw,2,basic hbm-bw,32,roofline " ]; then ok
else bad "csv order: $(sed -n '2p;19p' "$csv")"; fi
# Ideal is 100% of itself, and more HBM bandwidth never makes it slower (Elk Figure 19)
if awk -F, '$3 == "ideal" { if ($5 != "100.0000") bad = 1; if (n && $4 > last) bad = 1; last = $4; n++ }
            END { exit bad || n != 3 }' "$csv"; then ok; else bad "ideal latency rises with HBM bandwidth: $(grep ideal "$csv")"; fi
# no design beats Ideal but the roofline, which beats none
if awk -F, 'NR > 1 && $3 != "roofline" && $5 > 100.0001 { bad = 1 } $3 == "roofline" && $5 < 99.9999 { bad = 1 }
            END { exit bad }' "$csv"; then ok; else bad "a design beats ideal"; fi

# the SVG: well-formed XML with one polyline per design
svg=$x-hbm-bw.svg
n=$(python3 -c 'import sys, xml.dom.minidom as m; print(len(m.parse(sys.argv[1]).getElementsByTagName("polyline")))' "$svg" 2>"$err")
if [ "$n" = 6 ]; then ok; else bad "svg: '$n' polylines, want 6 ($(cat "$err"))"; fi
if grep -q 'log scale' "$svg" && grep -q 'per-token latency (ms)' "$svg" && grep -q 'llama2-13b on ipu-pod4' "$svg"; then ok
else bad "svg lacks the log axis, the y label or the title"; fi

# the same bytes whatever the thread count
"$ROTOR" explore $M --sweep hbm-bw=2,8,32 -o "$tmpdir/y" --threads 1 >"$tmpdir/table2" 2>"$err" || bad "threads 1: $(cat "$err")"
"$ROTOR" explore $M --sweep hbm-bw=2,8,32 -o "$tmpdir/y" --threads 2 >"$tmpdir/table3" 2>"$err" || bad "threads 2: $(cat "$err")"
sed "s|$x|$tmpdir/y|g" "$tmpdir/table1" >"$tmpdir/table1y"
if cmp -s "$tmpdir/table1y" "$tmpdir/table2" && cmp -s "$tmpdir/table2" "$tmpdir/table3"; then ok; else bad "tables differ by thread count"; fi
"$ROTOR" explore $M --sweep hbm-bw=2,8,32 -o "$tmpdir/z" --threads 1 >/dev/null 2>&1
if cmp -s "$csv" "$tmpdir/y-hbm-bw.csv" && cmp -s "$svg" "$tmpdir/y-hbm-bw.svg" && cmp -s "$csv" "$tmpdir/z-hbm-bw.csv"
then ok; else bad "files differ by thread count"; fi

# ranges: 2:32:x2 is 2,4,8,16,32; 2:6:+2 is 2,4,6; two sweeps write two pairs of files
expect_out ranges "sweep noc-bw (GB/s): 3 points x 2 designs" -- explore $M --sweep hbm-bw=2:32:x2 --sweep noc-bw=2:6:+2 \
    --design full,ideal -o "$x"
if [ "$(cut -d, -f2 "$x-hbm-bw.csv" | sed 1d | uniq | tr '\n' ' ')" = "2 4 8 16 32 " ] && \
   [ "$(cut -d, -f2 "$x-noc-bw.csv" | sed 1d | uniq | tr '\n' ' ')" = "2 4 6 " ]; then ok
else bad "range values: $(cut -d, -f2 "$x-hbm-bw.csv" | uniq | tr '\n' ' ') / $(cut -d, -f2 "$x-noc-bw.csv" | uniq | tr '\n' ' ')"; fi
n=$(grep -c '<polyline' "$x-noc-bw.svg")
if [ "$n" = 2 ]; then ok; else bad "--design full,ideal: $n polylines, want 2"; fi

# JSON
expect_out json '"format":	"rotor-explore"' -- explore $M --sweep flops=125,250 --design ideal -o "$x" --json
if python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
p = d["sweeps"][0]["points"]
assert d["version"] == 1 and d["sweeps"][0]["key"] == "flops" and len(p) == 2
assert [r["design"] for r in p[0]["results"]] == ["ideal"]
assert p[0]["results"][0]["latency_us"] >= p[1]["results"][0]["latency_us"]' "$out" 2>"$err"; then ok
else bad "json: $(cat "$err")"; fi

# the default prefix is explore-MODEL, in the current directory
rotor_abs=$(cd "$(dirname "$ROTOR")" && pwd)/$(basename "$ROTOR")
(cd "$tmpdir" && "$rotor_abs" explore $M --sweep noc-bw=5.5 --design ideal >/dev/null 2>"$err")
if [ -s "$tmpdir/explore-llama2-13b-noc-bw.csv" ] && [ -s "$tmpdir/explore-llama2-13b-noc-bw.svg" ]; then ok
else bad "default prefix: $(ls "$tmpdir")"; fi

# cores on a mesh chip: the mesh is reshaped (736 = 32x23), or refused when too thin
mesh="--set topology=mesh --set mesh_width=32 --set mesh_height=46"
expect_out mesh-cores "736 full" -- explore $M --sweep cores=736,1472 --design full $mesh -o "$x"
expect_error mesh-prime 2 "cores=1471: the chip is a mesh and 1471 cores make no mesh within 4:1" -- \
    explore $M --sweep cores=1471 $mesh -o "$x"

# a point that does not fit is skipped, not fatal; a sweep where none fits is
"$ROTOR" explore $M --sweep cores=64,1472 --design full -o "$x" >"$out" 2>"$err"
if [ $? -eq 0 ] && grep -q "cores=64 skipped: op .*no valid plan fits" "$err" && grep -q "^ *64 does not fit" "$out" && \
   [ "$(wc -l <"$x-cores.csv")" -eq 2 ]; then ok; else bad "nofit point: $(cat "$err")"; fi
expect_error none-fits 1 "--sweep cores: no point fits; at cores=4: op" -- explore $M --sweep cores=4,8 -o "$x"

# bad input: one line, exit 2
expect_error no-sweep 2 "--sweep KEY=V1,V2,... is required" -- explore $M
expect_error unknown-key 2 "--sweep: unknown key 'sram' (keys: hbm-bw, noc-bw, cores, flops)" -- explore $M --sweep sram=1,2
expect_error no-equals 2 "--sweep: expected KEY=V1,V2,..." -- explore $M --sweep hbm-bw
expect_error empty-list 2 "--sweep hbm-bw=: no values" -- explore $M --sweep hbm-bw=
expect_error empty-value 2 "--sweep hbm-bw=2,,4: value 2 is empty" -- explore $M --sweep hbm-bw=2,,4
expect_error trailing-comma 2 "value 3 is empty" -- explore $M --sweep hbm-bw=2,4,
expect_error not-number 2 "value 2: expected a number, got 'fast'" -- explore $M --sweep noc-bw=5,fast
expect_error nan 2 "expected a number, got 'nan'" -- explore $M --sweep noc-bw=nan
expect_error zero 2 "0: expected a positive value" -- explore $M --sweep hbm-bw=0,4
expect_error bad-range 2 "range '8:2:x2': expected 0 < START <= END" -- explore $M --sweep hbm-bw=8:2:x2
expect_error bad-factor 2 "a factor above 1" -- explore $M --sweep hbm-bw=2:8:x1
expect_error bad-range-form 2 "expected a range START:END:xFACTOR or START:END:+STEP, got '2:8'" -- explore $M --sweep hbm-bw=2:8
expect_error too-many 2 "more than 64 values" -- explore $M --sweep noc-bw=1:1000:+1
expect_error twice 2 "4 listed twice" -- explore $M --sweep hbm-bw=2,4,4
expect_error whole-cores 2 "cores=1.5: 1.5: expected a whole number" -- explore $M --sweep cores=1.5
expect_error too-fast 2 "--sweep noc-bw=2000000: link_gbps: expected a positive number at most 1000000" -- \
    explore $M --sweep noc-bw=2000000
expect_error too-many-cores 2 "--sweep cores=2000000: cores_per_chip: expected a positive integer at most" -- \
    explore $M --sweep cores=2000000
expect_error flops-range 2 "--sweep flops=10000000: matrix_tflops: expected a positive number at most" -- \
    explore $M --sweep flops=1e7
expect_error no-hbm 2 "--sweep hbm-bw=2: chip 'ipu-mk2' has no HBM" -- explore $M --sweep hbm-bw=2 --chip ipu-mk2
expect_error key-twice 2 "--sweep hbm-bw given twice" -- explore $M --sweep hbm-bw=2 --sweep hbm-bw=4
expect_error bad-design 2 "--design: unknown 'fast'" -- explore $M --sweep hbm-bw=2 --design full,fast
expect_error design-twice 2 "--design: 'full' listed twice" -- explore $M --sweep hbm-bw=2 --design full,full
expect_error bad-threads 2 "--threads: expected an integer from 1 to 1024, got '0'" -- explore $M --sweep hbm-bw=2 --threads 0
expect_error unwritable 2 "-o: /nonexistent/dir/x-hbm-bw.csv: cannot write" -- explore $M --sweep hbm-bw=2 -o /nonexistent/dir/x
expect_error onnx-batch 2 "shape zoo models" -- explore m.onnx --batch 2 --sweep hbm-bw=2
expect_error unknown-model 2 "unknown model 'llama9'" -- explore llama9 --sweep hbm-bw=2 -o "$x"
expect_error bad-option 2 "unknown option '--fast'" -- explore $M --sweep hbm-bw=2 --fast

finish cli_explore
