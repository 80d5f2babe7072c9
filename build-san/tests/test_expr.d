build-san/tests/test_expr.o: tests/test_expr.c include/rotor/expr.h \
 include/rotor/error.h
include/rotor/expr.h:
include/rotor/error.h:
