/* trainint.h — what the training pass's files share (private): the
 * derivative of an expression's right-hand side (traindiff.c). */
#ifndef ROTOR_MODEL_TRAININT_H
#define ROTOR_MODEL_TRAININT_H

#include <stddef.h>

#include "rotor/base/error.h"
#include "rotor/op/expr.h"

/* d rhs / d tensor t of bound e as text over the forward tensors, tensor k
 * printed "T<k>[...]" with e's indices, its j-th occurrence (j >= 1) named
 * by train_occurrence_name; occ[k] (ROTOR_MAX_TENSORS entries) gets how
 * many times each is read.  *kind: 0 when the derivative is 0, 1 when it
 * is 1 (out empty), 2 text.  A function without a derivative is
 * ROTOR_ERR_INPUT naming it. */
rotor_status train_diff(const rotor_expr *e, int t, char *out, size_t cap, int *occ, int *kind, rotor_error *err);

/* "T<t>" for occurrence k = 0, "T<t>x<k+1>" after. */
void train_occurrence_name(int t, int k, char *out, size_t cap);

/* Tensor t of e as NAME[i,h+r,...], its indices spelled as in e. */
void train_tensor_ref(const rotor_expr *e, int t, const char *name, char *out, size_t cap);

#endif
