/* lowerint.h — what the lowering files share (private to the model stage):
 * lower.c lowers most nodes, lowerrnn.c unrolls the recurrent ones. */
#ifndef ROTOR_MODEL_LOWERINT_H
#define ROTOR_MODEL_LOWERINT_H

#include "onnxir.h"

typedef struct lower_ctx {
    ox_model *m;
    rotor_graph *g;
    rotor_error *err;
} lower_ctx;

/* The graph value of ONNX value v (aliases resolved), created on first use. */
rotor_status lw_gval(lower_ctx *c, const ox_node *n, int v, int *out);

/* Gives graph value gv the elements of constant x (keep_data imports). */
rotor_status lw_set_data(lower_ctx *c, int gv, const ox_val *x);

/* A new value of role `role` named base+suffix (made unique). */
rotor_status lw_new_value(lower_ctx *c, const ox_node *n, const char *base, const char *suffix, rotor_dtype dt,
                          int rank, const int64_t *shape, rotor_role role, int *out);

/* A new activation value named base+suffix (made unique). */
rotor_status lw_new_val(lower_ctx *c, const ox_node *n, const char *base, const char *suffix, rotor_dtype dt,
                        int rank, const int64_t *shape, int *out);

/* One operator writing value out: expression text over dims (NULL text: a
 * vendor op), expression tensor t naming value tv[t] (t < ntv), inputs
 * ins.  Errors name the node. */
rotor_status lw_op(lower_ctx *c, const ox_node *n, const char *name, const char *type, const char *text,
                   const char *dims, const int *tv, int ntv, const int *ins, int nin, int out);

/* An expression operator named <node><suffix>: its inputs are the distinct
 * values its tensors tv[1 .. ntv) name, in order. */
rotor_status lw_expr(lower_ctx *c, const ox_node *n, const char *suffix, const char *type, const char *text,
                     const char *dims, const int *tv, int ntv, int out);

/* ---- the lowering column of the operator registry (onnxops.c): each lowers
 * node n into one operator or a short chain ---- */

/* A vendor op (T10 §4.2's fallback): the node as it is, with its attributes
 * and the reference kernel of its registry row. */
rotor_status lw_vendor(lower_ctx *c, const ox_node *n);
/* Element-wise arithmetic, activations, casts, Clip, Where. */
rotor_status lw_elementwise(lower_ctx *c, const ox_node *n);
/* Expand: element-wise, or a vendor op when it creates an axis. */
rotor_status lw_expand(lower_ctx *c, const ox_node *n);
/* com.microsoft BiasGelu, FastGelu and Gelu, as the zoo's GELU. */
rotor_status lw_ms_gelu(lower_ctx *c, const ox_node *n);
rotor_status lw_matmul(lower_ctx *c, const ox_node *n);
rotor_status lw_gemm(lower_ctx *c, const ox_node *n);
rotor_status lw_conv(lower_ctx *c, const ox_node *n);
/* QLinearMatMul and MatMulInteger; QLinearConv and ConvInteger (lower.c):
 * the contraction, with what rotor run needs to quantize it exactly. */
rotor_status lw_quant_matmul(lower_ctx *c, const ox_node *n);
rotor_status lw_quant_conv(lower_ctx *c, const ox_node *n);
rotor_status lw_avgpool(lower_ctx *c, const ox_node *n);
rotor_status lw_global_avg(lower_ctx *c, const ox_node *n);
rotor_status lw_reduce(lower_ctx *c, const ox_node *n);
/* ReduceMean: a spelled-out LayerNormalization starting here, or a reduction. */
rotor_status lw_reduce_mean(lower_ctx *c, const ox_node *n);
rotor_status lw_batchnorm(lower_ctx *c, const ox_node *n);
rotor_status lw_layernorm_node(lower_ctx *c, const ox_node *n);
rotor_status lw_softmax(lower_ctx *c, const ox_node *n);
/* Reshape, Flatten, Squeeze, Unsqueeze: a copy. */
rotor_status lw_reshape(lower_ctx *c, const ox_node *n);
rotor_status lw_transpose(lower_ctx *c, const ox_node *n);
rotor_status lw_einsum(lower_ctx *c, const ox_node *n);
rotor_status lw_slice(lower_ctx *c, const ox_node *n);

/* onnxruntime's Attention, MultiHeadAttention, GroupQueryAttention
 * (lowerattn.c). */
rotor_status lw_attention(lower_ctx *c, const ox_node *n);

/* LSTM, GRU and RNN, unrolled over the sequence (lowerrnn.c). */
rotor_status lw_recurrent(lower_ctx *c, const ox_node *n);

/* com.microsoft BiasAdd and BiasSplitGelu, ImageScaler: element-wise. */
rotor_status lw_biasadd(lower_ctx *c, const ox_node *n);
rotor_status lw_split_gelu(lower_ctx *c, const ox_node *n);
rotor_status lw_image_scaler(lower_ctx *c, const ox_node *n);

/* Adagrad, Momentum and Adam of ai.onnx.preview.training (onnxtrain.c). */
rotor_status lw_optimizer(lower_ctx *c, const ox_node *n);

/* Sequences inside a graph (onnxseq.c): their makers lower to nothing, the
 * readers to vendor ops over the elements. */
rotor_status lw_seq_none(lower_ctx *c, const ox_node *n);
rotor_status lw_concat_from_seq(lower_ctx *c, const ox_node *n);
rotor_status lw_seq_at(lower_ctx *c, const ox_node *n);

#endif
