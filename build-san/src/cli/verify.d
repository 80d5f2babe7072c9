build-san/src/cli/verify.o: src/cli/verify.c src/cli/cli.h \
 include/rotor/chip.h include/rotor/error.h include/rotor/cost.h \
 include/rotor/expr.h include/rotor/plan.h include/rotor/emu.h \
 include/rotor/place.h include/rotor/planfile.h include/rotor/search.h \
 include/rotor/sample.h
src/cli/cli.h:
include/rotor/chip.h:
include/rotor/error.h:
include/rotor/cost.h:
include/rotor/expr.h:
include/rotor/plan.h:
include/rotor/emu.h:
include/rotor/place.h:
include/rotor/planfile.h:
include/rotor/search.h:
include/rotor/sample.h:
