build-san/src/cli/main.o: src/cli/main.c src/cli/cli.h \
 include/rotor/chip.h include/rotor/error.h
src/cli/cli.h:
include/rotor/chip.h:
include/rotor/error.h:
