build-san/src/cli/plan.o: src/cli/plan.c src/cli/cli.h \
 include/rotor/chip.h include/rotor/error.h include/rotor/cost.h \
 include/rotor/expr.h include/rotor/plan.h include/rotor/planfile.h \
 include/rotor/search.h
src/cli/cli.h:
include/rotor/chip.h:
include/rotor/error.h:
include/rotor/cost.h:
include/rotor/expr.h:
include/rotor/plan.h:
include/rotor/planfile.h:
include/rotor/search.h:
