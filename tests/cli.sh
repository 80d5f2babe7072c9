#!/bin/sh
# CLI tests: exit statuses, one-line errors, and the benchmark's output format.
# Run by `make test` as `ROTOR=build/rotor sh tests/cli.sh` (build/san/rotor under SAN=1).
. "$(dirname "$0")/lib.sh"
MM='C[m,n] += A[m,k] * B[k,n]'
BENCH_DIMS=m=32,k=5120,n=15360

expect_error malformed-expr 2 "column 8: expected an axis name, got '='" -- plan --expr 'C[m,n += A[m,k] * B[k,n]' --dim $BENCH_DIMS
expect_error missing-op 2 "expected '=' or '+='" -- plan --expr 'C[m,n] A[m,k]' --dim m=1,k=2,n=3
expect_error axis-without-extent 2 "column 13: axis 'q' has no extent" -- plan --expr 'C[m,n] += A[q,m] * B[q,n]' --dim m=32,n=4
expect_error unknown-axis 2 "axis 'q' is not in the expression" -- plan --expr "$MM" --dim m=32,k=5120,n=15360,q=4
expect_error zero-dim 2 "k=0: extent must be at least 1" -- plan --expr "$MM" --dim m=32,k=0,n=15360
expect_error negative-dim 2 "k=-5: extent must be at least 1" -- plan --expr "$MM" --dim m=32,k=-5,n=15360
expect_error huge-dim 2 "extent exceeds the limit" -- plan --expr "$MM" --dim m=32,k=1000000000000000,n=15360
expect_error text-dim 2 "expected a positive integer" -- plan --expr "$MM" --dim m=32,k=lots,n=15360
expect_error unknown-chip 2 "unknown chip 'ipu-mk9'" -- plan --expr "$MM" --dim $BENCH_DIMS --chip ipu-mk9
expect_error chip-bad-key 2 "chips/bad-key.json: link_gbs: unknown key" -- plan --expr "$MM" --dim $BENCH_DIMS --chip chips/bad-key.json
expect_error chip-bad-type 2 "chips/bad-type.json: link_gbps: expected a positive number" -- plan --expr "$MM" --dim $BENCH_DIMS --chip chips/bad-type.json
expect_error chip-missing-file 2 "cannot open" -- plan --expr "$MM" --dim $BENCH_DIMS --chip chips/none.json
expect_error set-bad-value 2 "link_gbps: expected a positive number" -- plan --expr "$MM" --dim $BENCH_DIMS --set link_gbps=fast
expect_error set-unknown-key 2 "warp: unknown key" -- plan --expr "$MM" --dim $BENCH_DIMS --set warp=9
expect_error conflict-t10-pareto 2 "--pareto conflicts with --format t10" -- plan --expr "$MM" --dim $BENCH_DIMS --format t10 --pareto
expect_error conflict-twice 2 "--chip given twice" -- plan --expr "$MM" --dim $BENCH_DIMS --chip ipu-mk2 --chip ipu-pod4
expect_error bad-format 2 "expected table, json or t10" -- plan --expr "$MM" --dim $BENCH_DIMS --format yaml
expect_error unknown-option 2 "unknown option '--fast'" -- plan --expr "$MM" --dim $BENCH_DIMS --fast
expect_error missing-expr 2 "--expr is required" -- plan --dim $BENCH_DIMS
expect_error bad-constraint 2 "unknown key 'speed'" -- plan --expr "$MM" --dim $BENCH_DIMS --constraints speed=3
expect_error unknown-command 2 "unknown command 'plot'" -- plot
expect_error did-you-mean-command 2 "unknown command 'compil' (did you mean 'compile'?)" -- compil
# one vocabulary (issue 24): --dim and --json everywhere; the old spellings keep
# working for one release with one deprecation line on stderr (none with --quiet)
MM='C[m,n] += A[m,k] * B[k,n]'
expect_out plan-dim-json '"format":.*"rotor-plan"' -- plan --expr "$MM" --dim m=32,k=64,n=16 --json
expect_out plan-dims-format '"format":.*"rotor-plan"' -- plan --expr "$MM" --dims m=32,k=64,n=16 --format json
expect_error plan-dim-twice 2 "rotor plan: --dim given twice ('m=3,k=3,n=3' and 'm=4,k=3,n=3')" -- plan --expr "$MM" --dim m=3,k=3,n=3 --dims m=4,k=3,n=3
expect_error plan-json-format 2 "--json conflicts with --format t10" -- plan --expr "$MM" --dim m=3,k=3,n=3 --json --format t10
expect_out verify-dim "1 passed, 0 failed" -- verify --expr "$MM" --dim m=16,k=16,n=16 --best
expect_out compile-json '"format":.*"rotor-program"' -- compile nerf-t10 --json
deprecated() { # deprecated NAME LINE -- ARGS: exits 0 with exactly LINE on stderr, and nothing with -q
    name=$1 line=$2
    shift 3
    if "$ROTOR" "$@" >"$out" 2>"$err" && [ "$(cat "$err")" = "$line" ] && "$ROTOR" "$@" -q >"$out" 2>"$err" &&
        [ ! -s "$err" ]; then ok; else bad "$name: stderr '$(cat "$err")', want '$line'"; fi
}
deprecated dims-note "rotor plan: --dims is deprecated, write --dim (--dims goes in the next release)" -- \
    plan --expr "$MM" --dims m=8,k=8,n=8
deprecated dims-note-verify "rotor verify: --dims is deprecated, write --dim (--dims goes in the next release)" -- \
    verify --expr "$MM" --dims m=8,k=8,n=8 --best
deprecated format-json-note "rotor plan: --format json is deprecated, write --json (--format json goes in the next release)" -- \
    plan --expr "$MM" --dim m=8,k=8,n=8 --format json
deprecated compile-format-note "rotor compile: --format json is deprecated, write --json (--format json goes in the next release)" -- \
    compile nerf-t10 --format json
# did you mean, and no doubled prefixes: rotor CMD: WHAT: why
expect_error did-you-mean-option 2 "^rotor compile: unknown option '--jsn' (did you mean '--json'?) (try 'rotor compile --help')$" -- compile bert-base --jsn
expect_error did-you-mean-own-first 2 "^rotor verify: unknown option '--bset' (did you mean '--best'?)" -- verify --bset
expect_error did-you-mean-model 2 "^rotor compile: unknown model 'resnet50' (did you mean 'resnet-50'?)" -- compile resnet50
expect_error did-you-mean-chip 2 "^rotor plan: unknown chip 'ipu-mk3' (did you mean 'ipu-mk2'?)" -- plan --expr "$MM" --dim m=8,k=8,n=8 --chip ipu-mk3
expect_error did-you-mean-design 2 "^rotor schedule: --design: unknown 'ful' (did you mean 'full'?)" -- schedule llama2-13b --design ful
expect_error did-you-mean-paper 2 "^rotor reproduce: unknown evaluation 'elf' (did you mean 'elk'?) (known: t10, elk, graphturbo, kapla)$" -- reproduce elf
expect_error dim-prefix-once 2 "^rotor plan: --dim: m: expected a positive integer, got 'x'$" -- plan --expr 'Y[m] = X[m]' --dim m=x
expect_error tp-in-users-words 2 "^rotor schedule: --tp: expected 1..4 (the chips of ipu-pod4), got 8$" -- schedule llama2-13b --tp 8
expect_error phase-once 2 "^rotor compile: --decode and --prefill: give one$" -- compile opt-1.3b --decode --prefill
expect_error phase-onnx 2 "^rotor model: --batch, --seq, --layers, --decode and --prefill shape zoo models" -- model examples/tiny-cnn.onnx --prefill
# --quiet and --list are taken by every command that takes a model; --help and --quiet by all
for c in compile model simulate schedule explore report reproduce; do
    if "$ROTOR" $c --list >"$out" 2>"$err" && grep -q '^llama2-13b  *llm' "$out" && [ ! -s "$err" ]; then ok
    else bad "$c --list: $(head -2 "$out") $(cat "$err")"; fi
done
for c in plan verify compile model simulate run schedule explore reproduce report; do
    if "$ROTOR" $c --help | grep -q -- "--quiet"; then ok; else bad "$c --help lacks --quiet"; fi
done
# progress is drawn only on a terminal: a real run of each command, with and without
# --quiet, leaves stderr empty when it is not one (no bar, no carriage return);
# reproduce by its quick paper (elk's mesh figures take 13 s, and this suite
# runs under the sanitizers too: cli_reproduce.sh runs elk's in full)
q=$tmpdir/q
mkdir -p "$q"
for args in "plan --expr C[m,n]+=A[m,k]*B[k,n] --dim m=64,k=64,n=64" \
    "verify --expr C[m,n]+=A[m,k]*B[k,n] --dim m=16,k=16,n=16 --random 4" \
    "compile examples/tiny-cnn.onnx" "model examples/tiny-cnn.onnx" "simulate examples/tiny-cnn.onnx" \
    "run examples/tiny-cnn.onnx" "schedule opt-1.3b --layers 1 --design full" \
    "explore opt-1.3b --layers 1 --design full --sweep hbm-bw=2,4 -o $q" \
    "reproduce t10 --models nerf-t10 --max-batch 1 -o $q/t10" "report bert-base --layers 1 -o $q/r.html"; do
    for quiet in "" -q; do
        # shellcheck disable=SC2086
        if "$ROTOR" $args $quiet >"$out" 2>"$err" && [ ! -s "$err" ]; then ok
        else bad "rotor $args $quiet: exit or stderr: $(head -c 300 "$err")"; fi
        # report -q prints nothing on stdout either (checked on this run:
        # another compile of the same layer took a second under ASan)
        case "$args $quiet" in
        "report "*" -q") if [ ! -s "$out" ]; then ok; else bad "report -q printed: $(cat "$out")"; fi ;;
        esac
    done
done
expect_error no-fit 1 "no valid plan fits" -- plan --expr "$MM" --dim $BENCH_DIMS --constraints memory_cap=64

# The benchmark's format: F_op then the six f_t lines, in the documented order,
# and nothing else on stdout.
if "$ROTOR" plan --expr "$MM" --dim $BENCH_DIMS --chip ipu-mk2 --format t10 >"$out" 2>"$err"; then
    keys=$(sed 's/:.*//' "$out" | tr '\n' ' ')
    if [ "$keys" = "F_op f_t_A_m f_t_A_k f_t_B_k f_t_B_n f_t_C_m f_t_C_n " ] &&
        grep -Eq '^F_op: \[[0-9]+, [0-9]+, [0-9]+\]$' "$out" && [ ! -s "$err" ]; then ok
    else bad "t10 format: $(cat "$out")"; fi
else bad "t10 run failed: $(cat "$err")"; fi

# JSON: carries format, version and the same plan as t10.
if "$ROTOR" plan --expr "$MM" --dim $BENCH_DIMS --json >"$out" 2>"$err" &&
    grep -q '"format":[[:space:]]*"rotor-plan"' "$out" && grep -q '"total_s":' "$out"; then ok
else bad "json format: $(head -c 300 "$out") $(cat "$err")"; fi

# Same plan whatever the thread count.
a=$("$ROTOR" plan --expr "$MM" --dim $BENCH_DIMS --format t10 --threads 1)
b=$("$ROTOR" plan --expr "$MM" --dim $BENCH_DIMS --format t10 --threads 2)
if [ -n "$a" ] && [ "$a" = "$b" ]; then ok; else bad "threads 1 vs 2 differ"; fi

# --help on every command exits 0 and prints usage.
for c in "--help" "plan --help"; do
    # shellcheck disable=SC2086
    if "$ROTOR" $c | grep -q "usage: rotor"; then ok; else bad "$c"; fi
done

# The command table (src/cli/main.c): every command `rotor --help` lists
# takes --help (exit 0, its usage on stdout), and a name it does not list is
# refused with the closest one it does.
cmds=$("$ROTOR" --help | sed -n '/^commands:$/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p')
if [ "$(echo $cmds)" = "plan verify compile model simulate run schedule explore reproduce report chip" ]; then ok
else bad "rotor --help lists: $(echo $cmds)"; fi
for c in $cmds; do
    if "$ROTOR" "$c" --help >"$out" 2>"$err" && grep -q "^usage: rotor $c" "$out" && [ ! -s "$err" ]; then ok
    else bad "$c --help: $(head -1 "$out") $(cat "$err")"; fi
done
expect_error did-you-mean-table 2 "^rotor: unknown command 'shedule' (did you mean 'schedule'?) (try 'rotor --help')$" -- shedule

finish cli
