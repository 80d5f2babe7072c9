/* test_expr.c — tensor expressions (src/op/expr.c; T10 §4.2 "Operator
 * representation").  Error columns are 1-based and were counted by hand on
 * the text quoted in each test. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>

#include <string.h>

#include "rotor/op/expr.h"

#define assert_msg_has(err, s) \
    cr_assert(strstr((err).msg, (s)) != NULL, "message \"%s\" lacks \"%s\"", (err).msg, (s))

static rotor_expr parse_ok(const char *text) {
    rotor_expr e;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_expr_parse(text, &e, &err), ROTOR_OK, "%s: %s", text, err.msg);
    return e;
}

/* Parses text (must succeed) and binds dims; returns the bind status. */
static rotor_status bind(const char *text, const char *dims, rotor_expr *e, rotor_error *err) {
    *e = parse_ok(text);
    return rotor_expr_bind(e, dims, err);
}

static void parse_fails(const char *text, const char *msg) {
    rotor_expr e;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_expr_parse(text, &e, &err), ROTOR_ERR_INPUT, "%s parsed", text);
    assert_msg_has(err, msg);
}

static void bind_fails(const char *text, const char *dims, const char *msg) {
    rotor_expr e;
    rotor_error err = {{0}};
    cr_assert_eq(bind(text, dims, &e, &err), ROTOR_ERR_INPUT, "%s with %s bound", text, dims);
    assert_msg_has(err, msg);
}

#define MATMUL "C[m,n] += A[m,k] * B[k,n]"

/* ---- parsing -------------------------------------------------------------- */

/* T10 Equation (1); axes by first appearance on the right: m, k, n (the
 * benchmark's F_op order, paper 003 "Output Format"). */
Test(expr, matmul_is_a_contraction_with_axes_m_k_n) {
    rotor_expr e = parse_ok(MATMUL);
    cr_assert_eq(e.naxes, 3);
    cr_assert_str_eq(e.axis_name[0], "m");
    cr_assert_str_eq(e.axis_name[1], "k");
    cr_assert_str_eq(e.axis_name[2], "n");
    cr_assert_eq(e.ntensors, 3);
    cr_assert_str_eq(e.tensors[0].name, "C");
    cr_assert_str_eq(e.tensors[1].name, "A");
    cr_assert_str_eq(e.tensors[2].name, "B");
    cr_assert_eq(e.op_class, ROTOR_OP_CONTRACTION);
    cr_assert(e.accumulate);
    cr_assert(!e.bound);
    /* C has m, n; A has m, k; B has k, n */
    cr_assert(e.tensors[0].has_axis[0] && !e.tensors[0].has_axis[1] && e.tensors[0].has_axis[2]);
    cr_assert(e.tensors[1].has_axis[0] && e.tensors[1].has_axis[1] && !e.tensors[1].has_axis[2]);
    cr_assert(!e.tensors[2].has_axis[0] && e.tensors[2].has_axis[1] && e.tensors[2].has_axis[2]);
    cr_assert(rotor_expr_is_reduction_axis(&e, 1));
    cr_assert(!rotor_expr_is_reduction_axis(&e, 0));
    cr_assert_eq(rotor_expr_axis(&e, "n"), 2);
    cr_assert_eq(rotor_expr_axis(&e, "q"), -1);
    /* the axis columns are those of the first use: m at 3, n at 5, k at 15 */
    cr_assert_eq(e.axis_column[0], 3);
    cr_assert_eq(e.axis_column[1], 15);
    cr_assert_eq(e.axis_column[2], 5);
}

Test(expr, matmul_binds_the_benchmark_extents) {
    rotor_expr e;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_expr_make(MATMUL, "m=32,k=5120,n=15360", &e, &err), ROTOR_OK, "%s", err.msg);
    cr_assert(e.bound);
    cr_assert_eq(e.extent[0], 32);
    cr_assert_eq(e.extent[1], 5120);
    cr_assert_eq(e.extent[2], 15360);
    /* multiply and accumulate: 2 FLOPs per point, 2 * 32 * 5120 * 15360 */
    cr_assert_eq(e.flops_per_point, 2);
    cr_assert_eq(rotor_expr_flops(&e), 2.0 * 32 * 5120 * 15360);
    char buf[64];
    rotor_expr_dims_string(&e, buf, sizeof buf);
    cr_assert_str_eq(buf, "m=32,k=5120,n=15360");
}

Test(expr, dims_may_come_in_any_order) {
    rotor_expr e;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_expr_make(MATMUL, "n=7,m=3,k=5", &e, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(e.extent[0], 3);
    cr_assert_eq(e.extent[1], 5);
    cr_assert_eq(e.extent[2], 7);
}

Test(expr, batch_matmul_has_axes_b_m_k_n) {
    rotor_expr e = parse_ok("C[b,m,n] += A[b,m,k] * B[b,k,n]");
    cr_assert_eq(e.naxes, 4);
    const char *names[] = {"b", "m", "k", "n"};
    for (int a = 0; a < 4; a++) cr_assert_str_eq(e.axis_name[a], names[a]);
    cr_assert_eq(e.op_class, ROTOR_OP_CONTRACTION);
    for (int t = 0; t < 3; t++) cr_assert(e.tensors[t].has_axis[0], "b is in every tensor");
    cr_assert(rotor_expr_is_reduction_axis(&e, 2));
}

/* T10 §4.2: "T10 supports all common operators like MatMul and Convolution". */
Test(expr, conv2d_has_compound_window_dims) {
    rotor_expr e = parse_ok("O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]");
    cr_assert_eq(e.op_class, ROTOR_OP_CONTRACTION);
    /* first appearance on the right: I gives b, c, h, kh, w, kw; W adds f */
    const char *names[] = {"b", "c", "h", "kh", "w", "kw", "f"};
    cr_assert_eq(e.naxes, 7);
    for (int a = 0; a < 7; a++) cr_assert_str_eq(e.axis_name[a], names[a]);
    const rotor_tensor *in = &e.tensors[1];
    cr_assert_str_eq(in->name, "I");
    cr_assert_eq(in->ndims, 4);
    cr_assert_eq(in->dims[0].nterms, 1);
    cr_assert_eq(in->dims[2].nterms, 2);
    cr_assert_eq(in->dims[2].axis[0], 2); /* h */
    cr_assert_eq(in->dims[2].axis[1], 3); /* kh */
    cr_assert_eq(in->dims[2].coef[0], 1);
    cr_assert_eq(in->dims[2].coef[1], 1);
    cr_assert_eq(in->dims[3].axis[0], 4); /* w */
    cr_assert_eq(in->dims[3].axis[1], 5); /* kw */
    cr_assert(in->has_axis[3] && in->has_axis[5]);
    /* c, kh, kw are summed away */
    cr_assert(rotor_expr_is_reduction_axis(&e, 1));
    cr_assert(rotor_expr_is_reduction_axis(&e, 3));
    cr_assert(rotor_expr_is_reduction_axis(&e, 5));
    cr_assert(!rotor_expr_is_reduction_axis(&e, 6));
}

Test(expr, strided_window_keeps_its_stride) {
    rotor_expr e = parse_ok("O[h] += I[2*h+kh] * W[kh]");
    const rotor_dim *d = &e.tensors[1].dims[0];
    cr_assert_eq(d->nterms, 2);
    cr_assert_eq(d->coef[0], 2);
    cr_assert_eq(d->coef[1], 1);
    cr_assert_str_eq(e.axis_name[d->axis[0]], "h");
    cr_assert_str_eq(e.axis_name[d->axis[1]], "kh");
}

Test(expr, elementwise_add_is_one_flop_per_point) {
    rotor_expr e = parse_ok("Y[s,d] = X[s,d] + Z[s,d]");
    cr_assert_eq(e.op_class, ROTOR_OP_ELEMENTWISE);
    cr_assert(!e.accumulate);
    cr_assert_eq(e.flops_per_point, 1);
    cr_assert_eq(e.ntensors, 3);
    cr_assert(!rotor_expr_is_reduction_axis(&e, 0));
    cr_assert(!rotor_expr_is_reduction_axis(&e, 1));
}

Test(expr, row_sum_is_a_reduction) {
    rotor_expr e = parse_ok("Y[s] += X[s,d]");
    cr_assert_eq(e.op_class, ROTOR_OP_REDUCTION);
    cr_assert(e.accumulate);
    cr_assert_eq(e.naxes, 2);
    cr_assert_str_eq(e.axis_name[1], "d");
    cr_assert(rotor_expr_is_reduction_axis(&e, 1));
    cr_assert_eq(e.flops_per_point, 1); /* the accumulation */
}

Test(expr, whitespace_is_free) {
    rotor_expr e = parse_ok("  C [ m , n ]+=A[m,k]*B[ k,n ]  ");
    cr_assert_eq(e.naxes, 3);
    cr_assert_eq(e.op_class, ROTOR_OP_CONTRACTION);
}

/* ---- malformed text --------------------------------------------------------- */

Test(expr, missing_bracket_names_column_7) {
    /* "C[m,n = ...": the '=' after n is column 7 ("n +=" would read as the
     * start of a window n+...) */
    parse_fails("C[m,n = A[m,k] * B[k,n]", "column 7: expected ']', got '='");
    /* at the end of the text */
    parse_fails("C[m,n] += A[m,k] * B[k,n", "column 25: expected ']', got end of expression");
}

Test(expr, missing_assignment_names_column_8) {
    /* "C[m,n] A[...": 'A' is column 8 */
    parse_fails("C[m,n] A[m,k] * B[k,n]", "column 8: expected '=' or '+=', got 'A'");
}

Test(expr, trailing_junk_names_column_27) {
    parse_fails("C[m,n] += A[m,k] * B[k,n] )", "column 27: unexpected ')' after the expression");
}

Test(expr, empty_text_is_column_1) {
    parse_fails("", "column 1: empty expression");
    parse_fails("   ", "column 1: empty expression");
}

Test(expr, missing_right_hand_side_says_end_of_expression) {
    parse_fails("C[m,n] +=", "got end of expression");
}

/* ---- structural rules ------------------------------------------------------- */

Test(expr, tensor_twice_names_its_second_column) {
    /* the second A is column 20 */
    parse_fails("C[m,n] += A[m,k] * A[k,n]", "column 20: tensor 'A' appears twice");
}

Test(expr, output_read_on_the_right_is_refused) {
    parse_fails("C[m,n] += C[m,k] * B[k,n]",
                "column 11: tensor 'C' is the output and cannot be read on the right");
}

Test(expr, summed_axis_with_plain_assignment_asks_for_plus_equals) {
    /* k first appears at column 14 of "C[m,n] = A[m,k] * B[k,n]" */
    parse_fails("C[m,n] = A[m,k] * B[k,n]",
                "column 14: axis 'k' is summed away but the expression uses '='; write '+='");
}

Test(expr, compound_output_dim_is_refused) {
    parse_fails("O[h+kh] += I[h] * W[kh]", "column 3: the output 'O' must be indexed by plain axes");
}

Test(expr, broadcast_output_axis_is_refused) {
    parse_fails("Y[s,d] = X[s]",
                "column 5: output axis 'd' is read by no input; T10 cannot plan a broadcast");
}

Test(expr, axis_twice_in_one_tensor_is_refused) {
    /* the second m of A is column 15 */
    parse_fails("C[m,n] += A[m,m] * B[m,n]", "column 15: axis 'm' appears twice in tensor 'A'");
}

/* ---- binding extents -------------------------------------------------------- */

Test(expr, missing_extent_names_the_axis_column) {
    /* q first appears at column 5 of "Y[p,q] += ..." */
    bind_fails("Y[p,q] += X[p,r] * W[r,q]", "p=2,r=3", "column 5: axis 'q' has no extent");
    /* n first appears in the output, column 5 */
    bind_fails(MATMUL, "m=32,k=5120", "column 5: axis 'n' has no extent (add n=N to --dims)");
}

Test(expr, unknown_axis_in_dims_is_refused) {
    bind_fails(MATMUL, "m=2,k=2,n=2,z=4", "dims: axis 'z' is not in the expression");
}

Test(expr, zero_and_negative_extents_are_refused) {
    bind_fails(MATMUL, "m=0,k=2,n=2", "dims: m=0: extent must be at least 1");
    bind_fails(MATMUL, "m=2,k=-3,n=2", "dims: k=-3: extent must be at least 1");
}

/* house-style.md: "A 10^15 dimension is an error message, not an overflow." */
Test(expr, extent_of_ten_to_the_15_is_refused) {
    bind_fails(MATMUL, "m=1000000000000000,k=2,n=2",
               "dims: m=1000000000000000: extent exceeds the limit 4294967296");
}

Test(expr, iteration_space_overflow_is_refused) {
    bind_fails(MATMUL, "m=4294967296,k=4294967296,n=4294967296", "overflows 64 bits");
}

Test(expr, non_integer_extent_is_refused) {
    bind_fails(MATMUL, "m=3.5,k=2,n=2", "dims: m: expected a positive integer, got '3.5'");
    bind_fails(MATMUL, "m=,k=2,n=2", "dims: m: expected a positive integer");
    bind_fails(MATMUL, "m=x,k=2,n=2", "got 'x'");
}

Test(expr, axis_given_twice_is_refused) {
    bind_fails(MATMUL, "m=2,k=2,m=3,n=2", "dims: axis 'm' is given twice");
}

Test(expr, dims_item_without_equals_is_refused) {
    bind_fails(MATMUL, "m=2,k,n=2", "dims: expected axis=extent, got 'k'");
}

Test(expr, dims_with_a_trailing_comma_are_refused) {
    bind_fails(MATMUL, "m=2,k=2,n=2,", "dims: expected axis=extent after the last ',', got nothing");
}

/* ---- the right-hand side program and its evaluator (emulator support) ---- */

/* `Y[s,d] = X[s,d] * G[d] + Bb[d]` in postfix: X G * Bb +. */
Test(expr, affine_rhs_is_the_postfix_program_X_G_mul_Bb_add) {
    rotor_expr e = parse_ok("Y[s,d] = X[s,d] * G[d] + Bb[d]");
    cr_assert_eq(e.nnodes, 5);
    cr_assert_eq(e.rhs[0].op, ROTOR_NODE_TENSOR);
    cr_assert_eq(e.rhs[0].arg, 1);
    cr_assert_eq(e.rhs[1].arg, 2);
    cr_assert_eq(e.rhs[2].op, ROTOR_NODE_MUL);
    cr_assert_eq(e.rhs[3].arg, 3);
    cr_assert_eq(e.rhs[4].op, ROTOR_NODE_ADD);
    double x[4] = {0, 2.0, 3.0, 0.5};
    cr_assert_float_eq(rotor_expr_eval(&e, x), 6.5, 1e-15);
    float xf[4] = {0, 2.0f, 3.0f, 0.5f};
    cr_assert_float_eq(rotor_expr_eval_f(&e, xf), 6.5f, 1e-6);
}

/* gelu(1) = 0.5 * (1 + erf(1/sqrt 2)) = 0.8413447460685429 (exact form). */
Test(expr, gelu_of_1_is_0_8413447) {
    rotor_expr e = parse_ok("Y[s,d] = gelu(X[s,d])");
    cr_assert_eq(rotor_expr_check_eval(&e, NULL), ROTOR_OK);
    double x[2] = {0, 1.0};
    cr_assert_float_eq(rotor_expr_eval(&e, x), 0.8413447460685429, 1e-15);
}

Test(expr, functions_numbers_and_division_evaluate) {
    rotor_expr e = parse_ok("Y[s] = max(X[s], Z[s]) - 2 * sigmoid(neg(W[s])) / recip(sqrt(V[s]))");
    cr_assert_eq(rotor_expr_check_eval(&e, NULL), ROTOR_OK);
    double x[5] = {0, 4.0, 1.0, 1.0, 4.0};
    /* max(4,1) - 2 * sigmoid(-1) / (1/2) = 4 - 4 * 0.2689414213699951 */
    cr_assert_float_eq(rotor_expr_eval(&e, x), 4.0 - 4.0 * 0.2689414213699951, 1e-14);
}

/* relu, max and min carry a NaN through, as ONNX's Relu, Max and Min do
 * (numpy's maximum/minimum): a NaN weight must not come out as 0 or as the
 * other operand, or rotor run --check would pass a NaN model (issue 47). */
Test(expr, relu_max_and_min_of_nan_are_nan) {
    rotor_expr r = parse_ok("Y[s] = relu(X[s])");
    double xr[2] = {0, NAN};
    cr_assert(isnan(rotor_expr_eval(&r, xr)));
    float fr[2] = {0, NAN};
    cr_assert(isnan(rotor_expr_eval_f(&r, fr)));
    xr[1] = -2.0;
    cr_assert_float_eq(rotor_expr_eval(&r, xr), 0.0, 0);
    rotor_expr mx = parse_ok("Y[s] = max(X[s], Z[s])"), mn = parse_ok("Y[s] = min(X[s], Z[s])");
    double a[3] = {0, NAN, 1.0}, b[3] = {0, 1.0, NAN}, c[3] = {0, 3.0, 1.0};
    cr_assert(isnan(rotor_expr_eval(&mx, a)) && isnan(rotor_expr_eval(&mx, b)));
    cr_assert(isnan(rotor_expr_eval(&mn, a)) && isnan(rotor_expr_eval(&mn, b)));
    cr_assert_float_eq(rotor_expr_eval(&mx, c), 3.0, 0);
    cr_assert_float_eq(rotor_expr_eval(&mn, c), 1.0, 0);
}

Test(expr, reduction_through_exp_accumulates_exp) {
    rotor_expr e = parse_ok("Y[s] += exp(X[s,d])");
    cr_assert_eq(e.op_class, ROTOR_OP_REDUCTION);
    double x[2] = {0, 0.0};
    cr_assert_float_eq(rotor_expr_eval(&e, x), 1.0, 1e-15);
}

/* Unknown functions still parse (planning only counts FLOPs) but cannot be
 * evaluated; the error names the function and its column. */
Test(expr, unknown_function_parses_but_is_refused_by_name_for_evaluation) {
    rotor_expr e = parse_ok("Y[s,d] = bessel(X[s,d])");
    cr_assert_eq(e.flops_per_point, 1);
    rotor_error err = {{0}};
    cr_assert_eq(rotor_expr_check_eval(&e, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "function 'bessel' (column 10) is not one the evaluator knows");
    assert_msg_has(err, "gelu");
    assert_msg_has(err, "gelu_tanh, prelu)"); /* the whole list, to its last name */
}

/* ONNX's other element-wise functions, with their parameters as literal
 * arguments (the ONNX lowering writes them), against the operator docs'
 * definitions worked by hand. */
Test(expr, onnx_activations_evaluate_with_their_parameters) {
    const struct { /* not static: the wanted values are computed */
        const char *rhs;
        double x, want;
    } cases[] = {
        {"selu(X[s], 2, 3)", -1.0, 3.0 * 2.0 * (exp(-1.0) - 1.0)},
        {"selu(X[s], 2, 3)", 0.5, 1.5},
        {"elu(X[s], 0.5)", -2.0, 0.5 * (exp(-2.0) - 1.0)},
        {"leakyrelu(X[s], 0.1)", -3.0, -0.3},
        {"leakyrelu(X[s], 0.1)", 3.0, 3.0},
        {"prelu(X[s], 0.25)", -4.0, -1.0},
        {"thresholdedrelu(X[s], 1)", 0.5, 0.0},
        {"hardsigmoid(X[s], 0.2, 0.5)", 1.0, 0.7},
        {"hardsigmoid(X[s], 0.2, 0.5)", 10.0, 1.0},
        {"hardswish(X[s])", 1.0, 1.0 * (1.0 / 6 + 0.5)},
        {"celu(X[s], 2)", -1.0, 2.0 * (exp(-0.5) - 1.0)},
        {"shrink(X[s], 0.5, 1)", -2.0, -1.5},
        {"shrink(X[s], 0.5, 1)", 0.5, 0.0},
        {"softplus(X[s])", 0.0, log(2.0)},
        {"softsign(X[s])", -3.0, -0.75},
        {"pow(X[s], 3)", 2.0, 8.0},
        {"round(X[s])", 2.5, 2.0}, /* halves to even */
        {"round(X[s])", -1.5, -2.0},
        {"sign(X[s])", -0.1, -1.0},
        {"floor(X[s])", -1.5, -2.0},
        {"mish(X[s])", 1.0, tanh(log(1.0 + exp(1.0)))},
        {"gelu_tanh(X[s])", 1.0, 0.5 * (1 + tanh(0.79788456080286535588 * 1.044715))},
        {"atanh(X[s])", 0.5, atanh(0.5)},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[128];
        snprintf(text, sizeof text, "Y[s] = %s", cases[i].rhs);
        rotor_expr e = parse_ok(text);
        rotor_error err = {{0}};
        cr_assert_eq(rotor_expr_check_eval(&e, &err), ROTOR_OK, "%s: %s", text, err.msg);
        double x[2] = {0, cases[i].x};
        cr_assert_float_eq(rotor_expr_eval(&e, x), cases[i].want, 1e-12, "%s at %g", text, cases[i].x);
        float xf[2] = {0, (float)cases[i].x};
        cr_assert_float_eq(rotor_expr_eval_f(&e, xf), (float)cases[i].want, 1e-6, "%s (float)", text);
    }
    /* a parameter missing is refused like any wrong argument count */
    rotor_expr e = parse_ok("Y[s] = selu(X[s], 2)");
    rotor_error err = {{0}};
    cr_assert_eq(rotor_expr_check_eval(&e, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "function 'selu' (column 8) takes 3 arguments, got 2");
}

Test(expr, max_with_one_argument_is_refused_for_evaluation) {
    rotor_expr e = parse_ok("Y[s] = max(X[s])");
    rotor_error err = {{0}};
    cr_assert_eq(rotor_expr_check_eval(&e, &err), ROTOR_ERR_INPUT);
    assert_msg_has(err, "function 'max' (column 8) takes 2 arguments, got 1");
}
