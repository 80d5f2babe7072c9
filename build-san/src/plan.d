build-san/src/plan.o: src/plan.c include/rotor/plan.h \
 include/rotor/chip.h include/rotor/error.h include/rotor/expr.h
include/rotor/plan.h:
include/rotor/chip.h:
include/rotor/error.h:
include/rotor/expr.h:
