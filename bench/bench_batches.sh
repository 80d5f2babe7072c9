#!/bin/sh
# bench_batches.sh ROTOR [MODEL:LARGEST...]: every zoo model that fits one
# ipu-mk2 at every power-of-two batch from 1 to its largest and at the
# batch halfway between each two (3 x 2^k: 3, 6, 12, ...), issue 45's "every
# batch it fits" (the acceptance's table, bench_profile.sh's batch 1 and
# bench_largest.sh's largest batch, leaves the batches between; a batch
# with a factor 3 has more divisors, so more F_op, than the powers of two
# around it: DenseNet-121's slowest batches were 24, 48 and 96).  Each
# cell is the best cold wall time of two compiles with no plan cache, in
# seconds; a cell of 1 s or more is marked with `!`, and the last column
# counts them, so a batch that regresses is seen without reading every cell.
# The models and largest batches are bench/largest.txt's, as
# bench_largest.sh's.  A batch whose compile fails prints `fail` in its cell.
ROTOR=${1:-build/rotor}
shift
[ $# -gt 0 ] || set -- $(cat "$(dirname "$0")/largest.txt")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo "| model | cold wall (s) at batch 1, 2, 3, 4, 6, 8, ... largest | at or over 1 s |"
echo "|---|---|---:|"
for mb in "$@"; do
    m=${mb%%:*} last=${mb#*:}
    row="" over=0
    # 1, 2, 3, 4, 6, 8, 12, ...: each power of two, and 3 x 2^(k-1) after 2^k
    batches=$(awk -v last="$last" 'BEGIN {
        for (p = 1; p <= last; p *= 2) { print p; if (p >= 2 && p / 2 * 3 <= last) print p / 2 * 3 } }')
    for b in $batches; do
        : >"$dir/t"
        ok=1
        for i in 1 2; do
            ROTOR_NO_CACHE=1 /usr/bin/time -f '%e' -a -o "$dir/t" "$ROTOR" compile "$m" --batch "$b" -q \
                >/dev/null 2>&1 || ok=0
        done
        if [ "$ok" = 0 ]; then
            cell="fail"
        else
            cell=$(awk 'NR == 1 || $1 < w { w = $1 } END { printf "%.2f%s", w, (w >= 1 ? "!" : "") }' "$dir/t")
        fi
        case "$cell" in *!|fail) over=$((over + 1)) ;; esac
        row="$row${row:+ }$b:$cell"
    done
    printf "| %s | %s | %d |\n" "$m" "$row" "$over"
done
