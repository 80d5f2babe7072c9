build-san/src/sample.o: src/sample.c include/rotor/sample.h \
 include/rotor/chip.h include/rotor/error.h include/rotor/expr.h \
 include/rotor/plan.h
include/rotor/sample.h:
include/rotor/chip.h:
include/rotor/error.h:
include/rotor/expr.h:
include/rotor/plan.h:
