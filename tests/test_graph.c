/* test_graph.c — the graph IR (src/model/graph.c; docs/graph.md): values, operators
 * with bound tensor expressions (T10 §4.2), the vendor-op rule, totals,
 * histogram, validation and the "rotor-graph" JSON format. */
#include <criterion/criterion.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/base/version.h"
#include "rotor/model/graph.h"

#define assert_msg_has(err, s) \
    cr_assert(strstr((err).msg, (s)) != NULL, "message \"%s\" lacks \"%s\"", (err).msg, (s))

#define SHP(...) (const int64_t[]){__VA_ARGS__}, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#define IDX(...) (const int[]){__VA_ARGS__}, (int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int))

static int value(rotor_graph *g, const char *name, rotor_role role, const int64_t *shape, int rank) {
    int v = -1;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_graph_add_value(g, name, ROTOR_DTYPE_F16, rank, shape, role, &v, &err), ROTOR_OK, "%s",
                 err.msg);
    return v;
}

static rotor_op_desc desc(const char *name, const char *type, const char *expr, const char *dims, const int *in,
                          int nin, const int *out, int nout) {
    rotor_op_desc d = {.name = name, .type = type, .expr = expr, .dims = dims, .inputs = in, .ninputs = nin,
                       .outputs = out, .noutputs = nout};
    d.tensor_value[0] = expr ? out[0] : -1;
    for (int t = 1; t < ROTOR_MAX_TENSORS; t++) d.tensor_value[t] = expr && t - 1 < nin ? in[t - 1] : -1;
    return d;
}

static int op_ok(rotor_graph *g, rotor_op_desc d) {
    int i = -1;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_graph_add_op(g, &d, &i, &err), ROTOR_OK, "%s", err.msg);
    return i;
}

static void op_fails(rotor_graph *g, rotor_op_desc d, const char *msg) {
    rotor_error err = {{0}};
    int nops = g->nops;
    cr_assert_eq(rotor_graph_add_op(g, &d, NULL, &err), ROTOR_ERR_INPUT, "op '%s' was accepted", d.name);
    assert_msg_has(err, msg);
    cr_assert_eq(g->nops, nops, "a refused op must leave the graph as it was");
}

/* A linear layer with ReLU: Y = X W, Z = Y + B, R = relu(Z) on X [4, 8]. */
typedef struct lin {
    rotor_graph g;
    int x, w, b, y, z, r;
} lin;

static void lin_build(lin *l) {
    rotor_graph_init(&l->g, "linear");
    l->x = value(&l->g, "x", ROTOR_ROLE_ACTIVATION, SHP(4, 8));
    l->w = value(&l->g, "w", ROTOR_ROLE_WEIGHT, SHP(8, 16));
    l->b = value(&l->g, "b", ROTOR_ROLE_WEIGHT, SHP(16));
    l->y = value(&l->g, "y", ROTOR_ROLE_ACTIVATION, SHP(4, 16));
    l->z = value(&l->g, "z", ROTOR_ROLE_ACTIVATION, SHP(4, 16));
    l->r = value(&l->g, "r", ROTOR_ROLE_ACTIVATION, SHP(4, 16));
    op_ok(&l->g, desc("mm", "MatMul", "Y[m,n] += X[m,k] * W[k,n]", "m=4,k=8,n=16", IDX(l->x, l->w), IDX(l->y)));
    op_ok(&l->g, desc("bias", "Add", "Z[m,n] = Y[m,n] + B[n]", "m=4,n=16", IDX(l->y, l->b), IDX(l->z)));
    op_ok(&l->g, desc("relu", "Relu", "R[m,n] = relu(Z[m,n])", "m=4,n=16", IDX(l->z), IDX(l->r)));
}

/* The linear layer (lin_build) and one more activation "e" [4, 16] for the
 * operator a test adds; e's index. */
static int lin_and_e(lin *l) {
    lin_build(l);
    return value(&l->g, "e", ROTOR_ROLE_ACTIVATION, SHP(4, 16));
}

/* ---- values -------------------------------------------------------------- */

Test(graph, value_counts_elements_and_bytes_of_its_dtype) {
    rotor_graph g;
    rotor_graph_init(&g, "g");
    int v = value(&g, "a", ROTOR_ROLE_ACTIVATION, SHP(2, 3, 4));
    cr_assert_eq(v, 0);
    cr_assert_eq(g.values[v].elements, 24);
    cr_assert_eq(g.values[v].bytes, 48, "f16 is 2 bytes");
    cr_assert_eq(g.values[v].producer, -1);
    cr_assert_eq(g.values[v].consumers, 0);
    int s = -1;
    cr_assert_eq(rotor_graph_add_value(&g, "s", ROTOR_DTYPE_I64, 0, NULL, ROTOR_ROLE_ACTIVATION, &s, NULL), ROTOR_OK);
    cr_assert_eq(g.values[s].elements, 1, "a scalar has one element");
    cr_assert_eq(g.values[s].bytes, 8);
    rotor_graph_free(&g);
}

static void value_fails(rotor_graph *g, const char *name, rotor_dtype dt, int rank, const int64_t *shape,
                        rotor_role role, const char *msg) {
    rotor_error err = {{0}};
    int n = g->nvalues;
    cr_assert_eq(rotor_graph_add_value(g, name, dt, rank, shape, role, NULL, &err), ROTOR_ERR_INPUT, "%s accepted",
                 name ? name : "(null)");
    assert_msg_has(err, msg);
    cr_assert_eq(g->nvalues, n);
}

Test(graph, bad_values_are_refused_with_the_reason) {
    rotor_graph g;
    rotor_graph_init(&g, "g");
    const int64_t ok[2] = {2, 2}, zero[2] = {2, 0}, neg[1] = {-5};
    value_fails(&g, "", ROTOR_DTYPE_F16, 2, ok, ROTOR_ROLE_ACTIVATION, "a value needs a name");
    value_fails(&g, NULL, ROTOR_DTYPE_F16, 2, ok, ROTOR_ROLE_ACTIVATION, "a value needs a name");
    value_fails(&g, "t", (rotor_dtype)99, 2, ok, ROTOR_ROLE_ACTIVATION, "value 't': unknown dtype 99");
    value_fails(&g, "r", ROTOR_DTYPE_F16, 2, ok, (rotor_role)7, "value 'r': unknown role 7");
    value_fails(&g, "big", ROTOR_DTYPE_F16, 9, ok, ROTOR_ROLE_ACTIVATION, "value 'big': rank 9 is outside 0..8");
    value_fails(&g, "z", ROTOR_DTYPE_F16, 2, zero, ROTOR_ROLE_ACTIVATION,
                "value 'z': dimension 1 is 0; extents must be at least 1");
    value_fails(&g, "n", ROTOR_DTYPE_F16, 1, neg, ROTOR_ROLE_ACTIVATION, "dimension 0 is -5");
    rotor_graph_free(&g);
}

/* house-style.md: "A 10^15 dimension is an error message, not an overflow." */
Test(graph, element_and_byte_overflow_are_errors) {
    rotor_graph g;
    rotor_graph_init(&g, "g");
    const int64_t huge[3] = {1000000000000000LL, 1000000, 1000};
    value_fails(&g, "e", ROTOR_DTYPE_F16, 3, huge, ROTOR_ROLE_ACTIVATION,
                "value 'e': element count overflows 64 bits");
    const int64_t edge[1] = {(int64_t)1 << 62}; /* 2^62 elements fit, 2^63 bytes do not */
    value_fails(&g, "b", ROTOR_DTYPE_F32, 1, edge, ROTOR_ROLE_WEIGHT, "value 'b': byte count overflows 64 bits");
    int v = -1;
    cr_assert_eq(rotor_graph_add_value(&g, "b", ROTOR_DTYPE_BOOL, 1, edge, ROTOR_ROLE_WEIGHT, &v, NULL), ROTOR_OK,
                 "2^62 one-byte elements fit");
    rotor_graph_free(&g);
}

/* Copying a value's own shape must survive the value array moving. */
Test(graph, a_shape_taken_from_another_value_survives_growth) {
    rotor_graph g;
    rotor_graph_init(&g, "g");
    int a = value(&g, "a", ROTOR_ROLE_ACTIVATION, SHP(3, 5, 7));
    char name[16];
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof name, "copy%d", i);
        int v = -1;
        cr_assert_eq(rotor_graph_add_value(&g, name, ROTOR_DTYPE_F16, g.values[a].rank, g.values[a].shape,
                                           ROTOR_ROLE_ACTIVATION, &v, NULL),
                     ROTOR_OK);
        cr_assert_eq(g.values[v].shape[2], 7);
        cr_assert_eq(g.values[v].elements, 105);
    }
    rotor_graph_free(&g);
}

Test(graph, value_names_are_unique) {
    rotor_graph g;
    rotor_graph_init(&g, "g");
    value(&g, "a", ROTOR_ROLE_ACTIVATION, SHP(2));
    value_fails(&g, "a", ROTOR_DTYPE_F32, 1, (const int64_t[]){3}, ROTOR_ROLE_WEIGHT, "value 'a' is defined twice");
    rotor_graph_free(&g);
}

/* The name index must survive its rehashes: 5000 values, each found. */
Test(graph, find_value_finds_every_one_of_5000_values) {
    rotor_graph g;
    rotor_graph_init(&g, "g");
    char name[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "layers.%d.w", i);
        cr_assert_eq(value(&g, name, ROTOR_ROLE_WEIGHT, SHP(1 + i % 7)), i);
    }
    for (int i = 4999; i >= 0; i--) {
        snprintf(name, sizeof name, "layers.%d.w", i);
        cr_assert_eq(rotor_graph_find_value(&g, name), i, "%s", name);
    }
    cr_assert_eq(rotor_graph_find_value(&g, "layers.5000.w"), -1);
    cr_assert_eq(rotor_graph_find_value(&g, ""), -1);
    cr_assert_eq(rotor_graph_find_value(&g, NULL), -1);
    value_fails(&g, "layers.123.w", ROTOR_DTYPE_F16, 1, (const int64_t[]){1}, ROTOR_ROLE_WEIGHT, "defined twice");
    rotor_graph_free(&g);
}

/* ---- operators -------------------------------------------------------------- */

Test(graph, linear_layer_links_producers_consumers_and_counts_flops) {
    lin l;
    lin_build(&l);
    rotor_graph *g = &l.g;
    cr_assert_eq(g->nops, 3);
    cr_assert_eq(g->values[l.y].producer, 0);
    cr_assert_eq(g->values[l.z].producer, 1);
    cr_assert_eq(g->values[l.y].consumers, 1);
    cr_assert_eq(g->values[l.w].consumers, 1);
    cr_assert_eq(g->values[l.x].producer, -1);
    /* MatMul: 2 m k n; bias add and relu: one FLOP per point */
    cr_assert_eq(g->ops[0].flops, 2.0 * 4 * 8 * 16);
    cr_assert_eq(g->ops[1].flops, 4.0 * 16);
    cr_assert_eq(g->ops[2].flops, 4.0 * 16);
    /* bytes: inputs and outputs in f16; weight bytes only the weights */
    cr_assert_eq(g->ops[0].bytes, 2 * (32 + 128 + 64));
    cr_assert_eq(g->ops[0].weight_bytes, 2 * 128);
    cr_assert_eq(g->ops[1].weight_bytes, 2 * 16);
    cr_assert_eq(g->ops[2].weight_bytes, 0);
    cr_assert_eq(g->ops[0].tensor_value[1], l.x);
    cr_assert_eq(g->ops[0].tensor_value[2], l.w);
    cr_assert_eq(g->ops[0].tensor_value[3], -1, "tensors past the expression's name nothing");
    cr_assert_eq(rotor_graph_validate(g, NULL), ROTOR_OK);
    rotor_graph_free(g);
}

Test(graph, unknown_input_and_output_are_refused) {
    lin l;
    lin_build(&l);
    int extra = value(&l.g, "extra", ROTOR_ROLE_ACTIVATION, SHP(4, 16));
    op_fails(&l.g, desc("neg", "Neg", "E[m,n] = neg(R[m,n])", "m=4,n=16", IDX(99), IDX(extra)),
             "op 'neg' (Neg): input 0 names no value");
    op_fails(&l.g, desc("neg", "Neg", "E[m,n] = neg(R[m,n])", "m=4,n=16", IDX(l.r), IDX(-1)),
             "op 'neg' (Neg): output 0 names no value");
    rotor_graph_free(&l.g);
}

Test(graph, a_value_is_produced_once) {
    lin l;
    lin_build(&l);
    op_fails(&l.g, desc("again", "Relu", "Z[m,n] = relu(Y[m,n])", "m=4,n=16", IDX(l.y), IDX(l.z)),
             "op 'again' (Relu): output 'z' is already produced by op 'bias'");
    rotor_graph_free(&l.g);
}

/* An operator may not write a value that an earlier operator read: the op
 * array is a topological order by construction. */
Test(graph, writing_a_value_already_read_is_not_topological) {
    rotor_graph g;
    rotor_graph_init(&g, "g");
    int a = value(&g, "a", ROTOR_ROLE_ACTIVATION, SHP(4));
    int b = value(&g, "b", ROTOR_ROLE_ACTIVATION, SHP(4));
    int c = value(&g, "c", ROTOR_ROLE_ACTIVATION, SHP(4));
    op_ok(&g, desc("first", "Relu", "C[i] = relu(B[i])", "i=4", IDX(b), IDX(c)));
    op_fails(&g, desc("late", "Relu", "B[i] = relu(A[i])", "i=4", IDX(a), IDX(b)),
             "op 'late' (Relu): output 'b' is read by an earlier operator (not topological order)");
    rotor_graph_free(&g);
}

Test(graph, outputs_may_not_be_weights_repeated_or_inputs) {
    lin l;
    int e = lin_and_e(&l);
    int w2 = value(&l.g, "w2", ROTOR_ROLE_WEIGHT, SHP(4, 16));
    op_fails(&l.g, desc("w", "Relu", "W[m,n] = relu(R[m,n])", "m=4,n=16", IDX(l.r), IDX(w2)),
             "op 'w' (Relu): output 'w2' is a weight");
    rotor_op_desc d = desc("two", "Relu", "E[m,n] = relu(R[m,n])", "m=4,n=16", IDX(l.r), IDX(e, e));
    op_fails(&l.g, d, "op 'two' (Relu): output 'e' is listed twice");
    op_fails(&l.g, desc("self", "Relu", "E[m,n] = relu(R[m,n])", "m=4,n=16", IDX(e), IDX(e)),
             "op 'self' (Relu): 'e' is both an input and an output");
    rotor_op_desc none = desc("none", "Relu", NULL, NULL, IDX(l.r), NULL, 0);
    op_fails(&l.g, none, "op 'none' (Relu): an operator needs at least one output");
    rotor_graph_free(&l.g);
}

Test(graph, expression_errors_name_the_operator_and_the_text) {
    lin l;
    int e = lin_and_e(&l);
    static const struct {
        const char *name, *type, *expr, *dims, *msg;
    } bad[] = {
        {"bad", "Relu", "E[m,n] = relu(R[m,n]", "m=4,n=16",
         "op 'bad' (Relu): expression 'E[m,n] = relu(R[m,n]' (m=4,n=16): column 21: expected ')'"},
        {"unbound", "Relu", "E[m,n] = relu(R[m,n])", "m=4", "axis 'n' has no extent"},
        {"", "AnOperatorTypeNameOfFortyEightCharactersIsTooLong", NULL, NULL, "type name is too long"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        op_fails(&l.g, desc(bad[i].name, bad[i].type, bad[i].expr, bad[i].dims, IDX(l.r), IDX(e)), bad[i].msg);
    rotor_graph_free(&l.g);
}

/* The expression's tensors must describe the values they name (docs/graph.md). */
Test(graph, expression_tensor_shapes_must_match_their_values) {
    lin l;
    int e = lin_and_e(&l);
    /* the output covers its value exactly: 4 x 8 is not 4 x 16 */
    op_fails(&l.g, desc("short", "Relu", "E[m,n] = relu(R[m,n])", "m=4,n=8", IDX(l.r), IDX(e)),
             "op 'short' (Relu): expression tensor E has 32 elements but value 'e' has 64");
    /* an input may be a slice, but not larger than its value */
    op_fails(&l.g, desc("long", "Relu", "E[m,n] = relu(R[m,n])", "m=8,n=16", IDX(l.r), IDX(e)),
             "expression tensor E has 128 elements but value 'e' has 64");
    int half = value(&l.g, "half", ROTOR_ROLE_ACTIVATION, SHP(2, 16));
    op_ok(&l.g, desc("slice", "Relu", "H[m,n] = relu(R[m,n])", "m=2,n=16", IDX(l.r), IDX(half)));
    /* merged or split dimensions are fine when the counts agree */
    int split = value(&l.g, "split", ROTOR_ROLE_ACTIVATION, SHP(4, 4, 4));
    op_ok(&l.g, desc("heads", "Reshape", "S[m,h,k] = R[m,h,k]", "m=4,h=4,k=4", IDX(l.r), IDX(split)));
    cr_assert_eq(rotor_graph_validate(&l.g, NULL), ROTOR_OK);
    rotor_graph_free(&l.g);
}

Test(graph, expression_tensors_name_only_the_ops_own_values) {
    lin l;
    int e = lin_and_e(&l);
    rotor_op_desc d = desc("wrong", "Relu", "E[m,n] = relu(R[m,n])", "m=4,n=16", IDX(l.r), IDX(e));
    d.tensor_value[1] = l.z; /* z has the right shape but is not an input */
    op_fails(&l.g, d, "op 'wrong' (Relu): expression tensor R names 'z', which is not one of the op's inputs");
    d = desc("wrong", "Relu", "E[m,n] = relu(R[m,n])", "m=4,n=16", IDX(l.r), IDX(e));
    d.tensor_value[0] = l.r;
    op_fails(&l.g, d, "expression tensor E names 'r', which is not one of the op's outputs");
    d = desc("far", "Relu", "E[m,n] = relu(R[m,n])", "m=4,n=16", IDX(l.r), IDX(e));
    d.tensor_value[1] = 1000;
    op_fails(&l.g, d, "expression tensor 1 names no value");
    /* -1 leaves a tensor unnamed (a folded constant) */
    d = desc("const", "Mul", "E[m,n] = R[m,n] * C[n]", "m=4,n=16", IDX(l.r), IDX(e));
    d.tensor_value[2] = -1;
    op_ok(&l.g, d);
    rotor_graph_free(&l.g);
}

/* A decode step writes one position of a kv-cache value: its output tensor
 * may be a slice, which an activation's may not. */
Test(graph, a_kv_cache_output_may_be_written_in_part) {
    rotor_graph g;
    rotor_graph_init(&g, "g");
    int k = value(&g, "k_new", ROTOR_ROLE_ACTIVATION, SHP(2, 8, 1, 64));
    int cache = value(&g, "k_cache", ROTOR_ROLE_KV_CACHE, SHP(2, 8, 100, 64));
    int act = value(&g, "k_act", ROTOR_ROLE_ACTIVATION, SHP(2, 8, 100, 64));
    op_fails(&g, desc("w_act", "KVCacheWrite", "C[b,h,t,k] = X[b,h,t,k]", "b=2,h=8,t=1,k=64", IDX(k), IDX(act)),
             "expression tensor C has 1024 elements but value 'k_act' has 102400");
    op_ok(&g, desc("w", "KVCacheWrite", "C[b,h,t,k] = X[b,h,t,k]", "b=2,h=8,t=1,k=64", IDX(k), IDX(cache)));
    cr_assert_eq(g.values[cache].producer, 0);
    cr_assert_eq(rotor_graph_validate(&g, NULL), ROTOR_OK);
    rotor_graph_free(&g);
}

/* Vendor ops (T10 §4.2: outside tensor expressions) cost one FLOP per element
 * read or written; a Gather reads only the rows it writes. */
Test(graph, vendor_ops_cost_the_elements_they_read_and_write) {
    rotor_graph g;
    rotor_graph_init(&g, "g");
    int table = value(&g, "table", ROTOR_ROLE_WEIGHT, SHP(50000, 64));
    int ids = value(&g, "ids", ROTOR_ROLE_ACTIVATION, SHP(2, 10));
    int emb = value(&g, "emb", ROTOR_ROLE_ACTIVATION, SHP(2, 10, 64));
    int other = value(&g, "other", ROTOR_ROLE_ACTIVATION, SHP(2, 5, 64));
    int cat = value(&g, "cat", ROTOR_ROLE_ACTIVATION, SHP(2, 15, 64));
    int gi = op_ok(&g, desc("gather", "Gather", NULL, NULL, IDX(table, ids), IDX(emb)));
    int ci = op_ok(&g, desc("concat", "Concat", NULL, NULL, IDX(emb, other), IDX(cat)));
    cr_assert(g.ops[gi].vendor);
    /* 1280 rows read, 20 ids read, 1280 written: not the 3.2M table */
    cr_assert_eq(g.ops[gi].flops, 1280.0 + 20 + 1280);
    cr_assert_eq(g.ops[ci].flops, 1280.0 + 640 + 1920);
    /* bytes still count whole values: the table is what must be resident */
    cr_assert_eq(g.ops[gi].weight_bytes, 2 * 50000 * 64);
    char buf[160];
    rotor_graph_op_string(&g, gi, buf, sizeof buf);
    cr_assert_str_eq(buf, "vendor Gather(table, ids) -> emb");
    rotor_graph_op_tensors_string(&g, gi, buf, sizeof buf);
    cr_assert_str_eq(buf, "", "a vendor op has no expression tensors");
    rotor_graph_free(&g);
}

Test(graph, op_strings_show_expression_extents_and_bindings) {
    lin l;
    lin_build(&l);
    char buf[256];
    rotor_graph_op_string(&l.g, 0, buf, sizeof buf);
    cr_assert_str_eq(buf, "Y[m,n] += X[m,k] * W[k,n]  (m=4,k=8,n=16)");
    rotor_graph_op_tensors_string(&l.g, 0, buf, sizeof buf);
    cr_assert_str_eq(buf, "Y=y 4x16, X=x 4x8, W=w 8x16");
    /* truncation keeps the terminator */
    rotor_graph_op_string(&l.g, 0, buf, 10);
    cr_assert_str_eq(buf, "Y[m,n] +=");
    rotor_graph_op_string(&l.g, 7, buf, sizeof buf);
    cr_assert_str_eq(buf, "", "no such op");
    rotor_graph_free(&l.g);
}

/* ---- totals, histogram ----------------------------------------------------- */

/* Tied embeddings (OPT, Gemma 2): one table read by the Gather and the LM
 * head counts once; a weight no operator reads does not count. */
Test(graph, totals_count_each_weight_once) {
    rotor_graph g;
    rotor_graph_init(&g, "tied");
    int table = value(&g, "table", ROTOR_ROLE_WEIGHT, SHP(100, 8));
    value(&g, "unused", ROTOR_ROLE_WEIGHT, SHP(1000));
    int ids = value(&g, "ids", ROTOR_ROLE_ACTIVATION, SHP(3));
    int kv = value(&g, "kv", ROTOR_ROLE_KV_CACHE, SHP(3, 8));
    int h = value(&g, "h", ROTOR_ROLE_ACTIVATION, SHP(3, 8));
    int s = value(&g, "s", ROTOR_ROLE_ACTIVATION, SHP(3, 8));
    int logits = value(&g, "logits", ROTOR_ROLE_ACTIVATION, SHP(3, 100));
    op_ok(&g, desc("embed", "Gather", NULL, NULL, IDX(table, ids), IDX(h)));
    op_ok(&g, desc("add", "Add", "S[t,d] = H[t,d] + K[t,d]", "t=3,d=8", IDX(h, kv), IDX(s)));
    op_ok(&g, desc("head", "MatMul", "L[t,v] += S[t,d] * E[v,d]", "t=3,d=8,v=100", IDX(s, table), IDX(logits)));
    rotor_graph_totals t;
    rotor_graph_totals_of(&g, &t);
    cr_assert_eq(t.ops, 3);
    cr_assert_eq(t.vendor_ops, 1);
    cr_assert_eq(t.weight_params, 800, "table once; unused not at all");
    cr_assert_eq(t.weight_bytes, 1600);
    cr_assert_eq(t.kv_bytes, 48);
    cr_assert_eq(t.activation_bytes, 2 * (3 + 24 + 24 + 300));
    cr_assert_eq(t.flops, (24.0 + 3 + 24) + 24.0 + 2.0 * 3 * 8 * 100);
    rotor_graph_free(&g);
}

Test(graph, histogram_sorts_by_count_then_name) {
    lin l;
    int e = lin_and_e(&l);
    int f = value(&l.g, "f", ROTOR_ROLE_ACTIVATION, SHP(4, 16));
    op_ok(&l.g, desc("relu2", "Relu", "E[m,n] = relu(R[m,n])", "m=4,n=16", IDX(l.r), IDX(e)));
    op_ok(&l.g, desc("add2", "Add", "F[m,n] = E[m,n] + R[m,n]", "m=4,n=16", IDX(e, l.r), IDX(f)));
    char *h = rotor_graph_histogram(&l.g);
    cr_assert_str_eq(h, "Add 2, Relu 2, MatMul 1");
    free(h);
    cr_assert_eq(rotor_graph_count_type(&l.g, "Relu"), 2);
    cr_assert_eq(rotor_graph_count_type(&l.g, "Conv"), 0);
    rotor_graph empty;
    rotor_graph_init(&empty, "empty");
    h = rotor_graph_histogram(&empty);
    cr_assert_str_eq(h, "");
    free(h);
    rotor_graph_free(&empty);
    rotor_graph_free(&l.g);
}

Test(graph, shape_strings) {
    rotor_graph g;
    rotor_graph_init(&g, "g");
    int a = value(&g, "a", ROTOR_ROLE_ACTIVATION, SHP(1, 128, 768));
    int s = -1;
    rotor_graph_add_value(&g, "s", ROTOR_DTYPE_F32, 0, NULL, ROTOR_ROLE_ACTIVATION, &s, NULL);
    char buf[32];
    rotor_graph_shape_string(&g.values[a], buf, sizeof buf);
    cr_assert_str_eq(buf, "1x128x768");
    rotor_graph_shape_string(&g.values[s], buf, sizeof buf);
    cr_assert_str_eq(buf, "scalar");
    rotor_graph_shape_string(&g.values[a], buf, 6);
    cr_assert_str_eq(buf, "1x128");
    rotor_graph_free(&g);
}

/* ---- validation ------------------------------------------------------------- */

Test(graph, validate_catches_what_the_api_would_have_refused) {
    lin l;
    lin_build(&l);
    rotor_error err = {{0}};
    cr_assert_eq(rotor_graph_validate(&l.g, &err), ROTOR_OK, "%s", err.msg);
    l.g.values[l.y].consumers = 2;
    cr_assert_eq(rotor_graph_validate(&l.g, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "graph 'linear': value 'y': recorded 2 consumers, counted 1");
    l.g.values[l.y].consumers = 1;
    /* swap the first two operators: the bias add now reads y before the MatMul writes it */
    rotor_op tmp = l.g.ops[0];
    l.g.ops[0] = l.g.ops[1];
    l.g.ops[1] = tmp;
    cr_assert_eq(rotor_graph_validate(&l.g, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "op 'bias' (Add): input 'y' is produced later (not topological order)");
    l.g.ops[1] = l.g.ops[0];
    l.g.ops[0] = tmp;
    l.g.values[l.z].elements = 63;
    cr_assert_eq(rotor_graph_validate(&l.g, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "value 'z': shape, element and byte counts disagree");
    l.g.values[l.z].elements = 64;
    cr_assert_eq(rotor_graph_validate(&l.g, &err), ROTOR_OK, "%s", err.msg);
    rotor_graph_free(&l.g);
}

Test(graph, set_output_marks_a_value) {
    lin l;
    lin_build(&l);
    rotor_error err = {{0}};
    cr_assert_eq(rotor_graph_set_output(&l.g, l.r, &err), ROTOR_OK);
    cr_assert(l.g.values[l.r].is_output);
    cr_assert_eq(rotor_graph_set_output(&l.g, 42, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "output 42 names no value");
    rotor_graph_free(&l.g);
}

/* ---- JSON ------------------------------------------------------------------- */

/* The exact text of the linear layer (docs/graph.md, format "rotor-graph"
 * version 1): key order, number spelling and all. */
Test(graph, json_of_the_linear_layer_is_the_documented_text) {
    lin l;
    lin_build(&l);
    rotor_graph_set_output(&l.g, l.r, NULL);
    char *s = rotor_graph_to_json(&l.g);
    const char *want =
        "{\"format\":\"rotor-graph\",\"version\":1,\"rotor_version\":\"" ROTOR_VERSION "\",\"name\":\"linear\","
        "\"totals\":{\"ops\":3,\"vendor_ops\":0,\"flops\":1152,\"weight_params\":144,\"weight_bytes\":288,"
        "\"kv_cache_bytes\":0,\"activation_bytes\":448},"
        "\"values\":[{\"name\":\"x\",\"dtype\":\"f16\",\"shape\":[4,8],\"role\":\"activation\",\"bytes\":64},"
        "{\"name\":\"w\",\"dtype\":\"f16\",\"shape\":[8,16],\"role\":\"weight\",\"bytes\":256},"
        "{\"name\":\"b\",\"dtype\":\"f16\",\"shape\":[16],\"role\":\"weight\",\"bytes\":32},"
        "{\"name\":\"y\",\"dtype\":\"f16\",\"shape\":[4,16],\"role\":\"activation\",\"bytes\":128},"
        "{\"name\":\"z\",\"dtype\":\"f16\",\"shape\":[4,16],\"role\":\"activation\",\"bytes\":128},"
        "{\"name\":\"r\",\"dtype\":\"f16\",\"shape\":[4,16],\"role\":\"activation\",\"bytes\":128,\"output\":true}],"
        "\"ops\":[{\"name\":\"mm\",\"type\":\"MatMul\",\"expr\":\"Y[m,n] += X[m,k] * W[k,n]\","
        "\"dims\":\"m=4,k=8,n=16\",\"tensors\":[\"y\",\"x\",\"w\"],\"inputs\":[\"x\",\"w\"],\"outputs\":[\"y\"],"
        "\"flops\":1024,\"bytes\":448,\"weight_bytes\":256},"
        "{\"name\":\"bias\",\"type\":\"Add\",\"expr\":\"Z[m,n] = Y[m,n] + B[n]\",\"dims\":\"m=4,n=16\","
        "\"tensors\":[\"z\",\"y\",\"b\"],\"inputs\":[\"y\",\"b\"],\"outputs\":[\"z\"],\"flops\":64,\"bytes\":288,"
        "\"weight_bytes\":32},"
        "{\"name\":\"relu\",\"type\":\"Relu\",\"expr\":\"R[m,n] = relu(Z[m,n])\",\"dims\":\"m=4,n=16\","
        "\"tensors\":[\"r\",\"z\"],\"inputs\":[\"z\"],\"outputs\":[\"r\"],\"flops\":64,\"bytes\":256,"
        "\"weight_bytes\":0}]}";
    cr_assert_str_eq(s, want);
    free(s);
    rotor_graph_free(&l.g);
}

Test(graph, json_is_stable_across_calls_and_rebuilds) {
    lin a, b;
    lin_build(&a);
    lin_build(&b);
    char *s1 = rotor_graph_to_json(&a.g), *s2 = rotor_graph_to_json(&a.g), *s3 = rotor_graph_to_json(&b.g);
    cr_assert_str_eq(s1, s2);
    cr_assert_str_eq(s1, s3);
    cJSON *root = cJSON_Parse(s1);
    cr_assert_not_null(root);
    cr_assert_str_eq(cJSON_GetObjectItem(root, "format")->valuestring, "rotor-graph");
    cr_assert_eq(cJSON_GetObjectItem(root, "version")->valueint, 1);
    cJSON_Delete(root);
    free(s1);
    free(s2);
    free(s3);
    rotor_graph_free(&a.g);
    rotor_graph_free(&b.g);
}

Test(graph, json_writes_vendor_ops_with_a_null_expression) {
    rotor_graph g;
    rotor_graph_init(&g, "v");
    int x = value(&g, "x", ROTOR_ROLE_ACTIVATION, SHP(2, 4));
    int y = value(&g, "y", ROTOR_ROLE_ACTIVATION, SHP(2, 4));
    op_ok(&g, desc("pool", "MaxPool", NULL, NULL, IDX(x), IDX(y)));
    char *s = rotor_graph_to_json(&g);
    cr_assert(strstr(s, "{\"name\":\"pool\",\"type\":\"MaxPool\",\"expr\":null,\"inputs\":[\"x\"],"
                        "\"outputs\":[\"y\"],\"flops\":16,") != NULL,
              "%s", s);
    cr_assert(strstr(s, "\"vendor_ops\":1") != NULL);
    free(s);
    rotor_graph_free(&g);
}

/* ---- rotor_graph_add_bound_op ------------------------------------------- */

/* A pass copies an operator's bound expression into another graph: the copy
 * is the expression rotor_graph_add_op would parse from its text, with the
 * same FLOPs and the bytes of the new graph's values. */
/* a (32x64) and w (64x16) into c (32 x cn): a MatMul's values. */
static void mm_values(rotor_graph *g, const char *name, int64_t cn, int *a, int *w, int *c) {
    rotor_graph_init(g, name);
    *a = value(g, "a", ROTOR_ROLE_ACTIVATION, SHP(32, 64));
    *w = value(g, "w", ROTOR_ROLE_WEIGHT, SHP(64, 16));
    *c = value(g, "c", ROTOR_ROLE_ACTIVATION, SHP(32, cn));
}

Test(graph, a_bound_expression_copies_with_the_flops_and_bytes_add_op_gives) {
    rotor_graph g, h;
    int a, w, c, a2, w2, c2;
    mm_values(&g, "from", 16, &a, &w, &c);
    mm_values(&h, "to", 16, &a2, &w2, &c2);
    int o = op_ok(&g, desc("mm", "MatMul", "C[m,n] += A[m,k] * B[k,n]", "m=32,k=64,n=16", IDX(a, w), IDX(c)));
    rotor_op_desc d = desc("mm", "MatMul", "ignored", "ignored", IDX(a2, w2), IDX(c2));
    rotor_error err = {{0}};
    int i = -1;
    cr_assert_eq(rotor_graph_add_bound_op(&h, &d, &g.ops[o].expr, &i, &err), ROTOR_OK, "%s", err.msg);
    const rotor_op *x = &g.ops[o], *y = &h.ops[i];
    cr_assert_str_eq(y->expr.text, "C[m,n] += A[m,k] * B[k,n]");
    cr_assert_eq(y->expr.naxes, 3);
    for (int k = 0; k < 3; k++) cr_assert_eq(y->expr.extent[k], x->expr.extent[k]);
    cr_assert_eq(y->expr.ntensors, 3);
    cr_assert(y->expr.bound && y->expr.accumulate);
    cr_assert_eq(y->expr.op_class, ROTOR_OP_CONTRACTION);
    for (int t = 0; t < 3; t++) cr_assert_eq(y->tensor_value[t], d.tensor_value[t]);
    cr_assert_eq(y->flops, 2.0 * 32 * 64 * 16);
    cr_assert_eq(y->bytes, x->bytes);
    cr_assert_eq(y->weight_bytes, 64 * 16 * 2);
    cr_assert_eq(h.values[c2].producer, i);
    cr_assert_eq(h.values[a2].consumers, 1);
    cr_assert_eq(rotor_graph_validate(&h, &err), ROTOR_OK, "%s", err.msg);
    rotor_graph_free(&g);
    rotor_graph_free(&h);
}

/* The copy is checked as add_op checks: tensors against their values, the
 * expression bound with extents rotor_expr_bind accepts, byte counts in
 * int64.  Each refusal names the operator. */
Test(graph, a_bound_expression_is_checked_as_add_op_checks_one) {
    rotor_graph g;
    int a, w, c;
    mm_values(&g, "checks", 8, &a, &w, &c);
    rotor_expr e;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_expr_make("C[m,n] += A[m,k] * B[k,n]", "m=32,k=64,n=16", &e, &err), ROTOR_OK);
    rotor_op_desc d = desc("mm", "MatMul", NULL, NULL, IDX(a, w), IDX(c));
    d.tensor_value[0] = c, d.tensor_value[1] = a, d.tensor_value[2] = w;
    cr_assert_eq(rotor_graph_add_bound_op(&g, &d, &e, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "op 'mm' (MatMul): expression tensor C has 512 elements but value 'c' has 256");
    rotor_expr unbound = e;
    unbound.bound = false;
    d.tensor_value[0] = -1;
    cr_assert_eq(rotor_graph_add_bound_op(&g, &d, &unbound, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "op 'mm' (MatMul): expression 'C[m,n] += A[m,k] * B[k,n]' is not bound");
    rotor_expr huge = e;
    huge.extent[0] = ROTOR_EXTENT_MAX + 1;
    cr_assert_eq(rotor_graph_add_bound_op(&g, &d, &huge, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "is not bound as rotor_expr_bind binds");
    cr_assert_eq(g.nops, 0);
    /* three values of 2^62 bytes: their sum is no int64 */
    int p = value(&g, "p", ROTOR_ROLE_ACTIVATION, SHP((int64_t)1 << 31, (int64_t)1 << 30));
    int q = value(&g, "q", ROTOR_ROLE_ACTIVATION, SHP((int64_t)1 << 31, (int64_t)1 << 30));
    int r = value(&g, "r", ROTOR_ROLE_ACTIVATION, SHP((int64_t)1 << 31, (int64_t)1 << 30));
    rotor_op_desc v = desc("big", "Add", NULL, NULL, IDX(p, q), IDX(r));
    cr_assert_eq(rotor_graph_add_bound_op(&g, &v, NULL, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "op 'big' (Add): byte count overflows 64 bits");
    cr_assert_eq(g.nops, 0);
    rotor_graph_free(&g);
}
