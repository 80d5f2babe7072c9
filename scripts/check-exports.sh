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
model    rotor_ ox_ lw_ train_
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
# One nm over every object and one awk over its lines: a process per object
# (and an awk per symbol list) took 25 s of CI's make test on its own.
set -- "$build"/src/*/*.o "$build"/gen/*.o
objs=
for o in "$@"; do
    [ -f "$o" ] || continue
    case $o in */src/cli/*) continue ;; esac # the program's, not the library's
    objs="$objs $o"
done
found=0
[ -n "$objs" ] && found=1
bad=0
if [ $found = 1 ]; then
    # shellcheck disable=SC2086
    nm -g --defined-only -A $objs >"${TMPDIR:-/tmp}/check-exports.$$" || { echo "check-exports: nm failed"; exit 2; }
    printf '%s\n' "$PREFIXES" | awk -v list="${TMPDIR:-/tmp}/check-exports.$$" '
        NF >= 2 { for (i = 2; i <= NF; i++) allow[$1] = allow[$1] (i > 2 ? " " : "") $i }
        END {
            bad = 0
            while ((getline line < list) > 0) {
                n = split(line, f, " ")
                if (n < 3 || f[n - 1] !~ /^[TDBRCGSV]$/) continue
                obj = f[1]; sub(/:[0-9a-fA-F]*$/, "", obj); sym = f[n]
                if (sym ~ /^\.gomp_critical_user_/ || sym ~ /^__/) continue
                m = split(obj, parts, "/"); stage = parts[m - 1]
                if (!(stage in allow)) {
                    if (!(stage in told)) print obj ": stage \047" stage "\047 has no prefixes in scripts/check-exports.sh"
                    told[stage] = 1; bad = 1; continue
                }
                k = split(allow[stage], p, " "); ok = 0
                for (j = 1; j <= k; j++) if (index(sym, p[j]) == 1) { ok = 1; break }
                if (!ok) { print obj ": exports \047" sym "\047 (stage \047" stage "\047 allows: " allow[stage] ")"; bad = 1 }
            }
            exit bad
        }' || bad=1
    rm -f "${TMPDIR:-/tmp}/check-exports.$$"
fi
[ $found = 1 ] || { echo "check-exports: no objects under $build/src (build the library first)"; exit 2; }
[ $bad = 0 ] && echo "check-exports: every symbol librotor.a exports carries its stage's prefix"
exit $bad
