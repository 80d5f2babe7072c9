#!/bin/sh
# CLI tests of `rotor explore` under mpirun (docs/explore.md, "Several
# machines"): two processes on this machine split a grid, and rank 0 writes
# the same bytes as one process (the CSV, every heat map, the table); the
# same with --resume; a bad argument is one line from rank 0, --help one text.  Without
# mpirun, or with a rotor built without MPI, it checks what it can and says
# in one line what it skipped.  Run by `make test` as
# `ROTOR=build/rotor sh tests/cli_explore_mpi.sh`.
. "$(dirname "$0")/lib.sh"
M="llama2-13b --layers 2"
G="--sweep hbm-bw=2,8 --sweep noc-bw=2,5.5 --sweep cores=736,1472 --design full,ideal"
if ! command -v mpirun >/dev/null 2>&1; then
    echo "cli_explore_mpi: skipped: mpirun is not installed (apt-get install openmpi-bin libopenmpi-dev, then rebuild)"
    exit 0
fi
case "$ROTOR" in */san/*)
    echo "cli_explore_mpi: skipped under the sanitizers (OpenMPI's own allocations are not rotor's to check)"
    exit 0 ;;
esac
# OpenMPI refuses root without these; --oversubscribe: 2 ranks on a smaller machine
mpi() { mpirun -n 2 --oversubscribe --allow-run-as-root "$@"; }

mpi "$ROTOR" explore $M --sweep hbm-bw=2 -o "$tmpdir/p" >"$out" 2>"$err"
if grep -q "built without MPI" "$err"; then
    # the build has no MPI: one line, from rank 0 alone, on how to build it
    # (mpirun adds its own note that a process failed)
    if [ "$(grep -c '^rotor' "$err")" -eq 1 ] && grep -q "apt-get install -y libopenmpi-dev openmpi-bin) and run make again" "$err" && \
       [ ! -s "$out" ]; then ok; else bad "no-MPI message: $(cat "$err")"; fi
    echo "cli_explore_mpi: rotor is built without MPI: only its message was checked"
    finish cli_explore_mpi
    exit $?
fi

# one process, then two: the same files and table
"$ROTOR" explore $M $G -o "$tmpdir/one" >"$tmpdir/one.txt" 2>"$err" || bad "one process: $(cat "$err")"
mpi "$ROTOR" explore $M $G -o "$tmpdir/two" --threads 1 >"$tmpdir/two.txt" 2>"$err" || bad "mpirun -n 2: $(cat "$err")"
same=0
for f in hbm-bw-noc-bw-cores.csv hbm-bw-noc-bw.svg hbm-bw-cores.svg noc-bw-cores.svg; do
    cmp -s "$tmpdir/one-$f" "$tmpdir/two-$f" && same=$((same + 1))
done
if [ "$same" = 4 ]; then ok; else bad "mpirun -n 2: $same of 4 files as one process's"; fi
if [ "$(sed 's/two-/one-/g' "$tmpdir/two.txt")" = "$(cat "$tmpdir/one.txt")" ]; then ok; else bad "mpirun -n 2: another table"; fi
if [ "$(wc -l <"$tmpdir/one-hbm-bw-noc-bw-cores.csv")" -eq 17 ]; then ok; else bad "one process: not 8 points x 2 designs"; fi

# --resume under mpirun: rank 0 reads the file, the ranks share what is left
head -n 5 "$tmpdir/one-hbm-bw-noc-bw-cores.csv" >"$tmpdir/part.csv"
cp "$tmpdir/one-hbm-bw-noc-bw-cores.csv.run" "$tmpdir/part.csv.run" # its run record (docs/explore.md, "Resuming")
mpi "$ROTOR" explore $M $G -o "$tmpdir/res" --resume "$tmpdir/part.csv" >/dev/null 2>"$err" || bad "resume: $(cat "$err")"
if cmp -s "$tmpdir/one-hbm-bw-noc-bw-cores.csv" "$tmpdir/res-hbm-bw-noc-bw-cores.csv"; then ok
else bad "mpirun -n 2 --resume: another CSV"; fi
# a resume with other options: rank 0's one line, and no rank runs a point
mpi "$ROTOR" explore $M $G --set mac_pj=2 -o "$tmpdir/res2" --resume "$tmpdir/part.csv" >"$out" 2>"$err"
rc=$?
if [ "$rc" -ne 0 ] && [ "$(grep -c "rotor explore: --resume $tmpdir/part.csv: it was run without --set, this run has --set mac_pj=2" "$err")" = 1 ] && \
   [ ! -s "$out" ] && [ ! -e "$tmpdir/res2-hbm-bw-noc-bw-cores.csv" ]; then ok
else bad "resume with other options under mpirun: exit $rc, $(cat "$err")"; fi

# a bad argument: one line (rank 0's), exit 2
mpi "$ROTOR" explore $M --sweep hbm-bw=2,2 -o "$tmpdir/bad" >"$out" 2>"$err"
rc=$?
if [ "$rc" -ne 0 ] && [ "$(grep -c "rotor explore: --sweep hbm-bw=2,2: 2 listed twice" "$err")" = 1 ] && [ ! -s "$out" ]; then ok
else bad "bad argument under mpirun: exit $rc, $(cat "$err")"; fi
# --help once, from rank 0
n=$(mpi "$ROTOR" explore --help 2>/dev/null | grep -c "usage: rotor explore")
if [ "$n" = 1 ]; then ok; else bad "--help under mpirun: $n copies"; fi
finish cli_explore_mpi
