/* test_onnximport.c — the importer's operators added for issue 47's import
 * counts: the recurrent operators' clip, input_forget and masked sequence
 * lengths (lowerrnn.c), onnxruntime's contrib operators (onnxms.c,
 * lowerattn.c), the legacy operators and the training operators.  Each test
 * builds the one node its rule needs (tests/onnxbuild.h) and checks the
 * shapes, the expressions and FLOPs, or the refusal's one line. */
#include <criterion/criterion.h>

#include <string.h>

#include "rotor/model/graph.h"
#include "rotor/model/onnx.h"
#include "onnxbuild.h"

#define assert_msg_has(err, s) \
    cr_assert(strstr((err).msg, (s)) != NULL, "message \"%s\" lacks \"%s\"", (err).msg, (s))

/* ---- helpers the shared builder lacks -------------------------------------------------------- */

static Onnx__AttributeProto *new_attr(mb *b, Onnx__NodeProto *n, const char *name, int type) {
    Onnx__AttributeProto *a = mb_alloc(b, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = mb_str(b, name);
    a->has_type = 1;
    a->type = type;
    n->attribute[n->n_attribute++] = a;
    return a;
}

static void attr_f(mb *b, Onnx__NodeProto *n, const char *name, float v) {
    Onnx__AttributeProto *a = new_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    a->has_f = 1;
    a->f = v;
}

/* A STRINGS attribute from space-separated words. */
static void attr_strs(mb *b, Onnx__NodeProto *n, const char *name, const char *words) {
    Onnx__AttributeProto *a = new_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);
    a->strings = mb_alloc(b, sizeof *a->strings * 8);
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s", words);
    for (char *t = strtok(tmp, " "); t && a->n_strings < 8; t = strtok(NULL, " ")) {
        a->strings[a->n_strings].data = (uint8_t *)mb_str(b, t);
        a->strings[a->n_strings++].len = strlen(t);
    }
}

/* A graph input of element type `type` (TensorProto.DataType). */
static void typed_input(mb *b, const char *name, int type, int rank, const int64_t *dims) {
    b->inputs[b->graph.n_input++] = mb_vi(b, name, type, rank, dims);
}

static const rotor_op *op_named(const rotor_graph *g, const char *name) {
    for (int i = 0; i < g->nops; i++)
        if (!strcmp(g->ops[i].name, name)) return &g->ops[i];
    return NULL;
}

static const rotor_op *need_op(const rotor_graph *g, const char *name) {
    const rotor_op *o = op_named(g, name);
    cr_assert(o, "no operator '%s'", name);
    return o;
}

static void expect_text(const rotor_graph *g, const char *op, const char *text) {
    const rotor_op *o = need_op(g, op);
    cr_assert(!o->vendor, "%s is a vendor op", op);
    cr_assert_str_eq(o->expr.text, text, "%s: %s", op, o->expr.text);
}

static int count_type(const rotor_graph *g, const char *type) {
    int k = 0;
    for (int i = 0; i < g->nops; i++) k += !strcmp(g->ops[i].type, type);
    return k;
}

static const rotor_value *value_named(const rotor_graph *g, const char *name) {
    for (int i = 0; i < g->nvalues; i++)
        if (!strcmp(g->values[i].name, name)) return &g->values[i];
    cr_assert_fail("no value '%s'", name);
    return NULL;
}

static void load_ok(mb *b, rotor_graph *g) {
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(b, NULL, g, NULL, &err), ROTOR_OK, "%s", err.msg);
}

static void load_refused(mb *b, const char *why) {
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(b, NULL, &g, NULL, &err), ROTOR_ERR_INPUT, "imported; expected \"%s\"", why);
    assert_msg_has(err, why);
    rotor_graph_free(&g);
}

/* ---- recurrent operators (lowerrnn.c) --------------------------------------------------------- */

/* An LSTM of S=3 steps, B=2, I=4, H=5 with inputs "x w r" (+ extra). */
static Onnx__NodeProto *lstm_model(mb *b, const char *extra_inputs, const char *outs) {
    mb_init(b, 14);
    mb_input(b, "x", DIMS(3, 2, 4));
    mb_init_tensor(b, "w", 1, DIMS(1, 20, 4), NULL);
    mb_init_tensor(b, "r", 1, DIMS(1, 20, 5), NULL);
    char ins[128];
    snprintf(ins, sizeof ins, "x w r%s%s", extra_inputs ? " " : "", extra_inputs ? extra_inputs : "");
    Onnx__NodeProto *n = mb_node(b, "LSTM", "lstm", ins, outs);
    mb_attr_i(b, n, "hidden_size", 5);
    return n;
}

/* onnxruntime clamps each gate's pre-activation before f and g
 * (clip_add_bias): the gate is one expression, sigmoid(min(max(pre, -c), c)),
 * 5 FLOPs a point (+, max, neg, min, sigmoid) where the unclipped gate has 2;
 * h(C) is not clipped. */
Test(onnximport, lstm_clip_bounds_every_gate_pre_activation_inside_its_expression) {
    mb b;
    Onnx__NodeProto *n = lstm_model(&b, NULL, "- yh");
    attr_f(&b, n, "clip", 3);
    mb_output(&b, "yh");
    rotor_graph g;
    load_ok(&b, &g);
    expect_text(&g, "lstm.d0.t1.i", "Y[b,h] = sigmoid(min(max(A[b,h] + Q[b,h], neg(3)), 3))");
    expect_text(&g, "lstm.d0.t1.cand", "Y[b,h] = tanh(min(max(A[b,h] + Q[b,h], neg(3)), 3))");
    expect_text(&g, "lstm.d0.t0.o", "Y[b,h] = sigmoid(min(max(A[b,h], neg(3)), 3))");
    expect_text(&g, "lstm.d0.t2.h", "Y[b,h] = O[b,h] * tanh(C[b,h])");
    cr_assert_eq(need_op(&g, "lstm.d0.t1.f")->flops, 5.0 * 2 * 5);
    rotor_graph_free(&g);
    mb_free(&b);
}

/* clip 0 (ONNX is silent; OpenVINO's "no clip", MIGraphX's test files) is
 * no clipping; an int-typed clip is read as its number; a negative clip has
 * no bounds and is refused. */
Test(onnximport, rnn_clip_zero_is_no_clipping_and_a_negative_clip_is_refused) {
    mb b;
    mb_init(&b, 14);
    mb_input(&b, "x", DIMS(2, 1, 3));
    mb_init_tensor(&b, "w", 1, DIMS(1, 4, 3), NULL);
    mb_init_tensor(&b, "r", 1, DIMS(1, 4, 4), NULL);
    Onnx__NodeProto *n = mb_node(&b, "RNN", "rnn", "x w r", "- yh");
    mb_attr_i(&b, n, "hidden_size", 4);
    mb_attr_i(&b, n, "clip", 0);
    attr_strs(&b, n, "activations", "tanh");
    mb_output(&b, "yh");
    rotor_graph g;
    load_ok(&b, &g);
    expect_text(&g, "rnn.d0.t1.h", "Y[b,h] = tanh(A[b,h] + Q[b,h])");
    rotor_graph_free(&g);
    n->attribute[1]->i = -2;
    load_refused(&b, "node 'rnn' (op RNN, domain ai.onnx): clip is -2; the bounds [-clip, clip] need clip >= 0");
    mb_free(&b);
}

/* input_forget couples the gates, f = 1 - i (onnxruntime's "pf = 1 - pi"):
 * no forget gate is made and the cell reads the input gate twice. */
Test(onnximport, lstm_input_forget_makes_the_forget_gate_one_minus_the_input_gate) {
    mb b;
    Onnx__NodeProto *n = lstm_model(&b, NULL, "- yh");
    mb_attr_i(&b, n, "input_forget", 1);
    mb_output(&b, "yh");
    rotor_graph g;
    load_ok(&b, &g);
    cr_assert_null(op_named(&g, "lstm.d0.t1.f"));
    expect_text(&g, "lstm.d0.t1.c", "Y[b,h] = (1 - F[b,h]) * C[b,h] + I[b,h] * G[b,h]");
    cr_assert_eq(need_op(&g, "lstm.d0.t1.c")->flops, 4.0 * 2 * 5); /* -, *, +, * */
    /* xw; step 0: i cand c o h; steps 1-2: q i cand c o h; y_h */
    cr_assert_eq(g.nops, 1 + 5 + 2 * 6 + 1, "%d operators", g.nops);
    rotor_graph_free(&g);
    mb_free(&b);
}

/* A sequence_lens graph input masks the steps instead of being refused: a
 * mask per step, min(max(L - t, 0), 1); Y's entry is the masked new state,
 * the carried state is held after the end; Y keeps [S, D, B, H]. */
Test(onnximport, rnn_sequence_lens_input_masks_the_steps_and_holds_the_state) {
    mb b;
    mb_init(&b, 14);
    mb_input(&b, "x", DIMS(3, 2, 4));
    typed_input(&b, "lens", 6, DIMS(2));
    mb_init_tensor(&b, "w", 1, DIMS(1, 5, 4), NULL);
    mb_init_tensor(&b, "r", 1, DIMS(1, 5, 5), NULL);
    Onnx__NodeProto *n = mb_node(&b, "RNN", "rnn", "x w r - lens", "y yh");
    mb_attr_i(&b, n, "hidden_size", 5);
    mb_output(&b, "y");
    mb_output(&b, "yh");
    rotor_graph g;
    load_ok(&b, &g);
    expect_text(&g, "rnn.t0.mask", "Y[b] = min(max(L[b], 0), 1)");
    expect_text(&g, "rnn.t2.mask", "Y[b] = min(max(L[b] - 2, 0), 1)");
    expect_text(&g, "rnn.d0.t0.y", "Y[b,h] = M[b] * X[b,h]");
    expect_text(&g, "rnn.d0.t1.hold", "Y[b,h] = M[b] * X[b,h] + (1 - K[b]) * V[b,h]");
    cr_assert_null(op_named(&g, "rnn.d0.t0.hold")); /* no initial state: the held state is the masked one */
    cr_assert_eq(count_type(&g, "RNN.mask"), 3 + 3);
    cr_assert_eq(count_type(&g, "RNN.hold"), 2);
    cr_assert_eq(need_op(&g, "rnn.d0.t1.hold")->flops, 4.0 * 2 * 5);
    const rotor_value *y = value_named(&g, "y");
    cr_assert(y->rank == 4 && y->shape[0] == 3 && y->shape[1] == 1 && y->shape[2] == 2 && y->shape[3] == 5);
    rotor_graph_free(&g);
    mb_free(&b);
}

/* With an initial state, a batch entry of length 0 gets zeros in Y_h (as
 * onnxruntime writes it): Y_h is the last state masked by step 0's mask. */
Test(onnximport, lstm_with_lens_and_initial_state_zeroes_y_h_of_an_empty_sequence) {
    mb b;
    Onnx__NodeProto *n = lstm_model(&b, "- lens h0", "- yh");
    (void)n;
    typed_input(&b, "lens", 6, DIMS(2));
    mb_input(&b, "h0", DIMS(1, 2, 5));
    mb_output(&b, "yh");
    rotor_graph g;
    load_ok(&b, &g);
    expect_text(&g, "lstm.y_h", "Y[b,h] = M[b] * X[b,h]");
    expect_text(&g, "lstm.d0.t0.chold", "Y[b,h] = M[b] * X[b,h]");
    cr_assert_not_null(op_named(&g, "lstm.d0.t0.hold"));
    rotor_graph_free(&g);
    mb_free(&b);
}

/* Known lengths all equal to the sequence change nothing; one outside
 * [0, S] is refused, as onnxruntime refuses it. */
Test(onnximport, known_sequence_lens_outside_the_sequence_are_refused) {
    mb b;
    lstm_model(&b, "- lens", "- yh");
    /* sequence_lens is int32 (the schema refuses int64 there) */
    Onnx__TensorProto *lt = mb_init_tensor(&b, "lens", 6, DIMS(2), NULL);
    lt->n_int32_data = 2;
    lt->int32_data = mb_alloc(&b, 2 * sizeof(int32_t));
    lt->int32_data[0] = lt->int32_data[1] = 3;
    mb_output(&b, "yh");
    rotor_graph g;
    load_ok(&b, &g);
    cr_assert_eq(count_type(&g, "RNN.mask"), 0);
    rotor_graph_free(&g);
    lt->int32_data[1] = 7;
    load_refused(&b, "sequence_lens has 7 where the sequence has 3");
    mb_free(&b);
}

/* Activation names are read without regard to case (onnxruntime lower-cases
 * them); a list of the wrong length is refused. */
Test(onnximport, gru_activations_are_case_insensitive_and_counted) {
    mb b;
    mb_init(&b, 14);
    mb_input(&b, "x", DIMS(2, 1, 3));
    mb_init_tensor(&b, "w", 1, DIMS(1, 12, 3), NULL);
    mb_init_tensor(&b, "r", 1, DIMS(1, 12, 4), NULL);
    Onnx__NodeProto *n = mb_node(&b, "GRU", "gru", "x w r", "- yh");
    mb_attr_i(&b, n, "hidden_size", 4);
    attr_strs(&b, n, "activations", "sigmoid RELU");
    mb_output(&b, "yh");
    rotor_graph g;
    load_ok(&b, &g);
    expect_text(&g, "gru.d0.t0.z", "Y[b,h] = sigmoid(A[b,h])");
    expect_text(&g, "gru.d0.t0.cand", "Y[b,h] = relu(A[b,h])");
    rotor_graph_free(&g);
    n->attribute[1]->n_strings = 1;
    load_refused(&b, "activations lists 1 functions; 1 directions of GRU need 2");
    mb_free(&b);
}

/* ---- onnxruntime's contrib operators (onnxms.c, lowerattn.c, lower.c) ------------------------------- */

static Onnx__NodeProto *ms_node(mb *b, const char *op, const char *name, const char *ins, const char *outs) {
    Onnx__NodeProto *n = mb_node(b, op, name, ins, outs);
    n->domain = mb_str(b, "com.microsoft");
    return n;
}

/* SkipSimplifiedLayerNormalization's 32-character name fits an operator
 * type (ROTOR_OP_TYPE_MAX); it imports as a vendor op shaped like its
 * input, its inv_std_var [.., 1]. */
Test(onnximport, skip_simplified_layer_normalization_is_a_vendor_op_of_its_full_name) {
    mb b;
    mb_init(&b, 17);
    mb_input(&b, "x", DIMS(2, 3, 8));
    mb_input(&b, "skip", DIMS(2, 3, 8));
    mb_init_tensor(&b, "gamma", 1, DIMS(8), NULL);
    ms_node(&b, "SkipSimplifiedLayerNormalization", "ssln", "x skip gamma", "y - isv");
    mb_output(&b, "y");
    mb_output(&b, "isv");
    rotor_graph g;
    load_ok(&b, &g);
    const rotor_op *o = need_op(&g, "ssln");
    cr_assert(o->vendor);
    cr_assert_str_eq(o->type, "SkipSimplifiedLayerNormalization");
    const rotor_value *isv = value_named(&g, "isv");
    cr_assert(isv->rank == 3 && isv->shape[2] == 1 && isv->shape[1] == 3 && isv->dtype == ROTOR_DTYPE_F32);
    rotor_graph_free(&g);
    mb_free(&b);
}

/* SimplifiedLayerNormalization (onnxruntime registers it in the ONNX
 * domain) takes X and scale only, scale broadcasting to X. */
Test(onnximport, simplified_layer_normalization_takes_x_and_a_broadcasting_scale) {
    mb b;
    mb_init(&b, 17);
    mb_input(&b, "x", DIMS(2, 3, 5, 7));
    mb_init_tensor(&b, "scale", 1, DIMS(2, 1, 5, 7), NULL);
    mb_node(&b, "SimplifiedLayerNormalization", "rms", "x scale", "y");
    mb_output(&b, "y");
    rotor_graph g;
    load_ok(&b, &g);
    cr_assert(need_op(&g, "rms")->vendor);
    cr_assert_eq(value_named(&g, "y")->elements, 2 * 3 * 5 * 7);
    rotor_graph_free(&g);
    b.nodes[0]->input[b.nodes[0]->n_input++] = mb_str(&b, "scale");
    load_refused(&b, "takes at most 2 inputs; input 2 'scale' is one too many");
    mb_free(&b);
}

/* GroupNorm (contrib): groups and activation are required, groups divides
 * the channels (the last dimension with channels_last, its default). */
Test(onnximport, groupnorm_needs_its_attributes_and_groups_dividing_the_channels) {
    mb b;
    mb_init(&b, 17);
    mb_input(&b, "x", DIMS(1, 3, 3, 4));
    mb_init_tensor(&b, "gamma", 1, DIMS(4), NULL);
    mb_init_tensor(&b, "beta", 1, DIMS(4), NULL);
    Onnx__NodeProto *n = ms_node(&b, "GroupNorm", "gn", "x gamma beta", "y");
    mb_attr_i(&b, n, "groups", 2);
    mb_output(&b, "y");
    load_refused(&b, "attribute 'activation' is required (0: none, 1: SiLU)");
    mb_attr_i(&b, n, "activation", 1);
    rotor_graph g;
    load_ok(&b, &g);
    cr_assert(need_op(&g, "gn")->vendor);
    rotor_graph_free(&g);
    n->attribute[0]->i = 3;
    load_refused(&b, "node 'gn' (op GroupNorm, domain com.microsoft): groups 3 does not divide the 4 channels");
    mb_free(&b);
}

/* BiasAdd: X + bias + skip, one element-wise operator of 2 FLOPs a point. */
Test(onnximport, biasadd_is_one_element_wise_expression) {
    mb b;
    mb_init(&b, 17);
    mb_input(&b, "x", DIMS(2, 3, 4));
    mb_init_tensor(&b, "bias", 1, DIMS(4), NULL);
    mb_input(&b, "skip", DIMS(2, 3, 4));
    ms_node(&b, "BiasAdd", "ba", "x bias skip", "y");
    mb_output(&b, "y");
    rotor_graph g;
    load_ok(&b, &g);
    expect_text(&g, "ba", "Y[n,s,c] = X[n,s,c] + B[c] + S[n,s,c]");
    cr_assert_eq(need_op(&g, "ba")->flops, 2.0 * 2 * 3 * 4);
    rotor_graph_free(&g);
    mb_free(&b);
}

/* BiasSplitGelu: [N, S, D] -> [N, S, D/2], the left half times gelu of the
 * right, each with its half of the bias: 4 FLOPs a point; an odd D has no
 * halves. */
Test(onnximport, bias_split_gelu_halves_the_hidden_dimension) {
    mb b;
    mb_init(&b, 17);
    mb_input(&b, "x", DIMS(2, 4, 6));
    mb_init_tensor(&b, "bias", 1, DIMS(6), NULL);
    ms_node(&b, "BiasSplitGelu", "bsg", "x bias", "y");
    mb_output(&b, "y");
    rotor_graph g;
    load_ok(&b, &g);
    expect_text(&g, "bsg", "Y[n,s,d] = (L[n,s,d] + BL[d]) * gelu(R[n,s,d] + BR[d])");
    const rotor_op *o = need_op(&g, "bsg");
    cr_assert_eq(o->flops, 4.0 * 2 * 4 * 3);
    const rotor_value *y = value_named(&g, "y");
    cr_assert(y->rank == 3 && y->shape[2] == 3);
    rotor_graph_free(&g);
    b.inputs[0] = mb_vi(&b, "x", 1, DIMS(2, 4, 5));
    b.inits[0]->dims[0] = 5;
    load_refused(&b, "hidden size 5 is odd; it splits into two halves");
    mb_free(&b);
}

/* MultiHeadAttention's packed forms: QKV [B, S, heads, 3, head] with no key
 * or value, and KV [B, L, heads, 2, head] with no value, read as views of
 * their value; the scores and context are the zoo's contractions. */
Test(onnximport, multihead_attention_takes_packed_qkv_and_packed_kv) {
    mb b;
    mb_init(&b, 20);
    mb_input(&b, "qkv", DIMS(1, 5, 2, 3, 4));
    Onnx__NodeProto *n = ms_node(&b, "MultiHeadAttention", "mha", "qkv", "out");
    mb_attr_i(&b, n, "num_heads", 2);
    mb_output(&b, "out");
    rotor_graph g;
    load_ok(&b, &g);
    const rotor_value *out = value_named(&g, "out");
    cr_assert(out->rank == 3 && out->shape[1] == 5 && out->shape[2] == 8);
    /* 2 FLOPs per multiply-add: scores b=1,g=2,r=1,m=5,k=4,n=5, context the same */
    cr_assert_eq(need_op(&g, "mha.scores")->flops, 2.0 * 2 * 5 * 4 * 5);
    rotor_graph_free(&g);
    mb_free(&b);

    mb_init(&b, 20);
    mb_input(&b, "q", DIMS(1, 5, 8));
    mb_input(&b, "kv", DIMS(1, 7, 2, 2, 4));
    n = ms_node(&b, "MultiHeadAttention", "mha", "q kv", "out");
    mb_attr_i(&b, n, "num_heads", 2);
    mb_output(&b, "out");
    load_ok(&b, &g);
    cr_assert_eq(need_op(&g, "mha.context")->flops, 2.0 * 2 * 5 * 4 * 7);
    rotor_graph_free(&g);
    mb_free(&b);
}

/* Key and value already split into heads ([B, heads, L, head], cross
 * attention) import; a bias with them is refused (onnxruntime: "'bias'
 * shall be empty when 'key' is 4D"). */
Test(onnximport, multihead_attention_takes_keys_split_into_heads_without_a_bias) {
    mb b;
    mb_init(&b, 20);
    mb_input(&b, "q", DIMS(1, 2, 4));
    mb_input(&b, "k", DIMS(1, 2, 3, 2));
    mb_input(&b, "v", DIMS(1, 2, 3, 2));
    Onnx__NodeProto *n = ms_node(&b, "MultiHeadAttention", "mha", "q k v", "out");
    mb_attr_i(&b, n, "num_heads", 2);
    mb_output(&b, "out");
    rotor_graph g;
    load_ok(&b, &g);
    cr_assert_eq(need_op(&g, "mha.scores")->flops, 2.0 * 2 * 2 * 2 * 3);
    rotor_graph_free(&g);
    mb_init_tensor(&b, "bias", 1, DIMS(12), NULL);
    n->input[n->n_input++] = mb_str(&b, "bias");
    load_refused(&b, "a bias with key and value already split into heads is not supported");
    mb_free(&b);
}

/* onnxruntime's input checks (multihead_attention_helper.h): the bias is
 * 1-D, the key padding mask and attention_bias have the listed shapes, the
 * mask is int32. */
Test(onnximport, multihead_attention_refuses_what_onnxruntime_refuses) {
    static const struct {
        const char *extra, *name;
        int type, rank;
        int64_t dims[4];
        const char *why;
    } cases[] = {
        {"bias", "bias", 1, 2, {12, 2}, "bias 'bias' must be [12], got [12,2]"},
        {"- mask", "mask", 6, 1, {9}, "key_padding_mask 'mask' is [9]; onnxruntime takes [batch]"},
        {"- mask", "mask", 1, 1, {1}, "key_padding_mask 'mask' is float; onnxruntime's schema takes int32"},
        {"- - ab", "ab", 1, 4, {1, 2, 2, 3}, "attention_bias 'ab' is [1,2,2,3]; it must be [batch or 1, heads or 1, "
                                             "sequence, total sequence] = [1 or 1, 2 or 1, 2, 2]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mb b;
        mb_init(&b, 20);
        mb_input(&b, "q", DIMS(1, 2, 4));
        mb_input(&b, "k", DIMS(1, 2, 4));
        mb_input(&b, "v", DIMS(1, 2, 4));
        typed_input(&b, cases[i].name, cases[i].type, cases[i].rank, cases[i].dims);
        char ins[64];
        snprintf(ins, sizeof ins, "q k v %s", cases[i].extra);
        Onnx__NodeProto *n = ms_node(&b, "MultiHeadAttention", "mha", ins, "out");
        mb_attr_i(&b, n, "num_heads", 2);
        mb_output(&b, "out");
        load_refused(&b, cases[i].why);
        mb_free(&b);
    }
}

/* GroupQueryAttention's present is max(total_sequence_length, past)
 * (onnxruntime's present_sequence_length): a past buffer that holds the
 * total is written in place (a vendor KVCacheUpdate), and the scores run
 * over the total, not past + new. */
Test(onnximport, group_query_attention_present_is_the_shared_buffer) {
    mb b;
    mb_init(&b, 19);
    mb_input(&b, "q", DIMS(1, 1, 8));
    mb_input(&b, "k", DIMS(1, 1, 8));
    mb_input(&b, "v", DIMS(1, 1, 8));
    mb_input(&b, "pk", DIMS(1, 2, 10, 4));
    mb_input(&b, "pv", DIMS(1, 2, 10, 4));
    typed_input(&b, "seqlens", 6, DIMS(1));
    Onnx__TensorProto *t = mb_init_tensor(&b, "total", 6, 1, (const int64_t[]){1}, NULL);
    t->n_int32_data = 1;
    t->int32_data = mb_alloc(&b, sizeof(int32_t));
    t->int32_data[0] = 6;
    Onnx__NodeProto *n = ms_node(&b, "GroupQueryAttention", "gqa", "q k v pk pv seqlens total", "out pko pvo");
    mb_attr_i(&b, n, "num_heads", 2);
    mb_attr_i(&b, n, "kv_num_heads", 2);
    mb_output(&b, "out");
    mb_output(&b, "pko");
    rotor_graph g;
    load_ok(&b, &g);
    const rotor_value *pk = value_named(&g, "pko");
    cr_assert(pk->rank == 4 && pk->shape[2] == 10, "present rows %lld", (long long)pk->shape[2]);
    cr_assert_str_eq(need_op(&g, "gqa.present1")->type, "KVCacheUpdate");
    cr_assert_eq(need_op(&g, "gqa.scores")->flops, 2.0 * 2 * 1 * 4 * 6);
    rotor_graph_free(&g);
    t->int32_data[0] = 12;
    load_refused(&b, "total_sequence_length 12 must be one value from the sequence 1 to past + sequence 11");
    mb_free(&b);
}

/* ---- legacy operators (onnxlegacy.c) -------------------------------------------------------------- */

static void attr_fs(mb *b, Onnx__NodeProto *n, const char *name, int cnt, const float *v) {
    Onnx__AttributeProto *a = new_attr(b, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
    a->n_floats = (size_t)cnt;
    a->floats = mb_alloc(b, sizeof(float) * (size_t)cnt);
    memcpy(a->floats, v, sizeof(float) * (size_t)cnt);
}

/* ImageScaler: scale * X + bias[c], the bias a weight of C values; a bias
 * of the wrong length and a bfloat16 input (T is float16, float or double)
 * are refused. */
Test(onnximport, image_scaler_scales_and_adds_a_per_channel_bias) {
    mb b;
    mb_init(&b, 8);
    mb_input(&b, "x", DIMS(1, 3, 4, 4));
    Onnx__NodeProto *n = mb_node(&b, "ImageScaler", "is", "x", "y");
    attr_fs(&b, n, "bias", 3, (const float[]){0.25f, 0.5f, 0.75f});
    attr_f(&b, n, "scale", 0.5f);
    mb_output(&b, "y");
    rotor_onnx_options o = {.keep_data = true};
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, &o, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    expect_text(&g, "is", "Y[n,c,h,w] = 0.5 * X[n,c,h,w] + B[c]");
    cr_assert_eq(need_op(&g, "is")->flops, 2.0 * 3 * 4 * 4);
    const rotor_value *bias = value_named(&g, "is.bias");
    cr_assert(bias->role == ROTOR_ROLE_WEIGHT && bias->elements == 3 && bias->data && bias->data[2] == 0.75);
    rotor_graph_free(&g);
    n->attribute[0]->n_floats = 2;
    load_refused(&b, "bias has 2 values for 3 channels");
    n->attribute[0]->n_floats = 3;
    b.inputs[0] = mb_vi(&b, "x", 16, DIMS(1, 3, 4, 4));
    load_refused(&b, "input 'x' is bfloat16; ImageScaler's T is float16, float or double");
    mb_free(&b);
}

/* ConstantFill folds to a constant: the shape attribute, or the input's
 * values with input_as_shape, filled with value. */
Test(onnximport, constant_fill_folds_to_its_shape_and_value) {
    mb b;
    mb_init(&b, 8);
    mb_input(&b, "x", DIMS(2, 3));
    mb_init_tensor(&b, "shape", 7, DIMS(2), (const int64_t[]){2, 3});
    Onnx__NodeProto *n = mb_node(&b, "ConstantFill", "cf", "shape", "c");
    mb_attr_i(&b, n, "input_as_shape", 1);
    attr_f(&b, n, "value", 1.5f);
    mb_node(&b, "Add", "add", "x c", "y");
    mb_output(&b, "y");
    rotor_onnx_options o = {.keep_data = true};
    rotor_graph g;
    rotor_onnx_stats stats;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, &o, &g, &stats, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(stats.folded, 1);
    const rotor_value *c = value_named(&g, "c");
    cr_assert(c->role == ROTOR_ROLE_WEIGHT && c->elements == 6 && c->data && c->data[5] == 1.5);
    rotor_graph_free(&g);
    n->input[n->n_input++] = mb_str(&b, "shape");
    n->n_input = 1;
    mb_attr_ints(&b, n, "shape", 2, (const int64_t[]){2, 3});
    load_refused(&b, "takes the shape attribute or an input, not both");
    mb_free(&b);
}

/* ---- training optimizers (onnxtrain.c) ------------------------------------------------------------ */

/* R, T and n tensors of X, G and H (Adagrad) or X, G, V (Momentum). */
static Onnx__NodeProto *optimizer_model(mb *b, const char *op, const char *ins, const char *outs) {
    mb_init(b, 17);
    b->opset.domain = mb_str(b, "ai.onnx.preview.training");
    b->opset.version = 1;
    mb_input(b, "R", 0, NULL);
    typed_input(b, "T", 7, 0, NULL);
    mb_input(b, "X", DIMS(3));
    mb_input(b, "G", DIMS(3));
    mb_input(b, "S", DIMS(3));
    Onnx__NodeProto *n = mb_node(b, op, "opt", ins, outs);
    n->domain = mb_str(b, "ai.onnx.preview.training");
    for (char *o = strtok(mb_str(b, outs), " "); o; o = strtok(NULL, " ")) mb_output(b, o);
    return n;
}

/* Adagrad (ONNX training docs): r = R / (1 + T decay); g = c X + G;
 * H' = H + g^2; X' = X - r g / (sqrt(H') + epsilon). */
Test(onnximport, adagrad_is_the_onnx_update_as_expressions) {
    mb b;
    Onnx__NodeProto *n = optimizer_model(&b, "Adagrad", "R T X G S", "Xn Hn");
    attr_f(&b, n, "decay_factor", 0.5f);
    attr_f(&b, n, "norm_coefficient", 0.25f);
    attr_f(&b, n, "epsilon", 0.125f);
    rotor_graph g;
    load_ok(&b, &g);
    expect_text(&g, "opt.r", "Y[u] = R[u] / (1 + T[u] * 0.5)");
    expect_text(&g, "opt.g0", "Y[d0] = 0.25 * X[d0] + G[d0]");
    expect_text(&g, "opt.h0", "Y[d0] = H[d0] + square(Q[d0])");
    expect_text(&g, "opt.x0", "Y[u,d0] = X[d0] - R[u] * Q[d0] / (sqrt(K[d0]) + 0.125)");
    cr_assert_eq(need_op(&g, "opt.x0")->flops, 5.0 * 3);
    cr_assert_eq(value_named(&g, "Xn")->elements, 3);
    rotor_graph_free(&g);
    mb_free(&b);
}

/* Momentum: V' = alpha V + beta_T g with beta_T = beta after the first
 * update (T > 0) and 1 before, min(T, 1) of the count; the standard and
 * Nesterov X'. */
Test(onnximport, momentum_standard_and_nesterov_updates) {
    mb b;
    Onnx__NodeProto *n = optimizer_model(&b, "Momentum", "R T X G S", "Xn Vn");
    attr_f(&b, n, "alpha", 0.75f);
    attr_f(&b, n, "beta", 0.5f);
    attr_f(&b, n, "norm_coefficient", 0);
    mb_attr_s(&b, n, "mode", "nesterov");
    rotor_graph g;
    load_ok(&b, &g);
    expect_text(&g, "opt.v0", "Y[u,d0] = 0.75 * V[d0] + (1 + neg(0.5) * min(T[u], 1)) * Q[d0]");
    expect_text(&g, "opt.x0", "Y[u,d0] = X[d0] - R[u] * (Q[d0] + 0.75 * W[d0])");
    rotor_graph_free(&g);
    n->attribute[3]->s.data = (uint8_t *)mb_str(&b, "standard");
    load_ok(&b, &g);
    expect_text(&g, "opt.x0", "Y[u,d0] = X[d0] - R[u] * W[d0]");
    rotor_graph_free(&g);
    n->attribute[3]->s.data = (uint8_t *)mb_str(&b, "sideways");
    load_refused(&b, "mode must be \"standard\" or \"nesterov\"");
    mb_free(&b);
}

/* Adam: the bias-corrected rate R sqrt(1 - beta^T) / (1 - alpha^T) for
 * T > 0, R at T = 0, and the schema's defaults (alpha 0.9, beta 0.999,
 * epsilon 1e-6); the inputs must come in groups of four. */
Test(onnximport, adam_corrects_its_rate_and_takes_the_schema_defaults) {
    mb b;
    Onnx__NodeProto *n = optimizer_model(&b, "Adam", "R T X G S S2", "Xn Vn Hn");
    mb_input(&b, "S2", DIMS(3));
    rotor_graph g;
    load_ok(&b, &g);
    expect_text(&g, "opt.f", "Y[u] = sqrt(1 - pow(0.999, max(T[u], 1))) / (1 - pow(0.9, max(K[u], 1)))");
    expect_text(&g, "opt.r", "Y[u] = R[u] * (1 + min(T[u], 1) * (F[u] - 1))");
    expect_text(&g, "opt.x0", "Y[u,d0] = X[d0] - R[u] * W[d0] / (sqrt(K[d0]) + 1e-06)");
    expect_text(&g, "opt.h0", "Y[d0] = 0.999 * H[d0] + 0.001 * square(Q[d0])");
    rotor_graph_free(&g);
    n->n_input = 5;
    load_refused(&b, "has 5 inputs; it takes R, T and 3 groups of n tensors (X, G, V, H)");
    mb_free(&b);
}

/* Multinomial: random values, a known shape [batch, sample_size] of dtype
 * int32 (the default) or int64; another dtype is refused. */
Test(onnximport, multinomial_is_a_generator_of_batch_by_sample_size) {
    mb b;
    mb_init(&b, 15);
    mb_input(&b, "p", DIMS(3, 10));
    Onnx__NodeProto *n = mb_node(&b, "Multinomial", "mn", "p", "y");
    mb_attr_i(&b, n, "sample_size", 13);
    mb_output(&b, "y");
    rotor_graph g;
    load_ok(&b, &g);
    const rotor_value *y = value_named(&g, "y");
    cr_assert(need_op(&g, "mn")->vendor);
    cr_assert(y->rank == 2 && y->shape[0] == 3 && y->shape[1] == 13 && y->dtype == ROTOR_DTYPE_I32);
    rotor_graph_free(&g);
    mb_attr_i(&b, n, "dtype", 1);
    load_refused(&b, "dtype 1 is neither int32 (6) nor int64 (7)");
    mb_free(&b);
}

/* Gradient: dy/dx shaped and typed as each x the xs attribute names (its
 * inputs, in order); a vendor op. */
Test(onnximport, gradient_outputs_are_shaped_as_the_xs) {
    mb b;
    mb_init(&b, 12);
    Onnx__OperatorSetIdProto *tr = mb_alloc(&b, sizeof *tr);
    onnx__operator_set_id_proto__init(tr);
    tr->domain = mb_str(&b, "ai.onnx.preview.training");
    tr->has_version = 1;
    tr->version = 1;
    Onnx__OperatorSetIdProto **ops = mb_alloc(&b, sizeof *ops * 2);
    ops[0] = &b.opset, ops[1] = tr;
    b.model.opset_import = ops;
    b.model.n_opset_import = 2;
    mb_input(&b, "a", DIMS(2, 3));
    mb_input(&b, "b", DIMS(2, 3));
    mb_node(&b, "Add", "add", "a b", "c");
    Onnx__NodeProto *n = mb_node(&b, "Gradient", "grad", "a b", "da db");
    n->domain = mb_str(&b, "ai.onnx.preview.training");
    attr_strs(&b, n, "xs", "a b");
    mb_attr_s(&b, n, "y", "c");
    mb_output(&b, "c");
    mb_output(&b, "da");
    mb_output(&b, "db");
    rotor_graph g;
    load_ok(&b, &g);
    cr_assert(need_op(&g, "grad")->vendor);
    const rotor_value *db = value_named(&g, "db");
    cr_assert(db->rank == 2 && db->shape[0] == 2 && db->shape[1] == 3);
    rotor_graph_free(&g);
    n->input[1] = mb_str(&b, "c");
    load_refused(&b, "input 1 must be the tensor xs or zs names there ('b')");
    mb_free(&b);
}

/* ---- sequences inside a graph (onnxseq.c) ----------------------------------------------------------- */

/* SequenceConstruct then ConcatFromSequence: a vendor op over the elements,
 * concatenated along axis, or stacked along a new one with new_axis. */
Test(onnximport, concat_from_sequence_concatenates_or_stacks_the_elements) {
    mb b;
    mb_init(&b, 12);
    mb_input(&b, "x", DIMS(2, 3, 4));
    mb_input(&b, "y", DIMS(2, 5, 4));
    mb_node(&b, "SequenceConstruct", "sc", "x y", "s");
    Onnx__NodeProto *n = mb_node(&b, "ConcatFromSequence", "cfs", "s", "out");
    mb_attr_i(&b, n, "axis", 1);
    mb_output(&b, "out");
    rotor_graph g;
    load_ok(&b, &g);
    const rotor_op *o = need_op(&g, "cfs");
    cr_assert(o->vendor && o->ninputs == 2);
    const rotor_value *out = value_named(&g, "out");
    cr_assert(out->rank == 3 && out->shape[1] == 8);
    rotor_graph_free(&g);
    mb_attr_i(&b, n, "new_axis", 1);
    load_refused(&b, "element 1 does not stack with element 0");
    mb_free(&b);
}

/* SplitToSequence then SequenceLength: the count folds to a constant (4
 * chunks of 1 along the last axis); a run-time SequenceAt over elements of
 * one shape has that shape; a sequence a graph output is refused. */
Test(onnximport, split_to_sequence_length_folds_and_at_takes_one_shape) {
    mb b;
    mb_init(&b, 12);
    mb_input(&b, "x", DIMS(2, 3, 4));
    typed_input(&b, "pos", 7, 0, NULL);
    Onnx__NodeProto *n = mb_node(&b, "SplitToSequence", "sts", "x", "s");
    mb_attr_i(&b, n, "axis", 0);
    mb_attr_i(&b, n, "keepdims", 0);
    mb_node(&b, "SequenceLength", "len", "s", "n");
    mb_node(&b, "SequenceAt", "at", "s pos", "e");
    mb_output(&b, "n");
    mb_output(&b, "e");
    rotor_graph g;
    rotor_onnx_stats stats;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, NULL, &g, &stats, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(stats.folded, 1);
    const rotor_value *e = value_named(&g, "e");
    cr_assert(e->rank == 2 && e->shape[0] == 3 && e->shape[1] == 4);
    cr_assert(need_op(&g, "at")->vendor);
    rotor_graph_free(&g);
    mb_output(&b, "s");
    load_refused(&b, "sequence 's' is a graph output; rotor's outputs are tensors");
    mb_free(&b);
}
