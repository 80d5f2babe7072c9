/* test_group.c — operator grouping (src/model/group.c, docs/group.md). */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/compile/compile.h"
#include "rotor/model/group.h"
#include "rotor/model/onnx.h"
#include "rotor/model/zoo.h"

static int find_op(const rotor_graph *g, const char *name) {
    for (int o = 0; o < g->nops; o++)
        if (strcmp(g->ops[o].name, name) == 0) return o;
    return -1;
}

/* A BERT layer has 16 operators; grouped, 9 remain: the biases, GELU and the
 * residual adds fuse into the MatMuls that produce their inputs. */
Test(group, a_bert_layer_keeps_9_of_its_16_operators) {
    rotor_graph g1, g2, a1, a2;
    rotor_error err;
    rotor_group_stats s1, s2;
    cr_assert_eq(rotor_zoo_build("bert-base", &(rotor_zoo_options){.layers = 1}, &g1, &err), ROTOR_OK);
    cr_assert_eq(rotor_zoo_build("bert-base", &(rotor_zoo_options){.layers = 2}, &g2, &err), ROTOR_OK);
    cr_assert_eq(rotor_group(&g1, &a1, &s1, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_group(&g2, &a2, &s2, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(s2.ops_before - s1.ops_before, 16);
    cr_assert_eq(s2.ops_after - s1.ops_after, 9);
    cr_assert_eq(s1.ops_after, a1.nops);
    cr_assert_eq(s1.ops_before - s1.ops_after, s1.fused + s1.folded);
    int up = find_op(&a2, "l1.ffn_up");
    cr_assert_geq(up, 0);
    cr_assert_str_eq(a2.ops[up].fused, "Add+Gelu");
    cr_assert_eq(a2.ops[up].nfused, 2);
    int out = find_op(&a2, "l1.attn_out");
    cr_assert_str_eq(a2.ops[out].fused, "Add+Add", "bias and residual");
    cr_assert_lt(find_op(&a2, "l1.residual1"), 0, "the residual add is gone");
    rotor_graph_free(&g1), rotor_graph_free(&g2), rotor_graph_free(&a1), rotor_graph_free(&a2);
}

Test(group, flops_and_weights_are_conserved) {
    rotor_graph g, a;
    rotor_error err;
    cr_assert_eq(rotor_zoo_build("llama2-7b", &(rotor_zoo_options){.layers = 2, .seq = 256}, &g, &err), ROTOR_OK);
    cr_assert_eq(rotor_group(&g, &a, NULL, &err), ROTOR_OK, "%s", err.msg);
    rotor_graph_totals tg, ta;
    rotor_graph_totals_of(&g, &tg);
    rotor_graph_totals_of(&a, &ta);
    cr_assert_float_eq(ta.flops, tg.flops, 1e-9 * tg.flops);
    cr_assert_eq(ta.weight_params, tg.weight_params);
    cr_assert_lt(ta.ops, tg.ops);
    rotor_graph_free(&g), rotor_graph_free(&a);
}

/* x feeds a MatMul and is also a model output: an epilogue on x must not
 * fuse, and neither may one whose input has a second reader. */
Test(group, an_output_with_two_readers_is_not_fused) {
    rotor_graph g, a;
    rotor_error err;
    rotor_graph_init(&g, "two-readers");
    int64_t s2[2] = {64, 64}, s1[1] = {64};
    int x, w, y, r1, r2, b;
    rotor_graph_add_value(&g, "x", ROTOR_DTYPE_F16, 2, s2, ROTOR_ROLE_ACTIVATION, &x, &err);
    rotor_graph_add_value(&g, "w", ROTOR_DTYPE_F16, 2, s2, ROTOR_ROLE_WEIGHT, &w, &err);
    rotor_graph_add_value(&g, "b", ROTOR_DTYPE_F16, 1, s1, ROTOR_ROLE_WEIGHT, &b, &err);
    rotor_graph_add_value(&g, "y", ROTOR_DTYPE_F16, 2, s2, ROTOR_ROLE_ACTIVATION, &y, &err);
    rotor_graph_add_value(&g, "r1", ROTOR_DTYPE_F16, 2, s2, ROTOR_ROLE_ACTIVATION, &r1, &err);
    rotor_graph_add_value(&g, "r2", ROTOR_DTYPE_F16, 2, s2, ROTOR_ROLE_ACTIVATION, &r2, &err);
    int in[2] = {x, w};
    rotor_op_desc mm = {.name = "mm", .type = "MatMul", .expr = "C[m,n] += A[m,k] * B[k,n]",
                        .dims = "m=64,k=64,n=64", .inputs = in, .ninputs = 2, .outputs = &y, .noutputs = 1,
                        .tensor_value = {y, x, w, -1, -1}};
    cr_assert_eq(rotor_graph_add_op(&g, &mm, NULL, &err), ROTOR_OK, "%s", err.msg);
    int in1[2] = {y, b}, in2[1] = {y};
    rotor_op_desc e1 = {.name = "bias", .type = "Add", .expr = "Y[m,n] = X[m,n] + Bv[n]", .dims = "m=64,n=64",
                        .inputs = in1, .ninputs = 2, .outputs = &r1, .noutputs = 1, .tensor_value = {r1, y, b, -1, -1}};
    rotor_op_desc e2 = {.name = "act", .type = "Relu", .expr = "Y[m,n] = relu(X[m,n])", .dims = "m=64,n=64",
                        .inputs = in2, .ninputs = 1, .outputs = &r2, .noutputs = 1, .tensor_value = {r2, y, -1, -1, -1}};
    cr_assert_eq(rotor_graph_add_op(&g, &e1, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_graph_add_op(&g, &e2, NULL, &err), ROTOR_OK, "%s", err.msg);
    g.values[r1].is_output = g.values[r2].is_output = true;
    rotor_group_stats st;
    cr_assert_eq(rotor_group(&g, &a, &st, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(st.fused, 0, "y has two readers");
    cr_assert_eq(a.nops, 3);
    rotor_graph_free(&g), rotor_graph_free(&a);
}

Test(group, the_grouped_graph_compiles) {
    rotor_graph g, a;
    rotor_error err;
    cr_assert_eq(rotor_zoo_build("bert-base", &(rotor_zoo_options){.layers = 2}, &g, &err), ROTOR_OK);
    cr_assert_eq(rotor_group(&g, &a, NULL, &err), ROTOR_OK, "%s", err.msg);
    rotor_chip chip;
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &chip, NULL), ROTOR_OK);
    rotor_compile_result r;
    cr_assert_eq(rotor_compile(&a, &chip, NULL, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(r.nops, a.nops);
    rotor_compile_result_free(&r);
    rotor_graph_free(&g), rotor_graph_free(&a);
}

/* x -> Reshape -> MatMul: the Reshape folds and the MatMul reads x. */
Test(group, a_layout_only_operator_folds_into_its_reader) {
    rotor_graph g, a;
    rotor_error err;
    rotor_graph_init(&g, "reshape");
    int64_t s4[4] = {2, 32, 8, 8}, s2[2] = {64, 64};
    int x, r, w, y;
    rotor_graph_add_value(&g, "x", ROTOR_DTYPE_F16, 4, s4, ROTOR_ROLE_ACTIVATION, &x, &err);
    rotor_graph_add_value(&g, "r", ROTOR_DTYPE_F16, 2, s2, ROTOR_ROLE_ACTIVATION, &r, &err);
    rotor_graph_add_value(&g, "w", ROTOR_DTYPE_F16, 2, s2, ROTOR_ROLE_WEIGHT, &w, &err);
    rotor_graph_add_value(&g, "y", ROTOR_DTYPE_F16, 2, s2, ROTOR_ROLE_ACTIVATION, &y, &err);
    rotor_op_desc rs = {.name = "reshape", .type = "Reshape", .inputs = &x, .ninputs = 1, .outputs = &r,
                        .noutputs = 1, .tensor_value = {-1, -1, -1, -1, -1}};
    cr_assert_eq(rotor_graph_add_op(&g, &rs, NULL, &err), ROTOR_OK, "%s", err.msg);
    int in[2] = {r, w};
    rotor_op_desc mm = {.name = "mm", .type = "MatMul", .expr = "C[m,n] += A[m,k] * B[k,n]",
                        .dims = "m=64,k=64,n=64", .inputs = in, .ninputs = 2, .outputs = &y, .noutputs = 1,
                        .tensor_value = {y, r, w, -1, -1}};
    cr_assert_eq(rotor_graph_add_op(&g, &mm, NULL, &err), ROTOR_OK, "%s", err.msg);
    g.values[y].is_output = true;
    rotor_group_stats st;
    cr_assert_eq(rotor_group(&g, &a, &st, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(st.folded, 1);
    cr_assert_eq(a.nops, 1);
    cr_assert_str_eq(a.values[a.ops[0].inputs[0]].name, "x");
    cr_assert_lt(rotor_graph_find_value(&a, "r"), 0);
    rotor_graph_free(&g), rotor_graph_free(&a);
}

/* ---- the structured copy ------------------------------------------------ */

/* Asserts that two bound expressions agree field by field. */
static void expr_equal(const rotor_expr *x, const rotor_expr *y, const char *op) {
    cr_assert_str_eq(x->text, y->text, "%s", op);
    cr_assert_eq(x->naxes, y->naxes, "%s", op);
    for (int a = 0; a < x->naxes; a++) {
        cr_assert_str_eq(x->axis_name[a], y->axis_name[a], "%s axis %d", op, a);
        cr_assert_eq(x->axis_column[a], y->axis_column[a], "%s axis %d", op, a);
        cr_assert_eq(x->extent[a], y->extent[a], "%s axis %d", op, a);
    }
    cr_assert_eq(x->ntensors, y->ntensors, "%s", op);
    for (int t = 0; t < x->ntensors; t++) {
        const rotor_tensor *p = &x->tensors[t], *q = &y->tensors[t];
        cr_assert_str_eq(p->name, q->name, "%s tensor %d", op, t);
        cr_assert_eq(p->ndims, q->ndims, "%s tensor %d", op, t);
        for (int k = 0; k < p->ndims; k++) {
            cr_assert_eq(p->dims[k].nterms, q->dims[k].nterms, "%s tensor %d dim %d", op, t, k);
            for (int j = 0; j < p->dims[k].nterms; j++)
                cr_assert(p->dims[k].axis[j] == q->dims[k].axis[j] && p->dims[k].coef[j] == q->dims[k].coef[j],
                          "%s tensor %d dim %d", op, t, k);
        }
        for (int a = 0; a < ROTOR_MAX_AXES; a++) cr_assert_eq(p->has_axis[a], q->has_axis[a], "%s tensor %d", op, t);
    }
    cr_assert(x->accumulate == y->accumulate && x->op_class == y->op_class && x->bound == y->bound, "%s", op);
    cr_assert_eq(x->flops_per_point, y->flops_per_point, "%s", op);
    cr_assert_eq(x->nnodes, y->nnodes, "%s", op);
    for (int k = 0; k < x->nnodes; k++) {
        const rotor_node *p = &x->rhs[k], *q = &y->rhs[k];
        cr_assert(p->op == q->op && p->argc == q->argc && p->arg == q->arg && p->col == q->col && p->len == q->len &&
                      p->value == q->value,
                  "%s node %d", op, k);
    }
}

/* Asserts that two operators agree field by field, expression and views
 * included. */
static void op_equal(const rotor_op *x, const rotor_op *y) {
    const char *nm = x->name;
    cr_assert_str_eq(x->name, y->name);
    cr_assert_str_eq(x->type, y->type, "%s", nm);
    cr_assert_eq(x->vendor, y->vendor, "%s", nm);
    if (!x->vendor) expr_equal(&x->expr, &y->expr, nm);
    for (int t = 0; t < ROTOR_MAX_TENSORS; t++) {
        cr_assert_eq(x->tensor_value[t], y->tensor_value[t], "%s tensor %d", nm, t);
        const rotor_view *p = &x->view[t], *q = &y->view[t];
        cr_assert(p->set == q->set && p->unknown == q->unknown, "%s tensor %d", nm, t);
        for (int k = 0; k < ROTOR_MAX_DIMS; k++)
            cr_assert(p->dim[k] == q->dim[k] && p->step[k] == q->step[k] && p->offset[k] == q->offset[k],
                      "%s tensor %d view dim %d", nm, t, k);
    }
    cr_assert(x->ninputs == y->ninputs && x->noutputs == y->noutputs, "%s", nm);
    for (int i = 0; i < x->ninputs; i++) cr_assert_eq(x->inputs[i], y->inputs[i], "%s input %d", nm, i);
    for (int i = 0; i < x->noutputs; i++) cr_assert_eq(x->outputs[i], y->outputs[i], "%s output %d", nm, i);
    cr_assert_eq(x->flops, y->flops, "%s", nm);
    cr_assert_eq(x->bytes, y->bytes, "%s", nm);
    cr_assert_eq(x->weight_bytes, y->weight_bytes, "%s", nm);
    cr_assert_str_eq(x->fused, y->fused, "%s", nm);
    cr_assert_eq(x->nfused, y->nfused, "%s", nm);
    cr_assert_eq(x->nattrs, y->nattrs, "%s", nm);
}

/* The path grouping took before it copied expressions: each operator of a
 * rebuilt from its printed expression and dims through rotor_graph_add_op,
 * with the same values, names, inputs, outputs, tensors and views, then the
 * grouped FLOPs and epilogues set on it. */
static void rebuild_from_text(const rotor_graph *a, rotor_graph *b) {
    rotor_error err;
    rotor_graph_init(b, a->name);
    for (int v = 0; v < a->nvalues; v++) {
        const rotor_value *x = &a->values[v];
        cr_assert_eq(rotor_graph_add_value(b, x->name, x->dtype, x->rank, x->shape, x->role, NULL, &err), ROTOR_OK,
                     "%s", err.msg);
        b->values[v].is_output = x->is_output;
    }
    for (int o = 0; o < a->nops; o++) {
        const rotor_op *op = &a->ops[o];
        char dims[ROTOR_EXPR_TEXT_MAX];
        rotor_expr_dims_string(&op->expr, dims, sizeof dims);
        rotor_op_desc d = {.name = op->name, .type = op->type, .expr = op->vendor ? NULL : op->expr.text,
                           .dims = dims, .inputs = op->inputs, .ninputs = op->ninputs, .outputs = op->outputs,
                           .noutputs = op->noutputs, .view = op->view};
        memcpy(d.tensor_value, op->tensor_value, sizeof d.tensor_value);
        int i;
        cr_assert_eq(rotor_graph_add_op(b, &d, &i, &err), ROTOR_OK, "%s", err.msg);
        b->ops[i].flops = op->flops;
        snprintf(b->ops[i].fused, sizeof b->ops[i].fused, "%s", op->fused);
        b->ops[i].nfused = op->nfused;
    }
}

/* Groups g, then asserts that the grouped graph's operators are those the
 * text round trip builds, and that its values are g's that survive. */
static void grouped_equals_text_round_trip(rotor_graph *g) {
    rotor_graph a, b;
    rotor_error err;
    rotor_group_stats st;
    cr_assert_eq(rotor_group(g, &a, &st, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_gt(st.fused, 0, "%s: a fused chain to copy", g->name);
    rebuild_from_text(&a, &b);
    cr_assert_eq(a.nops, b.nops);
    for (int o = 0; o < a.nops; o++) op_equal(&a.ops[o], &b.ops[o]);
    for (int v = 0; v < a.nvalues; v++) {
        int w = rotor_graph_find_value(g, a.values[v].name);
        cr_assert_geq(w, 0, "%s is one of g's values", a.values[v].name);
        cr_assert(a.values[v].elements == g->values[w].elements && a.values[v].role == g->values[w].role);
        cr_assert_eq(a.values[v].consumers, b.values[v].consumers, "%s", a.values[v].name);
    }
    cr_assert_eq(rotor_graph_validate(&a, &err), ROTOR_OK, "%s", err.msg);
    rotor_graph_free(&a), rotor_graph_free(&b);
}

Test(group, a_grouped_zoo_model_has_the_operators_the_text_round_trip_built) {
    rotor_graph g;
    rotor_error err;
    cr_assert_eq(rotor_zoo_build("bert-base", &(rotor_zoo_options){.layers = 2}, &g, &err), ROTOR_OK);
    grouped_equals_text_round_trip(&g);
    rotor_graph_free(&g);
}

/* tiny-cnn's Conv reads a padded window through a view, and its bias and
 * ReLU fuse into it. */
Test(group, a_grouped_onnx_model_has_the_operators_the_text_round_trip_built) {
    rotor_graph g;
    rotor_error err;
    cr_assert_eq(rotor_onnx_load("examples/tiny-cnn.onnx", NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    bool viewed = false;
    for (int o = 0; o < g.nops; o++)
        for (int t = 0; t < ROTOR_MAX_TENSORS; t++) viewed = viewed || g.ops[o].view[t].set;
    cr_assert(viewed, "a view to copy");
    grouped_equals_text_round_trip(&g);
    rotor_graph_free(&g);
}

/* Property: grouping any zoo model, prefill or decode, at any size keeps its
 * total FLOPs (a fused operator carries its epilogues'), its weights and its
 * kv cache, and leaves a valid graph with one operator fewer per epilogue
 * fused or layout op folded.  Sizes drawn with a fixed seed. */
Test(group, grouping_any_zoo_model_conserves_flops_weights_and_kv_cache) {
    unsigned seed = 40;
    srand(seed);
    for (int m = 0; m < rotor_zoo_count(); m++) {
        const rotor_zoo_entry *z = rotor_zoo_at(m);
        for (int k = 0; k < 3; k++) {
            rotor_zoo_options o = {.batch = 1 + rand() % 4, .layers = 1 + rand() % 3,
                                   .phase = z->llm && rand() % 2 ? ROTOR_PHASE_DECODE : ROTOR_PHASE_PREFILL};
            rotor_graph g, a;
            rotor_error err;
            rotor_group_stats st;
            cr_assert_eq(rotor_zoo_build(z->name, &o, &g, &err), ROTOR_OK, "%s: %s", z->name, err.msg);
            cr_assert_eq(rotor_group(&g, &a, &st, &err), ROTOR_OK, "%s: %s", z->name, err.msg);
            rotor_graph_totals tg, ta;
            rotor_graph_totals_of(&g, &tg);
            rotor_graph_totals_of(&a, &ta);
            char why[160];
            snprintf(why, sizeof why, "seed %u, %s batch %lld layers %lld phase %d", seed, z->name,
                     (long long)o.batch, (long long)o.layers, (int)o.phase);
            cr_assert_float_eq(ta.flops, tg.flops, 1e-12 * tg.flops, "%s", why);
            cr_assert_eq(ta.weight_bytes, tg.weight_bytes, "%s", why);
            cr_assert_eq(ta.weight_params, tg.weight_params, "%s", why);
            cr_assert_eq(ta.kv_bytes, tg.kv_bytes, "%s", why);
            cr_assert_eq(st.ops_before - st.ops_after, st.fused + st.folded, "%s", why);
            cr_assert_eq(rotor_graph_validate(&a, &err), ROTOR_OK, "%s: %s", z->name, err.msg);
            rotor_graph_free(&g), rotor_graph_free(&a);
        }
    }
}
