#!/bin/sh
# run-cli.sh SCRIPT...: runs the CLI test scripts for `make test`, CLI_JOBS
# at a time (default 2, CI's cores), each into its own log.  As each script
# finishes, its log is printed whole, with the seconds it took, so a
# person watching `make test` sees every suite's result line when it is
# known (the logs of two scripts never interleave: one print at a time,
# under flock).  Fails if any script failed, naming it again at the end.
# The scripts are independent (each works in its own mktemp directory), and
# most of their time is one process at a time, so two at once take about
# half as long.  Needs ROTOR and ONNXGEN in the environment.
set -u
jobs=${CLI_JOBS:-2}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The longest scripts start first (measured on CI's 2 cores: cli_docs,
# cli_run and cli_compile in the plain build, cli_compile and cli_simulate
# under ASan), so that no long one starts last and runs alone at the end;
# the rest follow in the order given.
first="cli_docs.sh cli_run.sh cli_compile.sh cli_simulate.sh cli_schedule_sim.sh cli_onnx.sh"
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
    flock "$RUNCLI_DIR/lock" sh -c "echo \"ROTOR=\$ROTOR sh $2\"; cat \"$RUNCLI_DIR/$1.log\"; \
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
