#!/bin/sh
# bench_warm.sh ROTOR [MODEL...]: the warm compile of each zoo model at batch
# 1 on ipu-mk2 (issue 45; docs/performance.md, "Warm compiles"): one cold
# compile into a fresh plan cache directory, then three warm ones from it,
# as one Markdown table of the best warm CPU seconds (user + system: steadier
# than wall time on a shared machine) and wall seconds.  A model that does
# not fit says so in its row.
#
# With BASE=OTHER_ROTOR in the environment, OTHER_ROTOR's warm compiles from
# the same directory alternate with ROTOR's (a shared machine's load then
# weighs on both alike), and the table gives both: before (BASE) and after
# (ROTOR).  The plan cache's files are the same for both as long as neither
# changes their format.
ROTOR=${1:-build/rotor}
shift
[ $# -gt 0 ] || set -- bert-base bert-large vit-base vit-large resnet-18 resnet-50 nerf nerf-t10 mobilenet-v2 \
    densenet-121 conformer-m alexnet vgg-16 googlenet mobilenet-v1 mlp-l lstm
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# best CPU (user + system) and best wall of the runs timed into file $1
best() {
    awk '{ cpu = $1 + $2; if (NR == 1 || cpu < bc) bc = cpu; if (NR == 1 || $3 < bw) bw = $3 }
        END { printf "%.2f | %.2f", bc, bw }' "$1"
}
if [ -n "$BASE" ]; then
    echo "| model | cold CPU (s) | warm CPU before (s) | warm CPU after (s) | warm wall before (s) | warm wall after (s) |"
    echo "|---|---:|---:|---:|---:|---:|"
else
    echo "| model | cold CPU (s) | warm CPU (s) | warm wall (s) |"
    echo "|---|---:|---:|---:|"
fi
for m in "$@"; do
    c="$dir/$m"
    if ! /usr/bin/time -f '%U %S %e' -o "$dir/t" "$ROTOR" compile "$m" -q --cache "$c" >/dev/null 2>"$dir/err"; then
        printf "| %s | %s |\n" "$m" "$(head -n 1 "$dir/err" | cut -c1-90)"
        continue
    fi
    cold=$(awk '{ printf "%.2f", $1 + $2 }' "$dir/t")
    rm -f "$dir/w" "$dir/b"
    for i in 1 2 3; do
        [ -z "$BASE" ] || /usr/bin/time -f '%U %S %e' -a -o "$dir/b" "$BASE" compile "$m" -q --cache "$c" >/dev/null 2>&1
        /usr/bin/time -f '%U %S %e' -a -o "$dir/w" "$ROTOR" compile "$m" -q --cache "$c" >/dev/null 2>&1
    done
    if [ -n "$BASE" ]; then
        b=$(best "$dir/b") w=$(best "$dir/w")
        printf "| %s | %s | %s | %s | %s | %s |\n" "$m" "$cold" "${b%% |*}" "${w%% |*}" "${b##*| }" "${w##*| }"
    else
        printf "| %s | %s | %s |\n" "$m" "$cold" "$(best "$dir/w")"
    fi
done
