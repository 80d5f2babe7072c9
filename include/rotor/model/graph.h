/* rotor — the model graph: a DAG of operators, each with its tensor expression
 * (T10 §4.2), the shapes and dtypes of its tensors, FLOPs and bytes.
 *
 * The graph is the one object that planning, scheduling and simulation read.
 * It is built by the ONNX importer (onnx.h) or a zoo builder (zoo.h) through
 * rotor_graph_add_value and rotor_graph_add_op, which validate everything:
 * values exist, every operator's inputs are produced before it (so the op
 * array is always in topological order), each expression parses, binds and
 * matches the shapes of the values it names.  A graph that exists is valid.
 *
 * Each value has a role (docs/graph.md):
 *   weight      resident parameters (loaded from HBM in the Elk setting);
 *   activation  produced on chip by an operator, or a model input;
 *   kv-cache    attention keys/values read on every decode step. */
#ifndef ROTOR_GRAPH_H
#define ROTOR_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/error.h"
#include "rotor/op/expr.h"

#define ROTOR_GRAPH_MAX_RANK 8   /* dimensions of one graph tensor */
/* a rotor_view (op/expr.h) offsets every value dimension */
_Static_assert(ROTOR_GRAPH_MAX_RANK <= ROTOR_MAX_DIMS, "a view's offsets cover a value's rank");
#define ROTOR_OP_TYPE_MAX 48     /* "MatMul", ...; "SkipSimplifiedLayerNormalization" is 32 */
#define ROTOR_FUSED_MAX 96       /* "Add+Relu" epilogue list after grouping */

typedef enum rotor_dtype {
    ROTOR_DTYPE_F32 = 0,
    ROTOR_DTYPE_F16,
    ROTOR_DTYPE_BF16,
    ROTOR_DTYPE_F64,
    ROTOR_DTYPE_F8,
    ROTOR_DTYPE_I8,
    ROTOR_DTYPE_U8,
    ROTOR_DTYPE_I16,
    ROTOR_DTYPE_U16,
    ROTOR_DTYPE_I32,
    ROTOR_DTYPE_U32,
    ROTOR_DTYPE_I64,
    ROTOR_DTYPE_U64,
    ROTOR_DTYPE_BOOL,
    ROTOR_DTYPE_C64,
    ROTOR_DTYPE_C128,
    ROTOR_DTYPE_I4,  /* ONNX INT4 (22): two per byte, see rotor_dtype_storage */
    ROTOR_DTYPE_U4,  /* ONNX UINT4 (21) */
    ROTOR_DTYPE_COUNT
} rotor_dtype;

int64_t rotor_dtype_bytes(rotor_dtype t);   /* 4 for f32, 1 for bool, ... (1 for i4: one alone takes a byte) */
/* The bytes `elements` elements of type t occupy: elements x rotor_dtype_bytes,
 * but ceil(elements / 2) for i4 and u4, packed two per byte as ONNX stores
 * them; false when the count overflows int64. */
bool rotor_dtype_storage(rotor_dtype t, int64_t elements, int64_t *bytes);
const char *rotor_dtype_name(rotor_dtype t); /* "f32", "f16", "i64", ... */

typedef enum rotor_role {
    ROTOR_ROLE_ACTIVATION = 0,
    ROTOR_ROLE_WEIGHT,
    ROTOR_ROLE_KV_CACHE
} rotor_role;

const char *rotor_role_name(rotor_role r); /* "activation", "weight", "kv-cache" */

typedef struct rotor_value {
    char *name;
    int rank;                              /* 0 for a scalar */
    int64_t shape[ROTOR_GRAPH_MAX_RANK];
    int64_t elements;                      /* prod shape (1 for a scalar) */
    int64_t bytes;                         /* elements * dtype bytes */
    rotor_dtype dtype;
    rotor_role role;
    int producer;                          /* op index; -1 for inputs and weights */
    int consumers;                         /* ops that read it */
    bool is_output;                        /* a model output */
    bool alias_only;                       /* an output only through output aliases: its own
                                            * name is not a model output (rotor_graph_outputs) */
    /* The value's elements, row-major, when the importer was asked to keep
     * them (rotor_onnx_options.keep_data: initializers and folded
     * constants); NULL otherwise.  Owned by the graph (rotor_graph_set_data). */
    double *data;
} rotor_value;


/* One attribute of a vendor op, as the file gave it (ints, floats or a
 * string), so that a reference kernel can run it.  Constant parameter
 * inputs the lowering drops (axes, pads, shapes) are kept as attributes
 * named "@K" for ONNX input K; "@in" lists the ONNX input position of each
 * graph input. */
typedef struct rotor_attr {
    char *name;
    int nints;
    int64_t *ints;
    int nfloats;
    double *floats;
    char *str;                             /* NULL unless a string */
} rotor_attr;

/* The reference kernel that runs a vendor op (src/run/kernels.c, rotor run):
 * the ONNX importer's operator registry (src/model/onnxops.c) names one per
 * operator and the lowering stores it on the vendor op it makes, so the run
 * stage dispatches by this kind, not by the type string.  A kind is one
 * operator semantics; a kernel function may serve several (the Reduce
 * family reads its reduction from the kind). */
typedef enum rotor_kernel {
    ROTOR_KERNEL_NONE = 0, /* no reference kernel (or not known at build time) */
    ROTOR_KERNEL_IDENTITY,
    ROTOR_KERNEL_DROPOUT,
    ROTOR_KERNEL_EXPAND,
    ROTOR_KERNEL_CONCAT,
    ROTOR_KERNEL_SPLIT,
    ROTOR_KERNEL_GATHER,
    ROTOR_KERNEL_GATHER_ELEMENTS,
    ROTOR_KERNEL_TILE,
    ROTOR_KERNEL_PAD,
    ROTOR_KERNEL_REDUCE_MAX,
    ROTOR_KERNEL_REDUCE_MIN,
    ROTOR_KERNEL_REDUCE_SUM,
    ROTOR_KERNEL_REDUCE_MEAN,
    ROTOR_KERNEL_REDUCE_PROD,
    ROTOR_KERNEL_REDUCE_L1,
    ROTOR_KERNEL_REDUCE_L2,
    ROTOR_KERNEL_REDUCE_SUM_SQUARE,
    ROTOR_KERNEL_REDUCE_LOG_SUM,
    ROTOR_KERNEL_REDUCE_LOG_SUM_EXP,
    ROTOR_KERNEL_ARGMAX,
    ROTOR_KERNEL_ARGMIN,
    ROTOR_KERNEL_MAXPOOL,
    ROTOR_KERNEL_GLOBAL_MAXPOOL,
    ROTOR_KERNEL_AVERAGEPOOL,
    ROTOR_KERNEL_LAYERNORM,
    ROTOR_KERNEL_INSTANCENORM,
    ROTOR_KERNEL_TRILU,
    ROTOR_KERNEL_CUMSUM,
    ROTOR_KERNEL_DEPTH_TO_SPACE,
    ROTOR_KERNEL_SPACE_TO_DEPTH,
    ROTOR_KERNEL_NLL_LOSS,
    ROTOR_KERNEL_SCE_LOSS,
    ROTOR_KERNEL_CONV_TRANSPOSE,
    ROTOR_KERNEL_MATMUL_INTEGER_TO_FLOAT, /* com.microsoft quantized operators (src/run/kernmsquant.c) */
    ROTOR_KERNEL_MATMUL_NBITS,
    ROTOR_KERNEL_MATMUL_BNB4,
    ROTOR_KERNEL_QLINEAR_ADD,
    ROTOR_KERNEL_QLINEAR_MUL,
    ROTOR_KERNEL_QLINEAR_SIGMOID,
    ROTOR_KERNEL_QLINEAR_LEAKY_RELU,
    ROTOR_KERNEL_QLINEAR_AVERAGEPOOL,
    ROTOR_KERNEL_QLINEAR_GLOBAL_AVERAGEPOOL,
    ROTOR_KERNEL_QLINEAR_CONCAT,
    ROTOR_KERNEL_QUANTIZE,
    ROTOR_KERNEL_DEQUANTIZE,
    ROTOR_KERNEL_DYNAMIC_QUANTIZE,
    /* The backward pass's vendor ops (model/train.h; src/run/kerntrain.c),
     * which no ONNX operator names: from ROTOR_KERNEL_TRAIN_FIRST on. */
    ROTOR_KERNEL_VIEW_GRAD,    /* the adjoint of an element view or window */
    ROTOR_KERNEL_GATHER_GRAD,  /* an embedding's rows: dY added into the rows read */
    ROTOR_KERNEL_MAXPOOL_GRAD, /* dY to each window's first maximum */
    ROTOR_KERNEL_BROADCAST,    /* a value copied along the axes it lacks */
    ROTOR_KERNEL_COUNT
} rotor_kernel;

#define ROTOR_KERNEL_TRAIN_FIRST ROTOR_KERNEL_VIEW_GRAD

typedef struct rotor_op {
    char *name;
    char type[ROTOR_OP_TYPE_MAX];          /* ONNX spelling: "MatMul", "Conv", ... */
    /* A vendor op has no tensor expression: T10 §4.2 runs operators outside
     * tensor expressions from the vendor library.  rotor costs it as one
     * vector-rate FLOP per element read or written (docs/graph.md); a
     * Gather (GatherElements, GatherND) reads from its data input only the
     * elements it writes, not the whole table. */
    bool vendor;
    /* Vendor ops the ONNX lowering made: the reference kernel that runs it;
     * ROTOR_KERNEL_NONE otherwise (rotor run then looks the type up). */
    rotor_kernel kernel;
    rotor_expr expr;                       /* bound; unused when vendor */
    /* expr tensor t names graph value tensor_value[t] (-1: a tensor of the
     * expression that is not a graph value, e.g. a folded constant). */
    int tensor_value[ROTOR_MAX_TENSORS];
    int ninputs, noutputs;
    int *inputs;                           /* value indices, ONNX input order */
    int *outputs;
    double flops;                          /* expression FLOPs, or the vendor rule */
    int64_t bytes;                         /* bytes of every input and output */
    int64_t weight_bytes;                  /* bytes of the inputs that are weights */
    char fused[ROTOR_FUSED_MAX];           /* epilogues grouped in ("Add+Relu"), or "" */
    int nfused;                            /* operators folded into this one */
    rotor_view view[ROTOR_MAX_TENSORS];    /* per expression tensor; see rotor_view */
    /* Vendor ops: the node's attributes (rotor_graph_add_attr).  Any op:
     * "rotor.approximate" (a string) says why the expression is the
     * operator's cost but not its exact value, so rotor run refuses it. */
    int nattrs;
    rotor_attr *attrs;
} rotor_op;

/* A model output known by a name that is not its value's: an ONNX graph
 * output that an Identity or an inference-mode Dropout forwards (the
 * importer folds them, so the output is the value they forward, which may
 * be a graph input or a weight; docs/graph.md, "Output aliases"). */
typedef struct rotor_output_alias {
    char *name;
    int value;                             /* the value it stands for, an output */
} rotor_output_alias;

typedef struct rotor_graph {
    char name[64];
    int nvalues, values_cap;
    rotor_value *values;
    int naliases, aliases_cap;             /* owned by graph.c */
    rotor_output_alias *aliases;
    int nops, ops_cap;
    rotor_op *ops;
    /* Open-addressing index of value names (value index + 1; 0 is empty),
     * so that rotor_graph_find_value and the duplicate check are O(1) and a
     * 3000-operator LLM builds in milliseconds.  Owned by graph.c. */
    int *index;
    int index_cap;
} rotor_graph;

/* Totals over the graph.  Weights are counted once per value however many
 * operators read them (tied embeddings count once). */
typedef struct rotor_graph_totals {
    int ops;
    int vendor_ops;
    double flops;
    int64_t weight_params;     /* elements of the weights that operators read */
    int64_t weight_bytes;
    int64_t kv_bytes;          /* bytes of kv-cache values */
    int64_t activation_bytes;  /* bytes of every activation value */
} rotor_graph_totals;

/* An empty graph named name (truncated to 63 characters). */
void rotor_graph_init(rotor_graph *g, const char *name);
void rotor_graph_free(rotor_graph *g);

/* Adds a value.  rank 0..ROTOR_GRAPH_MAX_RANK, every extent >= 1, element and
 * byte counts must fit int64; names are unique.  *out gets its index. */
rotor_status rotor_graph_add_value(rotor_graph *g, const char *name, rotor_dtype dtype, int rank,
                                   const int64_t *shape, rotor_role role, int *out,
                                   rotor_error *err);

/* Index of the value called name, or -1. */
int rotor_graph_find_value(const rotor_graph *g, const char *name);

/* The description of one operator for rotor_graph_add_op. */
typedef struct rotor_op_desc {
    const char *name;
    const char *type;
    const char *expr;   /* T10 text, or NULL for a vendor op */
    const char *dims;   /* extents for expr ("m=32,k=64,n=16") */
    /* expr tensor t is value tensor_value[t]; -1 leaves it unnamed.  When a
     * value is named, its element count must equal the expression tensor's
     * (the expression may fold size-1 or merged dimensions). */
    int tensor_value[ROTOR_MAX_TENSORS];
    const int *inputs;
    int ninputs;
    const int *outputs;
    int noutputs;
    const rotor_view *view;  /* NULL, or ROTOR_MAX_TENSORS entries: each tensor's view */
} rotor_op_desc;

/* Appends an operator.  Inputs must exist and, if produced, be produced by an
 * earlier operator; outputs must not be produced yet nor read by an earlier
 * operator, and must not be weights.  The expression must parse and bind; a
 * named expression tensor must be one of the op's inputs (t >= 1) or outputs
 * (t = 0) and match its element count: equal for an output, at most the
 * value's for an input (a slice) and for a kv-cache output (the positions
 * one decode step writes).  Errors name the operator:
 * "op 'attn.qk' (MatMul): ...". */
rotor_status rotor_graph_add_op(rotor_graph *g, const rotor_op_desc *d, int *out, rotor_error *err);

/* rotor_graph_add_op with the expression already bound, e.g. an operator's
 * own from another graph (a pass such as rotor_group copying it): expr is
 * copied as it is, not printed and re-parsed, and d->expr and d->dims are
 * ignored; NULL makes a vendor op.  Every other check and count is
 * rotor_graph_add_op's; expr must be bound with extents rotor_expr_bind
 * accepts. */
rotor_status rotor_graph_add_bound_op(rotor_graph *g, const rotor_op_desc *d, const rotor_expr *expr, int *out,
                                      rotor_error *err);

void rotor_graph_totals_of(const rotor_graph *g, rotor_graph_totals *out);

/* Operators of type type. */
int rotor_graph_count_type(const rotor_graph *g, const char *type);

/* Histogram of operator types, sorted by count descending then name:
 * "MatMul 6, Add 5, ...".  malloc'd, caller frees; NULL when out of memory. */
char *rotor_graph_histogram(const rotor_graph *g);

/* The graph as JSON (format "rotor-graph", version 1, docs/graph.md).  Stable:
 * the same graph gives byte-identical text.  malloc'd, NULL when out of memory. */
char *rotor_graph_to_json(const rotor_graph *g);

/* Shape as "1x128x768" ("scalar" for rank 0). */
void rotor_graph_shape_string(const rotor_value *v, char *buf, int cap);
/* The same for a rank and extents (a tensor file's, rotor run). */
void rotor_shape_string(int rank, const int64_t *shape, char *buf, int cap);

/* Gives value v its elements (v's element count of them, copied). */
rotor_status rotor_graph_set_data(rotor_graph *g, int v, const double *data, rotor_error *err);

/* Adds an attribute to operator op (ints, floats and str copied; str NULL
 * for none). */
rotor_status rotor_graph_add_attr(rotor_graph *g, int op, const char *name, const int64_t *ints, int nints,
                                  const double *floats, int nfloats, const char *str, rotor_error *err);

/* The elements operator op reads of its input k: the whole value, but for
 * a gather (Gather, GatherElements, GatherND) of its data input (k = 0) only
 * as many as it writes: an embedding lookup reads its rows, not the table.
 * The one owner of that rule (vendor FLOPs, GraphTurbo's weight traffic). */
int64_t rotor_op_read_elements(const rotor_graph *g, int op, int k);
bool rotor_op_type_is_gather(const char *type);

/* Operator op's attribute called name, or NULL. */
const rotor_attr *rotor_op_attr(const rotor_op *op, const char *name);

/* The graph value op reads at ONNX input position pos: "@in" maps the
 * positions of an operator whose constants the lowering kept as
 * attributes ("@<pos>"); -1 when absent or such a constant. */
int rotor_op_input_at(const rotor_op *op, int pos);

/* Marks value v as a model output (kept by passes, written by the model). */
rotor_status rotor_graph_set_output(rotor_graph *g, int v, rotor_error *err);
/* Marks value v as a model output, known also as name (an output alias):
 * name must be no value's and no other alias's. */
rotor_status rotor_graph_add_output_alias(rotor_graph *g, const char *name, int v, rotor_error *err);

/* The model's outputs by name, in value order then alias order: each output
 * value under its own name (unless it is one only through aliases), then
 * each alias under its name.  Writes up to cap (name, value) pairs and
 * returns how many there are (which may exceed cap). */
typedef struct rotor_named_output {
    const char *name;
    int value;
} rotor_named_output;
int rotor_graph_outputs(const rotor_graph *g, rotor_named_output *out, int cap);

/* Re-checks every invariant add_value and add_op establish (indices, one
 * producer per value, topological order, consumer counts, roles, expression
 * tensors against their values).  For graphs built by passes and for tests;
 * a graph built only through the API always passes. */
rotor_status rotor_graph_validate(const rotor_graph *g, rotor_error *err);

/* One operator for people, e.g.
 *   "Q[b,s,e] += X[b,s,d] * W[d,e]  (b=8,s=128,d=1024,e=1024)"
 * with "  + Add+Gelu" after a grouped operator's extents,
 * or for a vendor op "vendor Gather(embed.word, input_ids) -> embed.word".
 * Truncated to cap (always NUL-terminated when cap > 0). */
void rotor_graph_op_string(const rotor_graph *g, int op, char *buf, int cap);

/* Which value each expression tensor names, e.g.
 *   "Q=layers.0.attn.q 8x128x1024, X=layers.0.ln 8x128x1024, W=... 1024x1024"
 * (a tensor naming no value prints as "W=-").  Empty for vendor ops. */
void rotor_graph_op_tensors_string(const rotor_graph *g, int op, char *buf, int cap);

#endif
