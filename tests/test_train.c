/* test_train.c — training graphs (src/model/train.c, traindiff.c) and the
 * gradient check (src/run/gradcheck.c; docs/training.md): a 2x2 MatMul's
 * gradient and SGD step worked by hand, an operator without a gradient
 * refused naming it, and the finite-difference checks of issue 44's
 * acceptance (max relative error 1e-3 in float32) on an MLP, a small CNN
 * with BatchNormalization, an overlapping MaxPool and one transformer
 * layer, each built as ONNX. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxbuild.h"
#include "rotor/model/onnx.h"
#include "rotor/model/train.h"
#include "rotor/run/gradcheck.h"
#include "rotor/run/run.h"

/* Y = X @ W with X = [[1,2],[3,4]] an input and W = [[5,6],[7,8]] a weight. */
static void matmul_2x2(rotor_graph *g, int *x, int *w) {
    rotor_error err = {{0}};
    int y;
    rotor_graph_init(g, "mm");
    cr_assert_eq(rotor_graph_add_value(g, "x", ROTOR_DTYPE_F32, 2, (int64_t[]){2, 2}, ROTOR_ROLE_ACTIVATION, x, &err), 0);
    cr_assert_eq(rotor_graph_add_value(g, "w", ROTOR_DTYPE_F32, 2, (int64_t[]){2, 2}, ROTOR_ROLE_WEIGHT, w, &err), 0);
    cr_assert_eq(rotor_graph_add_value(g, "y", ROTOR_DTYPE_F32, 2, (int64_t[]){2, 2}, ROTOR_ROLE_ACTIVATION, &y, &err), 0);
    cr_assert_eq(rotor_graph_set_data(g, *w, (double[]){5, 6, 7, 8}, &err), 0);
    rotor_op_desc mm = {.name = "mm", .type = "MatMul", .expr = "Y[m,n] += A[m,k] * B[k,n]", .dims = "m=2,k=2,n=2",
                        .tensor_value = {y, *x, *w, -1, -1}, .inputs = (int[]){*x, *w}, .ninputs = 2, .outputs = &y,
                        .noutputs = 1};
    cr_assert_eq(rotor_graph_add_op(g, &mm, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_graph_set_output(g, y, &err), 0);
}

/* The training step of matmul_2x2 with optimizer o. */
static void train_2x2(rotor_optimizer opt, double lr, rotor_graph *g, rotor_graph *t, rotor_train_info *info, int *x,
                      int *w) {
    rotor_error err = {{0}};
    matmul_2x2(g, x, w);
    rotor_train_options o = {.optimizer = opt, .lr = lr};
    cr_assert_eq(rotor_train(g, &o, t, info, &err), ROTOR_OK, "%s", err.msg);
}

/* L = sum (Y - 0)^2 / 4, so dY = Y / 2 = [[9.5, 11], [21.5, 25]] (Y = [[19, 22],
 * [43, 50]]) and dW = X^T dY = [[1*9.5 + 3*21.5, 1*11 + 3*25], [2*9.5 + 4*21.5,
 * 2*11 + 4*25]] = [[74, 86], [105, 122]]; SGD at lr 0.01: W - 0.01 dW. */
Test(train, matmul_2x2_gradient_and_sgd_step_worked_by_hand) {
    rotor_graph g, t;
    rotor_train_info info;
    rotor_error err = {{0}};
    int x, w;
    train_2x2(ROTOR_OPTIM_SGD, 0.01, &g, &t, &info, &x, &w);
    cr_assert_eq(info.nparams, 1);
    cr_assert_eq(info.param[0], w);
    cr_assert_eq(info.forward_ops, 1);
    cr_assert_eq(info.loss_ops, 1);
    cr_assert_eq(info.backward_ops, 2, "the loss's gradient and dW (X needs none): %d", info.backward_ops);
    cr_assert_eq(info.update_ops, 1);
    cr_assert_eq(info.kept_bytes, 2 * 16, "x (read by dW) and y (by the loss's gradient): %lld", (long long)info.kept_bytes);
    double xd[4] = {1, 2, 3, 4}, zero[4] = {0};
    const double **in = calloc((size_t)t.nvalues, sizeof *in);
    in[x] = xd;
    in[info.target[0]] = zero;
    rotor_run_result r;
    cr_assert_eq(rotor_run(&t, in, NULL, &r, &err), ROTOR_OK, "%s", err.msg);
    const double dw[4] = {74, 86, 105, 122};
    for (int k = 0; k < 4; k++) cr_assert_float_eq(r.values[info.grad[0]][k], dw[k], 1e-9, "dW[%d]", k);
    cr_assert_float_eq(r.values[info.loss][0], (19.0 * 19 + 22 * 22 + 43 * 43 + 50 * 50) / 4, 1e-9);
    int next = rotor_graph_find_value(&t, "w.next");
    cr_assert_geq(next, 0);
    const double wn[4] = {5 - 0.74, 6 - 0.86, 7 - 1.05, 8 - 1.22};
    for (int k = 0; k < 4; k++) cr_assert_float_eq(r.values[next][k], wn[k], 1e-6, "W'[%d]", k);
    rotor_run_result_free(&r);
    free(in);
    rotor_train_info_free(&info);
    rotor_graph_free(&t);
    rotor_graph_free(&g);
}

/* Adam's first step moves every entry by lr against its gradient's sign
 * (m/(1-b1) = g, sqrt(v/(1-b2)) = |g|), and its two moments are weights. */
Test(train, adam_first_step_moves_each_weight_by_lr_and_keeps_two_moments) {
    rotor_graph g, t;
    rotor_train_info info;
    rotor_error err = {{0}};
    int x, w;
    train_2x2(ROTOR_OPTIM_ADAM, 0.1, &g, &t, &info, &x, &w);
    cr_assert_eq(info.update_ops, 3);
    cr_assert_eq(info.state_bytes, 2 * 16);
    int m = rotor_graph_find_value(&t, "w.adam_m");
    cr_assert_geq(m, 0);
    cr_assert_eq(t.values[m].role, ROTOR_ROLE_WEIGHT);
    double xd[4] = {1, 2, 3, 4}, zero[4] = {0};
    const double **in = calloc((size_t)t.nvalues, sizeof *in);
    in[x] = xd;
    in[info.target[0]] = zero;
    rotor_run_result r;
    cr_assert_eq(rotor_run(&t, in, NULL, &r, &err), ROTOR_OK, "%s", err.msg);
    int next = rotor_graph_find_value(&t, "w.next");
    const double w0[4] = {5, 6, 7, 8};
    for (int k = 0; k < 4; k++) cr_assert_float_eq(r.values[next][k], w0[k] - 0.1, 1e-6, "W'[%d]", k);
    rotor_run_result_free(&r);
    free(in);
    rotor_train_info_free(&info);
    rotor_graph_free(&t);
    rotor_graph_free(&g);
}

Test(train, an_operator_without_a_gradient_is_refused_naming_it) {
    rotor_graph g, t;
    rotor_train_info info;
    rotor_error err = {{0}};
    int x, w, y, z;
    matmul_2x2(&g, &x, &w);
    y = rotor_graph_find_value(&g, "y");
    cr_assert_eq(rotor_graph_add_value(&g, "z", ROTOR_DTYPE_F32, 2, (int64_t[]){2, 2}, ROTOR_ROLE_ACTIVATION, &z, &err), 0);
    rotor_op_desc cs = {.name = "cum", .type = "CumSum", .tensor_value = {-1, -1, -1, -1, -1}, .inputs = &y,
                        .ninputs = 1, .outputs = &z, .noutputs = 1};
    cr_assert_eq(rotor_graph_add_op(&g, &cs, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_graph_set_output(&g, z, &err), 0);
    cr_assert_eq(rotor_train(&g, NULL, &t, &info, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "op 'cum' (CumSum): rotor has no gradient for this operator (docs/training.md lists "
                              "the ones it has)");
    cr_assert_eq(t.nops, 0);
    rotor_graph_free(&t);
    rotor_graph_free(&g);
}

/* A vendor op of type `type` reading the model input x and a weight s,
 * then a MatMul with a weight w: the training step's status, its
 * parameters' names in *names (space-separated). */
static rotor_status weight_beside_input(const char *type, char *names, size_t cap, rotor_error *err) {
    rotor_graph g, t;
    rotor_train_info info;
    int x, sv, n, w, y;
    rotor_graph_init(&g, "beside");
    const rotor_role act = ROTOR_ROLE_ACTIVATION;
    cr_assert_eq(rotor_graph_add_value(&g, "x", ROTOR_DTYPE_F32, 2, (int64_t[]){2, 2}, act, &x, err), 0);
    cr_assert_eq(rotor_graph_add_value(&g, "s", ROTOR_DTYPE_F32, 1, (int64_t[]){2}, ROTOR_ROLE_WEIGHT, &sv, err), 0);
    cr_assert_eq(rotor_graph_add_value(&g, "n", ROTOR_DTYPE_F32, 2, (int64_t[]){2, 2}, act, &n, err), 0);
    cr_assert_eq(rotor_graph_add_value(&g, "w", ROTOR_DTYPE_F32, 2, (int64_t[]){2, 2}, ROTOR_ROLE_WEIGHT, &w, err), 0);
    cr_assert_eq(rotor_graph_add_value(&g, "y", ROTOR_DTYPE_F32, 2, (int64_t[]){2, 2}, act, &y, err), 0);
    rotor_op_desc v = {.name = "v", .type = type, .tensor_value = {-1, -1, -1, -1, -1}, .inputs = (int[]){x, sv},
                       .ninputs = 2, .outputs = &n, .noutputs = 1};
    cr_assert_eq(rotor_graph_add_op(&g, &v, NULL, err), ROTOR_OK, "%s", err->msg);
    rotor_op_desc mm = {.name = "mm", .type = "MatMul", .expr = "Y[m,n] += A[m,k] * B[k,n]", .dims = "m=2,k=2,n=2",
                        .tensor_value = {y, n, w, -1, -1}, .inputs = (int[]){n, w}, .ninputs = 2, .outputs = &y,
                        .noutputs = 1};
    cr_assert_eq(rotor_graph_add_op(&g, &mm, NULL, err), ROTOR_OK, "%s", err->msg);
    cr_assert_eq(rotor_graph_set_output(&g, y, err), 0);
    rotor_status st = rotor_train(&g, NULL, &t, &info, err);
    names[0] = 0;
    for (int k = 0; !st && k < info.nparams; k++)
        snprintf(names + strlen(names), cap - strlen(names), "%s%s", k ? " " : "", g.values[info.param[k]].name);
    if (!st) rotor_train_info_free(&info);
    rotor_graph_free(&t);
    rotor_graph_free(&g);
    return st;
}

/* A weight an operator reads beside a model input, which needs no
 * gradient: the operator's rule gives the weight's (a LayerNormalization's
 * scale, costed), or, where rotor has none, it is refused naming it.
 * Until 2026-12-03 nothing was asked of the operator: the weight was
 * left out of training without a word (found by an audit helper). */
Test(train, a_weight_read_beside_a_model_input_is_trained_or_refused) {
    char names[64];
    rotor_error err = {{0}};
    cr_assert_eq(weight_beside_input("LayerNormalization", names, sizeof names, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_str_eq(names, "s w");
    cr_assert_eq(weight_beside_input("InstanceNormalization", names, sizeof names, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "op 'v' (InstanceNormalization): rotor has no gradient for this operator "
                              "(docs/training.md lists the ones it has)");
}

/* ---- finite differences on ONNX models ------------------------------------------------------ */

/* A float initializer with pseudo-random data of scale `scale` (around
 * `mean`), which onnxbuild.h's mb_init_tensor leaves empty. */
static void init_f(mb *b, const char *name, int rank, const int64_t *dims, double mean, double scale, unsigned seed) {
    Onnx__TensorProto *t = mb_init_tensor(b, name, 1, rank, dims, NULL);
    int64_t n = 1;
    for (int d = 0; d < rank; d++) n *= dims[d];
    t->n_float_data = (size_t)n;
    t->float_data = mb_alloc(b, sizeof(float) * (size_t)n);
    for (int64_t k = 0; k < n; k++) t->float_data[k] = (float)(mean + scale * sin(1.7 * (double)(k + 1) + seed));
}

static double check(mb *b, const char *what) {
    rotor_onnx_options oo = {.keep_data = true, .train = true};
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(b, &oo, &g, NULL, &err), ROTOR_OK, "%s: %s", what, err.msg);
    rotor_gradcheck_options go = {.samples = 4, .seed = 7, };
    rotor_gradcheck_result r;
    cr_assert_eq(rotor_gradcheck(&g, NULL, &go, &r, &err), ROTOR_OK, "%s: %s", what, err.msg);
    for (int k = 0; k < r.nparams; k++) {
        const rotor_gradcheck_param *p = &r.params[k];
        /* (a one-element parameter, the attention's scale, has one entry to check) */
        cr_assert_geq(p->checked, p->elements < 2 ? p->elements : 2, "%s: %s: %d of %lld entries checked (%d at kinks)",
                      what, p->name, p->checked, (long long)p->elements, p->kinks);
        cr_assert(!p->vanishing || p->zero_ok, "%s: %s: a gradient 0 by symmetry, but a difference of %.3g", what,
                  p->name, p->max_numeric);
        cr_assert_lt(p->max_rel, 1e-3, "%s: %s entry %lld: analytic %.9g numeric %.9g (rel %.3g)", what, p->name,
                     (long long)p->worst, p->analytic, p->numeric, p->max_rel);
    }
    cr_log_info("%s: %d parameters, max relative error %.3g", what, r.nparams, r.max_rel);
    double worst = r.max_rel;
    cr_assert_gt(r.nparams, 0);
    rotor_gradcheck_result_free(&r);
    rotor_graph_free(&g);
    return worst;
}

/* X[4,6] -> Gemm(W1[6,8], b1) -> Relu -> MatMul(W2[8,3]) + b2 -> Y */
Test(train, mlp_gradients_match_finite_differences) {
    mb b;
    mb_init(&b, 17);
    mb_input(&b, "x", DIMS(4, 6));
    init_f(&b, "w1", DIMS(6, 8), 0, 0.5, 1);
    init_f(&b, "b1", DIMS(8), 0.1, 0.2, 2);
    init_f(&b, "w2", DIMS(8, 3), 0, 0.5, 3);
    init_f(&b, "b2", DIMS(3), 0, 0.2, 4);
    mb_node(&b, "Gemm", "fc1", "x w1 b1", "h");
    mb_node(&b, "Relu", "act", "h", "a");
    mb_node(&b, "MatMul", "fc2", "a w2", "m");
    mb_node(&b, "Add", "bias2", "m b2", "y");
    mb_output(&b, "y");
    check(&b, "mlp");
    mb_free(&b);
}

/* X[2,2,6,6] -> Conv(W[3,2,3,3], pads 1) + b -> BatchNormalization (batch
 * statistics) -> Relu -> MaxPool 2x2 -> Flatten -> Gemm(W2[27,4]) -> Y */
Test(train, cnn_with_batchnorm_gradients_match_finite_differences) {
    mb b;
    mb_init(&b, 17);
    mb_input(&b, "x", DIMS(2, 2, 6, 6));
    init_f(&b, "w", DIMS(3, 2, 3, 3), 0, 0.4, 1);
    init_f(&b, "cb", DIMS(3), 0, 0.1, 2);
    init_f(&b, "gamma", DIMS(3), 1, 0.2, 3);
    init_f(&b, "beta", DIMS(3), 0, 0.2, 4);
    init_f(&b, "mean", DIMS(3), 0, 0, 5);
    init_f(&b, "var", DIMS(3), 1, 0, 6);
    init_f(&b, "w2", DIMS(27, 4), 0, 0.3, 7);
    Onnx__NodeProto *c = mb_node(&b, "Conv", "conv", "x w cb", "c");
    mb_attr_ints(&b, c, "kernel_shape", 2, (int64_t[]){3, 3});
    mb_attr_ints(&b, c, "pads", 4, (int64_t[]){1, 1, 1, 1});
    mb_node(&b, "BatchNormalization", "bn", "c gamma beta mean var", "n");
    mb_node(&b, "Relu", "act", "n", "r");
    Onnx__NodeProto *p = mb_node(&b, "MaxPool", "pool", "r", "p");
    mb_attr_ints(&b, p, "kernel_shape", 2, (int64_t[]){2, 2});
    mb_attr_ints(&b, p, "strides", 2, (int64_t[]){2, 2});
    mb_node(&b, "Flatten", "flat", "p", "f");
    mb_node(&b, "Gemm", "fc", "f w2", "y");
    mb_output(&b, "y");
    check(&b, "cnn");
    mb_free(&b);
}

/* X[2,2,8,8] -> Conv(W[3,2,3,3], pads 1) -> MaxPool 3x3 stride 2 pads 1 ->
 * Flatten -> Gemm(W2[48,4]) -> Y: overlapping windows, where an input is the
 * max of two windows and a step h can change which entry wins without the
 * kink test seeing it (w entry 17 failed at relative error 0.00145 before an entry
 * that disagrees was measured again at h/16; 1.26e-4 now) */
Test(train, overlapping_maxpool_gradients_match_finite_differences) {
    mb b;
    mb_init(&b, 12);
    mb_input(&b, "x", DIMS(2, 2, 8, 8));
    init_f(&b, "w", DIMS(3, 2, 3, 3), 0, 0.4, 1);
    init_f(&b, "w2", DIMS(48, 4), 0, 0.3, 2);
    Onnx__NodeProto *c = mb_node(&b, "Conv", "conv", "x w", "c");
    mb_attr_ints(&b, c, "kernel_shape", 2, (int64_t[]){3, 3});
    mb_attr_ints(&b, c, "pads", 4, (int64_t[]){1, 1, 1, 1});
    Onnx__NodeProto *p = mb_node(&b, "MaxPool", "pool", "c", "p");
    mb_attr_ints(&b, p, "kernel_shape", 2, (int64_t[]){3, 3});
    mb_attr_ints(&b, p, "strides", 2, (int64_t[]){2, 2});
    mb_attr_ints(&b, p, "pads", 4, (int64_t[]){1, 1, 1, 1});
    mb_node(&b, "Flatten", "flat", "p", "f");
    mb_node(&b, "Gemm", "fc", "f w2", "y");
    mb_output(&b, "y");
    check(&b, "maxpool_overlap");
    mb_free(&b);
}

/* A gradient known wrong must fail, measured again or not: two outputs,
 * y1 = x Wb large (the loss about 13, so the float32 floor is high) and
 * y2 = tanh(x Ws), whose gradient entries lie between the floor at h and
 * the 16-times larger one at h/16.  Analytic gradients 2 % high pass only
 * when the second measurement is judged against its own floor (a review
 * helper's finding: 0.00074, PASS, where the first measurement said 0.0113). */
static void two_outputs(mb *b) {
    mb_input(b, "x", DIMS(8, 4));
    init_f(b, "wb", DIMS(4, 3), 0, 3, 1);
    init_f(b, "ws", DIMS(4, 3), 0, 2, 2);
    mb_node(b, "MatMul", "big", "x wb", "y1");
    mb_node(b, "MatMul", "small", "x ws", "a");
    mb_node(b, "Tanh", "act", "a", "y2");
    mb_output(b, "y1");
    mb_output(b, "y2");
}

Test(train, a_gradient_two_percent_wrong_fails_the_check) {
    mb b;
    mb_init(&b, 17);
    two_outputs(&b);
    rotor_onnx_options oo = {.keep_data = true, .train = true};
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, &oo, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    rotor_gradcheck_result r;
    rotor_gradcheck_options go = {.seed = 7};
    cr_assert_eq(rotor_gradcheck(&g, NULL, &go, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_lt(r.max_rel, ROTOR_GRADCHECK_LIMIT, "right: %.3g", r.max_rel);
    rotor_gradcheck_result_free(&r);
    go.analytic_scale = 1.02;
    cr_assert_eq(rotor_gradcheck(&g, NULL, &go, &r, &err), ROTOR_OK, "%s", err.msg);
    for (int k = 0; k < r.nparams; k++)
        cr_assert_gt(r.params[k].max_rel, 0.01, "%s: 2 %% wrong, relative error %.3g", r.params[k].name,
                     r.params[k].max_rel);
    rotor_gradcheck_result_free(&r);
    rotor_graph_free(&g);
    mb_free(&b);
}

/* One post-norm transformer layer, as BERT's: X[4,8] (seq 4, model 8, 2
 * heads of 4) -> Q, K, V (MatMul + Add) -> heads (Reshape, Transpose) ->
 * softmax(Q K^T / 2) V -> merged -> output projection + residual ->
 * LayerNormalization -> FFN (MatMul 8x16, Gelu, MatMul 16x8) + residual ->
 * LayerNormalization -> Y. */
static void transformer(mb *b) {
    mb_input(b, "x", DIMS(4, 8));
    const char *proj[3] = {"q", "k", "v"};
    unsigned seed = 1;
    for (int i = 0; i < 3; i++) {
        char w[8], bias[8], mm[16], out[8], ins[32], outs[16], hd[16], sh[16];
        snprintf(w, sizeof w, "w%s", proj[i]);
        snprintf(bias, sizeof bias, "b%s", proj[i]);
        init_f(b, w, DIMS(8, 8), 0, 0.4, seed++);
        init_f(b, bias, DIMS(8), 0, 0.1, seed++);
        snprintf(mm, sizeof mm, "%s.mm", proj[i]);
        snprintf(ins, sizeof ins, "x %s", w);
        snprintf(outs, sizeof outs, "%s0", proj[i]);
        mb_node(b, "MatMul", mm, ins, outs);
        snprintf(ins, sizeof ins, "%s0 %s", proj[i], bias);
        snprintf(out, sizeof out, "%s1", proj[i]);
        snprintf(mm, sizeof mm, "%s.add", proj[i]);
        mb_node(b, "Add", mm, ins, out);
        snprintf(ins, sizeof ins, "%s1 hshape", proj[i]);
        snprintf(hd, sizeof hd, "%s2", proj[i]);
        snprintf(mm, sizeof mm, "%s.split", proj[i]);
        mb_node(b, "Reshape", mm, ins, hd);
        snprintf(sh, sizeof sh, "%s3", proj[i]);
        snprintf(mm, sizeof mm, "%s.heads", proj[i]);
        Onnx__NodeProto *t = mb_node(b, "Transpose", mm, hd, sh);
        /* [s, h, d] -> [h, s, d]; K -> [h, d, s] */
        mb_attr_ints(b, t, "perm", 3, i == 1 ? (int64_t[]){1, 2, 0} : (int64_t[]){1, 0, 2});
    }
    mb_init_tensor(b, "hshape", 7, DIMS(3), (int64_t[]){4, 2, 4});
    mb_init_tensor(b, "mshape", 7, DIMS(2), (int64_t[]){4, 8});
    init_f(b, "scale", 0, NULL, 0.5, 0, 0);
    mb_node(b, "MatMul", "scores", "q3 k3", "s0");
    mb_node(b, "Mul", "scaled", "s0 scale", "s1");
    mb_node(b, "Softmax", "softmax", "s1", "p");
    mb_node(b, "MatMul", "context", "p v3", "c0");
    Onnx__NodeProto *t = mb_node(b, "Transpose", "merge", "c0", "c1");
    mb_attr_ints(b, t, "perm", 3, (int64_t[]){1, 0, 2});
    mb_node(b, "Reshape", "merged", "c1 mshape", "c2");
    init_f(b, "wo", DIMS(8, 8), 0, 0.4, seed++);
    mb_node(b, "MatMul", "o.mm", "c2 wo", "o0");
    mb_node(b, "Add", "residual1", "o0 x", "r1");
    init_f(b, "g1", DIMS(8), 1, 0.1, seed++);
    init_f(b, "be1", DIMS(8), 0, 0.1, seed++);
    mb_node(b, "LayerNormalization", "ln1", "r1 g1 be1", "h1");
    init_f(b, "w1", DIMS(8, 16), 0, 0.4, seed++);
    init_f(b, "w2", DIMS(16, 8), 0, 0.3, seed++);
    mb_node(b, "MatMul", "ffn1", "h1 w1", "f0");
    mb_node(b, "Gelu", "gelu", "f0", "f1");
    mb_node(b, "MatMul", "ffn2", "f1 w2", "f2");
    mb_node(b, "Add", "residual2", "f2 h1", "r2");
    init_f(b, "g2", DIMS(8), 1, 0.1, seed++);
    init_f(b, "be2", DIMS(8), 0, 0.1, seed++);
    mb_node(b, "LayerNormalization", "ln2", "r2 g2 be2", "y");
    mb_output(b, "y");
}

Test(train, transformer_layer_gradients_match_finite_differences) {
    mb b;
    mb_init(&b, 20);
    transformer(&b);
    check(&b, "transformer");
    mb_free(&b);
}

/* An embedding: ids [2, 0, 2, 4] gather rows of table[5,6] (row 2 twice, so
 * its gradient adds two rows of dY), plus x, then MatMul and Tanh. */
Test(train, embedding_gradients_match_finite_differences) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(4, 6));
    b.inputs[b.graph.n_input++] = mb_vi(&b, "ids", 7, DIMS(4));
    init_f(&b, "table", DIMS(5, 6), 0, 0.5, 1);
    init_f(&b, "w", DIMS(6, 3), 0, 0.5, 2);
    mb_node(&b, "Gather", "embed", "table ids", "e");
    mb_node(&b, "Add", "add", "e x", "h");
    mb_node(&b, "MatMul", "mm", "h w", "m");
    mb_node(&b, "Tanh", "th", "m", "y");
    mb_output(&b, "y");
    rotor_onnx_options oo = {.keep_data = true, .train = true};
    rotor_graph g;
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, &oo, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    const double **in = calloc((size_t)g.nvalues, sizeof *in);
    double ids[4] = {2, 0, 2, 4};
    in[rotor_graph_find_value(&g, "ids")] = ids;
    rotor_gradcheck_options go = {.samples = 30, .seed = 3};
    rotor_gradcheck_result r;
    cr_assert_eq(rotor_gradcheck(&g, (const double *const *)in, &go, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(r.nparams, 2);
    cr_assert_str_eq(r.params[0].name, "table");
    cr_assert_eq(r.params[0].checked, 30, "every entry of the table");
    cr_assert_lt(r.max_rel, 1e-3, "%s: analytic %.9g numeric %.9g", r.params[0].name, r.params[0].analytic,
                 r.params[0].numeric);
    rotor_gradcheck_result_free(&r);
    free(in);
    rotor_graph_free(&g);
    mb_free(&b);
}

/* b imported for training: the parameters' names, space-separated, in
 * *names, the one-element initializers held in *held; the status of
 * rotor_train. */
static rotor_status train_params(mb *b, char *names, size_t cap, int *held, rotor_error *err) {
    rotor_onnx_options oo = {.keep_data = true, .train = true};
    rotor_onnx_stats st;
    rotor_graph g, t;
    rotor_train_info info;
    cr_assert_eq(mb_load(b, &oo, &g, &st, err), ROTOR_OK, "%s", err->msg);
    *held = st.scalars_held;
    rotor_status s = rotor_train(&g, NULL, &t, &info, err);
    names[0] = 0;
    for (int k = 0; !s && k < info.nparams; k++)
        snprintf(names + strlen(names), cap - strlen(names), "%s%s", k ? " " : "", g.values[info.param[k]].name);
    if (!s) rotor_train_info_free(&info);
    rotor_graph_free(&t);
    rotor_graph_free(&g);
    return s;
}

/* b's training step trains exactly the parameters `want` (names, in order)
 * and holds `held` one-element initializers constant (-1: not checked). */
static void assert_trained(mb *b, const char *want, int held) {
    char names[64];
    int h;
    rotor_error err = {{0}};
    cr_assert_eq(train_params(b, names, sizeof names, &h, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_str_eq(names, want);
    if (held >= 0) cr_assert_eq(h, held);
}

/* A weight read directly and through a Transpose (tied weights) is one
 * parameter, its gradient both paths' (until 2026-12-03 the import folded
 * the Transpose into a constant of its own, which training took as a second
 * parameter: w's gradient missed the second path, 61 % of its largest entry
 * on an audit helper's model, and the check passed, since perturbing w did
 * not move the copy).  A one-element initializer (a scale) is held
 * constant and counted. */
Test(train, a_tied_weight_is_one_parameter_and_a_scalar_is_held_constant) {
    mb b;
    mb_init(&b, 17);
    mb_input(&b, "x", DIMS(4, 6));
    init_f(&b, "w", DIMS(6, 6), 0, 0.5, 1);
    init_f(&b, "sc", 0, NULL, 0.5, 0, 2);
    mb_node(&b, "MatMul", "enc", "x w", "h");
    Onnx__NodeProto *tr = mb_node(&b, "Transpose", "tie", "w", "wt");
    mb_attr_ints(&b, tr, "perm", 2, (int64_t[]){1, 0});
    mb_node(&b, "MatMul", "dec", "h wt", "r");
    mb_node(&b, "Mul", "scale", "r sc", "y");
    mb_output(&b, "y");
    assert_trained(&b, "w", 1);
    check(&b, "tied");
    mb_free(&b);
}

/* A one-element initializer is held whatever its sign: a Gemm of one
 * output's bias -0.1, a Clip's bounds -0.3 and 0.4 and a scale -2 are
 * numbers in their expressions, only W trained (until 2026-12-03 a
 * negative one stayed a value and was trained, a positive one held, and
 * both were counted held; found by a review helper) */
Test(train, a_negative_scalar_is_held_as_a_positive_one_is) {
    mb b;
    mb_init(&b, 17);
    mb_input(&b, "x", DIMS(4, 6));
    init_f(&b, "w", DIMS(6, 1), 0, 0.5, 1);
    init_f(&b, "bias", DIMS(1), -0.1, 0, 2);
    init_f(&b, "lo", 0, NULL, -0.3, 0, 3);
    init_f(&b, "hi", 0, NULL, 0.4, 0, 4);
    init_f(&b, "sc", 0, NULL, -2, 0, 5);
    mb_node(&b, "Gemm", "fc", "x w bias", "h");
    mb_node(&b, "Clip", "clip", "h lo hi", "c");
    mb_node(&b, "Mul", "scale", "c sc", "y");
    mb_output(&b, "y");
    assert_trained(&b, "w", 4);
    check(&b, "negative scalars");
    mb_free(&b);
}

/* An operator's settings are constants whatever their size: OneHot's
 * values [0, 1] (a float initializer of two elements, which training would
 * otherwise take as a parameter and refuse OneHot as having no gradient;
 * found by a review helper), and DequantizeLinear's per-channel scales,
 * folded with the int8 weight into the float weight that is trained. */
Test(train, onehot_values_and_dequantize_scales_are_settings) {
    mb b;
    mb_init(&b, 13);
    b.inputs[b.graph.n_input++] = mb_vi(&b, "ids", 7, DIMS(2)); /* int64 */
    mb_init_tensor(&b, "depth", 7, DIMS(1), (int64_t[]){5});
    init_f(&b, "vals", DIMS(2), 0.5, 0.5, 1);
    init_f(&b, "w", DIMS(5, 3), 0, 0.5, 2);
    mb_node(&b, "OneHot", "onehot", "ids depth vals", "oh");
    mb_node(&b, "MatMul", "fc", "oh w", "y");
    mb_output(&b, "y");
    assert_trained(&b, "w", -1);
    mb_free(&b);

    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(2, 4));
    Onnx__TensorProto *q = mb_init_tensor(&b, "wq", 3, DIMS(4, 3), NULL); /* int8 */
    q->n_int32_data = 12;
    q->int32_data = mb_alloc(&b, sizeof(int32_t) * 12);
    for (int k = 0; k < 12; k++) q->int32_data[k] = k * 7 % 23 - 11;
    init_f(&b, "ws", DIMS(3), 0.05, 0.02, 3);
    Onnx__NodeProto *dq = mb_node(&b, "DequantizeLinear", "dq", "wq ws", "w");
    mb_attr_i(&b, dq, "axis", 1);
    mb_node(&b, "MatMul", "fc", "x w", "y");
    mb_output(&b, "y");
    assert_trained(&b, "w", -1);
    mb_free(&b);
}

/* A small float weight of an operator rotor has no gradient for (an
 * InstanceNormalization's scale and bias, 3 elements each) is a parameter,
 * so the operator is refused naming it; until 2026-12-03 the import kept
 * such a weight of at most 64 elements as the operator's attribute, and
 * training left it out without a word (found by an audit helper). */
Test(train, a_small_weight_of_an_operator_without_a_gradient_is_refused) {
    mb b;
    mb_init(&b, 17);
    mb_input(&b, "x", DIMS(2, 3, 4, 4));
    init_f(&b, "s", DIMS(3), 1, 0.2, 1);
    init_f(&b, "bb", DIMS(3), 0, 0.2, 2);
    mb_node(&b, "InstanceNormalization", "in", "x s bb", "y");
    mb_output(&b, "y");
    char names[64];
    int held;
    rotor_error err = {{0}};
    cr_assert_eq(train_params(&b, names, sizeof names, &held, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "op 'in' (InstanceNormalization): rotor has no gradient for this operator "
                              "(docs/training.md lists the ones it has)");
    mb_free(&b);
}

/* A weight that carries no data (a folded constant too large to carry it)
 * is checked on the values the check makes for it, as the run reads them:
 * until 2026-12-03 its entries were moved through a NULL pointer. */
Test(train, a_weight_without_data_is_checked_on_the_values_the_check_gives_it) {
    rotor_graph g;
    rotor_error err = {{0}};
    int x, w, y;
    rotor_graph_init(&g, "nodata");
    const rotor_role act = ROTOR_ROLE_ACTIVATION;
    cr_assert_eq(rotor_graph_add_value(&g, "x", ROTOR_DTYPE_F32, 2, (int64_t[]){2, 3}, act, &x, &err), 0);
    cr_assert_eq(rotor_graph_add_value(&g, "w", ROTOR_DTYPE_F32, 2, (int64_t[]){3, 2}, ROTOR_ROLE_WEIGHT, &w, &err), 0);
    cr_assert_eq(rotor_graph_add_value(&g, "y", ROTOR_DTYPE_F32, 2, (int64_t[]){2, 2}, act, &y, &err), 0);
    rotor_op_desc mm = {.name = "mm", .type = "MatMul", .expr = "Y[m,n] += A[m,k] * B[k,n]", .dims = "m=2,k=3,n=2",
                        .tensor_value = {y, x, w, -1, -1}, .inputs = (int[]){x, w}, .ninputs = 2, .outputs = &y,
                        .noutputs = 1};
    cr_assert_eq(rotor_graph_add_op(&g, &mm, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_graph_set_output(&g, y, &err), 0);
    cr_assert_null(g.values[w].data);
    rotor_gradcheck_options go = {.samples = 6, .seed = 3};
    rotor_gradcheck_result r;
    cr_assert_eq(rotor_gradcheck(&g, NULL, &go, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(r.nparams, 1);
    cr_assert_eq(r.params[0].checked, 6);
    cr_assert_lt(r.max_rel, 1e-3);
    rotor_gradcheck_result_free(&r);
    rotor_graph_free(&g);
}
