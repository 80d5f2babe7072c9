/* simplifyint.h — the state rotor_simplify's passes share (simplify.c:
 * BatchNormalization folding and the rebuild; simplifyconst.c: constant
 * folding).  Private to the model stage. */
#ifndef ROTOR_SIMPLIFYINT_H
#define ROTOR_SIMPLIFYINT_H

#include "rotor/model/simplify.h"

#include <stdbool.h>

/* One BatchNormalization folded into contraction `conv`. */
typedef struct simp_bn {
    int conv;      /* the contraction */
    int bias_op;   /* its bias Add (the ONNX lowering's), or -1 */
    int bn;        /* the BatchNormalization */
    int conv_out;  /* the contraction's output value (kept) */
    int w;         /* the weight scaled per output channel */
    int s, b, b0;  /* the BN's scale and shift values, the old bias (-1: none) */
    int out;       /* the BN's output: the new bias Add's */
} simp_bn;

typedef struct simp {
    const rotor_graph *g;
    bool *drop_op;     /* op -> removed */
    bool *to_weight;   /* value -> a constant-folded output, now a weight */
    double **data;     /* value -> its new elements (owned), or NULL: its old ones */
    int *bn_of;        /* op -> index in bns when it is a folded contraction, else -1 */
    simp_bn *bns;
    int nbns;
    int *newv;         /* value -> index in the simplified graph, or -1 */
    rotor_simplify_stats st;
} simp;

/* The elements value v has in the simplified graph (new, old, or NULL). */
const double *rotor_simplify_data(const simp *s, int v);

/* Folds the operators that read only weights (simplifyconst.c): marks them
 * dropped and their outputs weights, with data when computable. */
rotor_status rotor_simplify_constants(simp *s, rotor_error *err);

#endif
