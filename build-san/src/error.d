build-san/src/error.o: src/error.c include/rotor/error.h
include/rotor/error.h:
