#!/bin/sh
# run-cli.sh SCRIPT...: runs the CLI test scripts for `make test`, CLI_JOBS
# at a time (default 2, CI's cores), each into its own log, then prints the
# logs in the order given and fails if any script failed.  The scripts are
# independent (each works in its own mktemp directory), and most of their
# time is one process at a time, so two at once take about half as long:
# .ci/run runs them twice (plain and gcc SAN) and must stay under 20 minutes.
# Needs ROTOR and ONNXGEN in the environment.
set -u
jobs=${CLI_JOBS:-2}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The longest scripts start first (measured on CI's 2 cores: cli_simulate and
# cli_compile under ASan, cli_run and cli_docs in the plain build), so that no
# long one starts last and runs alone at the end; the rest follow in the
# order given.  The logs are printed in the order given.
first="cli_simulate.sh cli_compile.sh cli_run.sh cli_docs.sh cli_onnx.sh cli_schedule_sim.sh"
i=0
for t in "$@"; do
    i=$((i + 1))
    printf '%s %s\n' "$i" "$t"
done >"$dir/given"
for f in $first; do
    grep " \(.*/\)\{0,1\}$f\$" "$dir/given"
done >"$dir/list"
grep -v -x -F -f "$dir/list" "$dir/given" >>"$dir/list"
export RUNCLI_DIR="$dir"
# each line "N SCRIPT": the script's output to N.log, its status to N.rc
xargs -P "$jobs" -L 1 sh -c 'sh "$2" >"$RUNCLI_DIR/$1.log" 2>&1; echo $? >"$RUNCLI_DIR/$1.rc"' sh <"$dir/list"
status=0
i=0
for t in "$@"; do
    i=$((i + 1))
    echo "ROTOR=$ROTOR sh $t"
    cat "$dir/$i.log"
    rc=$(cat "$dir/$i.rc" 2>/dev/null || echo 1)
    [ "$rc" = 0 ] || { echo "run-cli: $t exited $rc"; status=1; }
done
exit $status
