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

/* The vendor kernels of onnxruntime's quantized operators (kernmsquant.c):
 * at[p] is the graph value at ONNX input position p (-1: absent, or kept as
 * the attribute "@p"), for p < RUN_MSQ_MAX_IN. */
#define RUN_MSQ_MAX_IN 64
rotor_status run_msquant_kernel(const rotor_graph *g, int op, rotor_kernel kind, const int *at, double *const *vals,
                                rotor_error *err);

#endif
