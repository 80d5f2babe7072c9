build-san/src/place.o: src/place.c include/rotor/place.h \
 include/rotor/error.h include/rotor/expr.h include/rotor/plan.h \
 include/rotor/chip.h
include/rotor/place.h:
include/rotor/error.h:
include/rotor/expr.h:
include/rotor/plan.h:
include/rotor/chip.h:
