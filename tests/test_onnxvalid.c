/* test_onnxvalid.c — the importer's validation (docs/onnx.md, "Validation"):
 * every default-domain node against its operator's ONNX schema at the
 * model's opset (src/model/onnxschema.c, its table written from ONNX's
 * changelog by scripts/onnxschema.py), the channel and group rules of the
 * normalisations (onnxnn.c), and graph outputs kept under their own names
 * (docs/graph.md, "Output aliases").  Each model is built here with
 * tests/onnxbuild.h; the cases are the ones MIGraphX's invalid-model tests
 * probe, and the schema facts cited are ONNX's (docs/Changelog.md). */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "rotor/model/group.h"
#include "rotor/model/onnx.h"
#include "onnxbuild.h"
#include "model/onnxops.h"

/* TensorProto.DataType */
enum { F32 = 1, I8 = 3, I32 = 6, I64 = 7, F16 = 10, F64 = 11 };

static void input_t(mb *b, const char *name, int type, int rank, const int64_t *dims) {
    b->inputs[b->graph.n_input++] = mb_vi(b, name, type, rank, dims);
}

/* b: one node op named "n" at opset over a float input x of the given
 * shape, its outputs outs, the first of them the graph's output. */
static Onnx__NodeProto *one_node(mb *b, int opset, const char *op, const char *outs, int rank, const int64_t *dims) {
    mb_init(b, opset);
    mb_input(b, "x", rank, dims);
    Onnx__NodeProto *n = mb_node(b, op, "n", "x", outs);
    char first[32];
    snprintf(first, sizeof first, "%.*s", (int)strcspn(outs, " "), outs);
    mb_output(b, first);
    return n;
}

/* Loads b; on refusal returns the message (static buffer), on success NULL
 * with the graph freed. */
static const char *refusal(mb *b) {
    static rotor_error err;
    rotor_graph g;
    memset(&err, 0, sizeof err);
    rotor_status st = mb_load(b, NULL, &g, NULL, &err);
    if (!st) rotor_graph_free(&g);
    mb_free(b);
    return st ? err.msg : NULL;
}

#define REFUSED_WITH(b, text)                                                                                  \
    do {                                                                                                       \
        const char *msg_ = refusal(b);                                                                         \
        cr_assert_not_null(msg_, "imported; expected a refusal with \"%s\"", text);                            \
        cr_assert(strstr(msg_, text), "message \"%s\" lacks \"%s\"", msg_, text);                              \
    } while (0)

#define IMPORTS(b)                                                                                             \
    do {                                                                                                       \
        const char *msg_ = refusal(b);                                                                         \
        cr_assert_null(msg_, "refused: %s", msg_);                                                             \
    } while (0)

/* ---- the schema table ------------------------------------------------------------------- */

Test(onnxvalid, the_version_in_force_is_the_last_at_or_before_the_opset) {
    cr_assert_eq(ox_schema_since("TopK", 9), 1);
    cr_assert_eq(ox_schema_since("TopK", 10), 10);
    cr_assert_eq(ox_schema_since("TopK", 12), 11);
    cr_assert_eq(ox_schema_since("Resize", 19), 19);
    cr_assert_eq(ox_schema_since("GroupNormalization", 19), 18); /* written by hand: ONNX lists it deprecated */
    cr_assert_eq(ox_schema_since("Upsample", 10), 9, "the deprecated Upsample-10 keeps version 9 in force");
    cr_assert_eq(ox_schema_since("LayerNormalization", 12), -1, "before its first version: none");
    cr_assert_eq(ox_schema_since("LayerNormalization", 18), 17);
    cr_assert_eq(ox_schema_since("NoSuchOp", 12), -1);
}

Test(onnxvalid, every_default_domain_row_of_the_registry_has_an_onnx_schema) {
    int n;
    const ox_opdef *rows = ox_op_rows(&n);
    for (int i = 0; i < n; i++)
        /* ImageScaler and ConstantFill were ONNX's experimental operators,
         * removed before the Changelog the table is written from
         * (onnxlegacy.c reads them as their last definition said) */
        if (!strcmp(rows[i].domain, "ai.onnx") && strcmp(rows[i].name, "ImageScaler") &&
            strcmp(rows[i].name, "ConstantFill"))
            cr_assert_gt(ox_schema_since(rows[i].name, 28), 0, "%s has no ONNX schema", rows[i].name);
}

/* ---- attributes ------------------------------------------------------------------------- */

/* TopK-10 moved k from an attribute to input K: at opset 12 a k attribute
 * and no K input once became "k = the whole axis". */
Test(onnxvalid, a_topk_at_opset_12_with_a_k_attribute_is_refused_naming_k_and_opset_10) {
    mb b;
    mb_attr_i(&b, one_node(&b, 12, "TopK", "v i", DIMS(3, 4)), "k", 2);
    REFUSED_WITH(&b, "attribute 'k' is not in TopK at opset 12: ONNX removed it at opset 10");
}

Test(onnxvalid, a_topk_at_opset_9_takes_its_k_attribute) {
    mb b;
    mb_attr_i(&b, one_node(&b, 9, "TopK", "v i", DIMS(3, 4)), "k", 2);
    IMPORTS(&b);
}

Test(onnxvalid, an_attribute_before_the_opset_that_adds_it_is_refused) {
    mb b;
    mb_init(&b, 11);
    mb_input(&b, "d", DIMS(3, 4));
    input_t(&b, "i", I64, DIMS(1, 4));
    input_t(&b, "u", F32, DIMS(1, 4));
    mb_attr_s(&b, mb_node(&b, "ScatterElements", "s", "d i u", "y"), "reduction", "add");
    mb_output(&b, "y");
    REFUSED_WITH(&b, "attribute 'reduction' is not in ScatterElements at opset 11: ONNX adds it at opset 16");
}

Test(onnxvalid, an_attribute_no_version_has_is_refused) {
    mb b;
    mb_attr_i(&b, one_node(&b, 13, "Relu", "y", DIMS(2, 3)), "alpha", 1);
    REFUSED_WITH(&b, "attribute 'alpha' is not an attribute of Relu at any opset");
}

/* MIGraphX's isinf tests give detect_negative as ints; IsInf-10 takes an int. */
Test(onnxvalid, an_attribute_of_the_wrong_type_is_refused) {
    mb b;
    mb_attr_ints(&b, one_node(&b, 13, "IsInf", "y", DIMS(2, 3)), "detect_negative", 1, (const int64_t[]){0});
    REFUSED_WITH(&b, "attribute 'detect_negative' is ints; IsInf at opset 13 takes an int");
}

/* A float attribute written as an integer is read as that number when the
 * widening is exact (LeakyRelu's alpha = 2 gives Y = 2 * X below zero),
 * and refused past 2^24, where a float no longer holds every integer. */
Test(onnxvalid, an_integer_for_a_float_attribute_is_read_exactly_or_refused) {
    mb b;
    mb_attr_i(&b, one_node(&b, 13, "LeakyRelu", "y", DIMS(2, 3)), "alpha", 2);
    rotor_graph g;
    rotor_error err = {{0}};
    rotor_onnx_options o = {0};
    cr_assert_eq(mb_load(&b, &o, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(g.nops, 1);
    cr_assert(strstr(g.ops[0].expr.text, "2"), "%s", g.ops[0].expr.text);
    rotor_graph_free(&g);
    mb_free(&b);
    mb_attr_i(&b, one_node(&b, 13, "LeakyRelu", "y", DIMS(2, 3)), "alpha", (INT64_C(1) << 24) + 1);
    REFUSED_WITH(&b, "attribute 'alpha' is an int; LeakyRelu at opset 13 takes a float");
}

Test(onnxvalid, a_required_attribute_missing_is_refused) {
    mb b;
    mb_init(&b, 19);
    mb_input(&b, "x", DIMS(1, 4, 3, 3));
    mb_init_tensor(&b, "s", F32, DIMS(4), NULL);
    mb_init_tensor(&b, "bi", F32, DIMS(4), NULL);
    mb_node(&b, "GroupNormalization", "gn", "x s bi", "y");
    mb_output(&b, "y");
    REFUSED_WITH(&b, "required attribute 'num_groups' is missing (GroupNormalization at opset 19)");
}

Test(onnxvalid, a_string_attribute_outside_onnxs_values_is_refused) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(1, 1, 2, 2));
    mb_init_tensor(&b, "sc", F32, DIMS(4), NULL);
    mb_attr_s(&b, mb_node(&b, "Resize", "rs", "x - sc", "y"), "mode", "quadratic");
    mb_output(&b, "y");
    REFUSED_WITH(&b, "attribute mode 'quadratic' is not nearest, linear or cubic (Resize at any opset)");
}

/* ---- inputs, outputs and element types ------------------------------------------------- */

Test(onnxvalid, too_few_inputs_are_refused_with_the_count_the_opset_takes) {
    mb b;
    mb_init(&b, 19);
    mb_input(&b, "x", DIMS(1, 4, 3, 3));
    mb_init_tensor(&b, "s", F32, DIMS(2), NULL);
    mb_attr_i(&b, mb_node(&b, "GroupNormalization", "gn", "x s", "y"), "num_groups", 2);
    mb_output(&b, "y");
    REFUSED_WITH(&b, "2 inputs; GroupNormalization at opset 19 takes 3");
}

Test(onnxvalid, an_empty_name_for_an_input_that_is_not_optional_is_refused) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "a", DIMS(2, 3));
    mb_node(&b, "Add", "add", "a -", "y");
    mb_output(&b, "y");
    REFUSED_WITH(&b, "input 1 (B) is empty; Add at opset 13 needs it");
}

Test(onnxvalid, an_input_type_the_schema_does_not_allow_is_refused_with_the_allowed_types) {
    mb b;
    mb_init(&b, 13);
    input_t(&b, "x", I32, DIMS(1, 2, 3, 3));
    mb_init_tensor(&b, "s", F32, DIMS(2), NULL);
    mb_init_tensor(&b, "bi", F32, DIMS(2), NULL);
    mb_node(&b, "InstanceNormalization", "in", "x s bi", "y");
    mb_output(&b, "y");
    REFUSED_WITH(&b, "input 'x' (input) is int32; InstanceNormalization at opset 13 takes float, float16, double (nor at any other opset)");
}

/* ONNX widens type lists over opsets: Add takes uint8 from opset 14, and
 * PyTorch's exports at opset 6 hold int64 Constants (Constant-1 takes
 * floats, Constant-9 any type); BatchNormalization's scale may differ from
 * X from opset 15.  A fixed type (Expand's int64 shape) is fixed at every
 * opset. */
Test(onnxvalid, an_element_type_the_operator_takes_at_another_opset_is_accepted) {
    mb b;
    mb_init(&b, 11);
    input_t(&b, "a", 2 /* uint8 */, DIMS(2, 3));
    input_t(&b, "c", 2, DIMS(2, 3));
    mb_node(&b, "Add", "add", "a c", "y");
    mb_output(&b, "y");
    IMPORTS(&b);
    mb_init(&b, 6);
    mb_input(&b, "x", DIMS(2, 3));
    Onnx__NodeProto *k = mb_node(&b, "Constant", "k", "", "shape");
    Onnx__AttributeProto *a = mb_alloc(&b, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = mb_str(&b, "value");
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    Onnx__TensorProto *t = mb_alloc(&b, sizeof *t);
    onnx__tensor_proto__init(t);
    t->has_data_type = 1;
    t->data_type = I64;
    t->n_dims = 1;
    t->dims = mb_alloc(&b, sizeof(int64_t));
    t->dims[0] = 2;
    t->n_int64_data = 2;
    t->int64_data = mb_alloc(&b, 2 * sizeof(int64_t));
    t->int64_data[0] = 3, t->int64_data[1] = 2;
    a->t = t;
    k->attribute[k->n_attribute++] = a;
    mb_node(&b, "Reshape", "rs", "x shape", "y");
    mb_output(&b, "y");
    IMPORTS(&b);
    mb_init(&b, 13);
    input_t(&b, "x", F16, DIMS(2, 3, 4));
    mb_init_tensor(&b, "sc", F32, DIMS(3), NULL);
    mb_init_tensor(&b, "bi", F32, DIMS(3), NULL);
    mb_init_tensor(&b, "mu", F32, DIMS(3), NULL);
    mb_init_tensor(&b, "var", F32, DIMS(3), NULL);
    mb_node(&b, "BatchNormalization", "bn", "x sc bi mu var", "y");
    mb_output(&b, "y");
    IMPORTS(&b);
    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(1, 3));
    input_t(&b, "s", I32, DIMS(2));
    mb_node(&b, "Expand", "ex", "x s", "y");
    mb_output(&b, "y");
    /* an int32 shape where Expand takes int64 is the one widening the
     * check allows (onnxschema.c): it gets past the schema to the rule
     * that needs the shape's value */
    REFUSED_WITH(&b, "shape 's' is a graph input; rotor needs its value to know the shapes");
    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(1, 3));
    input_t(&b, "s8", I8, DIMS(2));
    mb_node(&b, "Expand", "ex", "x s8", "y");
    mb_output(&b, "y");
    REFUSED_WITH(&b, "input 's8' (shape) is int8; Expand at opset 13 takes int64 (nor at any other opset)");
}

/* Clip-13's input, min and max share T. */
Test(onnxvalid, inputs_that_share_a_type_parameter_and_differ_are_refused) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(3, 3));
    mb_init_tensor(&b, "lo", F32, 0, NULL, NULL);
    mb_init_tensor(&b, "hi", I64, 0, NULL, (const int64_t[]){4});
    mb_node(&b, "Clip", "c", "x lo hi", "y");
    mb_output(&b, "y");
    REFUSED_WITH(&b, "input 'hi' is int64 but input 'x' is float; Clip at opset 13 takes one type for both (nor at any other opset)");
}

/* RandomNormal's dtype decides its output, which T limits to floats. */
Test(onnxvalid, an_output_type_the_schema_does_not_allow_is_refused) {
    mb b;
    mb_init(&b, 14);
    Onnx__NodeProto *n = mb_node(&b, "RandomNormal", "rn", "", "y");
    mb_attr_i(&b, n, "dtype", I32);
    mb_attr_ints(&b, n, "shape", 2, (const int64_t[]){2, 3});
    mb_output(&b, "y");
    REFUSED_WITH(&b, "output 'y' (output) is int32; RandomNormal at opset 14 takes float, float16, double (nor at any other opset)");
}

/* onnxruntime registers LayerNormalization in the default domain from opset
 * 1; its exports at opset 12 carry it, one (attention_distilbert.onnx) with
 * a misspelt 'epsion'.  From opset 17 ONNX's schema applies. */
static void layernorm_epsion(mb *b, int opset) {
    mb_init(b, opset);
    mb_input(b, "x", DIMS(2, 8));
    mb_init_tensor(b, "s", F32, DIMS(8), NULL);
    mb_init_tensor(b, "bi", F32, DIMS(8), NULL);
    mb_attr_f(b, mb_node(b, "LayerNormalization", "ln", "x s bi", "y"), "epsion", 1e-5f);
    mb_output(b, "y");
}

Test(onnxvalid, an_operator_before_its_first_onnx_opset_is_not_checked_against_onnxs_schema) {
    mb b;
    layernorm_epsion(&b, 12);
    IMPORTS(&b);
    layernorm_epsion(&b, 17);
    REFUSED_WITH(&b, "attribute 'epsion' is not an attribute of LayerNormalization at any opset");
}

/* ---- groups and channels ---------------------------------------------------------------- */

static void groupnorm(mb *b, int opset, int64_t groups, int64_t scale, int64_t bias) {
    mb_init(b, opset);
    mb_input(b, "x", DIMS(1, 4, 3, 3));
    mb_init_tensor(b, "s", F32, DIMS(scale), NULL);
    mb_init_tensor(b, "bi", F32, DIMS(bias), NULL);
    mb_attr_i(b, mb_node(b, "GroupNormalization", "gn", "x s bi", "y"), "num_groups", groups);
    mb_output(b, "y");
}

Test(onnxvalid, group_normalization_with_3_groups_over_4_channels_is_refused) {
    mb b;
    groupnorm(&b, 21, 3, 4, 4);
    REFUSED_WITH(&b, "num_groups 3 does not divide the 4 channels of 'x'");
}

/* Opset 21: scale and bias per channel; 18 to 20: per channel or per group. */
Test(onnxvalid, group_normalization_scale_and_bias_are_per_channel_or_at_18_to_20_per_group) {
    mb b;
    groupnorm(&b, 21, 2, 4, 4);
    IMPORTS(&b);
    groupnorm(&b, 21, 2, 2, 2);
    REFUSED_WITH(&b, "scale 's' has 2 elements; it must be [4] (one per channel)");
    groupnorm(&b, 19, 2, 2, 2);
    IMPORTS(&b);
    groupnorm(&b, 19, 2, 4, 4);
    IMPORTS(&b);
    groupnorm(&b, 19, 2, 4, 3);
    REFUSED_WITH(&b, "bias 'bi' has 3 elements; it must be [4] (one per channel) or [2] (one per group)");
}

Test(onnxvalid, batch_normalization_parameters_must_be_one_dimensional_per_channel) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(2, 3, 4, 4));
    mb_init_tensor(&b, "s", F32, DIMS(3), NULL);
    mb_init_tensor(&b, "bi", F32, DIMS(3, 1), NULL);
    mb_init_tensor(&b, "mu", F32, DIMS(3), NULL);
    mb_init_tensor(&b, "var", F32, DIMS(3), NULL);
    mb_node(&b, "BatchNormalization", "bn", "x s bi mu var", "y");
    mb_output(&b, "y");
    REFUSED_WITH(&b, "B 'bi' has rank 2; it must be [3] (one per channel)");
}

Test(onnxvalid, instance_normalization_scale_must_match_the_channels) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(1, 2, 3, 3));
    mb_init_tensor(&b, "s", F32, DIMS(3), NULL);
    mb_init_tensor(&b, "bi", F32, DIMS(2), NULL);
    mb_node(&b, "InstanceNormalization", "in", "x s bi", "y");
    mb_output(&b, "y");
    REFUSED_WITH(&b, "scale 's' has 3 elements; it must be [2] (one per channel)");
}

Test(onnxvalid, layer_normalization_scale_must_broadcast_to_the_input) {
    mb b;
    mb_init(&b, 17);
    mb_input(&b, "x", DIMS(1, 4, 2));
    mb_init_tensor(&b, "s", F32, DIMS(3), NULL);
    mb_node(&b, "LayerNormalization", "ln", "x s", "y");
    mb_output(&b, "y");
    REFUSED_WITH(&b, "Scale 's' does not broadcast to the input 'x'");
}

Test(onnxvalid, conv_group_must_divide_the_input_channels) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(1, 4, 5, 5));
    mb_init_tensor(&b, "w", F32, DIMS(6, 1, 3, 3), NULL);
    mb_attr_i(&b, mb_node(&b, "Conv", "c", "x w", "y"), "group", 3);
    mb_output(&b, "y");
    REFUSED_WITH(&b, "group 3 does not divide the 4 input channels");
}

Test(onnxvalid, lp_normalization_takes_p_1_or_2_and_an_axis_in_range) {
    mb b;
    mb_attr_i(&b, one_node(&b, 13, "LpNormalization", "y", DIMS(2, 3)), "p", 3);
    REFUSED_WITH(&b, "p 3 is not 1 or 2");
    mb_attr_i(&b, one_node(&b, 13, "LpNormalization", "y", DIMS(2, 3)), "axis", 2);
    REFUSED_WITH(&b, "axis 2 is out of range for rank 2");
}

Test(onnxvalid, split_num_outputs_must_equal_the_outputs) {
    mb b;
    mb_attr_i(&b, one_node(&b, 18, "Split", "a b c d", DIMS(11, 15)), "num_outputs", 5);
    REFUSED_WITH(&b, "num_outputs is 5 but the node has 4 outputs");
}

/* ONNX's Einsum shape inference: "Ellipsis represents incompatible dimensions". */
Test(onnxvalid, einsum_ellipses_of_different_ranks_are_refused) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "p", DIMS(3, 3, 3));
    mb_input(&b, "q", DIMS(3, 3, 3, 3));
    mb_attr_s(&b, mb_node(&b, "Einsum", "e", "p q", "y"), "equation", "...ii,...jj->...ij");
    mb_output(&b, "y");
    REFUSED_WITH(&b, "'...' stands for 1 dimension(s) in term 1 but 2 in term 2");
}

/* ---- outputs under their own names ------------------------------------------------------ */

static int alias_of(const rotor_graph *g, const char *name) {
    for (int i = 0; i < g->naliases; i++)
        if (!strcmp(g->aliases[i].name, name)) return g->aliases[i].value;
    return -1;
}

/* A graph whose outputs are an Identity of the input, an inference Dropout
 * of it, and an Identity of a Relu. */
static void aliasing_model(mb *b) {
    mb_init(b, 13);
    mb_input(b, "x", DIMS(2, 3));
    mb_node(b, "Identity", "id", "x", "y_id");
    mb_node(b, "Dropout", "dr", "x", "y_drop");
    mb_node(b, "Relu", "r", "x", "r");
    mb_node(b, "Identity", "id2", "r", "y_r");
    mb_output(b, "y_id");
    mb_output(b, "y_drop");
    mb_output(b, "y_r");
}

Test(onnxvalid, outputs_an_identity_or_dropout_forwards_keep_their_names_as_aliases) {
    mb b;
    aliasing_model(&b);
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    mb_free(&b);
    int x = rotor_graph_find_value(&g, "x"), r = rotor_graph_find_value(&g, "r");
    cr_assert_eq(g.naliases, 3);
    cr_assert_eq(alias_of(&g, "y_id"), x);
    cr_assert_eq(alias_of(&g, "y_drop"), x);
    cr_assert_eq(alias_of(&g, "y_r"), r);
    cr_assert(g.values[x].is_output && g.values[r].is_output);
    cr_assert_eq(rotor_graph_validate(&g, &err), ROTOR_OK, "%s", err.msg);
    char *json = rotor_graph_to_json(&g);
    cr_assert(strstr(json, "\"aliases\":[{\"name\":\"y_id\",\"value\":\"x\"},{\"name\":\"y_drop\",\"value\":\"x\"},"
                           "{\"name\":\"y_r\",\"value\":\"r\"}]"),
              "%s", json);
    free(json);
    rotor_graph grouped;
    cr_assert_eq(rotor_group(&g, &grouped, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(grouped.naliases, 3, "grouping keeps the aliases");
    rotor_graph_free(&grouped);
    rotor_graph_free(&g);
}

Test(onnxvalid, a_graph_without_aliased_outputs_writes_no_aliases_key) {
    mb b;
    one_node(&b, 13, "Relu", "y", DIMS(2, 3));
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, NULL, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    mb_free(&b);
    char *json = rotor_graph_to_json(&g);
    cr_assert_null(strstr(json, "aliases"));
    free(json);
    rotor_graph_free(&g);
}

Test(onnxvalid, an_output_alias_may_not_take_a_values_name_or_be_given_twice) {
    rotor_graph g;
    rotor_graph_init(&g, "t");
    rotor_error err = {{0}};
    int v;
    cr_assert_eq(rotor_graph_add_value(&g, "x", ROTOR_DTYPE_F32, 1, (const int64_t[]){4}, ROTOR_ROLE_ACTIVATION, &v,
                                       &err), ROTOR_OK);
    cr_assert_eq(rotor_graph_add_output_alias(&g, "x", v, &err), ROTOR_ERR_INPUT);
    cr_assert(strstr(err.msg, "output alias 'x' is the name of a value"), "%s", err.msg);
    cr_assert_eq(rotor_graph_add_output_alias(&g, "y", v, &err), ROTOR_OK);
    cr_assert(g.values[v].is_output, "an alias makes its value an output");
    cr_assert_eq(rotor_graph_add_output_alias(&g, "y", v, &err), ROTOR_ERR_INPUT);
    cr_assert(strstr(err.msg, "given twice"), "%s", err.msg);
    cr_assert_eq(rotor_graph_add_output_alias(&g, "z", 7, &err), ROTOR_ERR_INPUT);
    rotor_graph_free(&g);
}
