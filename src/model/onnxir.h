/* onnxir.h — the importer's private view of an ONNX graph (docs/onnx.md).
 *
 * onnx.c decodes the protobuf, sorts the nodes, infers every shape and folds
 * constants into an ox_model; lower.c turns what is left into rotor_graph
 * operators; onnxload.c runs the two in sequence.  Each node finds its
 * operator's row in the registry (onnxops.h).  Nothing here is public: the interface is include/rotor/onnx.h. */
#ifndef ROTOR_ONNXIR_H
#define ROTOR_ONNXIR_H

#include <stdbool.h>
#include <stdint.h>

#include "onnx.pb-c.h"
#include "rotor/base/error.h"
#include "rotor/model/graph.h"
#include "rotor/model/onnx.h"

#define OX_MAX_RANK ROTOR_GRAPH_MAX_RANK
/* Constants with at most this many elements keep their data, so that shape
 * arithmetic can be folded; larger ones (weights) keep only their shape. */
#define OX_DATA_MAX 65536
/* The most passes of the import (onnx.c): a pass ends early when it learns
 * what control flow needs (onnxflow.c), and the next one starts again. */
#define OX_MAX_PASSES 64

typedef enum ox_kind {
    OX_UNDEF = 0, /* named by a node but not defined yet */
    OX_INPUT,     /* a graph input (not an initializer) */
    OX_CONST,     /* known at import: initializer, Constant, or folded */
    OX_ACT        /* produced at run time by a node */
} ox_kind;

/* One ONNX value (tensor name). */
typedef struct ox_val {
    const char *name;      /* points into the decoded model */
    ox_kind kind;
    int onnx_type;         /* TensorProto.DataType */
    rotor_dtype dtype;
    int rank;
    int64_t shape[OX_MAX_RANK];
    int64_t elems;
    /* data of a constant with at most OX_DATA_MAX elements: iv for integer and
     * bool types, fv for floating types (exactly one is set) */
    bool has_data;
    int64_t *iv;
    double *fv;
    int producer;          /* node (original index) or -1 */
    int alias;             /* Identity/Dropout: the value this one stands for, or -1 */
    int gv;                /* rotor_graph value, or -1 until lowered */
    bool live;             /* reaches a graph output */
    bool is_output;
    /* A float initializer of two elements or more of a model imported for
     * training (ox_model.train): a parameter, so its data is never folded
     * into another constant, a literal or an attribute (docs/training.md,
     * "Parameters"); a one-element one is held constant (scalars_held),
     * written into expressions as a number, a negative one as (0-v). */
    bool param;
    bool held;
    bool initializer;
} ox_val;

/* What one pass of the import learned that the flattening of control flow
 * (onnxflow.c) could not know before folding: a value's scalar, or its
 * shape.  The next pass flattens with it (docs/onnx.md, "Control flow"). */
typedef struct ox_fact {
    char *name;
    bool has_value;
    int64_t value;
    int rank;              /* -1: no shape learned */
    int64_t shape[OX_MAX_RANK];
} ox_fact;

/* One node after sorting and inference. */
struct ox_opdef;

typedef struct ox_node {
    Onnx__NodeProto *p;
    const struct ox_opdef *def; /* its registry row (onnxops.h), once inference reached it */
    char name[128];        /* p->name, or "<op_type>_<index>" when empty */
    const char *domain;    /* "ai.onnx" for the default domain */
    int nin, nout;
    int *in;               /* value index per input, -1 for an omitted optional input */
    int *out;
    bool folded;           /* every output is a constant */
    bool duplicate;        /* a Constant whose name a later Constant redefines (dropped) */
    bool done;             /* lowered (or swallowed by a matched pattern) */
    bool live;
} ox_node;

typedef struct ox_model {
    const char *label;
    Onnx__ModelProto *proto;
    int64_t opset;
    int nvals, vals_cap;
    ox_val *vals;
    int *index;            /* open addressing: value index + 1, 0 empty */
    int index_cap;
    int nnodes;
    ox_node *nodes;
    int *order;            /* topological order of node indices */
    /* consumers of value v: cons[cons_start[v] .. cons_start[v+1]) (node indices) */
    int *cons_start, *cons;
    rotor_onnx_stats stats;
    /* the nodes to import: the graph's, with control flow known at import
     * folded or unrolled (onnxflow.c); owned[] are the nodes, names and
     * tensors that made, freed with the model */
    Onnx__NodeProto **flat;
    int nflat, flat_cap;
    void **owned;
    int nowned, owned_cap;
    /* constants of at most this many elements keep their data: OX_DATA_MAX,
     * or ROTOR_ONNX_DATA_MAX with rotor_onnx_options.keep_data */
    int64_t data_max;
    bool keep_data;
    bool train;     /* rotor_onnx_options.train: BatchNormalization in training mode */
    /* facts learned by the passes so far, kept from pass to pass; refold:
     * this pass learned one, so the import runs again (onnx.c) */
    ox_fact *facts;
    int nfacts, facts_cap;
    bool refold;
} ox_model;

/* The error prefix for a node: "PATH: node 'NAME' (op TYPE, domain DOMAIN): ". */
rotor_status ox_node_fail(const ox_model *m, const ox_node *n, rotor_error *err, rotor_status code,
                          const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* m->flat from the graph: every If whose condition is known folded into
 * its branch, every Scan and Loop with a known trip count unrolled
 * (onnxflow.c). */
rotor_status ox_flatten_control(ox_model *m, rotor_error *err);
void ox_flat_free(ox_model *m);
/* A node with a subgraph that the flattening left (onnxflow.c), reached by
 * shape inference with its inputs inferred: when what folded so far lets
 * it fold or unroll, the facts it needs are learned and m->refold set (the
 * import runs again); otherwise it is refused with the reason. */
rotor_status ox_flow_node(ox_model *m, ox_node *n, rotor_error *err);
void ox_facts_free(ox_model *m);

/* The names of the decoded file, decided once before anything reads them
 * (onnxname.c): a name with a NUL byte in the file's bytes (data) is
 * refused naming where it is; bytes of a name that are not printable UTF-8
 * are rewritten as \xNN in m->proto. */
rotor_status ox_check_names(ox_model *m, const uint8_t *data, size_t len, rotor_error *err);
/* A malloc'd copy of s with the same escapes (a test data file's tensor
 * name); NULL when out of memory. */
char *ox_name_copy(const char *s);

/* Value v with aliases resolved. */
int ox_resolve(const ox_model *m, int v);

/* Attribute lookups on a node (NULL / default when absent). */
const Onnx__AttributeProto *ox_attr(const ox_node *n, const char *name);
int64_t ox_attr_int(const ox_node *n, const char *name, int64_t dflt);
double ox_attr_float(const ox_node *n, const char *name, double dflt);

/* Element k of a constant with data, as a double. */
double ox_get(const ox_val *v, int64_t k);

/* The dimensions of x a Reduce* or Arg* node reduces (axes input or
 * attribute, noop_with_empty_axes); inference and lowering share it. */
rotor_status ox_reduce_axes(ox_model *m, const ox_node *n, const ox_val *x, bool *red, rotor_error *err);

/* PRelu with a 1-D slope of one value per channel (axis 1): the opset <= 6
 * meaning, which PyTorch exports still use. */
bool ox_prelu_per_channel(const ox_model *m, const ox_node *n);
/* Legacy (opset <= 6) broadcast=1 with an axis: the axis B aligns at, -1
 * when the node is not that form, -2 when B does not fit there. */
int ox_legacy_axis(const ox_model *m, const ox_node *n);

/* Spatial geometry of a convolution or pooling node: kernel, strides, pads,
 * dilations and output extents (ONNX Conv/Pool semantics, auto_pad
 * included); inference and lowering share it. */
typedef struct ox_geom {
    int ns;                          /* spatial dimensions */
    int64_t k[OX_MAX_RANK], s[OX_MAX_RANK], d[OX_MAX_RANK], pb[OX_MAX_RANK], pe[OX_MAX_RANK];
    int64_t in[OX_MAX_RANK], out[OX_MAX_RANK];
} ox_geom;
rotor_status ox_conv_geom(ox_model *m, const ox_node *n, const ox_val *x, const int64_t *kernel, bool ceil_mode,
                          ox_geom *g, rotor_error *err);

/* A Slice node's region of its input x: first index lo, step and extent
 * per dimension (ONNX clamping); inference and lowering share it. */
rotor_status ox_slice_geom(ox_model *m, const ox_node *n, const ox_val *x, int64_t *lo, int64_t *step,
                           int64_t *shape, rotor_error *err);

/* The whole file at path into *buf (malloc'd), at most max bytes; errors
 * name the path (onnx.c; the model, --value files, tensor files). */
rotor_status ox_read_file(const char *path, size_t max, uint8_t **buf, size_t *len, rotor_error *err);

/* The import (onnx.c): decodes the file into m, binds its dimensions and
 * values, sorts the nodes, infers every shape and folds every constant node,
 * then marks aliases and the nodes that reach an output.  m is freed with
 * ox_model_free whatever the result. */
rotor_status ox_import(ox_model *m, const uint8_t *data, size_t len, const char *label,
                       const rotor_onnx_options *opt, rotor_error *err);
void ox_model_free(ox_model *m);

/* Lowers the imported model into g (lower.c). */
rotor_status ox_lower(ox_model *m, rotor_graph *g, rotor_error *err);


/* TensorProto.DataType values (onnx.proto). */
enum {
    T_UNDEF = 0, T_FLOAT = 1, T_UINT8, T_INT8, T_UINT16, T_INT16, T_INT32, T_INT64, T_STRING,
    T_BOOL, T_FLOAT16, T_DOUBLE, T_UINT32, T_UINT64, T_COMPLEX64, T_COMPLEX128, T_BFLOAT16,
    T_F8_E4M3FN, T_F8_E4M3FNUZ, T_F8_E5M2, T_F8_E5M2FNUZ,
    T_UINT4 = 21, T_INT4 = 22 /* two per byte, the first in the low nibble */
};

/* A node's failure: returns ox_node_fail(..., ROTOR_ERR_INPUT, ...) from the
 * calling rule (which names its model m, node n and error err). */
#define NFAIL(...) return ox_node_fail(m, n, err, ROTOR_ERR_INPUT, __VA_ARGS__)

/* ---- shared by the importer's files (onnx.c and the onnx*.c it names);
 * a rotor_status is ROTOR_OK or an error in err naming the node ---- */
bool ox_all_data(ox_model *m, const ox_node *n);
bool ox_alloc_data(ox_val *v);
const int64_t *ox_attr_ints(const ox_node *n, const char *name, int *count);
int64_t ox_bcast_offset(const ox_val *x, int r, const int64_t *idx);
rotor_status ox_broadcast_shape(ox_model *m, ox_node *n, int first, int count, int *rank, int64_t *shape, rotor_error *err);
const char *ox_source_input(const ox_model *m, const ox_val *x);
rotor_status ox_const_ints(ox_model *m, const ox_node *n, int i, const char *what, int64_t *out, int cap, int *count, rotor_error *err);
rotor_status ox_decode_tensor(const ox_model *m, const Onnx__TensorProto *t, ox_val *v, const char *what, rotor_error *err);
void ox_fold_copy(ox_model *m, ox_node *n, const ox_val *x);
ox_val *ox_fold_target(ox_model *m, ox_node *n, int i);
void ox_free_data(ox_val *v);
int64_t ox_get_i(const ox_val *v, int64_t k);
void ox_idx_next(int r, const int64_t *shape, int64_t *idx);
ox_val *ox_in(ox_model *m, const ox_node *n, int i);
rotor_status ox_infer_all(ox_model *m, rotor_error *err);
bool ox_is_float_type(int t);
/* Input i of node n is a setting of the operator rather than its data
 * (Pow's exponent, Clip's bounds, Pad's constant value, Resize's roi and
 * scales, Dropout's ratio, Range's start, limit and delta, OneHot's depth
 * and values, (De)QuantizeLinear's scale and zero point, STFT's step,
 * window and frame length): a parameter
 * there is taken as the constant it is, folded and held in training
 * (decision; docs/training.md, "Parameters"). */
bool ox_is_setting(const ox_node *n, int i);
bool ox_map_dtype(int t, rotor_dtype *out);
rotor_status ox_need(ox_model *m, ox_node *n, int count, rotor_error *err);
bool ox_norm_axis(int64_t a, int r, int *out);
ox_val *ox_out(ox_model *m, const ox_node *n, int i);
void ox_put(ox_val *v, int64_t k, double x);
rotor_status ox_same_as(ox_model *m, ox_node *n, int i, const ox_val *x, rotor_error *err);
rotor_status ox_set_out(ox_model *m, ox_node *n, int i, int type, int rank, const int64_t *shape, rotor_error *err);
bool ox_shape_elems(int rank, const int64_t *shape, int64_t *out);
rotor_status ox_sort_nodes(ox_model *m, rotor_error *err);
const char *ox_type_name(int t);

/* The shape rules (dispatched by onnxshape.c's table): each infers node n's
 * output shapes, and folds them when its inputs are constant. */
rotor_status ox_infer_batchnorm(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_concat(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_constant(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_constant_of_shape(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_conv(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_depth_space(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_expand(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_eyelike(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_flatten(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_gather(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_gemm(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_layernorm(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_instancenorm(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_groupnorm(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_lpnorm(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_loss(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_gridsample(ox_model *m, ox_node *n, rotor_error *err);
/* Einsum (onnxeinsum.c): labels 0-25 'a'-'z', 26-51 'A'-'Z', then the
 * ellipsis dimensions, left to right. */
#define OX_EINSUM_LETTERS 52
#define OX_EINSUM_LABELS (OX_EINSUM_LETTERS + OX_MAX_RANK)
#define OX_EINSUM_MAX_IN 8
typedef struct ox_einsum {
    int nin;
    int rank[OX_EINSUM_MAX_IN];
    int label[OX_EINSUM_MAX_IN][OX_MAX_RANK]; /* per input dimension */
    int out_rank;
    int out[OX_MAX_RANK];
    int64_t extent[OX_EINSUM_LABELS];         /* -1: unused */
    int uses[OX_EINSUM_LABELS];               /* input dimensions with the label */
} ox_einsum;
rotor_status ox_einsum_parse(ox_model *m, ox_node *n, ox_einsum *es, rotor_error *err);
void ox_einsum_label_name(int l, char *buf, size_t cap); /* "i", "K", "e0" */
rotor_status ox_infer_einsum(ox_model *m, ox_node *n, rotor_error *err);
/* onnxruntime's attention operators (onnxms.c): sizes read off a node. */
typedef struct ox_attention {
    int64_t batch, seq, kv_seq, past;  /* past: past sequence (0: none) */
    int64_t total, present;            /* keys attended; present rows (past + kv sequence but for
                                          GroupQueryAttention's max(total_sequence_length, past)) */
    int64_t heads, kv_heads, head, vhead;
    int64_t dq, dk, dv;                /* hidden sizes of q, k, v */
    bool packed;                       /* query holds q, k and v (GroupQueryAttention, MultiHeadAttention) */
    bool kv_packed;                    /* MultiHeadAttention: key holds k and v */
    bool kv_split;                     /* MultiHeadAttention: key and value are [B, heads, L, head] */
} ox_attention;
rotor_status ox_attention_shape(ox_model *m, ox_node *n, ox_attention *a, rotor_error *err);
/* com.microsoft shape rules (onnxms.c). */
rotor_status ox_infer_attention(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_skipnorm(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_embednorm(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_ms_same(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_simplenorm(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_ms_groupnorm(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_biasadd(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_splitgelu(ox_model *m, ox_node *n, rotor_error *err);
/* Removed experimental ONNX operators (onnxlegacy.c), the training
 * operators of ai.onnx.preview.training (onnxtrain.c), Multinomial
 * (onnxrandom.c). */
rotor_status ox_infer_image_scaler(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_constant_fill(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_optimizer(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_gradient(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_multinomial(ox_model *m, ox_node *n, rotor_error *err);
/* Sequences inside a graph (onnxseq.c). */
rotor_status ox_infer_seq_construct(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_split_to_seq(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_concat_from_seq(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_seq_length(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_seq_at(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_recurrent(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_tfidf(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_compress(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_window(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_melweight(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_stft(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_det(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_roialign(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_maxunpool(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_dft(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_matmul(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_nary(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_onehot(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_pad(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_pool(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_qdq(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_random(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_range(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_reduce(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_reshape(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_resize(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_shape_op(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_slice(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_split(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_squeeze(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_tile(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_topk(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_transpose(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_unary(ox_model *m, ox_node *n, rotor_error *err);

/* ---- Quantization (onnxquant.c; docs/onnx.md, "Quantized operators"): the
 * shape rules of ONNX's quantized operators, and the checks any quantized
 * operator may share.  Positions are ONNX input positions; a negative one
 * is an input the operator does not have.  ONNX's rounding rule is public:
 * rotor_onnx_quantize (onnx.h), as rotor run applies it too. ---- */

/* int8, uint8, int16, uint16 or int32: the integers ONNX quantizes to. */
bool ox_quant_int_type(int onnx_type);
/* The zero point at input zi (absent: fine) has type qtype, that of its
 * quantized tensor, named `tensor` in the message. */
rotor_status ox_check_zero_point(ox_model *m, ox_node *n, int zi, const char *tensor, int qtype, rotor_error *err);
/* The scale at si is float, float16 or bfloat16 (int32_ok: or int32,
 * QuantizeLinear-21), and it and the zero point at zi have one shape. */
rotor_status ox_check_scale(ox_model *m, ox_node *n, int si, int zi, bool int32_ok, rotor_error *err);
/* Scale si and zero point zi of a tensor quantized per tensor: the zero
 * point's type qtype, one element each. */
rotor_status ox_check_tensor_qparam(ox_model *m, ox_node *n, int si, int zi, const char *tensor, int qtype,
                                    rotor_error *err);
/* The granularity of scale si over tensor x under the node's axis (default
 * 1) and block_size (default 0): per tensor (one element), per axis (1-D of
 * x's extent along the axis) or blocked (x's rank, ceil(extent /
 * block_size) along the axis, x's extent elsewhere). */
rotor_status ox_check_qaxis(ox_model *m, ox_node *n, const ox_val *x, int si, rotor_error *err);
/* Scale si and zero point zi of matrix input xi of a quantized MatMul: the
 * zero point x's type, and per tensor, or per row of A (row: 1-D of M, or
 * [..., M, 1]) / per column of B (1-D of N, or [..., 1, N]). */
rotor_status ox_check_matmul_qparam(ox_model *m, ox_node *n, int xi, int si, int zi, bool row, rotor_error *err);
/* Scale si and zero point zi of convolution weight wi: the zero point the
 * weight's type, per tensor or one per output channel (1-D of wi's dim 0). */
rotor_status ox_check_channel_qparam(ox_model *m, ox_node *n, int wi, int si, int zi, rotor_error *err);
/* The output shapes of MatMul (onnxnn.c) over inputs ia and ib, and of a
 * convolution over input x at ix and weight w at iw, with element type type. */
rotor_status ox_matmul_shape(ox_model *m, ox_node *n, int ia, int ib, int type, rotor_error *err);
rotor_status ox_conv_shape(ox_model *m, ox_node *n, int ix, int iw, int type, rotor_error *err);
/* The shape rules: QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear
 * are ox_infer_qdq (declared above). */
rotor_status ox_infer_matmul_integer(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_qlinear_matmul(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_conv_integer(ox_model *m, ox_node *n, rotor_error *err);
rotor_status ox_infer_qlinear_conv(ox_model *m, ox_node *n, rotor_error *err);

#endif
