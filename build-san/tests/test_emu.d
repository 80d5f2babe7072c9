build-san/tests/test_emu.o: tests/test_emu.c include/rotor/cost.h \
 include/rotor/chip.h include/rotor/error.h include/rotor/expr.h \
 include/rotor/plan.h include/rotor/emu.h include/rotor/place.h \
 include/rotor/sample.h
include/rotor/cost.h:
include/rotor/chip.h:
include/rotor/error.h:
include/rotor/expr.h:
include/rotor/plan.h:
include/rotor/emu.h:
include/rotor/place.h:
include/rotor/sample.h:
