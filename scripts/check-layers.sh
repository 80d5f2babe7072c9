#!/bin/sh
# The layering check (docs/architecture.md, "Stages"): a file of one pipeline
# stage may include headers of its own stage and of lower stages only.
#   base < op < model < compile < sim < hbm < run < pipeline < cli
# A stage's public headers are include/rotor/STAGE/*.h, included as
# "rotor/STAGE/x.h"; its private headers are src/STAGE/*.h, included as
# "STAGE/x.h" from another stage or "x.h" from its own.
# Usage: scripts/check-layers.sh [ROOT]   (ROOT: the tree to check, default .)
# Prints one line per offending include and exits 1 if there is any.
# (The loop runs in a pipe, so it reports through its output: each offence is
# followed by a line "x".)
set -u
root=${1:-.}
stages="base op model compile sim hbm run pipeline cli"
rank() {
    r=0
    for s in $stages; do
        [ "$s" = "$1" ] && { echo $r; return; }
        r=$((r + 1))
    done
    echo -1
}
bad=0
for dir in "$root"/src/* "$root"/include/rotor/*; do
    [ -d "$dir" ] || continue
    stage=$(basename "$dir")
    own=$(rank "$stage")
    if [ "$own" -lt 0 ]; then
        echo "$dir: not a pipeline stage (expected one of: $stages)"
        echo x
        continue
    fi
    for f in "$dir"/*.c "$dir"/*.h; do
        [ -f "$f" ] || continue
        # every quoted include that names a stage: "rotor/S/x.h" or "S/x.h"
        grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
            sed -n 's|^\([0-9]*\):.*"\(rotor/\)\{0,1\}\([a-z]*\)/[^"]*".*|\1 \3|p' |
            while read -r line used; do
                r=$(rank "$used")
                [ "$r" -lt 0 ] && continue
                if [ "$r" -gt "$own" ]; then
                    echo "$f:$line: stage '$stage' includes a header of the higher stage '$used'"
                    echo x
                fi
            done
    done
done | {
    found=0
    while read -r l; do
        if [ "$l" = x ]; then found=1; else echo "$l"; fi
    done
    [ "$found" = 0 ]
} || bad=1
[ "$bad" = 0 ] && echo "check-layers: every include goes to the same or a lower stage"
exit "$bad"
