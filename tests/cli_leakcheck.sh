#!/bin/sh
# The sanitizer run fails on a leak (make SAN=1 test runs this script; why
# a leak needs tests/sanreport.sh and tests/criterion_lsan.c is said there).
# This runs the suite's test that leaks on purpose
# (tests/test_leakcheck.c) as the Makefile runs the suite, and checks that
# the run fails, naming the test, and that the runner reports nothing; and
# that the Makefile runs the suite and the CLI suites that way.
# Needs TESTS (the Makefile sets it); skipped, with one line, where the suite
# has no LeakSanitizer (the plain build, clang's SAN build).
. "$(dirname "$0")/lib.sh"

if ! nm "${TESTS:-}" 2>/dev/null | grep -q " __lsan_do_leak_check$"; then
    echo "cli_leakcheck: skipped: ${TESTS:-the suite} has no LeakSanitizer (make SAN=1 test runs it)"
    exit 0
fi
case ${ASAN_OPTIONS:-} in *detect_leaks=0*)
    echo "cli_leakcheck: skipped: ASAN_OPTIONS turns the leak check off ($ASAN_OPTIONS)"
    exit 0 ;;
esac

rep=$tmpdir/sanitizer
# leak_run [VAR=VALUE...]: the leaking test's suite run as the Makefile runs
# it, then tests/sanreport.sh, its output in $tmpdir/report, its status in rc
# (the suite's status is kept first: bash expands a command substitution on
# the same line before $?)
leak_run() {
    rm -f "$rep".*
    env "$@" LSAN_OPTIONS=log_path="$rep" "$TESTS" --filter 'leakcheck/*' >"$out" 2>"$err"
    st=$?
    sh "$(dirname "$0")/sanreport.sh" "$st" "$rep" >"$tmpdir/report" 2>&1
    rc=$?
}

leak_run ROTOR_TEST_LEAK=1
if grep -q "Tested: 1 " "$err" "$out"; then ok; else bad "criterion: the leaking test should have run: $(cat "$out" "$err")"; fi
if [ "$rc" -ne 0 ]; then ok; else bad "sanreport.sh: exit 0 after a leak"; fi
if grep -q "Direct leak of 77 byte(s)" "$tmpdir/report" &&
    grep -q "leakcheck_a_test_that_leaks_when_asked_fails_the_sanitizer_run_impl" "$tmpdir/report"; then ok
else bad "the report should name the leak and its test: $(cat "$tmpdir/report")"; fi
n=$(ls "$rep".* 2>/dev/null | wc -l)
if [ "$n" -eq 1 ]; then ok; else bad "$n report files, want 1 (the test's process; the runner reports nothing)"; fi

# the same test not asked to leak: skipped, no report, the run passes
leak_run
if [ "$rc" -eq 0 ] && ! ls "$rep".* >/dev/null 2>&1; then ok; else bad "no leak: exit $rc, reports: $(cat "$tmpdir/report")"; fi

# make SAN=1 test runs the suite and the CLI suites so: each with log_path,
# then sanreport.sh (what the checks above rely on)
MAKEFLAGS= make -n --no-print-directory SAN=1 test >"$tmpdir/recipe" 2>&1
n=$(grep -c "LSAN_OPTIONS=log_path=.*; sh tests/sanreport.sh " "$tmpdir/recipe")
if [ "$n" -eq 2 ]; then ok; else bad "make -n SAN=1 test: $n commands run with log_path and sanreport.sh, want 2 (the suite, the CLI suites): $(grep -E 'test_rotor|run-cli' "$tmpdir/recipe")"; fi

finish cli_leakcheck
