#!/bin/sh
# The table of docs/mesh.md, "rotor against the baselines on 32 x 32": rotor's
# plan and the mesh baselines of ten GEMMs and GEMVs on ipu-mk2's numbers cut
# to a 32 x 32 mesh, simulated, at each per-hop latency given (ns).
# Usage: scripts/meshtable.sh [ROTOR [LATENCY...]]   (default build/rotor 0 1 9)
# OVERLAP=1 in the environment sets compute_overlap=1 (docs/cost-model.md,
# "Overlap"): cores compute while their links move data.
# Prints one markdown table per latency; each cell is the simulated time in us
# and the grid (rotor: F_op m,k,n).  Runs `rotor simulate --baseline all`.
set -u
rotor=${1:-build/rotor}
[ $# -gt 0 ] && shift
[ $# -eq 0 ] && set -- 0 1 9
shapes="512,512,512 2048,2048,2048 4096,4096,4096 32,4096,4096 128,4096,4096 128,8192,1024
1,4096,4096 1,8192,1024 1,1024,8192 4096,4096,1"
mesh="--set cores_per_chip=1024 --set topology=mesh --set mesh_width=32 --set mesh_height=32"
mesh="$mesh --set compute_overlap=${OVERLAP:-0}"
for lat in "$@"; do
    echo "Per-hop latency $lat ns (\`--set link_latency_ns=$lat\`):"
    echo
    echo "| m, k, n | rotor's plan | rotor + setup | summa | cannon | gemv | fastest baseline / rotor | ... / rotor + setup |"
    echo "|---|---|---|---|---|---|---|---|"
    for s in $shapes; do
        dims=$(echo "$s" | sed 's/^\([0-9]*\),\([0-9]*\),\([0-9]*\)$/m=\1,k=\2,n=\3/')
        # shellcheck disable=SC2086
        "$rotor" simulate --expr 'C[m,n] += A[m,k] * B[k,n]' --dim "$dims" $mesh --set link_latency_ns="$lat" \
            --baseline all -q >"${TMPDIR:-/tmp}/meshtable.$$" || { echo "meshtable: $dims failed" >&2; exit 1; }
        # a row: method, grid (words 2 .. NF-5), cores, SRAM, predicted, simulated, ratio
        awk -v shape="$s" '
            function grid(   g, i) { g = $2; for (i = 3; i <= NF - 5; i++) g = g " " $i; return g }
            $1 == "rotor" || $1 == "rotor+setup" {
                split(grid(), f, /[ =]/); cell[$1] = sprintf("%s (%s,%s,%s)", $(NF - 1), f[2], f[4], f[6]); t[$1] = $(NF - 1)
            }
            ($1 == "summa" || $1 == "cannon" || $1 == "gemv") {
                if ($2 == "does") { cell[$1] = "–"; next }
                cell[$1] = sprintf("%s (%s)", $(NF - 1), grid())
                if (best == "" || $(NF - 1) + 0 < best + 0) { best = $(NF - 1); who = $1 }
            }
            END {
                printf "| %s | %s | %s | %s | %s | %s | %s %.4f | %.4f |\n", shape, cell["rotor"], cell["rotor+setup"],
                    cell["summa"], cell["cannon"], cell["gemv"], who, best / t["rotor"], best / t["rotor+setup"]
            }' "${TMPDIR:-/tmp}/meshtable.$$"
    done
    echo
done
rm -f "${TMPDIR:-/tmp}/meshtable.$$"
