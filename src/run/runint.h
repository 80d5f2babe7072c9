/* runint.h — what the run stage's files share (private): errors that name
 * the operator, "op 'n3' (MaxPool): ...". */
#ifndef ROTOR_RUN_RUNINT_H
#define ROTOR_RUN_RUNINT_H

#include <stdarg.h>

#include "rotor/base/error.h"
#include "rotor/model/graph.h"

rotor_status run_op_vfail(const rotor_graph *g, int o, rotor_error *err, rotor_status code, const char *fmt,
                          va_list ap) __attribute__((format(printf, 5, 0)));

/* Puts "op 'NAME' (TYPE): " before the message already in err. */
void run_op_prefix(const rotor_graph *g, int o, rotor_error *err);

#endif
