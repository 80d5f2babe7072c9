build-san/src/planfile.o: src/planfile.c include/rotor/planfile.h \
 include/rotor/chip.h include/rotor/error.h include/rotor/expr.h \
 include/rotor/search.h include/rotor/cost.h include/rotor/plan.h
include/rotor/planfile.h:
include/rotor/chip.h:
include/rotor/error.h:
include/rotor/expr.h:
include/rotor/search.h:
include/rotor/cost.h:
include/rotor/plan.h:
