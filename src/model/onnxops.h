/* onnxops.h — the ONNX operator registry (private to the model stage;
 * docs/onnx.md, "The operator registry").
 *
 * One row per operator: its name and domain, the opsets it covers, its shape
 * rule, its fold, its lowering and the run kernel of the vendor op it may
 * become.  Shape inference (onnxshape.c) binds each node to its row; the
 * fold and the lowering read the row through the node (ox_node.def), so no
 * other file lists operator names.  Adding an operator is one row in
 * onnxops.c and the functions it names. */
#ifndef ROTOR_MODEL_ONNXOPS_H
#define ROTOR_MODEL_ONNXOPS_H

#include "onnxir.h"

/* The last opset of a row that is still current. */
#define OX_OPSET_OPEN INT64_MAX

struct lower_ctx;

/* Infers node n's output shapes, and folds them when its inputs are constant. */
typedef rotor_status (*ox_infer_fn)(ox_model *m, ox_node *n, rotor_error *err);
/* Element-wise folds: one element of a unary op, or of a binary op applied
 * left to right over a variadic one's inputs (isint: integer operands). */
typedef double (*ox_fold1_fn)(double x);
typedef double (*ox_fold2_fn)(double a, double b, bool isint, const ox_node *n);
/* Lowers node n into operators (lowerint.h). */
typedef rotor_status (*ox_lower_fn)(struct lower_ctx *c, const ox_node *n);

enum {
    OX_RANDOM = 1 << 0,     /* a generator: never a constant, even with constant inputs */
    OX_ANY_OUTPUT = 1 << 1, /* the lowering takes an omitted or empty first output itself */
    /* a com.microsoft row that a node in the default domain may name too:
     * the operator is not an ONNX one at any opset, so the name has one
     * reading (MIGraphX's and some exporters' files put onnxruntime's
     * contrib operators there, and onnxruntime registers a few of its own,
     * SimplifiedLayerNormalization, in the ONNX domain).  Names ONNX
     * defines too (Gelu at opset 20, Attention and RotaryEmbedding at 23)
     * never carry it: there the default domain means ONNX's operator. */
    OX_ALSO_DEFAULT = 1 << 2
};

typedef struct ox_opdef {
    const char *name;       /* op_type, as ONNX spells it */
    const char *domain;     /* "ai.onnx" (the default domain) or "com.microsoft" */
    int64_t since, until;   /* the domain's opsets the row covers, inclusive */
    ox_infer_fn infer;      /* never NULL */
    ox_fold1_fn fold1;      /* the shape rule folds element by element with it, or NULL */
    ox_fold2_fn fold2;
    ox_lower_fn lower;      /* NULL: a vendor op (lw_vendor) */
    rotor_kernel kernel;    /* what runs the vendor op (rotor run), or ROTOR_KERNEL_NONE */
    unsigned flags;         /* OX_RANDOM, OX_ANY_OUTPUT, OX_ALSO_DEFAULT */
} ox_opdef;

/* The row of operator name in domain at opset, or NULL: rotor does not
 * import it.  In the default domain, a com.microsoft row flagged
 * OX_ALSO_DEFAULT answers when no ONNX row does. */
const ox_opdef *ox_op_find(const char *domain, const char *name, int64_t opset);

/* Node n checked against its operator's ONNX schema at the model's opset
 * (onnxschema.c; docs/onnx.md, "Validation"): its attributes, input and
 * output counts and input element types before its shape rule runs, its
 * output element types after.  Nodes bound to a com.microsoft row pass. */
rotor_status ox_schema_check(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_schema_check_outputs(ox_model *m, ox_node *n, rotor_error *err);
/* The opset at which the version of op in force at opset starts, or -1:
 * no ONNX schema (none yet at that opset, or no such ONNX operator). */
int ox_schema_since(const char *op, int64_t opset);

/* Every row, in table order (for the registry's tests). */
const ox_opdef *ox_op_rows(int *count);

#endif
