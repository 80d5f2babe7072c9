#!/bin/sh
# make install and make uninstall (issue 46; docs/install.md): installs the
# existing build into a temporary prefix and checks
#  - the file list (program, both libraries with the soname's links, every
#    public header, rotor.pc, a man page per command, the completion, the
#    chip presets) and the shared library's soname;
#  - that every installed header compiles on its own from the prefix;
#  - a C program built with `pkg-config --cflags --libs rotor` plans the T10
#    benchmark MatMul (C[m,n] += A[m,k] * B[k,n], m=32, k=5120, n=15360, on
#    ipu-mk2) through the library, linked to the shared library and then
#    statically, and prints the same optimum as `rotor plan --json`;
#  - the installed chip preset file plans the same;
#  - make uninstall leaves no file.
# It installs with DESTDIR (a package build's staging) and moves the tree
# to the prefix rotor.pc names.
# Run by `make test` as `ROTOR=build/rotor sh tests/cli_install.sh`; it runs
# `make install` on the build $ROTOR is in (which links build/librotor.so if
# it is not there yet, and the one-file preset writer).  Skips with one line
# without pkg-config, and for a sanitizer build (nothing to install).
. "$(dirname "$0")/lib.sh"
if ! command -v pkg-config >/dev/null 2>&1; then
    echo "cli_install: pkg-config is absent; skipped"
    exit 0
fi
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(dirname "$ROTOR")
case "$build" in
*/san | */san/* | *fuzz*) echo "cli_install: $build is a sanitizer build, not installed; skipped"; exit 0 ;;
*/clang) cc=clang ;;
*) cc=cc ;;
esac
# a make of its own: not the jobserver of a `make test` this runs under
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$root" --no-print-directory -s CC="$cc" "$@"; }
prefix=$tmpdir/prefix
version=$(sed -n 's/^#define ROTOR_VERSION "\(.*\)"$/\1/p' "$root/include/rotor/base/version.h")
major=${version%%.*}

# staged as a package build does (DESTDIR), then moved where PREFIX says: one
# make install checks both
stage=$tmpdir/stage
if ! mk install PREFIX="$prefix" DESTDIR="$stage" >"$out" 2>&1; then
    bad "make install: $(tail -n 5 "$out")"
    finish cli_install
    exit 1
fi
[ ! -e "$prefix" ] && grep -qx "prefix=$prefix" "$stage$prefix/lib/pkgconfig/rotor.pc" && ok ||
    bad "DESTDIR: files outside the stage, or rotor.pc does not name PREFIX"
mv "$stage$prefix" "$prefix"

# --- the file list: exactly what is expected, no more, no less
{
    echo bin/rotor
    echo lib/librotor.a
    echo lib/librotor.so
    echo "lib/librotor.so.$major"
    echo "lib/librotor.so.$version"
    echo lib/pkgconfig/rotor.pc
    (cd "$root/include" && find rotor -name '*.h' | sed 's|^|include/|')
    echo share/man/man1/rotor.1
    "$ROTOR" --help | awk '/^commands:/ { c = 1; next } c && /^$/ { exit } c { print "share/man/man1/rotor-" $1 ".1" }'
    echo share/bash-completion/completions/rotor
    # the OpenMPI plugin of rotor explore, where the build has one
    case "$build" in /*) b=$build ;; *) b=$(pwd)/$build ;; esac
    [ -f "$b/rotor-mpi.so" ] && echo lib/rotor/rotor-mpi.so
    "$ROTOR" plan --expr 'C[m] += A[m]' --dim m=4 --chip nosuch 2>&1 | sed 's/.*presets: \([^;]*\);.*/\1/' | tr -d ' ' | tr ',' '\n' |
        sed 's|.*|share/rotor/chips/&.json|'
} | sort >"$tmpdir/want"
(cd "$prefix" && find . -type f -o -type l) | sed 's|^\./||' | sort >"$tmpdir/got"
if cmp -s "$tmpdir/want" "$tmpdir/got"; then ok
else bad "installed files differ from the expected list: $(diff "$tmpdir/want" "$tmpdir/got" | grep '^[<>]' | head -n 5 | tr '\n' ' ')"; fi
[ "$(grep -c '^share/rotor/chips/' "$tmpdir/want")" -ge 7 ] && ok || bad "fewer than 7 chip presets expected"

# --- the shared library: its soname, and the links to it
soname=$(readelf -d "$prefix/lib/librotor.so.$version" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "librotor.so.$major" ] && ok || bad "soname '$soname', want librotor.so.$major"
[ "$(readlink "$prefix/lib/librotor.so.$major")" = "librotor.so.$version" ] && ok || bad "librotor.so.$major link"
[ "$(readlink "$prefix/lib/librotor.so")" = "librotor.so.$major" ] && ok || bad "librotor.so link"
grep -qx "prefix=$prefix" "$prefix/lib/pkgconfig/rotor.pc" && grep -qx "Version: $version" "$prefix/lib/pkgconfig/rotor.pc" &&
    ok || bad "rotor.pc: $(head -n 3 "$prefix/lib/pkgconfig/rotor.pc")"

# --- the headers: each compiles alone from the prefix, and none names a
# header outside include/rotor (a src/ one would not be installed)
if grep -rh '#include "' "$prefix/include" | grep -v '#include "rotor/' >"$out"; then bad "a header includes $(head -n 1 "$out")"; else ok; fi
mkdir -p "$tmpdir/hdr"
(cd "$prefix/include" && find rotor -name '*.h') | while read -r h; do
    printf '#include <%s>\n#include <%s>\n' "$h" "$h" >"$tmpdir/hdr/$(echo "$h" | tr '/.' '__').c"
done
if (cd "$tmpdir/hdr" && "$cc" -std=c17 -Wall -Wextra -Werror -pedantic -fsyntax-only -I"$prefix/include" ./*.c) >"$out" 2>&1
then ok; else bad "installed headers alone: $(head -n 3 "$out")"; fi

# --- a program against the installed library: the T10 benchmark's optimum
cat >"$tmpdir/t10.c" <<'EOF'
#include <stdio.h>

#include <rotor/base/chip.h>
#include <rotor/base/version.h>
#include <rotor/op/expr.h>
#include <rotor/op/search.h>

int main(void) {
    rotor_error err = {{0}};
    rotor_chip chip;
    rotor_expr e;
    rotor_search_options opt = {0}; /* the default cost model, the exact solver */
    rotor_search_result r;
    if (rotor_chip_preset("ipu-mk2", &chip, &err) || rotor_expr_parse("C[m,n] += A[m,k] * B[k,n]", &e, &err) ||
        rotor_expr_bind(&e, "m=32,k=5120,n=15360", &err) || rotor_search(&e, &chip, &opt, &r, &err)) {
        fprintf(stderr, "t10: %s\n", err.msg);
        return 1;
    }
    printf("%s %.17g\n", rotor_version(), r.best.cost.total);
    rotor_search_result_free(&r);
    return 0;
}
EOF
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
cflags=$(pkg-config --cflags rotor) && libs=$(pkg-config --libs rotor) &&
    static=$(pkg-config --static --libs rotor) || bad "pkg-config rotor: $(pkg-config --libs rotor 2>&1)"
# the optimum as the installed program prints it
want=$("$prefix/bin/rotor" plan --expr 'C[m,n] += A[m,k] * B[k,n]' --dim m=32,k=5120,n=15360 --chip ipu-mk2 --json -q |
    sed -n 's/.*"total_s":[^0-9]*\([0-9.e+-]*\).*/\1/p' | head -n 1)
[ -n "$want" ] && ok || bad "rotor plan --json printed no total_s"
# same NAME GOT: GOT is "VERSION TIME" with TIME equal to the plan's (as doubles)
same() {
    if [ "${2%% *}" != "$version" ]; then bad "$1: rotor_version() '${2%% *}', want $version"
    elif awk -v a="${2#* }" -v b="$want" 'BEGIN { exit !(a + 0 == b + 0) }'; then ok
    else bad "$1: total ${2#* } s, rotor plan --json says $want"; fi
}
# shellcheck disable=SC2086
if "$cc" -std=c17 -o "$tmpdir/t10" "$tmpdir/t10.c" $cflags $libs >"$out" 2>&1; then
    readelf -d "$tmpdir/t10" | grep -q "NEEDED.*\[librotor.so.$major\]" && ok || bad "shared link: librotor.so.$major not needed"
    same shared "$(LD_LIBRARY_PATH="$prefix/lib" "$tmpdir/t10" 2>&1)"
else bad "shared link: $(head -n 3 "$out")"; fi
# static: the archive named (the linker would take the .so beside it), and
# the private dependencies --static adds
# shellcheck disable=SC2086
if "$cc" -std=c17 -o "$tmpdir/t10s" "$tmpdir/t10.c" $cflags $(echo " $static " | sed 's/ -lrotor / -l:librotor.a /') >"$out" 2>&1; then
    readelf -d "$tmpdir/t10s" | grep -q "librotor" && bad "static link: needs a librotor.so" || ok
    same static "$(env -u LD_LIBRARY_PATH "$tmpdir/t10s" 2>&1)"
else bad "static link: $(head -n 3 "$out")"; fi

# --- the installed preset plans as the built-in one
got=$("$prefix/bin/rotor" plan --expr 'C[m,n] += A[m,k] * B[k,n]' --dim m=32,k=5120,n=15360 \
    --chip "$prefix/share/rotor/chips/ipu-mk2.json" --json -q | sed -n 's/.*"total_s":[^0-9]*\([0-9.e+-]*\).*/\1/p' | head -n 1)
[ -n "$got" ] && [ "$got" = "$want" ] && ok || bad "share/rotor/chips/ipu-mk2.json: total '$got', want $want"

# --- the man pages: one per command, each option of its --help in it
grep -q '^\.TH "ROTOR-PLAN" "1"' "$prefix/share/man/man1/rotor-plan.1" && grep -q '^\\fB\\-\\-pareto\\-within R\\fR$' \
    "$prefix/share/man/man1/rotor-plan.1" && ok || bad "rotor-plan.1 lacks its header or --pareto-within"
if command -v groff >/dev/null 2>&1; then
    for m in "$prefix"/share/man/man1/*.1; do groff -man -ww -z "$m"; done >"$out" 2>&1
    [ -s "$out" ] && bad "groff warns: $(head -n 2 "$out")" || ok
fi
# --- the completion: valid bash, completing a command and its options
if command -v bash >/dev/null 2>&1; then
    # c WORDS...: the completions of the last word, one line
    # (model's --group is a flag: a model follows; compile's takes a value)
    got=$(bash -c '. "$1"; c() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _rotor; echo "${COMPREPLY[*]}"; }
                   c rotor plan --pareto; c rotor sched; c rotor plan --chip ipu-pod1
                   c rotor model x --group bert-l; c rotor compile x --group bert-l' \
        sh "$prefix/share/bash-completion/completions/rotor" 2>&1 | tr '\n' '/')
    [ "$got" = "--pareto --pareto-within/schedule/ipu-pod16/bert-large//" ] && ok || bad "completion: '$got'"
fi

# --- uninstall leaves no file
if mk uninstall PREFIX="$prefix" >"$out" 2>&1; then
    left=$(cd "$prefix" && find . -type f -o -type l | head -n 5 | tr '\n' ' ')
    [ -z "$left" ] && ok || bad "make uninstall left $left"
else bad "make uninstall: $(tail -n 3 "$out")"; fi
finish cli_install
