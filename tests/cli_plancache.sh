#!/bin/sh
# CLI tests of the persistent plan cache (docs/compile.md, "Plan cache"):
# a warm compile prints and writes the same bytes as a cold one and as one
# without the cache; --no-cache and the test environment's ROTOR_NO_CACHE
# write nothing, the XDG default does; a truncated entry is warned about in
# one line and rewritten; two compiles at once on one directory agree and
# leave valid entries; --cache-size bounds the directory.
# Run by `make test` as `ROTOR=build/rotor sh tests/cli_plancache.sh`.
. "$(dirname "$0")/lib.sh"
EX=$(dirname "$0")/../examples/tiny-cnn.onnx
c=$tmpdir/cache

# entries DIR: how many *.rpc files DIR holds; bytes DIR: their total size
entries() { ls "$1"/*.rpc 2>/dev/null | wc -l; }
bytes() { cat "$1"/*.rpc 2>/dev/null | wc -c; }

# same NAME A B: files A and B hold the same bytes
same() {
    if cmp -s "$2" "$3"; then ok; else bad "$1: $2 and $3 differ: $(diff "$2" "$3" | head -4)"; fi
}

# no_stderr NAME FILE: FILE (a run's stderr) is empty
no_stderr() {
    if [ -s "$2" ]; then bad "$1: stderr: $(cat "$2")"; else ok; fi
}

for m in nerf "$EX"; do
    k=$(basename "$m" .onnx)
    "$ROTOR" compile $m -q --no-cache -o "$tmpdir/$k.none.json" >"$tmpdir/$k.none" 2>"$tmpdir/err" || bad "$k: no cache"
    "$ROTOR" compile $m -q --cache "$c" -o "$tmpdir/$k.cold.json" >"$tmpdir/$k.cold" 2>"$tmpdir/err" || bad "$k: cold"
    no_stderr "$k-cold" "$tmpdir/err"
    "$ROTOR" compile $m -q --cache "$c" -o "$tmpdir/$k.warm.json" >"$tmpdir/$k.warm" 2>"$tmpdir/err" || bad "$k: warm"
    no_stderr "$k-warm" "$tmpdir/err"
    same "$k-cold-table" "$tmpdir/$k.none" "$tmpdir/$k.cold"
    same "$k-warm-table" "$tmpdir/$k.none" "$tmpdir/$k.warm"
    same "$k-cold-program" "$tmpdir/$k.none.json" "$tmpdir/$k.cold.json"
    same "$k-warm-program" "$tmpdir/$k.none.json" "$tmpdir/$k.warm.json"
done
# nerf's 6 distinct shapes and tiny-cnn's 2 (its pool is a vendor op)
n=$(entries "$c")
if [ "$n" -eq 8 ]; then ok; else bad "entries: $n in $c, want 8"; fi
# a warm run writes nothing: the entries keep their times
ls -l --time-style=full-iso "$c" >"$tmpdir/before"
"$ROTOR" compile nerf -q --cache "$c" >/dev/null 2>&1
ls -l --time-style=full-iso "$c" >"$tmpdir/after"
same warm-writes-nothing "$tmpdir/before" "$tmpdir/after"

# a truncated entry: one line on stderr, the same output, the entry rewritten
cn=$tmpdir/cachen
"$ROTOR" compile nerf -q --cache "$cn" >/dev/null 2>&1
f=$(ls "$cn"/*.rpc | head -1)
size=$(wc -c <"$f")
head -c $((size / 2)) "$f" >"$tmpdir/half" && cat "$tmpdir/half" >"$f"
"$ROTOR" compile nerf -q --cache "$cn" >"$tmpdir/nerf.fixed" 2>"$tmpdir/err"
same truncated-output "$tmpdir/nerf.none" "$tmpdir/nerf.fixed"
lines=$(wc -l <"$tmpdir/err")
if [ "$lines" -eq 1 ] && grep -q "warning: plan cache $cn: 1 damaged entry ignored and rewritten" "$tmpdir/err"; then ok
else bad "truncated: stderr '$(cat "$tmpdir/err")'"; fi
if [ "$(wc -c <"$f")" -eq "$size" ]; then ok; else bad "truncated: $f not rewritten whole"; fi
"$ROTOR" compile nerf -q --cache "$cn" >/dev/null 2>"$tmpdir/err"
no_stderr rewritten-reads "$tmpdir/err"
# garbage in an entry's place reads as damage too
printf 'not an entry\n' >"$f"
"$ROTOR" compile nerf -q --cache "$cn" >/dev/null 2>"$tmpdir/err"
if grep -q "1 damaged entry" "$tmpdir/err"; then ok; else bad "garbage: stderr '$(cat "$tmpdir/err")'"; fi

# the energy model's counts (.ren, one per model and chip): truncated, the
# same one-line warning, the same output, the file rewritten whole
f=$(ls "$cn"/*.ren)
if [ "$(echo "$f" | wc -l)" -eq 1 ]; then ok; else bad "ren: '$f' in $cn"; fi
size=$(wc -c <"$f")
head -c $((size / 2)) "$f" >"$tmpdir/half" && cat "$tmpdir/half" >"$f"
"$ROTOR" compile nerf -q --cache "$cn" >"$tmpdir/nerf.fixed" 2>"$tmpdir/err"
same ren-truncated-output "$tmpdir/nerf.none" "$tmpdir/nerf.fixed"
lines=$(wc -l <"$tmpdir/err")
if [ "$lines" -eq 1 ] && grep -q "warning: plan cache $cn: 1 damaged entry ignored and rewritten" "$tmpdir/err"; then ok
else bad "ren truncated: stderr '$(cat "$tmpdir/err")'"; fi
if [ "$(wc -c <"$f")" -eq "$size" ]; then ok; else bad "ren truncated: $f not rewritten whole"; fi
"$ROTOR" compile nerf -q --cache "$cn" -o "$tmpdir/nerf.ren.json" >/dev/null 2>"$tmpdir/err"
no_stderr ren-rewritten-reads "$tmpdir/err"
same ren-warm-program "$tmpdir/nerf.none.json" "$tmpdir/nerf.ren.json"

# two compiles at once on one fresh directory
c2=$tmpdir/cache2
"$ROTOR" compile nerf -q --cache "$c2" >"$tmpdir/p1" 2>"$tmpdir/e1" &
p1=$!
"$ROTOR" compile nerf -q --cache "$c2" >"$tmpdir/p2" 2>"$tmpdir/e2" &
p2=$!
wait $p1 && wait $p2 || bad "concurrent: a compile failed ($(cat "$tmpdir/e1" "$tmpdir/e2"))"
same concurrent-1 "$tmpdir/nerf.none" "$tmpdir/p1"
same concurrent-2 "$tmpdir/nerf.none" "$tmpdir/p2"
if [ "$(entries "$c2")" -eq 6 ] && [ -z "$(ls -A "$c2" | grep -v '\.rpc$' | grep -v '\.rho$' | grep -v '\.ren$')" ]; then ok
else bad "concurrent: left $(ls -A "$c2")"; fi
"$ROTOR" compile nerf -q --cache "$c2" >"$tmpdir/p3" 2>"$tmpdir/err"
no_stderr concurrent-valid "$tmpdir/err"
same concurrent-warm "$tmpdir/nerf.none" "$tmpdir/p3"

# --cache-size: the directory stays under it, oldest entries out first
c3=$tmpdir/cache3
"$ROTOR" compile nerf -q --cache "$c3" --cache-size 8K >/dev/null 2>&1 || bad "cache-size: compile failed"
"$ROTOR" compile "$EX" -q --cache "$c3" --cache-size 8K >/dev/null 2>&1 || bad "cache-size: compile failed"
total=$(bytes "$c3")
if [ "$total" -le 8192 ] && [ "$(entries "$c3")" -ge 1 ]; then ok; else bad "cache-size: $total bytes in $(entries "$c3") entries"; fi

# where the cache goes: the XDG default, nowhere under ROTOR_NO_CACHE or --no-cache
x=$tmpdir/xdg
ROTOR_NO_CACHE= XDG_CACHE_HOME=$x "$ROTOR" compile nerf -q >/dev/null 2>&1
if [ "$(entries "$x/rotor")" -eq 6 ]; then ok; else bad "xdg: $(ls -R "$x" 2>&1)"; fi
rm -rf "$x"
ROTOR_NO_CACHE= XDG_CACHE_HOME=$x "$ROTOR" compile nerf -q --no-cache >/dev/null 2>&1
ROTOR_NO_CACHE=1 XDG_CACHE_HOME=$x "$ROTOR" compile nerf -q >/dev/null 2>&1
ROTOR_NO_CACHE=1 XDG_CACHE_HOME=$x "$ROTOR" simulate nerf -q >/dev/null 2>&1
if [ ! -e "$x" ]; then ok; else bad "no-cache wrote $(ls -R "$x")"; fi
ROTOR_NO_CACHE= XDG_CACHE_HOME= HOME=$tmpdir/home "$ROTOR" compile nerf -q >/dev/null 2>&1
if [ "$(entries "$tmpdir/home/.cache/rotor")" -eq 6 ]; then ok; else bad "home: $(ls -R "$tmpdir/home" 2>&1)"; fi

expect_error both 2 "--no-cache with --cache or --cache-size: give one" -- compile nerf --no-cache --cache "$c"
expect_error size 2 "--cache-size: expected a size in bytes, with K, M or G (256M), got '12Q'" -- compile nerf --cache-size 12Q
expect_error plan-no-cache 2 "unknown option '--cache'" -- plan --expr 'C[m,n] += A[m,k] * B[k,n]' --dim m=8,k=8,n=8 --cache "$c"

finish cli_plancache.sh
