#!/bin/sh
# bench_profile.sh ROTOR: `rotor compile MODEL --profile` of every zoo model
# at batch 1 on ipu-mk2, cold (no plan cache), as one Markdown table of the
# phases' wall seconds (issue 45; docs/performance.md, "Where a compile's
# time goes").  A model that does not fit says so in its row.
ROTOR=${1:-build/rotor}
export ROTOR_NO_CACHE=1
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
echo "| model | load | group | search | hand-off | reconciliation | compile, other | program | total |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
"$ROTOR" model --list | awk '{ print $1 }' | while read -r m; do
    [ -n "$m" ] || continue
    if "$ROTOR" compile "$m" --batch 1 --profile -q >/dev/null 2>"$tmp"; then
        awk -v m="$m" '
            /^  / { v[$0 ~ /compile, other/ ? "other" : $1] = $NF }
            END { printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", m, v["load"], v["group"], v["search"],
                  v["hand-off"], v["reconciliation"], v["other"], v["program"], v["total"] }' "$tmp"
    else
        printf "| %s | %s |\n" "$m" "$(grep -v '^  \|profile' "$tmp" | head -n 1 | cut -c1-90)"
    fi
done
