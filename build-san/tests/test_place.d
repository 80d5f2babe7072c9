build-san/tests/test_place.o: tests/test_place.c include/rotor/place.h \
 include/rotor/error.h include/rotor/expr.h include/rotor/plan.h \
 include/rotor/chip.h include/rotor/sample.h
include/rotor/place.h:
include/rotor/error.h:
include/rotor/expr.h:
include/rotor/plan.h:
include/rotor/chip.h:
include/rotor/sample.h:
