#!/bin/sh
# bench_largest.sh ROTOR [MODEL:BATCH...]: every zoo model that fits one
# ipu-mk2, at the largest batch it fits (issue 45's acceptance: cold and warm
# compiles at batch 1 and at the largest batch; batch 1 is bench_profile.sh's
# and bench_warm.sh's).  The batches are the doubling sweep's last fitting
# power of two (`rotor compile MODEL --batch 1,2`, measured 2026-11-30;
# Conformer-M 64 since placement's rank fallback, h-conf16: it fits up to 66;
# the list, MODEL:BATCH, is bench/largest.txt, which bench_batches.sh reads too); a
# row whose compile fails says so, so a model that stops fitting is seen.
# Cold: the best of 2 compiles with no plan cache; warm: one compile into a
# fresh cache directory, then the best of 3 from it.  Wall and CPU (user +
# system) seconds, as one Markdown table.
ROTOR=${1:-build/rotor}
shift
[ $# -gt 0 ] || set -- $(cat "$(dirname "$0")/largest.txt")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
best() {
    awk '{ cpu = $1 + $2; if (NR == 1 || cpu < bc) bc = cpu; if (NR == 1 || $3 < bw) bw = $3 }
        END { printf "%.2f | %.2f", bw, bc }' "$1"
}
echo "| model | batch | cold wall (s) | cold CPU (s) | warm wall (s) | warm CPU (s) |"
echo "|---|---:|---:|---:|---:|---:|"
for mb in "$@"; do
    m=${mb%%:*} b=${mb#*:}
    : >"$dir/cold"; : >"$dir/warm"
    ok=1
    for i in 1 2; do
        ROTOR_NO_CACHE=1 /usr/bin/time -f '%U %S %e' -a -o "$dir/cold" "$ROTOR" compile "$m" --batch "$b" -q \
            >/dev/null 2>"$dir/err" || ok=0
    done
    if [ "$ok" = 0 ]; then
        printf "| %s | %s | %s |\n" "$m" "$b" "$(grep -v '^[0-9]' "$dir/err" | head -n 1 | cut -c1-90)"
        continue
    fi
    rm -rf "$dir/cache"
    "$ROTOR" compile "$m" --batch "$b" --cache "$dir/cache" -q >/dev/null 2>&1
    for i in 1 2 3; do
        /usr/bin/time -f '%U %S %e' -a -o "$dir/warm" "$ROTOR" compile "$m" --batch "$b" --cache "$dir/cache" -q \
            >/dev/null 2>/dev/null
    done
    printf "| %s | %s | %s | %s |\n" "$m" "$b" "$(best "$dir/cold")" "$(best "$dir/warm")"
done
