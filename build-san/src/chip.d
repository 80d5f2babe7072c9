build-san/src/chip.o: src/chip.c include/rotor/chip.h \
 include/rotor/error.h
include/rotor/chip.h:
include/rotor/error.h:
