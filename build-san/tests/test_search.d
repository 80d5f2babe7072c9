build-san/tests/test_search.o: tests/test_search.c tests/brute.h \
 include/rotor/chip.h include/rotor/error.h include/rotor/expr.h \
 include/rotor/plan.h include/rotor/cost.h include/rotor/search.h
tests/brute.h:
include/rotor/chip.h:
include/rotor/error.h:
include/rotor/expr.h:
include/rotor/plan.h:
include/rotor/cost.h:
include/rotor/search.h:
