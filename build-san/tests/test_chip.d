build-san/tests/test_chip.o: tests/test_chip.c include/rotor/chip.h \
 include/rotor/error.h
include/rotor/chip.h:
include/rotor/error.h:
