#!/bin/sh
# run-cli.sh SCRIPT...: runs the CLI test scripts and the repository checks
# (tests/layers.sh, ...) for `make test`, CLI_JOBS at a time (default 2,
# CI's cores), each into its own log.  As each script
# finishes, its log is printed whole, with the seconds it took, so a
# person watching `make test` sees every suite's result line when it is
# known (the logs of two scripts never interleave: one print at a time,
# under flock).  Fails if any script failed, naming it again at the end.
# The scripts are independent (each works in its own mktemp directory), and
# most of their time is one process at a time, so two at once take about
# half as long.  The CLI scripts need ROTOR and ONNXGEN in the environment,
# the repository checks TESTS, BUILD and CC (the Makefile sets them).
set -u
jobs=${CLI_JOBS:-2}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The longest scripts start first (CPU seconds measured on the 2-core
# machine, 2026-11-29: cli_run 96, cli_docs 43, cli_report 30, cli_onnx 21,
# then cli_schedule_sim, cli_simulate, cli_explore, cli_compile at 12-16 in
# the plain build; under ASan cli_run 41, cli 34, cli_verify 25, cli_schedule
# 21, cli_onnx 19), so that no long one starts last and runs alone at the
# end; the rest follow in the order given.
first="cli_run.sh cli_docs.sh cli_report.sh cli.sh cli_verify.sh cli_onnx.sh cli_schedule.sh cli_schedule_sim.sh
       cli_simulate.sh cli_explore.sh cli_compile.sh"
i=0
for t in "$@"; do
    i=$((i + 1))
    printf '%s %s\n' "$i" "$t"
done >"$dir/given"
for f in $first; do
    grep " \(.*/\)\{0,1\}$f\$" "$dir/given"
done >"$dir/list"
grep -v -x -F -f "$dir/list" "$dir/given" >>"$dir/list"
export RUNCLI_DIR="$dir" ROTOR
: >"$dir/lock"
# each line "N SCRIPT": the script's output to N.log, its status to N.rc;
# then, holding the lock, the log and a closing line with its seconds
# shellcheck disable=SC2016
xargs -P "$jobs" -L 1 sh -c '
    s=$(date +%s)
    sh "$2" >"$RUNCLI_DIR/$1.log" 2>&1
    rc=$?
    echo $rc >"$RUNCLI_DIR/$1.rc"
    e=$(date +%s)
    flock "$RUNCLI_DIR/lock" sh -c "echo \"\${ROTOR:+ROTOR=\$ROTOR }sh $2\"; cat \"$RUNCLI_DIR/$1.log\"; \
        echo \"run-cli: $2: exit $rc, $((e - s)) s\""
' sh <"$dir/list"
status=0
i=0
for t in "$@"; do
    i=$((i + 1))
    rc=$(cat "$dir/$i.rc" 2>/dev/null || echo 1)
    [ "$rc" = 0 ] || { echo "run-cli: $t FAILED (exit $rc)"; status=1; }
done
exit $status
