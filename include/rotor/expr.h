/* rotor — tensor expressions in T10's notation (T10 §4.2, "Operator representation").
 *
 *   C[m,n] += A[m,k] * B[k,n]
 *   O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]
 *   Y[s,d] = X[s,d] + Z[s,d]          Y[s] += X[s,d]
 *
 * An expression is a value: rotor_expr_parse() checks the text and
 * rotor_expr_bind() the extents; a bound rotor_expr is plannable and nothing
 * downstream re-checks it.  It lives in a fixed-size struct (no heap). */
#ifndef ROTOR_EXPR_H
#define ROTOR_EXPR_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/error.h"

#define ROTOR_MAX_AXES 10     /* distinct axes in one expression */
#define ROTOR_MAX_TENSORS 5   /* the output and up to four inputs */
#define ROTOR_MAX_DIMS 8      /* dimensions of one tensor */
#define ROTOR_NAME_MAX 32     /* tensor and axis names, including the NUL */
#define ROTOR_EXPR_TEXT_MAX 512
#define ROTOR_EXTENT_MAX ((int64_t)1 << 32) /* largest extent --dims accepts */

/* One dimension of a tensor: a plain axis (nterms == 1, coef 1) or a compound
 * axis such as `h+kh` or `2*h+kh` (nterms == 2: a strided window). */
typedef struct rotor_dim {
    int nterms;
    int axis[2];
    int64_t coef[2];
} rotor_dim;

typedef struct rotor_tensor {
    char name[ROTOR_NAME_MAX];
    int ndims;
    rotor_dim dims[ROTOR_MAX_DIMS];
    bool has_axis[ROTOR_MAX_AXES]; /* the axis appears in some dimension */
} rotor_tensor;

typedef enum rotor_op_class {
    ROTOR_OP_CONTRACTION, /* Y += X1 * X2: the matrix class of cost-model v1 */
    ROTOR_OP_ELEMENTWISE, /* Y = f(X1, ...): every input axis is in Y */
    ROTOR_OP_REDUCTION    /* Y += f(X1, ...) with axes not in Y, not a product */
} rotor_op_class;

typedef struct rotor_expr {
    char text[ROTOR_EXPR_TEXT_MAX];
    int naxes;
    char axis_name[ROTOR_MAX_AXES][ROTOR_NAME_MAX];
    int axis_column[ROTOR_MAX_AXES]; /* 1-based column of the axis's first use */
    int64_t extent[ROTOR_MAX_AXES];  /* E_a; 0 until bound */
    int ntensors;                    /* tensors[0] is the output */
    rotor_tensor tensors[ROTOR_MAX_TENSORS];
    bool accumulate;                 /* "+=" rather than "=" */
    rotor_op_class op_class;
    int64_t flops_per_point;         /* per point of the iteration space */
    bool bound;
} rotor_expr;

/* Parses text.  Errors name the 1-based column: "column 7: expected ']'". */
rotor_status rotor_expr_parse(const char *text, rotor_expr *out, rotor_error *err);

/* Binds extents from "m=32,k=5120,n=15360".  Every axis needs one; unknown
 * axes, zero, negative or absurd extents (> ROTOR_EXTENT_MAX), and tensors
 * whose element count overflows int64 are refused. */
rotor_status rotor_expr_bind(rotor_expr *e, const char *dims, rotor_error *err);

/* Parse and bind in one call. */
rotor_status rotor_expr_make(const char *text, const char *dims, rotor_expr *out,
                             rotor_error *err);

/* Index of the axis named name, or -1. */
int rotor_expr_axis(const rotor_expr *e, const char *name);

/* Axis a is reduced: it appears in an input but not in the output. */
bool rotor_expr_is_reduction_axis(const rotor_expr *e, int a);

/* Total useful FLOPs of the operator (flops_per_point * prod E_a), as a double. */
double rotor_expr_flops(const rotor_expr *e);

/* Writes the dims string back ("m=32,k=5120,n=15360") in axis order. */
void rotor_expr_dims_string(const rotor_expr *e, char *buf, int cap);

#endif
