#!/bin/sh
# CLI tests of `rotor reproduce graphturbo` (docs/reproduction.md, "GraphTurbo") on two quick
# Table 2 rows: the tables, the files, a number that must be `rotor compile --group graphturbo`'s,
# JSON, and one-line errors.
# Run by `make test` as `ROTOR=build/rotor sh tests/cli_reproduce_gt.sh`.
. "$(dirname "$0")/lib.sh"
d=$tmpdir/gt

expect_out help "graphturbo: GraphTurbo's evaluation" -- reproduce --help
"$ROTOR" reproduce graphturbo --models mobilenet-v2,dlrm -o "$d" >"$out" 2>"$err"
if [ $? -eq 0 ]; then ok; else bad "two models: $(cat "$err")"; fi
for pat in "^(G)   mobilenet-v2 *mobilenet-v2 *32 " "^(F)   dlrm *dlrm *256 " \
    "^mean .* over 2 models (paper: 11.15x over TVM on average" "(paper: lb 3.67x over TVM on average, here " \
    "^Table 1: BERT-128" "^   64     16 .* 2716    23.58 |         512    37.92     4$" \
    "^mobilenet-v2  | .*    56     1     0 |" "^Table 4: compile time" \
    "issue 42's speed target (each model at most 2 s): met" \
    "^mobilenet-v2         32       1          26.099       1           1.086   24.02x     3.65x     1 " \
    "^                         batch 32 (8 a cluster): 2 passes of 4, 764.4 sentences/s, 41.862 ms$" \
    "^With §5.1's loops (each step at its fastest number of passes):$"; do
    if grep -q -- "$pat" "$out"; then ok; else bad "tables lack '$pat': $(head -n 12 "$out")"; fi
done
for f in graphturbo-fig14-15.csv graphturbo-table1.csv graphturbo-table3.csv graphturbo-table4.csv graphturbo-loops.csv \
    graphturbo-fig14.svg graphturbo-fig15.svg graphturbo-table1.svg graphturbo-table3.svg graphturbo-table4.svg \
    graphturbo-loops.svg; do
    if [ -s "$d/$f" ]; then ok; else bad "$f missing"; fi
done
if ls "$d" | grep -q '\.tmp\.'; then bad "a temporary is left: $(ls "$d")"; else ok; fi
# five steps a model; Table 1's four batches; a row a model in Tables 3 and 4
f=$d/graphturbo-fig14-15.csv
if [ "$(head -n 1 "$f")" = "model,label,zoo_model,seq,batch_per_cluster,step,time_ms,speedup,gain,throughput,lb_tensors,gb_tensors,ddr_tensors,ddr_mb,gb_mb" ] &&
    [ "$(wc -l <"$f")" -eq 11 ]; then ok; else bad "fig14-15 csv: $(cat "$f")"; fi
if [ "$(cut -d, -f1,2 "$d/graphturbo-table1.csv" | tr '\n' ' ')" = "batch,batch_per_cluster 8,2 16,4 32,8 64,16 " ]
then ok; else bad "table1 csv: $(cat "$d/graphturbo-table1.csv")"; fi
if [ "$(wc -l <"$d/graphturbo-table3.csv")" -eq 3 ] && [ "$(wc -l <"$d/graphturbo-table4.csv")" -eq 3 ] &&
    grep -q "^mobilenet-v2,G,.*,56,1,0,0,7,3,0,619,608$" "$d/graphturbo-table3.csv"
then ok; else bad "table3/4 csv: $(cat "$d/graphturbo-table3.csv")"; fi
# each model's five steps with loops: MobileNet-v2's gb step in 16 passes of 2
if [ "$(wc -l <"$d/graphturbo-loops.csv")" -eq 11 ] && grep -q "^mobilenet-v2,G,32,gb,16,2,5.168793," "$d/graphturbo-loops.csv"
then ok; else bad "loops csv: $(cat "$d/graphturbo-loops.csv")"; fi
# the loops' chart: a bar a model in one pass and one at its fastest passes (MobileNet-v2: one pass is fastest)
if tail -n 1 "$d/graphturbo-loops.svg" | grep -q "</svg>" && grep -q "mobilenet-v2 1 x 32: fastest passes 24.0" "$d/graphturbo-loops.svg" &&
    [ "$(grep -c '<rect' "$d/graphturbo-loops.svg")" -ge 4 ]
then ok; else bad "loops svg"; fi
if tail -n 1 "$d/graphturbo-fig15.svg" | grep -q "</svg>" && grep -q "mobilenet-v2 instances" "$d/graphturbo-fig15.svg"
then ok; else bad "fig15 svg"; fi

# the same schedule as `rotor compile --group graphturbo` at Table 2's batch: its time and its DDR tensors
# (its one pass: the steps before the JSON's loops)
"$ROTOR" compile mobilenet-v2 --chip stcp920 --group graphturbo --batch 32 --json >"$tmpdir/c.json" 2>"$err"
want=$(awk '/"loops":/ { exit } /"step":/ { s = $2 } /"seconds":/ && s ~ /"graphturbo"/ { printf "%.6f", $2 * 1e3 }' "$tmpdir/c.json")
got=$(awk -F, '$1 == "mobilenet-v2" && $6 == "graphturbo" { print $7 }' "$f")
if [ -n "$want" ] && [ "$got" = "$want" ]; then ok; else bad "mobilenet-v2 graphturbo: $got ms, compile $want ms"; fi
want=$(awk '/"loops":/ { exit } /"step":/ { s = $2 } /"ddr":/ && s ~ /"graphturbo"/ { sub(",", "", $2); print $2 }' "$tmpdir/c.json")
got=$(awk -F, '$1 == "mobilenet-v2" { print $6 }' "$d/graphturbo-table3.csv")
if [ -n "$want" ] && [ "$got" = "$want" ]; then ok; else bad "mobilenet-v2 DDR tensors: $got, compile $want"; fi

# JSON, and the same schedules again (the times of Table 4 are the run's own)
cp "$f" "$tmpdir/first.csv"
expect_out json '"format":	"rotor-reproduce-graphturbo"' -- reproduce graphturbo --models mobilenet-v2,dlrm -o "$d" --json
if grep -q '"graphturbo_over_instances_mean":	1.72' "$out" && grep -q '"zoo_model":	"dlrm"' "$out"; then ok
else bad "json lacks the paper's means or a model"; fi
if cmp -s "$f" "$tmpdir/first.csv"; then ok; else bad "a second run differs"; fi

expect_error models 2 "^rotor reproduce: --models: unknown model 'resnet-18' (did you mean 'resnet-50'?) (Table 2's: resnet-50, bert-128," \
    -- reproduce graphturbo --models resnet-18 -o "$tmpdir/none"
expect_error empty 2 "--models: an empty name in 'dlrm,'" -- reproduce graphturbo --models dlrm, -o "$tmpdir/none"
expect_error twice 2 "^rotor reproduce: --models: 'dlrm' is given twice$" -- reproduce graphturbo --models dlrm,resnet-50,dlrm -o "$tmpdir/none"
expect_error batch 2 "--max-batch: graphturbo runs Table 2's batches per cluster" -- reproduce graphturbo --max-batch 4
expect_error no-gb 2 "chip 'ipu-mk2' has no global buffer" -- reproduce graphturbo --chip ipu-mk2 -o "$tmpdir/none"
if [ -e "$tmpdir/none" ]; then bad "a refused run made its folder"; else ok; fi

finish cli_reproduce_gt
