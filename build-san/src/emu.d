build-san/src/emu.o: src/emu.c include/rotor/emu.h include/rotor/chip.h \
 include/rotor/error.h include/rotor/expr.h include/rotor/place.h \
 include/rotor/plan.h
include/rotor/emu.h:
include/rotor/chip.h:
include/rotor/error.h:
include/rotor/expr.h:
include/rotor/place.h:
include/rotor/plan.h:
