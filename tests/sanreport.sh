#!/bin/sh
# sanreport.sh RC PREFIX: after a run under the sanitizers (make SAN=1
# test), prints every report a process wrote to PREFIX.PID and exits RC, or
# 1 when RC is 0 and a report was written.
#
# Why the reports go to files and are checked here: LeakSanitizer reports a
# process's leaks when it exits.  A Criterion test's process exits after it
# has sent its result, and Criterion 2.4 ignores the exit status of a test
# that has finished, so a test that leaks is counted as passing and its
# report is only text on stderr.  A CLI script sees rotor's exit status, but
# not every script checks it where the output is all it looks at.  The
# Makefile gives every process of the run LSAN_OPTIONS=log_path=PREFIX (the
# path takes ASan's and UBSan's reports too), and this script turns any
# report into a failure.
rc=$1
prefix=$2
found=0
for f in "$prefix".*; do
    [ -e "$f" ] || continue
    found=$((found + 1))
    echo "sanitizer report $f:"
    cat "$f"
done
if [ "$found" -gt 0 ]; then
    echo "make SAN=1 test: $found sanitizer report(s) written (above): the run fails, whatever Criterion counted"
    [ "$rc" = 0 ] && rc=1
fi
exit "$rc"
