/* rotor — the gradient check (rotor run --train, docs/training.md): the
 * training graph's gradients (model/train.h) against central finite
 * differences of its loss, on real data.
 *
 * The analytic gradients come from one direct run of the training graph
 * (forward, loss, backward; no update); each sampled parameter entry w is
 * then moved to w +- h and w +- h/2 in the loss graph (forward and loss
 * only), and dL/dw is Richardson's extrapolation of the two central
 * differences.  Expression operators read float32 values and accumulate in
 * double (run.h), so each step is the difference of the two float32
 * values, not 2h.
 *
 * After an error, out is freed (nothing to free). */
#ifndef ROTOR_GRADCHECK_H
#define ROTOR_GRADCHECK_H

#include <stdint.h>

#include "rotor/base/error.h"
#include "rotor/model/graph.h"
#include "rotor/model/train.h"

/* The largest relative error a check passes at (issue 44's acceptance, in
 * float32): rotor run --train's PASS, and the entries measured again. */
#define ROTOR_GRADCHECK_LIMIT 1e-3

typedef struct rotor_gradcheck_options {
    int samples;     /* entries checked per parameter (evenly spread, all when fewer); 0: 8 */
    double step;     /* h; 0: 2e-2 */
    uint64_t seed;   /* the inputs' and targets' pseudo-random values */
    /* the analytic gradients times this before they are judged (0: 1): a
     * gradient known wrong, with which a test shows the check fails */
    double analytic_scale;
} rotor_gradcheck_options;

typedef struct rotor_gradcheck_param {
    char name[128];
    int64_t elements;
    int checked;
    int kinks;               /* entries skipped: w +- h crosses a kink of the loss */
    bool vanishing;          /* its gradient is 0 by symmetry (below 1e-6 of the model's largest) */
    bool zero_ok;            /* vanishing, and every finite difference below 1e-4 of the model's largest */
    double max_numeric;      /* the largest |finite difference| */
    double max_rel;          /* the largest relative error over its checked entries */
    double analytic, numeric; /* at that entry */
    int64_t worst;           /* that entry */
} rotor_gradcheck_param;

typedef struct rotor_gradcheck_result {
    double loss;
    int nparams;
    rotor_gradcheck_param *params;
    double max_rel;          /* over every parameter but the vanishing ones */
    int zero_bad;            /* vanishing parameters whose finite differences are not 0 */
    int evaluations;         /* loss-graph runs */
} rotor_gradcheck_result;

/* The relative error of analytic a against numeric n (docs/training.md):
 * |a - n| / max(|a|, |n|, floor), floor being the larger of 10 % of the
 * parameter's largest |analytic| entry and the float32 resolution of the
 * difference (gradcheck.c), so that an entry near 0 is judged by the
 * gradient's scale, not by its own float32 noise. */
double rotor_gradcheck_rel(double a, double n, double floor);

/* Checks forward graph g (its weights' data kept): builds the training
 * and loss graphs, fills every input g reads and each target with
 * pseudo-random values from seed (floats uniform in [-1, 1), integers 0),
 * or inputs[v] where the caller gives one (indexed by g's values; may be NULL). */
rotor_status rotor_gradcheck(const rotor_graph *g, const double *const *inputs, const rotor_gradcheck_options *opt,
                             rotor_gradcheck_result *out, rotor_error *err);
void rotor_gradcheck_result_free(rotor_gradcheck_result *r);

#endif
