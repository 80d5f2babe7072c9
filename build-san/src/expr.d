build-san/src/expr.o: src/expr.c include/rotor/expr.h \
 include/rotor/error.h
include/rotor/expr.h:
include/rotor/error.h:
