/* simplifyconst.c — constant folding on the graph (docs/simplify.md,
 * "Constant folding"): an operator whose every input is a constant (a
 * weight, or the output of an operator folded before it) runs once at
 * compile time, and its output becomes a weight.
 *
 * The ONNX importer already folds every node whose inputs are constants
 * (src/model/onnxfold.c, with its evaluators over ONNX nodes), before
 * lowering: what reaches the graph from a file has no such operator left.
 * This pass is for graphs built otherwise (the zoo, the API, other
 * passes) and works on rotor operators, not ONNX nodes, so it cannot reuse
 * those evaluators; it evaluates a tensor expression with the emulator's
 * reference (op/emu.c, double precision), as rotor run's direct execution
 * does.  Decisions:
 *  - with data on every input, an expression operator whose tensors read
 *    their values whole and row-major (no views) over float32 values is
 *    computed; a vendor op is not (its kernels belong to the run stage);
 *  - with data on no input, any operator folds structurally: the output is
 *    a weight of its shape without elements, as a deployment would compute
 *    it once (a Transpose or a product of weights);
 *  - with data on some inputs only, or when the output is a model output,
 *    the operator stays. */
#include "simplifyint.h"

#include "rotor/op/emu.h"

#include <stdlib.h>
#include <string.h>

/* Value v is a constant here: a weight no operator writes, or a folded
 * output. */
static bool is_const(const simp *s, int v) {
    const rotor_value *x = &s->g->values[v];
    return (x->role == ROTOR_ROLE_WEIGHT && x->producer < 0) || s->to_weight[v];
}

/* Whether op can be computed from its inputs' elements here. */
static bool computable(const rotor_graph *g, const rotor_op *op) {
    const rotor_expr *e = &op->expr;
    if (op->vendor || op->noutputs != 1 || rotor_op_attr(op, "rotor.approximate")) return false;
    for (int t = 0; t < e->ntensors; t++) {
        int v = op->tensor_value[t];
        if (v < 0 || op->view[t].set || op->view[t].unknown || g->values[v].dtype != ROTOR_DTYPE_F32 ||
            rotor_emu_tensor_elems(e, t, NULL) != g->values[v].elements)
            return false;
    }
    rotor_error err;
    return e->op_class == ROTOR_OP_CONTRACTION || rotor_expr_check_eval(e, &err) == ROTOR_OK;
}

/* Op o's output from its inputs' elements, in double, into s->data. */
static rotor_status evaluate(simp *s, int o, rotor_error *err) {
    const rotor_op *op = &s->g->ops[o];
    const rotor_expr *e = &op->expr;
    float *in[ROTOR_MAX_TENSORS] = {NULL};
    int64_t n = s->g->values[op->outputs[0]].elements;
    double *ref = malloc(sizeof *ref * (size_t)n), *mag = malloc(sizeof *mag * (size_t)n);
    rotor_status st = ref && mag ? ROTOR_OK : rotor_nomem(err);
    for (int t = 1; t < e->ntensors && !st; t++) {
        int v = op->tensor_value[t];
        const double *src = rotor_simplify_data(s, v);
        int64_t m = s->g->values[v].elements;
        if (!(in[t] = malloc(sizeof(float) * (size_t)m))) st = rotor_nomem(err);
        for (int64_t k = 0; k < m && !st; k++) in[t][k] = (float)src[k];
    }
    if (!st) st = rotor_emu_reference(e, (const float *const *)in, ref, mag, err);
    for (int t = 0; t < ROTOR_MAX_TENSORS; t++) free(in[t]);
    free(mag);
    if (st) {
        free(ref);
        return st;
    }
    s->data[op->outputs[0]] = ref;
    return ROTOR_OK;
}

rotor_status rotor_simplify_constants(simp *s, rotor_error *err) {
    const rotor_graph *g = s->g;
    for (int o = 0; o < g->nops; o++) {
        const rotor_op *op = &g->ops[o];
        if (op->ninputs == 0 || op->noutputs != 1 || g->values[op->outputs[0]].is_output) continue;
        int have = 0, all = 1;
        for (int i = 0; i < op->ninputs && all; i++) {
            all = is_const(s, op->inputs[i]);
            have += rotor_simplify_data(s, op->inputs[i]) != NULL;
        }
        if (!all || (have && (have != op->ninputs || !computable(g, op)))) continue;
        if (have) {
            rotor_status st = evaluate(s, o, err);
            if (st) return st;
        }
        s->drop_op[o] = true;
        s->to_weight[op->outputs[0]] = true;
        s->st.const_folded++;
    }
    return ROTOR_OK;
}
