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

#include "rotor/base/error.h"

#define ROTOR_MAX_AXES 10     /* distinct axes in one expression */
#define ROTOR_MAX_TENSORS 5   /* the output and up to four inputs */
#define ROTOR_MAX_DIMS 8      /* dimensions of one tensor */
#define ROTOR_NAME_MAX 32     /* tensor and axis names, including the NUL */
#define ROTOR_EXPR_TEXT_MAX 512
#define ROTOR_EXTENT_MAX ((int64_t)1 << 32) /* largest extent --dims accepts */
#define ROTOR_MAX_NODES 96    /* nodes of the right-hand side program */

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

/* The right-hand side as a postfix program (evaluation order, no heap), so
 * that the emulator and the verifier can evaluate element-wise and reduction
 * operators point by point.  Planning never needs it: it only counts FLOPs. */
typedef enum rotor_node_op {
    ROTOR_NODE_NUM,    /* push value */
    ROTOR_NODE_TENSOR, /* push the element of tensors[arg] at the point */
    ROTOR_NODE_ADD,    /* pop b, pop a, push a + b (likewise SUB, MUL, DIV) */
    ROTOR_NODE_SUB,
    ROTOR_NODE_MUL,
    ROTOR_NODE_DIV,
    ROTOR_NODE_CALL    /* pop argc values, push fn(arg)(...); arg < 0: unknown */
} rotor_node_op;

/* The functions the evaluator knows (rotor_expr_function_name gives the
 * spelling; docs/emulator.md their definitions).  Others parse, because
 * planning only counts FLOPs, but cannot be evaluated. */
typedef enum rotor_fn {
    ROTOR_FN_EXP, ROTOR_FN_LOG, ROTOR_FN_SQRT, ROTOR_FN_RSQRT, ROTOR_FN_TANH, ROTOR_FN_ERF,
    ROTOR_FN_GELU, ROTOR_FN_RELU, ROTOR_FN_SIGMOID, ROTOR_FN_MAX, ROTOR_FN_MIN, ROTOR_FN_NEG,
    ROTOR_FN_RECIP, ROTOR_FN_ABS, ROTOR_FN_SQUARE,
    /* ONNX's other element-wise functions, evaluated in double; parameters
     * (an activation's alpha, ...) follow x as literal arguments */
    ROTOR_FN_POW, ROTOR_FN_FLOOR, ROTOR_FN_CEIL, ROTOR_FN_ROUND, ROTOR_FN_SIGN, ROTOR_FN_SIN, ROTOR_FN_COS,
    ROTOR_FN_TAN, ROTOR_FN_ASIN, ROTOR_FN_ACOS, ROTOR_FN_ATAN, ROTOR_FN_SINH, ROTOR_FN_COSH, ROTOR_FN_ASINH,
    ROTOR_FN_ACOSH, ROTOR_FN_ATANH, ROTOR_FN_SOFTPLUS, ROTOR_FN_SOFTSIGN, ROTOR_FN_ELU, ROTOR_FN_SELU,
    ROTOR_FN_LEAKYRELU, ROTOR_FN_THRESHOLDEDRELU, ROTOR_FN_HARDSIGMOID, ROTOR_FN_HARDSWISH, ROTOR_FN_MISH,
    ROTOR_FN_CELU, ROTOR_FN_SHRINK, ROTOR_FN_GELU_TANH, ROTOR_FN_PRELU,
    ROTOR_FN_COUNT
} rotor_fn;

typedef struct rotor_node {
    uint8_t op;      /* rotor_node_op */
    uint8_t argc;    /* CALL: number of arguments */
    int16_t arg;     /* TENSOR: tensor index; CALL: rotor_fn or -1 if unknown */
    int16_t col;     /* CALL: 1-based column of the function's name in text */
    int16_t len;     /* CALL: length of the name */
    double value;    /* NUM */
} rotor_node;

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
    int nnodes;                      /* right-hand side program; -1 if longer than
                                        ROTOR_MAX_NODES (it still plans) */
    rotor_node rhs[ROTOR_MAX_NODES];
    bool bound;
} rotor_expr;

/* Where an expression tensor's elements lie in the value it names: an
 * affine element view (docs/graph.md "Element views").  Without one (set
 * false) the tensor reads its value's elements in row-major order over its
 * own dimensions, which is what the value itself, a reshape and a dropped
 * extent-1 dimension mean.  With one, dimension d of the tensor at index i
 * (over its extent; a window's extent for a compound dimension) moves value
 * dimension dim[d] by step[d] * i, and value coordinate j is offset[j] plus
 * those moves.  A coordinate outside [0, shape[j]) reads 0: the padding of
 * a convolution window.  Slices (Slice's starts and steps) and padded or
 * strided windows carry one.  Planning never reads it; the hand-off
 * (op/handoff.h) and rotor run do.  unknown (with set false): the tensor
 * reads its value in an order the graph no longer records (grouping folded
 * a Transpose between them, or the view of a value it folded away). */
typedef struct rotor_view {
    bool set;
    bool unknown;
    int8_t dim[ROTOR_MAX_DIMS];
    int64_t step[ROTOR_MAX_DIMS];
    int64_t offset[ROTOR_MAX_DIMS];
} rotor_view;

/* Parses text.  Errors name the 1-based column: "column 7: expected ']'". */
rotor_status rotor_expr_parse(const char *text, rotor_expr *out, rotor_error *err);

/* Binds extents from "m=32,k=5120,n=15360".  Every axis needs one; unknown
 * axes, zero, negative or absurd extents (> ROTOR_EXTENT_MAX), and tensors
 * whose element count overflows int64 are refused. */
rotor_status rotor_expr_bind(rotor_expr *e, const char *dims, rotor_error *err);

/* out = bound e with axis a (0 <= a < naxes) at `extent`, the rest as e:
 * a structured copy, no text round trip.  An extent below 1 or above
 * ROTOR_EXTENT_MAX is refused as rotor_expr_bind refuses it. */
rotor_status rotor_expr_with_extent(const rotor_expr *e, int a, int64_t extent, rotor_expr *out,
                                    rotor_error *err);

/* Parse and bind in one call. */
rotor_status rotor_expr_make(const char *text, const char *dims, rotor_expr *out,
                             rotor_error *err);

/* Index of the axis named name, or -1. */
int rotor_expr_axis(const rotor_expr *e, const char *name);

/* Axis a is reduced: it appears in an input but not in the output. */
bool rotor_expr_is_reduction_axis(const rotor_expr *e, int a);

/* Total useful FLOPs of the operator (flops_per_point * prod E_a), as a double. */
double rotor_expr_flops(const rotor_expr *e);

/* Whether the right-hand side can be evaluated: every function known and
 * called with its arity, and the program short enough.  The error names the
 * function: "function 'softplus' (column 12) is not one the evaluator knows
 * (known: exp, log, ...)". */
rotor_status rotor_expr_check_eval(const rotor_expr *e, rotor_error *err);

/* Evaluates the right-hand side at one point; x[t] is the value of tensor t
 * (t >= 1; x[0] is ignored).  Only for expressions rotor_expr_check_eval
 * accepts.  The float version computes in single precision (the emulator's
 * kernels), the double one in double (the verifier's reference). */
double rotor_expr_eval(const rotor_expr *e, const double *x);
float rotor_expr_eval_f(const rotor_expr *e, const float *x);

/* Names of the known functions, indexed by rotor_fn. */
const char *rotor_expr_function_name(int fn);

/* Arity of a known function (1 or 2). */
int rotor_expr_function_arity(int fn);

/* Writes the dims string back ("m=32,k=5120,n=15360") in axis order. */
void rotor_expr_dims_string(const rotor_expr *e, char *buf, int cap);

#endif
