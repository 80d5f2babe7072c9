/* criterion_lsan.c — LeakSanitizer checks each test's process, not
 * Criterion's runner.
 *
 * Under `make SAN=1 test` LeakSanitizer checks every process when it exits.
 * Criterion's runner keeps a few allocations of its own to the end (288
 * bytes in 6 callocs of libcriterion's), which it would report.  They were
 * once suppressed by module (`leak:libcriterion.so`), but a suppression
 * matches any frame of an allocation's stack, and every test runs below
 * libcriterion's frames: it hid every leak of every test.
 *
 * LeakSanitizer asks __lsan_is_turned_off() before it checks a process.
 * The runner runs no test (criterion_current_test is NULL there), and none
 * of rotor's code: its check is turned off.  A test's process has its test
 * set from the start of the test to its exit, and is checked.  Without the
 * sanitizer the function is never called.  A report fails the run through
 * tests/sanreport.sh. */
#include <criterion/criterion.h>

int __lsan_is_turned_off(void);

int __lsan_is_turned_off(void) {
    return criterion_current_test == NULL;
}
