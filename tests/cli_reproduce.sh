#!/bin/sh
# CLI tests of `rotor reproduce t10` (docs/reproduction.md) on a small grid:
# the tables, the files, JSON, and one-line errors.
# Run by `make test` as `ROTOR=build/rotor sh tests/cli_reproduce.sh`.
. "$(dirname "$0")/lib.sh"
d=$tmpdir/r

expect_out help "Figures 12, 13, 14, 19 and 20" -- reproduce --help
# the T10 grid for one model, batches 1 and 2: every figure's table
"$ROTOR" reproduce t10 --models nerf-t10 --max-batch 2 -o "$d" >"$out" 2>"$err"
if [ $? -eq 0 ]; then ok; else bad "small grid: $(cat "$err")"; fi
for pat in "^nerf-t10 *1 " "^nerf-t10 *2 " "T10 over VGM: .* over 2 points (paper: 1.69x on average, 3.3x at most)" \
    "T10 over the VGM oracle: .* over 2 points" \
    "Figure 14" "Figure 20" "paper 8%-43%"; do
    if grep -q -- "$pat" "$out"; then ok; else bad "tables lack '$pat': $(head -n 12 "$out")"; fi
done
# the files, complete and named as the table says
for f in t10-fig12-13.csv t10-fig14.csv t10-fig19.csv t10-fig20.csv t10-fig12.svg t10-fig13.svg t10-fig14.svg \
    t10-fig19.svg t10-fig20.svg; do
    if [ -s "$d/$f" ]; then ok; else bad "$f missing"; fi
done
if [ "$(head -n 1 "$d/t10-fig12-13.csv")" = "model,batch,t10_us,vgm_us,speedup,t10_move_share,vgm_move_share,vgm_oracle_us,speedup_oracle" ] &&
    [ "$(wc -l <"$d/t10-fig12-13.csv")" -eq 3 ]; then ok; else bad "fig12-13 csv: $(cat "$d/t10-fig12-13.csv")"; fi
if [ "$(wc -l <"$d/t10-fig20.csv")" -eq 4 ]; then ok; else bad "fig20 csv: $(cat "$d/t10-fig20.csv")"; fi
if tail -n 1 "$d/t10-fig12.svg" | grep -q "</svg>" && grep -q "nerf-t10 T10" "$d/t10-fig12.svg"; then ok
else bad "fig12 svg"; fi
if ls "$d" | grep -q '\.tmp\.'; then bad "a temporary is left: $(ls "$d")"; else ok; fi
# the same run as JSON, and the same numbers again (deterministic)
expect_out json '"format":	"rotor-reproduce-t10"' -- reproduce t10 --models nerf-t10 --max-batch 2 -o "$d" --json
cp "$d/t10-fig12-13.csv" "$tmpdir/first.csv"
"$ROTOR" reproduce t10 --models nerf-t10 --max-batch 2 -o "$d" --threads 1 >/dev/null 2>&1
if cmp -s "$d/t10-fig12-13.csv" "$tmpdir/first.csv"; then ok; else bad "a second run (1 thread) differs"; fi

expect_error what 2 "unknown evaluation 'elk' (known: t10)" -- reproduce elk
expect_error none 2 "which paper? (rotor reproduce t10)" -- reproduce
expect_error model 2 "--models: unknown model 'gpt2'" -- reproduce t10 --models gpt2
expect_error batch 2 "--max-batch: expected an integer from 1" -- reproduce t10 --max-batch 0
: >"$tmpdir/file"
expect_error outdir 2 "-o: $tmpdir/file/x: cannot create" -- reproduce t10 --models nerf-t10 --max-batch 1 -o "$tmpdir/file/x"

finish cli_reproduce
