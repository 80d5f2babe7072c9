#!/bin/sh
# The exported-symbol check (docs/architecture.md, "Conventions"): every
# symbol librotor.a exports carries its stage's prefix, so that a program
# linking the library meets no generic name (leaf, offer, identity, ...).
# Internal functions are `static` or take their module's prefix, as Lua's
# luaX_ and SQLite's sqlite3 names are.
#
# The allowed prefixes, one line per stage: the one place they are named.
# rotor_ is the public API; the others are a stage's internal modules.
PREFIXES='
base     rotor_
op       rotor_ search_ kapla_
model    rotor_ ox_ lw_
compile  rotor_ compile_ handoff_cache_ vgm_
sim      rotor_ sim_ replay_ exchange_
hbm      rotor_ preload_
run      rotor_ run_
pipeline rotor_
gen      onnx__
'
# Usage: scripts/check-exports.sh [BUILD]   (BUILD: the build folder whose
# library objects are read, default build: BUILD/src/STAGE/*.o and
# BUILD/gen/*.o, the members of BUILD/librotor.a).  Prints one line per
# symbol outside its stage's prefixes, naming the object, and exits 1 if
# there is any.  OpenMP's named critical sections (.gomp_critical_user_*)
# and names that start with two underscores (the sanitizers' __odr_asan.*;
# C reserves them for the implementation, and rotor uses none) are the
# compiler's, not names of ours, and are passed over.
set -u
build=${1:-build}
command -v nm >/dev/null 2>&1 || { echo "check-exports: nm not found (apt-get install binutils)"; exit 2; }
found=0
bad=0
for o in "$build"/src/*/*.o "$build"/gen/*.o; do
    [ -f "$o" ] || continue
    found=1
    stage=$(basename "$(dirname "$o")")
    [ "$stage" = cli ] && continue # the program's, not the library's
    allowed=$(printf '%s\n' "$PREFIXES" | awk -v s="$stage" '$1 == s { $1 = ""; print }')
    if [ -z "$allowed" ]; then
        echo "$o: stage '$stage' has no prefixes in scripts/check-exports.sh"
        bad=1
        continue
    fi
    for sym in $(nm -g --defined-only "$o" | awk '$2 ~ /^[TDBRCGSV]$/ { print $3 }'); do
        case $sym in .gomp_critical_user_* | __*) continue ;; esac
        ok=0
        for p in $allowed; do
            case $sym in "$p"*) ok=1; break ;; esac
        done
        if [ $ok = 0 ]; then
            echo "$o: exports '$sym' (stage '$stage' allows: $(echo $allowed))"
            bad=1
        fi
    done
done
[ $found = 1 ] || { echo "check-exports: no objects under $build/src (build the library first)"; exit 2; }
[ $bad = 0 ] && echo "check-exports: every symbol librotor.a exports carries its stage's prefix"
exit $bad
