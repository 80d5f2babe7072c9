build-san/tests/test_plan.o: tests/test_plan.c tests/brute.h \
 include/rotor/chip.h include/rotor/error.h include/rotor/expr.h \
 include/rotor/plan.h
tests/brute.h:
include/rotor/chip.h:
include/rotor/error.h:
include/rotor/expr.h:
include/rotor/plan.h:
