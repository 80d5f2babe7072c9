#!/bin/sh
# CLI tests of output files (README, "Output files"): every output path is
# checked before the work with the system's reason, written under a
# temporary name and renamed into place, so a failed run leaves the name as
# it was; "-" is standard output; a directory is written into.
# Run by `make test` as `ROTOR=build/rotor sh tests/cli_output.sh`.
. "$(dirname "$0")/lib.sh"
M="bert-base --layers 1 --seq 16"
d=$tmpdir/d
mkdir -p "$d"

# bad paths fail at once, naming the reason
expect_error compile-no-dir 2 "-o: /nonexistent/dir/x.json: cannot write (No such file or directory)" -- compile $M -o /nonexistent/dir/x.json
expect_error schedule-no-dir 2 "--trace: /nonexistent/t.json: cannot write (No such file or directory)" -- schedule llama2-7b --layers 1 --trace /nonexistent/t.json
expect_error simulate-no-dir 2 "--trace: /nonexistent/t.json: cannot write (No such file or directory)" -- simulate $M --trace /nonexistent/t.json
expect_error explore-no-dir 2 "-o: /nonexistent/x-hbm-bw.csv: cannot write (No such file or directory)" -- explore llama2-7b --layers 1 --sweep hbm-bw=2 -o /nonexistent/x
expect_error explore-stdout 2 "-o -: explore writes a CSV and SVG files" -- explore llama2-7b --layers 1 --sweep hbm-bw=2 -o -

# a directory is written into under the default name, and no temporary is left
"$ROTOR" compile $M -o "$d" >/dev/null 2>"$err"
if grep -q '"format":	"rotor-program"' "$d/bert-base.rotor-program.json" 2>/dev/null; then ok; else bad "compile -o DIR: $(ls "$d") $(cat "$err")"; fi
"$ROTOR" explore llama2-7b --layers 1 --sweep hbm-bw=2 --design full -o "$d" >/dev/null 2>"$err"
if [ -s "$d/explore-llama2-7b-hbm-bw.csv" ] && [ -s "$d/explore-llama2-7b-hbm-bw.svg" ]; then ok; else bad "explore -o DIR: $(ls "$d") $(cat "$err")"; fi
"$ROTOR" simulate $M --trace "$d" >/dev/null 2>"$err"
if [ -s "$d/bert-base-trace.json" ]; then ok; else bad "simulate --trace DIR: $(ls "$d") $(cat "$err")"; fi
if ls "$d" | grep -q '\.tmp\.'; then bad "a temporary is left: $(ls "$d")"; else ok; fi

# "-" is standard output
"$ROTOR" compile $M -o - >"$out" 2>"$err"
if [ "$(head -c 1 "$out")" = "{" ] && grep -q '"rotor-program"' "$out" && ! grep -q "SRAM per core" "$out"; then ok
else bad "compile -o -: $(head -n 2 "$out") $(cat "$err")"; fi
"$ROTOR" simulate $M --trace - >"$out" 2>"$err"
if grep -q '"traceEvents"' "$out" && ! grep -q "simulated" "$out"; then ok; else bad "simulate --trace -: $(head -c 200 "$out")"; fi
expect_error trace-stdout-json 2 "--trace - and --json would both write standard output" -- simulate $M --trace - --json

# a run that fails after the output was opened leaves the name as it was
echo keep >"$d/x.json"
"$ROTOR" compile $M --set sram_bytes=16384 -o "$d/x.json" >/dev/null 2>"$err"
if [ $? -eq 1 ] && [ "$(cat "$d/x.json")" = keep ]; then ok; else bad "failed compile touched x.json: $(head -c 80 "$d/x.json")"; fi
if ls "$d" | grep -q '\.tmp\.'; then bad "a failed run left a temporary: $(ls "$d")"; else ok; fi

finish cli_output
