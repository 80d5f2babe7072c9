#!/bin/sh
# CLI tests of `rotor explore`: the CSV (header, one row per point and design),
# the SVG (well-formed XML, one polyline per design), the table and JSON, the
# range forms, output independent of --threads, points that do not fit,
# grids (order, --zip, heat maps), every key against what it claims to set,
# --resume, and one-line errors.  Small models only (llama2-13b with
# --layers 2).  tests/cli_explore_mpi.sh runs grids under mpirun.
# Run by `make test` as `ROTOR=build/rotor sh tests/cli_explore.sh`.
. "$(dirname "$0")/lib.sh"
M="llama2-13b --layers 2"
x=$tmpdir/x
header="hbm-bw,design,latency_us,percent_of_ideal,preload_us,execute_us,overlap_us,stall_us,hbm_util,link_util,tflops,energy_j,edp_js"

expect_out help "usage: rotor explore MODEL" -- explore --help
expect_out help-flops "vector_tflops is scaled by" -- explore --help
expect_out table "sweep hbm-bw (TB/s): 3 points x 6 designs" -- explore $M --sweep hbm-bw=2,8,32 -o "$x"
cp "$out" "$tmpdir/table1"

# the CSV: the header, then 3 points x 6 designs, in point order
csv=$x-hbm-bw.csv
if [ "$(head -n 1 "$csv")" = "$header" ]; then ok; else bad "csv header: $(head -n 1 "$csv")"; fi
if [ "$(wc -l <"$csv")" -eq 19 ]; then ok; else bad "csv: $(wc -l <"$csv") lines, want 19"; fi
if [ "$(sed -n '2p;19p' "$csv" | cut -d, -f1-2 | tr '\n' ' ')" = "2,basic 32,roofline " ]; then ok
else bad "csv order: $(sed -n '2p;19p' "$csv")"; fi
# Ideal is 100% of itself, and more HBM bandwidth never makes it slower (Elk Figure 19)
if awk -F, '$2 == "ideal" { if ($4 != "100.0000") bad = 1; if (n && $3 > last) bad = 1; last = $3; n++ }
            END { exit bad || n != 3 }' "$csv"; then ok; else bad "ideal latency rises with HBM bandwidth: $(grep ideal "$csv")"; fi
# no design beats Ideal but the roofline, which beats none
if awk -F, 'NR > 1 && $2 != "roofline" && $4 > 100.0001 { bad = 1 } $2 == "roofline" && $4 < 99.9999 { bad = 1 }
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

# ranges: 2:32:x2 is 2,4,8,16,32; 2:6:+2 is 2,4,6
expect_out ranges "sweep noc-bw (GB/s): 3 points x 2 designs" -- explore $M --sweep noc-bw=2:6:+2 --design full,ideal -o "$x"
# a value longer than the parser's room is refused whole, never cut short
# (62 zeros and 16 read as 1 until 2026-12-03)
expect_error long-value 2 "a value of more than 63 characters" -- explore $M --sweep hbm-bw=$(printf '%062d' 0)16 -o "$x"
expect_out ranges2 "sweep hbm-bw (TB/s): 5 points x 1 design" -- explore $M --sweep hbm-bw=2:32:x2 --design full -o "$x"
if [ "$(cut -d, -f1 "$x-hbm-bw.csv" | sed 1d | tr '\n' ' ')" = "2 4 8 16 32 " ] && \
   [ "$(cut -d, -f1 "$x-noc-bw.csv" | sed 1d | uniq | tr '\n' ' ')" = "2 4 6 " ]; then ok
else bad "range values: $(cut -d, -f1 "$x-hbm-bw.csv" | tr '\n' ' ') / $(cut -d, -f1 "$x-noc-bw.csv" | uniq | tr '\n' ' ')"; fi
n=$(grep -c '<polyline' "$x-noc-bw.svg")
if [ "$n" = 2 ]; then ok; else bad "--design full,ideal: $n polylines, want 2"; fi

# JSON
expect_out json '"format":	"rotor-explore"' -- explore $M --sweep flops=125,250 --design ideal -o "$x" --json
if python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
p = d["points"]
assert d["version"] == 2 and [k["key"] for k in d["keys"]] == ["flops"] and len(p) == 2
assert p[0]["values"] == {"flops": 125} and d["csv"].endswith("-flops.csv") and len(d["svg"]) == 1
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

# ---- grids ----
# three keys: 2 x 2 x 2 points, the first key slowest, one heat map per pair
g=$tmpdir/g
G="--sweep hbm-bw=2,8 --sweep noc-bw=2,5.5 --sweep cores=736,1472 --design full,ideal"
expect_out grid "sweep hbm-bw (TB/s) x noc-bw (GB/s) x cores (cores): 8 points x 2 designs" -- explore $M $G -o "$g" --threads 2
gcsv=$g-hbm-bw-noc-bw-cores.csv
if [ "$(head -n 1 "$gcsv")" = "hbm-bw,noc-bw,cores,design,latency_us,percent_of_ideal,preload_us,execute_us,overlap_us,stall_us,hbm_util,link_util,tflops,energy_j,edp_js" ]
then ok; else bad "grid header: $(head -n 1 "$gcsv")"; fi
want="2,2,736 2,2,1472 2,5.5,736 2,5.5,1472 8,2,736 8,2,1472 8,5.5,736 8,5.5,1472 "
if [ "$(awk -F, '$4 == "full" { printf "%s,%s,%s ", $1, $2, $3 }' "$gcsv")" = "$want" ] && [ "$(wc -l <"$gcsv")" -eq 17 ]; then ok
else bad "grid order: $(cut -d, -f1-4 "$gcsv" | tr '\n' ' ')"; fi
n=0
for pair in hbm-bw-noc-bw hbm-bw-cores noc-bw-cores; do
    c=$(python3 -c 'import sys, xml.dom.minidom as m
print(sum(1 for r in m.parse(sys.argv[1]).getElementsByTagName("rect") if r.getAttribute("class") == "cell"))' "$g-$pair.svg" 2>"$err")
    [ "$c" = 4 ] && n=$((n + 1))
done
if [ "$n" = 3 ] && [ ! -e "$g-hbm-bw-noc-bw-cores.svg" ]; then ok; else bad "heat maps: $n of 3 with 4 cells ($(ls "$tmpdir"))"; fi
# the preset prices energy (docs/energy.md): an energy heat map per pair too, each cell the
# CSV's energy_j of the fastest real design at that point (here full), the other key at its first
e=$(awk -F, '$1 == "2" && $2 == "2" && $3 == "736" && $4 == "full" { printf "%.4g", $14 }' "$gcsv")
if [ -s "$g-hbm-bw-noc-bw-energy.svg" ] && [ -s "$g-noc-bw-cores-energy.svg" ] && \
   grep -q "<title>hbm-bw=2, noc-bw=2, cores=736: full $e J</title>" "$g-hbm-bw-noc-bw-energy.svg"; then ok
else bad "energy heat map: want full $e J ($(grep -o '<title>hbm-bw=2, noc-bw=2[^<]*' "$g-hbm-bw-noc-bw-energy.svg"))"; fi
# a chip that prices nothing draws no energy map
"$ROTOR" explore $M --sweep hbm-bw=2,8 --sweep noc-bw=2,5.5 --set mac_pj=0 --set vector_flop_pj=0 \
    --set sram_read_pj=0 --set sram_write_pj=0 --set link_pj=0 --set hbm_pj=0 --set interchip_pj=0 --set static_w=0 \
    -o "$tmpdir/ne" >/dev/null 2>"$err" || bad "unpriced grid: $(cat "$err")"
if [ -s "$tmpdir/ne-hbm-bw-noc-bw.svg" ] && [ ! -e "$tmpdir/ne-hbm-bw-noc-bw-energy.svg" ]; then ok
else bad "unpriced chip: $(ls "$tmpdir" | grep ne-)"; fi
"$ROTOR" explore $M $G -o "$tmpdir/g1" --threads 1 >/dev/null 2>"$err" || bad "grid threads 1: $(cat "$err")"
if cmp -s "$gcsv" "$tmpdir/g1-hbm-bw-noc-bw-cores.csv" && cmp -s "$g-noc-bw-cores.svg" "$tmpdir/g1-noc-bw-cores.svg"; then ok
else bad "grid files differ by thread count"; fi

# --zip: the i-th values together, one line plot
expect_out zip "sweep hbm-bw (TB/s) with noc-bw (GB/s): 3 points x 1 design" -- \
    explore $M --sweep hbm-bw=2,8,32 --sweep noc-bw=2,4,8 --zip --design full -o "$g"
if [ "$(sed 1d "$g-hbm-bw-noc-bw.csv" | cut -d, -f1-2 | tr '\n' ' ')" = "2,2 8,4 32,8 " ] && \
   [ "$(grep -c '<circle' "$g-hbm-bw-noc-bw.svg")" = 4 ]; then ok; else bad "zip rows: $(cut -d, -f1-3 "$g-hbm-bw-noc-bw.csv")"; fi

# --json of a grid: the keys, then every point with its values, in grid order
"$ROTOR" explore $M --sweep hbm-bw=2,8 --sweep topology=all-to-all,mesh --zip --design full -o "$g" --json >"$out" 2>"$err"
if python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "rotor-explore" and d["version"] == 2 and d["zip"] is True
assert [k["key"] for k in d["keys"]] == ["hbm-bw", "topology"] and d["keys"][1]["values"] == ["all-to-all", "mesh"]
assert [p["values"] for p in d["points"]] == [{"hbm-bw": 2, "topology": "all-to-all"}, {"hbm-bw": 8, "topology": "mesh"}]
assert all(p["fits"] and p["results"][0]["design"] == "full" for p in d["points"])' "$out" 2>"$err"; then ok
else bad "grid json: $(cat "$err")"; fi

# a heat map hatches the points that do not fit, with the reason in the tooltip
"$ROTOR" explore $M --sweep sram=16384,638976 --sweep noc-bw=2,5.5 --design full -o "$g" >/dev/null 2>"$err"
if [ "$(grep -c 'fill="url(#nofit)" stroke="white"><title>sram=16384, noc-bw=[0-9.]*: does not fit: op' "$g-sram-noc-bw.svg")" = 2 ] && \
   [ "$(grep -c 'class="cell"' "$g-sram-noc-bw.svg")" = 4 ]; then ok; else bad "heat map of misfits: $(grep -c nofit "$g-sram-noc-bw.svg")"; fi

# every new key sets what it claims: the same latency as rotor schedule with
# that setting (the CSV's 6 decimals of the JSON's figure)
lat() { python3 -c 'import json, sys; print("%.6f" % json.load(open(sys.argv[1]))["designs"][0]["latency_us"])' "$1"; }
row() { awk -F, -v k="$2" '$1 == k && $2 == "full" { print $3 }' "$1"; }
"$ROTOR" explore $M --sweep batch=1,4 --sweep seq=512,2048 --design full -o "$g" >/dev/null 2>"$err" || bad "batch x seq: $(cat "$err")"
"$ROTOR" schedule $M --batch 4 --seq 512 --design full --json >"$tmpdir/s.json" 2>"$err" || bad "schedule: $(cat "$err")"
b4=$(awk -F, '$1 == 4 && $2 == 512 { print $4 }' "$g-batch-seq.csv")
if [ -n "$b4" ] && [ "$b4" = "$(lat "$tmpdir/s.json")" ]; then ok; else bad "batch 4 seq 512: explore $b4, schedule $(lat "$tmpdir/s.json")"; fi
if awk -F, '$1 == 1 && $2 == 512 { a = $4 } $1 == 1 && $2 == 2048 { b = $4 } END { exit !(b > a) }' "$g-batch-seq.csv"; then ok
else bad "a longer KV cache is not slower: $(cat "$g-batch-seq.csv")"; fi
"$ROTOR" explore $M --sweep chips=2,4 --design full -o "$g" >/dev/null 2>"$err" || bad "chips: $(cat "$err")"
"$ROTOR" schedule $M --set chips=2 --set interchip_gbps=320 --design full --json >"$tmpdir/s.json" 2>"$err"
if [ "$(row "$g-chips.csv" 2)" = "$(lat "$tmpdir/s.json")" ]; then ok; else bad "chips=2: $(row "$g-chips.csv" 2) vs $(lat "$tmpdir/s.json")"; fi
"$ROTOR" explore $M --sweep topology=all-to-all,mesh:32x46 --design full -o "$g" >/dev/null 2>"$err" || bad "topology: $(cat "$err")"
"$ROTOR" schedule $M --topology mesh:32x46 --design full --json >"$tmpdir/s.json" 2>"$err"
if [ "$(row "$g-topology.csv" mesh:32x46)" = "$(lat "$tmpdir/s.json")" ] && \
   [ "$(row "$g-topology.csv" mesh:32x46)" != "$(row "$g-topology.csv" all-to-all)" ]; then ok
else bad "topology: $(cat "$g-topology.csv")"; fi
# its line plot spaces the names evenly, in the order given
if grep -q '>all-to-all</text>' "$g-topology.svg" && grep -q '>mesh:32x46</text>' "$g-topology.svg"; then ok
else bad "topology plot: no tick names"; fi
# sram: 16 KiB per core fits no plan of l0.qkv (skipped); 64 KiB fits, slower than 624 KiB
"$ROTOR" explore $M --sweep sram=16384,65536,638976 --design full -o "$g" >"$out" 2>"$err"
if grep -q "sram=16384 skipped: op 'l0.qkv'" "$err" && [ "$(cut -d, -f1 "$g-sram.csv" | sed 1d | tr '\n' ' ')" = "65536 638976 " ] && \
   [ "$(awk -F, 'NR == 2 { a = $3 } NR == 3 { exit !($3 < a) }' "$g-sram.csv"; echo $?)" = 0 ]; then ok
else bad "sram: $(cat "$err") $(cat "$g-sram.csv")"; fi

# ---- --resume ----
# from the first 3 points of the grid: the same CSV as the whole run
head -n 7 "$gcsv" >"$tmpdir/part.csv"
cp "$gcsv.run" "$tmpdir/part.csv.run" # the run record goes with the rows (below)
"$ROTOR" explore $M $G -o "$tmpdir/r" --resume "$tmpdir/part.csv" >/dev/null 2>"$err" || bad "resume: $(cat "$err")"
if cmp -s "$gcsv" "$tmpdir/r-hbm-bw-noc-bw-cores.csv"; then ok; else bad "resumed CSV differs from the whole run's"; fi
# into the file it resumes from, with rows from anywhere in the grid; a resumed
# row is taken as it is (not run again): a changed figure (its % of ideal) stays
sed -e '4,7d' -e '12,15d' -e '2s/,full,\([0-9.]*\),[0-9.]*,/,full,\1,1.0000,/' "$gcsv" >"$tmpdir/r-hbm-bw-noc-bw-cores.csv"
"$ROTOR" explore $M $G -o "$tmpdir/r" --resume "$tmpdir/r-hbm-bw-noc-bw-cores.csv" >/dev/null 2>"$err" || bad "resume: $(cat "$err")"
sed -e '2s/,full,\([0-9.]*\),[0-9.]*,/,full,\1,1.0000,/' "$gcsv" >"$tmpdir/want.csv"
if cmp -s "$tmpdir/want.csv" "$tmpdir/r-hbm-bw-noc-bw-cores.csv"; then ok; else bad "resume into itself: $(diff "$tmpdir/want.csv" "$tmpdir/r-hbm-bw-noc-bw-cores.csv")"; fi
# a run killed after a checkpoint (--checkpoint 0: after every round, here of 4
# points) leaves a CSV of the points done, and resuming from it gives the whole run's
"$ROTOR" explore $M $G -o "$tmpdir/k" --threads 1 --checkpoint 0 >/dev/null 2>&1 &
pid=$!
i=0
while [ $i -lt 3000 ] && [ "$(cat "$tmpdir/k-hbm-bw-noc-bw-cores.csv" 2>/dev/null | wc -l)" -lt 2 ]; do sleep 0.01; i=$((i + 1)); done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
kept=$(wc -l <"$tmpdir/k-hbm-bw-noc-bw-cores.csv")
"$ROTOR" explore $M $G -o "$tmpdir/k" --resume "$tmpdir/k-hbm-bw-noc-bw-cores.csv" >/dev/null 2>"$err" || bad "resume after kill: $(cat "$err")"
if [ "$kept" -ge 2 ] && cmp -s "$gcsv" "$tmpdir/k-hbm-bw-noc-bw-cores.csv"; then ok
else bad "killed after $kept lines, resumed: $(diff "$gcsv" "$tmpdir/k-hbm-bw-noc-bw-cores.csv" | head -3)"; fi
# a prefix naming a device is refused: -o /dev/null wrote /dev/null-hbm-bw.csv into /dev
expect_error prefix-device 2 "-o /dev/null: not a directory or a file name prefix (a device or a pipe)" -- \
    explore $M --sweep hbm-bw=2 -o /dev/null
if ls /dev/null-* >/dev/null 2>&1; then bad "files beside /dev/null"; else ok; fi
# a chip field swept and given too is refused (the sweep won silently)
expect_error sweep-and-hbm 2 "--hbm-bw and --sweep hbm-bw: give one" -- explore $M --sweep hbm-bw=4 --hbm-bw 8 -o "$x"
expect_error sweep-and-set 2 "--set link_gbps and --sweep noc-bw: give one (the sweep sets it at every point)" -- \
    explore $M --sweep noc-bw=4 --set link_gbps=8 -o "$x"
expect_error sweep-and-vector 2 "--set vector_tflops and --sweep flops: give one" -- \
    explore $M --sweep flops=100,200 --set vector_tflops=10 -o "$x"
# the help's limits are the ones enforced (their printf arguments were out of order)
expect_out help-limits "at most 64 per key, and$" -- explore --help
expect_out help-checkpoint "(default 30; 0: after every round)" -- explore --help
expect_error bad-checkpoint 2 "--checkpoint: expected an integer from 0 to 86400, got '-1'" -- \
    explore $M --sweep hbm-bw=2 --checkpoint -1
expect_error resume-columns 2 "--resume $tmpdir/part.csv: column 2 is 'noc-bw', this grid's is 'cores'" -- \
    explore $M --sweep hbm-bw=2,8 --sweep cores=736 -o "$x" --resume "$tmpdir/part.csv"
expect_error resume-value 2 "--resume $tmpdir/part.csv: line 2: hbm-bw=2 is not a value of this grid" -- \
    explore $M --sweep hbm-bw=4,8 --sweep noc-bw=2,5.5 --sweep cores=736,1472 -o "$x" --resume "$tmpdir/part.csv"
expect_error resume-missing 2 "--resume $tmpdir/none.csv: cannot read (No such file" -- \
    explore $M --sweep hbm-bw=2 -o "$x" --resume "$tmpdir/none.csv"
# a row no run could write (a negative latency, or one its parts do not add up to) is refused:
# it was taken into the table before (found by an audit helper)
for lat in -5 1e308; do
    awk -F, -v OFS=, -v l="$lat" 'NR == 2 { $5 = l } { print }' "$tmpdir/part.csv" >"$tmpdir/badrow.csv"
    cp "$tmpdir/part.csv.run" "$tmpdir/badrow.csv.run"
    expect_error "resume-row$lat" 2 "--resume $tmpdir/badrow.csv: line 2: expected the figures a run writes after the design (none negative, a positive latency its preload, execute, overlap and stall add up to)" -- \
        explore $M $G -o "$x" --resume "$tmpdir/badrow.csv"
done
# the run record beside every CSV: the options that change a row's figures
# (resolved: the default chip, batch and phase), not the output, threads or resume
if python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d == {"format": "rotor-explore-run", "version": 1, "rotor_version": "0.1.0",
             "options": ["llama2-13b", "--chip ipu-pod4", "--batch 1", "--layers 2", "--decode"]}, d' "$gcsv.run" 2>"$err" && \
   cmp -s "$gcsv.run" "$tmpdir/r-hbm-bw-noc-bw-cores.csv.run" && cmp -s "$gcsv.run" "$tmpdir/k-hbm-bw-noc-bw-cores.csv.run"
then ok; else bad "run record: $(cat "$err") $(cat "$gcsv.run")"; fi
# a resume with other options is refused: the first option that differs, one line
expect_error resume-chip 2 "" -- explore $M $G --chip ipu-pod16 -o "$x" --resume "$tmpdir/part.csv"
want="rotor explore: --resume $tmpdir/part.csv: it was run with --chip ipu-pod4, this run has --chip ipu-pod16"
if [ "$(cat "$err")" = "$want" ]; then ok; else bad "resume-chip: '$(cat "$err")', want '$want'"; fi
expect_error resume-set 2 "" -- explore $M $G --set mac_pj=2 -o "$x" --resume "$tmpdir/part.csv"
want="rotor explore: --resume $tmpdir/part.csv: it was run without --set, this run has --set mac_pj=2"
if [ "$(cat "$err")" = "$want" ]; then ok; else bad "resume-set: '$(cat "$err")', want '$want'"; fi
expect_error resume-layers 2 "" -- explore llama2-13b --layers 1 $G -o "$x" --resume "$tmpdir/part.csv"
want="rotor explore: --resume $tmpdir/part.csv: it was run with --layers 2, this run has --layers 1"
if [ "$(cat "$err")" = "$want" ]; then ok; else bad "resume-layers: '$(cat "$err")', want '$want'"; fi
# ... and so is one without the record (rows alone cannot say what made them)
rm "$tmpdir/part.csv.run"
expect_error resume-no-record 2 "" -- explore $M $G -o "$x" --resume "$tmpdir/part.csv"
want="rotor explore: --resume $tmpdir/part.csv: $tmpdir/part.csv.run is missing, so rotor cannot tell the options the rows were run with (it is written beside every CSV; copy it with the rows)"
if [ "$(cat "$err")" = "$want" ]; then ok; else bad "resume-no-record: '$(cat "$err")', want '$want'"; fi
# the same options spelled otherwise match (--chip ipu-pod4 is the default), and
# the resumed CSV is the whole run's, byte for byte
cp "$gcsv.run" "$tmpdir/part.csv.run"
"$ROTOR" explore $M $G --chip ipu-pod4 --threads 1 -o "$tmpdir/s" --resume "$tmpdir/part.csv" >/dev/null 2>"$err" || bad "resume, same options: $(cat "$err")"
if cmp -s "$gcsv" "$tmpdir/s-hbm-bw-noc-bw-cores.csv"; then ok; else bad "resumed with the same options: the CSV differs"; fi

# bad input: one line, exit 2
expect_error no-sweep 2 "--sweep KEY=V1,V2,... is required" -- explore $M
expect_error unknown-key 2 "--sweep: unknown key 'dram' (did you mean 'sram'?) (keys: hbm-bw, noc-bw, cores, flops, sram, chips, topology, batch, seq)" -- \
    explore $M --sweep dram=1,2
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
expect_error zip-lengths 2 "--zip: --sweep hbm-bw has 2 values and --sweep noc-bw has 3" -- \
    explore $M --sweep hbm-bw=2,8 --sweep noc-bw=1,2,3 --zip
expect_error zip-one 2 "--zip pairs the lists of two or more" -- explore $M --sweep hbm-bw=2,8 --zip
expect_error grid-cap 2 "the grid has 262144 points (hbm-bw 64 x noc-bw 64 x cores 64), more than 10000" -- \
    explore $M --sweep hbm-bw=1:64:+1 --sweep noc-bw=1:64:+1 --sweep cores=1:64:+1
expect_error bad-topology 2 "--sweep topology=ring: value 1: expected all-to-all, mesh or mesh:WxH, got 'ring'" -- \
    explore $M --sweep topology=ring
expect_error topology-cores 2 "--sweep topology=mesh:8x8: a 8x8 mesh has 64 cores, the chip 1472" -- \
    explore $M --sweep topology=mesh:8x8
expect_error batch-twice 2 "--batch and --sweep batch: give one" -- explore $M --batch 2 --sweep batch=1,2
expect_error batch-onnx 2 "--sweep batch shapes zoo models" -- explore m.onnx --sweep batch=1,2
expect_error batch-max 2 "--sweep batch=2000000: 2000000: expected at most 1048576" -- explore $M --sweep batch=2000000
expect_error sram-small 2 "--sweep sram=1: shift_buffer_bytes: expected at most sram_bytes" -- explore $M --sweep sram=1
expect_error chips-tp 2 "--sweep chips=2: --tp 4 is more than the 2 chips" -- explore $M --sweep chips=2,4 --tp 4
expect_error bad-design 2 "--design: unknown 'fast'" -- explore $M --sweep hbm-bw=2 --design full,fast
expect_error design-twice 2 "--design: 'full' listed twice" -- explore $M --sweep hbm-bw=2 --design full,full
expect_error bad-threads 2 "--threads: expected an integer from 1 to 1024, got '0'" -- explore $M --sweep hbm-bw=2 --threads 0
expect_error unwritable 2 "-o: /nonexistent/dir/x-hbm-bw.csv: cannot write" -- explore $M --sweep hbm-bw=2 -o /nonexistent/dir/x
expect_error onnx-batch 2 "shape zoo models" -- explore m.onnx --batch 2 --sweep hbm-bw=2
expect_error unknown-model 2 "unknown model 'llama9'" -- explore llama9 --sweep hbm-bw=2 -o "$x"
expect_error bad-option 2 "unknown option '--fast'" -- explore $M --sweep hbm-bw=2 --fast

# energy per token of every row (docs/energy.md): positive, and the EDP is
# the energy times the latency (to the CSV's 9 digits)
"$ROTOR" explore $M --sweep hbm-bw=2,8 -o "$tmpdir/en" >/dev/null 2>"$err" || bad "energy sweep: $(cat "$err")"
if awk -F, 'NR > 1 { if (!($12 > 0) || !($13 > 0)) exit 1; r = $13 / ($12 * $3 * 1e-6); if (r < 0.999999 || r > 1.000001) exit 1; n++ }
    END { exit n != 12 }' "$tmpdir/en-hbm-bw.csv"; then ok; else bad "energy columns: $(head -n 3 "$tmpdir/en-hbm-bw.csv")"; fi

finish cli_explore
