/* test_onnxflow.c — control flow at import (src/model/onnxflow.c; docs/onnx.md,
 * "Control flow"): Scan and Loop unrolled with the shapes ONNX gives them,
 * an If on a condition that folds (Equal of a --value and a constant), the
 * refusals of invalid nodes naming the attribute, and names that reach the
 * output as they are in the file.
 *
 * The shapes pinned here are onnx.shape_inference's (onnx 1.12, Debian's
 * python3-onnx, strict mode) on the same graphs written with
 * onnx.helper; libonnx-testdata's Scan, Loop and If models are checked
 * against their reference outputs by test_onnxshape.c. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxbuild.h"
#include "rotor/model/graph.h"
#include "rotor/model/onnx.h"
#include "rotor/run/run.h"

#define assert_msg_has(err, s) \
    cr_assert(strstr((err).msg, (s)) != NULL, "message \"%s\" lacks \"%s\"", (err).msg, (s))

/* ---- builders for subgraphs (onnxbuild.h builds the main graph) ---------------------- */

static Onnx__GraphProto *sub(mb *b) {
    Onnx__GraphProto *g = mb_alloc(b, sizeof *g);
    onnx__graph_proto__init(g);
    g->node = mb_alloc(b, sizeof(void *) * 16);
    g->input = mb_alloc(b, sizeof(void *) * 8);
    g->output = mb_alloc(b, sizeof(void *) * 8);
    return g;
}

/* A node of subgraph g (mb_node's, moved off the main graph). */
static Onnx__NodeProto *sub_node(mb *b, Onnx__GraphProto *g, const char *op, const char *ins, const char *outs) {
    Onnx__NodeProto *n = mb_node(b, op, "", ins, outs);
    b->graph.n_node--;
    g->node[g->n_node++] = n;
    return n;
}

/* A subgraph input of the given shape (float unless type), or an output
 * that declares no shape (rank < 0). */
static void sub_in(mb *b, Onnx__GraphProto *g, const char *name, int type, int rank, const int64_t *dims) {
    g->input[g->n_input++] = mb_vi(b, name, type, rank, dims);
}

static void sub_out(mb *b, Onnx__GraphProto *g, const char *name) {
    Onnx__ValueInfoProto *v = mb_vi(b, name, 1, 0, NULL);
    v->type->tensor_type->shape = NULL;
    g->output[g->n_output++] = v;
}

static void attr_g(mb *b, Onnx__NodeProto *n, const char *name, Onnx__GraphProto *g) {
    Onnx__AttributeProto *a = mb_alloc(b, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = mb_str(b, name);
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
    a->g = g;
    n->attribute[n->n_attribute++] = a;
}

static Onnx__AttributeProto *attr_of(Onnx__NodeProto *n, const char *name) {
    for (size_t a = 0; a < n->n_attribute; a++)
        if (!strcmp(n->attribute[a]->name, name)) return n->attribute[a];
    return NULL;
}

/* A graph input of the given ONNX type. */
static void input_typed(mb *b, const char *name, int type, int rank, const int64_t *dims) {
    b->inputs[b->graph.n_input++] = mb_vi(b, name, type, rank, dims);
}

/* The model's bytes (malloc'd), each '@' made a NUL when nul is set
 * (protobuf-c packs C strings, which cannot hold one). */
static uint8_t *packed(mb *b, bool nul, size_t *len) {
    *len = onnx__model_proto__get_packed_size(&b->model);
    uint8_t *buf = malloc(*len ? *len : 1);
    cr_assert(buf);
    onnx__model_proto__pack(&b->model, buf);
    for (size_t k = 0; nul && k < *len; k++)
        if (buf[k] == '@') buf[k] = 0;
    return buf;
}

/* The graph outputs as the importer infers them. */
static rotor_status outputs(mb *b, const rotor_onnx_options *o, rotor_onnx_output **out, int *n, rotor_error *err) {
    size_t len;
    uint8_t *buf = packed(b, false, &len);
    rotor_status st = rotor_onnx_outputs(buf, len, "m.onnx", o, out, n, err);
    free(buf);
    return st;
}

/* Runs g directly (no plans) with inputs a and b given by name. */
static void run_direct(const rotor_graph *g, const char *a, const double *av, const char *b, const double *bv,
                       rotor_run_result *r) {
    const double **in = calloc((size_t)g->nvalues, sizeof *in);
    cr_assert(in);
    in[rotor_graph_find_value(g, a)] = av;
    in[rotor_graph_find_value(g, b)] = bv;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_run(g, in, NULL, r, &err), ROTOR_OK, "%s", err.msg);
    free(in);
}

static void assert_shape(const rotor_onnx_output *o, const char *name, int rank, const int64_t *dims) {
    cr_assert_str_eq(o->name, name);
    cr_assert_eq(o->rank, rank, "%s: rank %d, want %d", name, o->rank, rank);
    for (int d = 0; d < rank; d++)
        cr_assert_eq(o->shape[d], dims[d], "%s: extent %d is %lld, want %lld", name, d, (long long)o->shape[d],
                     (long long)dims[d]);
}

/* The model is refused with want in a message naming its Scan or Loop. */
static void refused(mb *b, const char *want) {
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(b, NULL, &g, NULL, &err), ROTOR_ERR_INPUT, "imported; want \"%s\"", want);
    assert_msg_has(err, want);
    cr_assert(strstr(err.msg, "m.onnx: node 'scan' (op Scan, domain ai.onnx): ") == err.msg ||
                  strstr(err.msg, "m.onnx: node 'loop' (op Loop, domain ai.onnx): ") == err.msg,
              "%s", err.msg);
    rotor_graph_free(&g);
}

/* ---- Scan ----------------------------------------------------------------------------- */

/* MIGraphX's scan_test3 form: state s [2, 2], scan inputs x and w; the body
 * adds both slices to the state and emits it (o1) and its column sums (o2,
 * ReduceSum over axis 0).  Opset 11, where negative axes arrive. */
static Onnx__NodeProto *scan_model(mb *b, int xr, const int64_t *xs, int wr, const int64_t *ws) {
    mb_init(b, 11);
    mb_input(b, "s", DIMS(2, 2));
    mb_input(b, "x", xr, xs);
    mb_input(b, "w", wr, ws);
    Onnx__GraphProto *g = sub(b);
    sub_in(b, g, "s_in", 1, DIMS(2, 2));
    sub_in(b, g, "x_t", 1, DIMS(2, 2));
    sub_in(b, g, "w_t", 1, DIMS(1));
    sub_node(b, g, "Add", "s_in x_t", "a");
    sub_node(b, g, "Add", "a w_t", "s_out");
    sub_node(b, g, "Identity", "s_out", "o1");
    Onnx__NodeProto *rs = sub_node(b, g, "ReduceSum", "s_out", "o2");
    mb_attr_ints(b, rs, "axes", DIMS(0));
    mb_attr_i(b, rs, "keepdims", 0);
    sub_out(b, g, "s_out");
    sub_out(b, g, "o1");
    sub_out(b, g, "o2");
    Onnx__NodeProto *n = mb_node(b, "Scan", "scan", "s x w", "final outs1 outs2");
    attr_g(b, n, "body", g);
    mb_attr_i(b, n, "num_scan_inputs", 2);
    mb_output(b, "final");
    mb_output(b, "outs1");
    mb_output(b, "outs2");
    return n;
}

/* onnx.shape_inference: final [2, 2], outs1 [2, 3, 2], outs2 [2, 3]; rotor
 * once stacked a negative axis at 0 and gave outs2 [3, 2] (issue 47). */
Test(onnxflow, scan_output_axes_count_from_the_back_of_the_stacked_output) {
    mb b;
    Onnx__NodeProto *n = scan_model(&b, DIMS(3, 2, 2), DIMS(3, 1));
    mb_attr_ints(&b, n, "scan_output_axes", DIMS(1, -1));
    rotor_onnx_output *o;
    int no;
    rotor_error err = {{0}};
    cr_assert_eq(outputs(&b, NULL, &o, &no, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(no, 3);
    assert_shape(&o[0], "final", DIMS(2, 2));
    assert_shape(&o[1], "outs1", DIMS(2, 3, 2));
    assert_shape(&o[2], "outs2", DIMS(2, 3));
    rotor_onnx_outputs_free(o, no);
    mb_free(&b);
}

/* onnx.shape_inference: with scan_input_axes [-2, 0], directions [0, 1],
 * scan_output_axes [2, 1], directions [1, 1] over x [2, 3, 2]: final
 * [2, 2], outs1 [2, 2, 3], outs2 [2, 3]; with scan_input_axes [2, -1] over
 * x [2, 2, 4], w [1, 4] and scan_output_axes [-3, -2]: outs1 [4, 2, 2],
 * outs2 [4, 2]. */
Test(onnxflow, negative_and_reversed_scan_inputs_give_onnx_shapes) {
    mb b;
    Onnx__NodeProto *n = scan_model(&b, DIMS(2, 3, 2), DIMS(3, 1));
    mb_attr_ints(&b, n, "scan_input_axes", DIMS(-2, 0));
    mb_attr_ints(&b, n, "scan_input_directions", DIMS(0, 1));
    mb_attr_ints(&b, n, "scan_output_axes", DIMS(2, 1));
    mb_attr_ints(&b, n, "scan_output_directions", DIMS(1, 1));
    rotor_onnx_output *o;
    int no;
    rotor_error err = {{0}};
    cr_assert_eq(outputs(&b, NULL, &o, &no, &err), ROTOR_OK, "%s", err.msg);
    assert_shape(&o[0], "final", DIMS(2, 2));
    assert_shape(&o[1], "outs1", DIMS(2, 2, 3));
    assert_shape(&o[2], "outs2", DIMS(2, 3));
    rotor_onnx_outputs_free(o, no);
    mb_free(&b);
    n = scan_model(&b, DIMS(2, 2, 4), DIMS(1, 4));
    mb_attr_ints(&b, n, "scan_input_axes", DIMS(2, -1));
    mb_attr_ints(&b, n, "scan_output_axes", DIMS(-3, -2));
    cr_assert_eq(outputs(&b, NULL, &o, &no, &err), ROTOR_OK, "%s", err.msg);
    assert_shape(&o[1], "outs1", DIMS(4, 2, 2));
    assert_shape(&o[2], "outs2", DIMS(4, 2));
    rotor_onnx_outputs_free(o, no);
    mb_free(&b);
}

/* A running sum s += x_t over x = [1, 2, 3] (state s [1], x [3, 1]).
 * Forward: the scan output is [1, 3, 6].  A reversed input is read last
 * slice first (3, 5, 6), and a reversed output is stacked last step first
 * (ONNX: "prepending"): [6, 5, 3].  The final state is 6 either way, under
 * its own graph name. */
static void running_sum(int64_t in_dir, int64_t out_dir, const double *want) {
    mb b;
    mb_init(&b, 11);
    mb_input(&b, "s", DIMS(1));
    mb_input(&b, "x", DIMS(3, 1));
    Onnx__GraphProto *g = sub(&b);
    sub_in(&b, g, "s_in", 1, DIMS(1));
    sub_in(&b, g, "x_t", 1, DIMS(1));
    sub_node(&b, g, "Add", "s_in x_t", "s_out");
    sub_node(&b, g, "Identity", "s_out", "o");
    sub_out(&b, g, "s_out");
    sub_out(&b, g, "o");
    Onnx__NodeProto *n = mb_node(&b, "Scan", "scan", "s x", "total sums");
    attr_g(&b, n, "body", g);
    mb_attr_i(&b, n, "num_scan_inputs", 1);
    mb_attr_ints(&b, n, "scan_input_directions", DIMS(in_dir));
    mb_attr_ints(&b, n, "scan_output_directions", DIMS(out_dir));
    mb_output(&b, "total");
    mb_output(&b, "sums");
    rotor_onnx_options o = {.keep_data = true};
    rotor_graph gr;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, &o, &gr, NULL, &err), ROTOR_OK, "%s", err.msg);
    int total = rotor_graph_find_value(&gr, "total"), sums = rotor_graph_find_value(&gr, "sums");
    cr_assert(total >= 0 && gr.values[total].is_output, "the final state keeps its graph name 'total'");
    cr_assert(sums >= 0 && gr.values[sums].is_output);
    for (int v = 0; v < gr.nvalues; v++)
        cr_assert(!gr.values[v].is_output || !strchr(gr.values[v].name, '#'), "output '%s'", gr.values[v].name);
    double s0[1] = {0}, x[3] = {1, 2, 3};
    rotor_run_result r;
    run_direct(&gr, "s", s0, "x", x, &r);
    cr_assert_float_eq(r.values[total][0], 6.0, 1e-6);
    for (int k = 0; k < 3; k++)
        cr_assert_float_eq(r.values[sums][k], want[k], 1e-6, "in %lld out %lld: sums[%d] is %g, want %g",
                           (long long)in_dir, (long long)out_dir, k, r.values[sums][k], want[k]);
    rotor_run_result_free(&r);
    rotor_graph_free(&gr);
    mb_free(&b);
}

Test(onnxflow, reversed_scan_inputs_and_outputs_run_in_onnx_order) {
    running_sum(0, 0, (const double[]){1, 3, 6});
    running_sum(1, 0, (const double[]){3, 5, 6});
    running_sum(0, 1, (const double[]){6, 3, 1});
    running_sum(1, 1, (const double[]){6, 5, 3});
}

/* A body may keep its constants as initializers (ONNX allows it; converters
 * write them): each step reads its own copy.  A running sum of x + k with
 * k = 10 a body initializer over x = 1, 2, 3: total 36, sums 11, 23, 36.
 * (The flattening once left k undefined: "input 'k' is not defined".) */
Test(onnxflow, a_scan_body_reads_its_own_initializers) {
    mb b;
    mb_init(&b, 11);
    mb_input(&b, "s", DIMS(1));
    mb_input(&b, "x", DIMS(3, 1));
    Onnx__GraphProto *g = sub(&b);
    g->initializer = mb_alloc(&b, sizeof(void *));
    Onnx__TensorProto *k = mb_init_tensor(&b, "k", 1, DIMS(1), NULL);
    b.graph.n_initializer--; /* moved into the body */
    k->n_float_data = 1;
    k->float_data = mb_alloc(&b, sizeof(float));
    k->float_data[0] = 10;
    g->initializer[g->n_initializer++] = k;
    sub_in(&b, g, "s_in", 1, DIMS(1));
    sub_in(&b, g, "x_t", 1, DIMS(1));
    sub_node(&b, g, "Add", "x_t k", "xk");
    sub_node(&b, g, "Add", "s_in xk", "s_out");
    sub_node(&b, g, "Identity", "s_out", "o");
    sub_out(&b, g, "s_out");
    sub_out(&b, g, "o");
    Onnx__NodeProto *n = mb_node(&b, "Scan", "scan", "s x", "total sums");
    attr_g(&b, n, "body", g);
    mb_attr_i(&b, n, "num_scan_inputs", 1);
    mb_output(&b, "total");
    mb_output(&b, "sums");
    rotor_onnx_options o = {.keep_data = true};
    rotor_graph gr;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, &o, &gr, NULL, &err), ROTOR_OK, "%s", err.msg);
    int total = rotor_graph_find_value(&gr, "total"), sums = rotor_graph_find_value(&gr, "sums");
    cr_assert(total >= 0 && sums >= 0);
    double s0[1] = {0}, x[3] = {1, 2, 3};
    rotor_run_result r;
    run_direct(&gr, "s", s0, "x", x, &r);
    cr_assert_float_eq(r.values[total][0], 36.0, 1e-6);
    const double want[3] = {11, 23, 36};
    for (int i = 0; i < 3; i++) cr_assert_float_eq(r.values[sums][i], want[i], 1e-6, "sums[%d]", i);
    rotor_run_result_free(&r);
    rotor_graph_free(&gr);
    mb_free(&b);
}

/* Opset 8's Scan carries a batch axis first: its first input is
 * sequence_lens, its scan inputs are [batch, steps, ...], and each batch
 * entry scans on its own.  Running sums over x [2, 3, 2] read backwards
 * (directions [1]): onnx.shape_inference gives total [2, 2] and sums
 * [2, 3, 2]; entry 0 sums x[0] = 1..6 from its last step (5,6), entry 1
 * x[1] = 7..12 the same way. */
Test(onnxflow, an_opset_8_scan_unrolls_per_batch_entry) {
    mb b;
    mb_init(&b, 8);
    mb_input(&b, "s", DIMS(2, 2));
    mb_input(&b, "x", DIMS(2, 3, 2));
    Onnx__GraphProto *g = sub(&b);
    sub_in(&b, g, "s_in", 1, DIMS(2));
    sub_in(&b, g, "x_t", 1, DIMS(2));
    sub_node(&b, g, "Add", "s_in x_t", "s_out");
    sub_node(&b, g, "Identity", "s_out", "o");
    sub_out(&b, g, "s_out");
    sub_out(&b, g, "o");
    Onnx__NodeProto *n = mb_node(&b, "Scan", "scan", "- s x", "total sums");
    attr_g(&b, n, "body", g);
    mb_attr_i(&b, n, "num_scan_inputs", 1);
    mb_attr_ints(&b, n, "directions", DIMS(1));
    mb_output(&b, "total");
    mb_output(&b, "sums");
    rotor_onnx_output *o;
    int no;
    rotor_error err = {{0}};
    cr_assert_eq(outputs(&b, NULL, &o, &no, &err), ROTOR_OK, "%s", err.msg);
    assert_shape(&o[0], "total", DIMS(2, 2));
    assert_shape(&o[1], "sums", DIMS(2, 3, 2));
    rotor_onnx_outputs_free(o, no);
    rotor_onnx_options opt = {.keep_data = true};
    rotor_graph gr;
    cr_assert_eq(mb_load(&b, &opt, &gr, NULL, &err), ROTOR_OK, "%s", err.msg);
    double s0[4] = {0, 0, 100, 100}, x[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    rotor_run_result r;
    run_direct(&gr, "s", s0, "x", x, &r);
    static const double total[4] = {9, 12, 127, 130};
    static const double sums[12] = {5, 6, 8, 10, 9, 12, 111, 112, 120, 122, 127, 130};
    const double *t = r.values[rotor_graph_find_value(&gr, "total")], *y = r.values[rotor_graph_find_value(&gr, "sums")];
    for (int k = 0; k < 4; k++) cr_assert_float_eq(t[k], total[k], 1e-9, "total[%d] is %g", k, t[k]);
    for (int k = 0; k < 12; k++) cr_assert_float_eq(y[k], sums[k], 1e-9, "sums[%d] is %g", k, y[k]);
    rotor_run_result_free(&r);
    rotor_graph_free(&gr);
    /* sequence_lens must be known to be every entry's steps */
    n->input[0] = "lens";
    input_typed(&b, "lens", 7, 1, (const int64_t[]){2});
    refused(&b, "the Scan is not unrolled: its sequence_lens 'lens' is not known to be 3 for every batch entry");
    static const char *const v3[1] = {"lens=3,3"}, *const v2[1] = {"lens=3,2"};
    rotor_onnx_options o3 = {.values = v3, .nvalues = 1}, o2 = {.values = v2, .nvalues = 1};
    cr_assert_eq(mb_load(&b, &o3, &gr, NULL, &err), ROTOR_OK, "%s", err.msg);
    rotor_graph_free(&gr);
    cr_assert_eq(mb_load(&b, &o2, &gr, NULL, &err), ROTOR_ERR_INPUT);
    rotor_graph_free(&gr);
    mb_free(&b);
}

/* Invalid Scans (MIGraphX's scan_invalid_* and *_mismatch files) are refused
 * with the attribute or input named, not unrolled. */
Test(onnxflow, invalid_scans_are_refused_naming_the_attribute) {
    mb b;
    Onnx__NodeProto *n = scan_model(&b, DIMS(3, 2, 2), DIMS(3, 1));
    mb_attr_ints(&b, n, "scan_input_directions", DIMS(0, 2));
    refused(&b, "scan_input_directions[1] is 2 (0 forward, 1 reverse)");
    attr_of(n, "scan_input_directions")->n_ints = 1;
    refused(&b, "scan_input_directions has 1 entries; the Scan has 2 scan inputs");
    mb_free(&b);
    n = scan_model(&b, DIMS(3, 2, 2), DIMS(3, 1));
    mb_attr_ints(&b, n, "scan_input_axes", DIMS(0, 2));
    refused(&b, "scan_input_axes[1] is 2; scan input 'w' has rank 2");
    mb_free(&b);
    n = scan_model(&b, DIMS(3, 2, 2), DIMS(3, 1));
    mb_attr_ints(&b, n, "scan_output_axes", DIMS(0, -3));
    /* checked where the body declares the output's rank (o2 [2]: outs2 has
     * rank 2); else the stacking Unsqueeze refuses the axis */
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "(op Unsqueeze, domain ai.onnx): axis -3 is out of range or repeated");
    rotor_graph_free(&g);
    attr_of(n, "body")->g->output[2] = mb_vi(&b, "o2", 1, DIMS(2));
    refused(&b, "scan_output_axes[1] is -3; scan output 'outs2' has rank 2 (accepted -2 to 1)");
    mb_free(&b);
    scan_model(&b, DIMS(3, 2, 2), DIMS(2, 1));
    refused(&b, "scan input 'w' has 2 steps along axis 0, and 'x' 3: scan inputs have one length");
    mb_free(&b);
    /* the body declares its slice [2, 2]: x [3, 2] slices to [2] */
    scan_model(&b, DIMS(3, 2), DIMS(3, 1));
    refused(&b, "scan input 'x' sliced along axis 0 is [2]; the body declares 'x_t' [2x2]");
    mb_free(&b);
    /* one scan input: x is a state, which the body declares [2, 2] */
    n = scan_model(&b, DIMS(3, 2, 2), DIMS(3, 1));
    attr_of(n, "num_scan_inputs")->i = 1;
    refused(&b, "initial state 'x' is [3x2x2]; the body declares 'x_t' [2x2]");
    attr_of(n, "num_scan_inputs")->i = 2;
    attr_of(n, "body")->g->n_input = 2;
    refused(&b, "its body has 2 inputs; 1 state and 2 scan inputs need 3");
    mb_free(&b);
}

/* At opset 9 and 10 a negative axis is invalid: Scan-11 introduced them. */
Test(onnxflow, negative_scan_axes_before_opset_11_are_refused) {
    mb b;
    Onnx__NodeProto *n = scan_model(&b, DIMS(3, 2, 2), DIMS(3, 1));
    b.opset.version = 10;
    mb_attr_ints(&b, n, "scan_output_axes", DIMS(0, -1));
    refused(&b, "scan_output_axes[1] is -1; negative axes arrive with opset 11 (this is 10)");
    mb_free(&b);
}

/* ---- Loop ----------------------------------------------------------------------------- */

/* y [2] plus 1 per step, for a trip count Gather(Shape(x), 0) = 4 that only
 * folding knows (the flattening runs before it: the import learns it and
 * runs again).  onnx.shape_inference leaves the stacked extent unknown
 * ([?, 2]) and y_final without a shape; rotor's are the folded trip
 * count's: y_final [2], ys [4, 2]. */
static Onnx__NodeProto *loop_model(mb *b, Onnx__GraphProto **body) {
    mb_init(b, 13);
    mb_input(b, "x", DIMS(4, 2));
    mb_input(b, "y", DIMS(2));
    mb_init_tensor(b, "zero", 7, 0, NULL, (const int64_t[]){0});
    Onnx__TensorProto *c = mb_init_tensor(b, "c", 9, 0, NULL, NULL);
    static int32_t truth = 1;
    c->n_int32_data = 1;
    c->int32_data = &truth;
    mb_init_tensor(b, "one", 1, 1, (const int64_t[]){1}, NULL)->n_float_data = 1;
    static float one = 1;
    b->inits[b->graph.n_initializer - 1]->float_data = &one;
    mb_node(b, "Shape", "shape", "x", "shp");
    Onnx__NodeProto *ga = mb_node(b, "Gather", "gather", "shp zero", "M");
    mb_attr_i(b, ga, "axis", 0);
    Onnx__GraphProto *g = sub(b);
    sub_in(b, g, "i", 7, 0, NULL);
    sub_in(b, g, "c_in", 9, 0, NULL);
    sub_in(b, g, "y_in", 1, DIMS(2));
    sub_node(b, g, "Identity", "c_in", "c_out");
    sub_node(b, g, "Add", "y_in one", "y_out");
    sub_node(b, g, "Identity", "y_out", "scan");
    sub_out(b, g, "c_out");
    sub_out(b, g, "y_out");
    sub_out(b, g, "scan");
    Onnx__NodeProto *n = mb_node(b, "Loop", "loop", "M c y", "y_final ys");
    attr_g(b, n, "body", g);
    mb_output(b, "y_final");
    mb_output(b, "ys");
    *body = g;
    return n;
}

Test(onnxflow, a_loop_whose_trip_count_folds_from_shapes_unrolls) {
    mb b;
    Onnx__GraphProto *body;
    loop_model(&b, &body);
    rotor_onnx_output *o;
    int no;
    rotor_error err = {{0}};
    cr_assert_eq(outputs(&b, NULL, &o, &no, &err), ROTOR_OK, "%s", err.msg);
    assert_shape(&o[0], "y_final", DIMS(2));
    assert_shape(&o[1], "ys", DIMS(4, 2));
    rotor_onnx_outputs_free(o, no);
    rotor_graph g;
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_graph_count_type(&g, "Add"), 4, "one body Add per step");
    int yf = rotor_graph_find_value(&g, "y_final");
    cr_assert(yf >= 0 && g.values[yf].is_output, "the final state keeps its graph name");
    rotor_graph_free(&g);
    /* a body that computes its condition is refused, saying so */
    body->node[0]->op_type = "Not";
    refused(&b, "the Loop is not unrolled: its body computes its condition 'c_out' at each step");
    /* a Constant true keeps it: the body's condition is a constant */
    body->node[0]->op_type = "Constant";
    body->node[0]->n_input = 0;
    Onnx__TensorProto *t = mb_alloc(&b, sizeof *t);
    onnx__tensor_proto__init(t);
    t->has_data_type = 1;
    t->data_type = 9;
    static int32_t yes = 1;
    t->n_int32_data = 1;
    t->int32_data = &yes;
    Onnx__AttributeProto *a = mb_alloc(&b, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = "value";
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    a->t = t;
    body->node[0]->attribute[body->node[0]->n_attribute++] = a;
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_graph_count_type(&g, "Add"), 4);
    rotor_graph_free(&g);
    mb_free(&b);
}

Test(onnxflow, a_loop_without_a_known_trip_count_names_what_to_give) {
    mb b;
    Onnx__GraphProto *body;
    Onnx__NodeProto *n = loop_model(&b, &body);
    n->input[0] = "";
    refused(&b, "the Loop is not unrolled: it has no trip count: it runs while its condition holds");
    n->input[0] = "t";
    input_typed(&b, "t", 7, 0, NULL);
    refused(&b, "the trip count 't' comes from graph input 't'; a Loop unrolls only when its trip count and "
                "condition are known at import (give it with --value t=N)");
    static const char *const v[1] = {"t=3"};
    rotor_onnx_options o = {.values = v, .nvalues = 1};
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, &o, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_graph_count_type(&g, "Add"), 3);
    rotor_graph_free(&g);
    mb_free(&b);
}

/* ---- If -------------------------------------------------------------------------------- */

static Onnx__GraphProto *branch(mb *b, const char *op, const char *out) {
    Onnx__GraphProto *g = sub(b);
    sub_node(b, g, op, "x", out);
    sub_out(b, g, out);
    return g;
}

/* silero_vad v5's form: If(Equal(sr, 16000)) with the 16 kHz model in its
 * then branch.  onnx.shape_inference: y [2, 3]. */
static void if_equal_model(mb *b, const char *cmp) {
    mb_init(b, 13);
    mb_input(b, "x", DIMS(2, 3));
    input_typed(b, "sr", 7, 0, NULL);
    mb_init_tensor(b, "k", 7, 0, NULL, (const int64_t[]){16000});
    mb_node(b, cmp, "cmp", "sr k", "eq");
    Onnx__NodeProto *n = mb_node(b, "If", "if", "eq", "y");
    attr_g(b, n, "then_branch", branch(b, "Relu", "t"));
    attr_g(b, n, "else_branch", branch(b, "Sigmoid", "e"));
    mb_output(b, "y");
}

static const char *if_op(mb *b, const char *value) {
    static const char *v[1];
    v[0] = value;
    rotor_onnx_options o = {.values = v, .nvalues = 1};
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(b, &o, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(g.nops, 1);
    const char *type = strcmp(g.ops[0].type, "Relu") ? "Sigmoid" : "Relu";
    cr_assert_str_eq(g.ops[0].type, type);
    rotor_graph_free(&g);
    return type;
}

Test(onnxflow, an_if_on_a_comparison_of_known_values_folds_into_its_branch) {
    mb b;
    if_equal_model(&b, "Equal");
    rotor_graph g;
    rotor_error err = {{0}};
    /* the hint names what makes the condition known: sr, not "1 or 0" */
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "m.onnx: node 'if' (op If, domain ai.onnx): the condition 'eq' is computed at run time from "
                        "graph input 'sr' (give it with --value sr=...); an If folds only on a condition known at "
                        "import");
    rotor_graph_free(&g);
    cr_assert_str_eq(if_op(&b, "sr=16000"), "Relu");
    cr_assert_str_eq(if_op(&b, "sr=8000"), "Sigmoid");
    mb_free(&b);
    if_equal_model(&b, "Greater");
    cr_assert_str_eq(if_op(&b, "sr=16001"), "Relu");
    cr_assert_str_eq(if_op(&b, "sr=16000"), "Sigmoid");
    mb_free(&b);
    if_equal_model(&b, "LessOrEqual");
    cr_assert_str_eq(if_op(&b, "sr=16000"), "Relu");
    mb_free(&b);
}

/* A condition that folds from shapes needs no --value; the outputs keep
 * onnx.shape_inference's [2, 3]. */
Test(onnxflow, an_if_on_a_shape_comparison_folds_without_values) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(2, 3));
    mb_init_tensor(&b, "zero", 7, 0, NULL, (const int64_t[]){0});
    mb_init_tensor(&b, "one", 7, 0, NULL, (const int64_t[]){1});
    mb_node(&b, "Shape", "shape", "x", "shp");
    mb_attr_i(&b, mb_node(&b, "Gather", "gather", "shp zero", "rows"), "axis", 0);
    mb_node(&b, "Less", "less", "one rows", "c");
    Onnx__NodeProto *n = mb_node(&b, "If", "if", "c", "y");
    attr_g(&b, n, "then_branch", branch(&b, "Relu", "t"));
    attr_g(&b, n, "else_branch", branch(&b, "Sigmoid", "e"));
    mb_output(&b, "y");
    rotor_onnx_output *o;
    int no;
    rotor_error err = {{0}};
    cr_assert_eq(outputs(&b, NULL, &o, &no, &err), ROTOR_OK, "%s", err.msg);
    assert_shape(&o[0], "y", DIMS(2, 3));
    rotor_onnx_outputs_free(o, no);
    rotor_graph g;
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_str_eq(g.ops[0].type, "Relu", "1 < 2");
    rotor_graph_free(&g);
    /* a branch that is missing is named, not "computed at run time" */
    n->n_attribute = 1;
    n->attribute[0]->name = "else_branch";
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "node 'if' (op If, domain ai.onnx): the If does not fold: the condition is true, and the If "
                        "has no then_branch");
    rotor_graph_free(&g);
    mb_free(&b);
}

/* ---- names (src/model/onnxname.c; docs/onnx.md, "Names") ------------------------------------ */

/* The model loaded with each '@' of its bytes made a NUL. */
static rotor_status load_with_nul(mb *b, rotor_graph *g, rotor_error *err) {
    size_t len;
    uint8_t *buf = packed(b, true, &len);
    rotor_status st = rotor_onnx_load_buffer(buf, len, "m.onnx", NULL, g, NULL, err);
    free(buf);
    return st;
}

/* Two initializers "c\0x" and "c\0y": protobuf-c's C strings end at the
 * NUL, and both were 'c', "defined twice"; now the name is refused where
 * it is. */
Test(onnxflow, a_nul_inside_a_name_is_refused_where_it_is) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(2));
    mb_init_tensor(&b, "c@x", 1, 1, (const int64_t[]){2}, NULL);
    mb_init_tensor(&b, "c@y", 1, 1, (const int64_t[]){2}, NULL);
    mb_node(&b, "Add", "add", "x x", "y");
    mb_output(&b, "y");
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(load_with_nul(&b, &g, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "m.onnx: the name of initializer 0 ('c\\x00x') contains a NUL byte at byte 1; ONNX "
                              "names are C strings");
    rotor_graph_free(&g);
    /* in a node's output, and in a subgraph */
    b.graph.n_initializer = 0;
    b.nodes[0]->output[0] = "y@";
    cr_assert_eq(load_with_nul(&b, &g, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "m.onnx: the name of node 0 > output 0 ('y\\x00') contains a NUL byte at byte 1");
    rotor_graph_free(&g);
    b.nodes[0]->output[0] = "y";
    Onnx__NodeProto *n = mb_node(&b, "If", "if", "x", "z");
    attr_g(&b, n, "then_branch", branch(&b, "Relu", "t@"));
    cr_assert_eq(load_with_nul(&b, &g, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "the name of node 1 > attribute 0 > graph > node 0 > output 0 ('t\\x00') contains a NUL byte "
                        "at byte 1");
    rotor_graph_free(&g);
    mb_free(&b);
}

/* A name in the file is not NUL-terminated: a UTF-8 lead byte at its end
 * (0xd2) is followed in the file by the next field's tag, and a tag of a
 * field numbered 16 or more begins with a continuation byte (0x80).  The
 * escape read that byte as the name's and wrote one byte past its copy
 * (found by `make fuzz`); the lead byte alone is escaped. */
Test(onnxflow, a_utf8_sequence_cut_by_the_end_of_a_name_in_the_file_is_escaped_alone) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(2));
    Onnx__TensorProto *t = mb_init_tensor(&b, "c@\xd2", 1, 1, (const int64_t[]){2}, NULL);
    /* an unknown field 16 (varint 0), packed after the name, TensorProto's last field set */
    t->base.n_unknown_fields = 1;
    t->base.unknown_fields = &(ProtobufCMessageUnknownField){
        .tag = 16, .wire_type = PROTOBUF_C_WIRE_TYPE_VARINT, .len = 1, .data = (uint8_t[]){0}};
    mb_node(&b, "Add", "add", "x x", "y");
    mb_output(&b, "y");
    size_t len;
    uint8_t *buf = packed(&b, true, &len);
    cr_assert(memmem(buf, len, "c\0\xd2\x80\x01", 5), "the name is followed by the tag 0x80 0x01");
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_onnx_load_buffer(buf, len, "m.onnx", NULL, &g, NULL, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "m.onnx: the name of initializer 0 ('c\\x00\\xd2') contains a NUL byte at byte 1; ONNX "
                              "names are C strings");
    rotor_graph_free(&g);
    free(buf);
    t->base.n_unknown_fields = 0;
    mb_free(&b);
}

/* A Latin-1 name (0xe9), a cut UTF-8 sequence and a control character are
 * written with \xNN escapes in every name the graph holds, the same for
 * every use of the name; valid UTF-8 ("é") is left as it is. */
Test(onnxflow, names_that_are_not_utf8_are_escaped_once_at_import) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "caf\xe9", DIMS(2));
    mb_node(&b, "Relu", "n\xc3", "caf\xe9", "r\x01");
    mb_node(&b, "Sigmoid", "s", "r\x01", "\xc3\xa9t\xc3\xa9");
    mb_output(&b, "\xc3\xa9t\xc3\xa9");
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_geq(rotor_graph_find_value(&g, "caf\\xe9"), 0);
    cr_assert_geq(rotor_graph_find_value(&g, "r\\x01"), 0);
    cr_assert_geq(rotor_graph_find_value(&g, "\xc3\xa9t\xc3\xa9"), 0, "valid UTF-8 is kept");
    cr_assert_str_eq(g.ops[0].name, "n\\xc3");
    rotor_graph_free(&g);
    /* --input and --value take the escaped name */
    rotor_onnx_options o = {.input_shapes = "caf\\xe9=3"};
    cr_assert_eq(mb_load(&b, &o, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(g.values[rotor_graph_find_value(&g, "caf\\xe9")].shape[0], 3);
    rotor_graph_free(&g);
    /* what an invalid name escapes to, already in the file, is refused */
    mb_init_tensor(&b, "r\\x01", 1, 1, (const int64_t[]){2}, NULL);
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "m.onnx: the name 'r\\x01' is in the file, and is also what a name that is not UTF-8 "
                              "is written as (its bytes escaped as \\xNN)");
    rotor_graph_free(&g);
    mb_free(&b);
}
