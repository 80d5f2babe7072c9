/* test_group.c — operator grouping (src/model/group.c, docs/group.md). */
#include <criterion/criterion.h>

#include <string.h>

#include "rotor/compile/compile.h"
#include "rotor/model/group.h"
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
