#!/bin/sh
# Tests of scripts/check-layers.sh (docs/architecture.md, "Stages"): the real
# tree passes, and a copy of one of its files in which a lower stage includes
# a higher one, in a public or a private header, fails naming the file and
# line.
# Run by `make test` as `sh tests/layers.sh`.
. "$(dirname "$0")/lib.sh"
check=scripts/check-layers.sh

if sh "$check" . >"$out" 2>&1; then ok; else bad "the tree: $(cat "$out")"; fi

# mk [FILE]: a tree in $tmpdir/t holding the real FILE alone.  Each case
# breaks the layering in one file: the check reads each file on its own (a
# few hundred processes for the whole tree, seconds on CI), and the real
# tree's other files pass, as the first check shows.
mk() {
    rm -rf "$tmpdir/t"
    mkdir -p "$tmpdir/t/src"
    [ $# -eq 0 ] && return
    mkdir -p "$tmpdir/t/$(dirname "$1")"
    cp "$1" "$tmpdir/t/$1"
}
# expect_violation NAME FILE LINE-TEXT PATTERN: inserting LINE-TEXT as FILE's
# first line makes the check exit 1 with PATTERN in its output.
expect_violation() {
    mk "$2"
    f=$tmpdir/t/$2
    { echo "$3"; cat "$f"; } >"$f.new" && mv "$f.new" "$f"
    if sh "$check" "$tmpdir/t" >"$out" 2>&1; then bad "$1: passed"; return; fi
    if ! grep -q -- "$4" "$out"; then bad "$1: output '$(cat "$out")' lacks '$4'"; return; fi
    ok
}
expect_violation op-includes-compile src/op/cost.c '#include "rotor/compile/compile.h"' \
    "src/op/cost.c:1: stage 'op' includes a header of the higher stage 'compile'"
expect_violation base-header-includes-sim include/rotor/base/chip.h '#include "rotor/sim/sim.h"' \
    "include/rotor/base/chip.h:1: stage 'base' includes a header of the higher stage 'sim'"
expect_violation sim-includes-hbm-private src/sim/sim.c '#include "hbm/anything.h"' \
    "stage 'sim' includes a header of the higher stage 'hbm'"
expect_violation model-includes-cli src/model/zoo.c '#  include "cli/cli.h"' \
    "stage 'model' includes a header of the higher stage 'cli'"
# a folder that is no stage
mk
mkdir "$tmpdir/t/src/misc"
if sh "$check" "$tmpdir/t" >"$out" 2>&1; then bad "unknown-stage: passed"
elif grep -q "src/misc: not a pipeline stage" "$out"; then ok; else bad "unknown-stage: $(cat "$out")"; fi
# including a lower stage or the same one is fine
mk src/hbm/preload.c
f=$tmpdir/t/src/hbm/preload.c
{ echo '#include "rotor/base/chip.h"'; echo '#include "sim/replayer.h"'; cat "$f"; } >"$f.new" && mv "$f.new" "$f"
if sh "$check" "$tmpdir/t" >"$out" 2>&1; then ok; else bad "downward: $(cat "$out")"; fi

finish layers
