#!/bin/sh
# Tests of scripts/check-exports.sh (docs/architecture.md, "Conventions"):
# the real library passes, and objects that export a generic name, or a
# stage prefix from the wrong stage, fail naming the object and the symbol.
# Run by `make test` as `BUILD=build sh tests/exports.sh`.
. "$(dirname "$0")/lib.sh"
check=scripts/check-exports.sh
BUILD=${BUILD:-build}
CC=${CC:-cc}

if sh "$check" "$BUILD" >"$out" 2>&1; then ok; else bad "the library: $(cat "$out")"; fi

# obj STAGE NAME CODE: compiles CODE into $tmpdir/b/src/STAGE/NAME.o
obj() {
    mkdir -p "$tmpdir/b/src/$1"
    printf '%s\n' "$3" >"$tmpdir/x.c"
    "$CC" -c -o "$tmpdir/b/src/$1/$2.o" "$tmpdir/x.c" || bad "$2: does not compile"
}
obj op steps 'int search_leaf(void) { return 1; } static int leaf2(void) { return 2; } int rotor_x(void) { return leaf2(); }'
if sh "$check" "$tmpdir/b" >"$out" 2>&1; then ok; else bad "prefixed and static names: $(cat "$out")"; fi
obj op steps 'int leaf(void) { return 1; }'
if sh "$check" "$tmpdir/b" >"$out" 2>&1; then bad "a generic name passed"
elif grep -q "src/op/steps.o: exports 'leaf' (stage 'op' allows: rotor_ search_ kapla_)" "$out"; then ok
else bad "generic name: $(cat "$out")"; fi
# a prefix is its stage's: sim_ is not the hbm stage's
rm -rf "$tmpdir/b"
obj hbm timing 'int sim_queue_pop(void) { return 1; }'
if sh "$check" "$tmpdir/b" >"$out" 2>&1; then bad "another stage's prefix passed"
elif grep -q "exports 'sim_queue_pop' (stage 'hbm'" "$out"; then ok; else bad "wrong stage: $(cat "$out")"; fi
# exported data counts too
rm -rf "$tmpdir/b"
obj compile vgm 'int table[4] = {1, 2, 3, 4};'
if sh "$check" "$tmpdir/b" >"$out" 2>&1; then bad "exported data passed"
elif grep -q "exports 'table'" "$out"; then ok; else bad "data: $(cat "$out")"; fi
# a folder that is no stage has no prefixes
rm -rf "$tmpdir/b"
obj misc x 'int rotor_y(void) { return 0; }'
if sh "$check" "$tmpdir/b" >"$out" 2>&1; then bad "unknown stage passed"
elif grep -q "stage 'misc' has no prefixes" "$out"; then ok; else bad "unknown stage: $(cat "$out")"; fi
finish exports
