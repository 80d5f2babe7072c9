build-san/tests/test_cost.o: tests/test_cost.c tests/brute.h \
 include/rotor/chip.h include/rotor/error.h include/rotor/expr.h \
 include/rotor/plan.h include/rotor/cost.h
tests/brute.h:
include/rotor/chip.h:
include/rotor/error.h:
include/rotor/expr.h:
include/rotor/plan.h:
include/rotor/cost.h:
