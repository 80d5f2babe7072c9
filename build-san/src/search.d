build-san/src/search.o: src/search.c include/rotor/search.h \
 include/rotor/cost.h include/rotor/chip.h include/rotor/error.h \
 include/rotor/expr.h include/rotor/plan.h
include/rotor/search.h:
include/rotor/cost.h:
include/rotor/chip.h:
include/rotor/error.h:
include/rotor/expr.h:
include/rotor/plan.h:
