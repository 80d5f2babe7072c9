#!/bin/sh
# CLI tests of output files (README, "Output files"): every output path is
# checked before the work with the system's reason; a regular file is
# written under a temporary name and renamed into place, so a failed or
# killed run leaves the name as it was, under a lock that refuses a second
# run; a device or FIFO is written in place; a symbolic link is followed;
# "-" is standard output; a directory is written into; a write that fails,
# standard output's too, is exit 2 with one line.
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


# ---- what the path names (issue 47) ------------------------------------
tiny="$(dirname "$0")/../examples/tiny-cnn.onnx"

# a device is written in place, never replaced: a character device made
# here when mknod is permitted, /dev/null always (as root, replacing it
# would break the machine)
if mknod "$d/null" c 1 3 2>/dev/null; then
    "$ROTOR" compile "$tiny" -q -o "$d/null" >/dev/null 2>"$err"
    if [ $? -eq 0 ] && [ "$(stat -c %F "$d/null")" = "character special file" ]; then ok
    else bad "-o to a device made it a $(stat -c %F "$d/null"): $(cat "$err")"; fi
    rm -f "$d/null"
else
    echo "cli_output: mknod not permitted here, the test of -o to a device made by mknod skipped"
fi
"$ROTOR" compile "$tiny" -q -o /dev/null >/dev/null 2>"$err"
if [ $? -eq 0 ] && [ "$(stat -c %F /dev/null)" = "character special file" ]; then ok
else bad "-o /dev/null: $(cat "$err")"; fi
expect_error dev-full 2 "^rotor compile: -o: /dev/full: cannot write (No space left on device)$" -- \
    compile "$tiny" -q -o /dev/full
expect_error trace-dev-full 2 "^rotor simulate: --trace: /dev/full: cannot write (No space left on device)$" -- \
    simulate "$tiny" -q --trace /dev/full

# a FIFO is written in place: its reader gets the program, the FIFO stays
mkfifo "$d/fifo"
timeout 20 cat "$d/fifo" >"$d/fifo.out" &
reader=$!
"$ROTOR" compile "$tiny" -q -o "$d/fifo" >/dev/null 2>"$err"
rc=$?
wait $reader
if [ $rc -eq 0 ] && [ "$(stat -c %F "$d/fifo")" = fifo ] && grep -q '"rotor-program"' "$d/fifo.out"; then ok
else bad "-o FIFO: exit $rc, $(stat -c %F "$d/fifo"), read $(wc -c <"$d/fifo.out") bytes: $(cat "$err")"; fi
rm -f "$d/fifo" "$d/fifo.out"

# a symbolic link is followed: its target gets the content, the link stays
# a link; one that dangles creates what it names
echo old >"$d/real.json"
ln -s real.json "$d/link.json"
ln -s new.json "$d/dangling.json"
"$ROTOR" compile "$tiny" -q -o "$d/link.json" >/dev/null 2>"$err" &&
    "$ROTOR" compile "$tiny" -q -o "$d/dangling.json" >/dev/null 2>>"$err"
if [ $? -eq 0 ] && [ -L "$d/link.json" ] && [ -L "$d/dangling.json" ] && grep -q '"rotor-program"' "$d/real.json" &&
    cmp -s "$d/real.json" "$d/new.json"; then ok
else bad "-o through a symlink: $(ls -l "$d") $(cat "$err")"; fi
rm -f "$d/real.json" "$d/link.json" "$d/dangling.json" "$d/new.json"

# rotor run -o DIR: each tensor file is an output as any other
mkdir "$d/run"
ln -s /dev/full "$d/run/logits.pb"
"$ROTOR" run "$tiny" -o "$d/run" >/dev/null 2>"$err"
rc=$?
if [ $rc -eq 2 ] && [ "$(cat "$err")" = "rotor run: -o: $d/run/logits.pb: cannot write (No space left on device)" ] &&
    [ -L "$d/run/logits.pb" ]; then ok
else bad "run -o DIR with DIR/logits.pb -> /dev/full: exit $rc: $(cat "$err")"; fi
rm -rf "$d/run"

# standard output is checked too: a model listing into a full device is
# exit 2 with one line, not exit 0 with the output lost
"$ROTOR" model "$tiny" >/dev/full 2>"$err"
rc=$?
if [ $rc -eq 2 ] && [ "$(cat "$err")" = "rotor model: standard output: cannot write (No space left on device)" ]; then ok
else bad "model > /dev/full: exit $rc: $(cat "$err")"; fi
"$ROTOR" compile "$tiny" -q -o - >/dev/full 2>"$err"
rc=$?
if [ $rc -eq 2 ] && [ "$(cat "$err")" = "rotor compile: standard output: cannot write (No space left on device)" ]
then ok; else bad "compile -o - > /dev/full: exit $rc: $(cat "$err")"; fi

# A long explore (35 points; killed long before it ends) holds its outputs:
# a second run writing one of them is refused naming the first one's PID,
# and SIGTERM leaves neither a temporary nor a lock file.
"$ROTOR" explore llama2-70b --sweep hbm-bw=1:64:x2 --sweep noc-bw=1:16:x2 --threads 1 -q -o "$d/k" \
    >/dev/null 2>"$d/k.err" &
long=$!
csv="$d/k-hbm-bw-noc-bw.csv"
i=0
while [ ! -e "$csv.tmp.$long" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
if [ -e "$csv.tmp.$long" ] && [ -e "$csv.rotor-lock" ]; then ok; else bad "explore did not open $csv: $(ls "$d")"; fi
expect_error second-run 2 "^rotor compile: -o: $csv: another rotor run (PID $long) is writing it$" -- \
    compile "$tiny" -q -o "$csv"
kill -TERM $long
{ wait $long; } 2>/dev/null
rc=$?
left=$(ls "$d" | grep -e '\.tmp\.' -e '\.part\.' -e 'rotor-lock' -e '^k-')
if [ $rc -eq 143 ] && [ -z "$left" ]; then ok
else bad "explore killed by SIGTERM: exit $rc, left: $left $(cat "$d/k.err")"; fi

# an output that names a file the run reads is refused before the work and
# the input is left as it was (README, "Output files"): the model, a chip
# file through a link, a program replayed into its own trace; two outputs of
# one run on one file are told apart from another run
cp "$tiny" "$d/m.onnx"
expect_error output-is-input 2 "^rotor compile: -o: $d/m.onnx: is the file '$d/m.onnx' this run reads; the output would replace it$" -- \
    compile "$d/m.onnx" -q -o "$d/m.onnx"
expect_error output-is-input-eq 2 "is the file '$d/m.onnx' this run reads" -- compile "$d/m.onnx" -q "--output=$d/m.onnx"
if cmp -s "$tiny" "$d/m.onnx"; then ok; else bad "the input was replaced"; fi
"$ROTOR" chip show ipu-mk2 -o "$d/c.json" 2>"$err" || bad "chip show: $(cat "$err")"
ln -s c.json "$d/c-link.json"
expect_error output-is-chip 2 "^rotor compile: -o: $d/c.json: is the file '$d/c-link.json' this run reads" -- \
    compile "$tiny" -q --chip "$d/c-link.json" -o "$d/c.json"
# chip show may rewrite the chip file it shows, read whole before the write
"$ROTOR" chip show "$d/c.json" --set link_gbps=7 -o "$d/c.json" 2>"$err" || bad "chip rewrite: $(cat "$err")"
if grep -q '"link_gbps":	7,' "$d/c.json"; then ok; else bad "chip show did not rewrite its chip file"; fi
"$ROTOR" compile "$tiny" -q -o "$d/p.json" >/dev/null 2>"$err" || bad "compile: $(cat "$err")"
expect_error trace-is-input 2 "^rotor simulate: --trace: $d/p.json: is the file '$d/p.json' this run reads" -- \
    simulate "$d/p.json" -q --trace "$d/p.json"
expect_error named-twice 2 "^rotor explore: -o: $d/t-hbm-bw.csv: another output of this run writes it already$" -- \
    explore llama2-7b --layers 1 --sweep hbm-bw=2 -q -o "$d/t" --report "$d/t-hbm-bw.csv"
# the same with the file there already: another output's word is no input
: >"$d/t-hbm-bw.csv"
expect_error named-twice-existing 2 "^rotor explore: -o: $d/t-hbm-bw.csv: another output of this run writes it already$" -- \
    explore llama2-7b --layers 1 --sweep hbm-bw=2 -q -o "$d/t" --report "$d/t-hbm-bw.csv"
rm -f "$d/m.onnx" "$d/c.json" "$d/c-link.json" "$d/p.json" "$d/t-hbm-bw.csv"

finish cli_output
