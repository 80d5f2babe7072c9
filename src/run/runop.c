/* runop.c — what the run's files share (runint.h): errors that name the
 * operator, "op 'n3' (MaxPool): ...", and an operator's inputs by ONNX
 * position, whether graph values or the constants the lowering kept as
 * attributes ("@in", "@K": graph.h, rotor_attr).  It calls none of them, so
 * the run (run.c, runquant.c) and the kernels (kernels.c, kernquant.c) do
 * not call each other back. */
#include <stdarg.h>
#include <stdio.h>

#include "runint.h"

rotor_status run_op_vfail(const rotor_graph *g, int o, rotor_error *err, rotor_status code, const char *fmt,
                          va_list ap) {
    char msg[ROTOR_ERROR_MAX];
    vsnprintf(msg, sizeof msg, fmt, ap);
    return rotor_fail(err, code, "op '%s' (%s): %s", g->ops[o].name, g->ops[o].type, msg);
}

rotor_status run_op_fail(const rotor_graph *g, int o, rotor_error *err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    rotor_status st = run_op_vfail(g, o, err, ROTOR_ERR_INPUT, fmt, ap);
    va_end(ap);
    return st;
}

void run_op_prefix(const rotor_graph *g, int o, rotor_error *err) {
    char prefix[160];
    snprintf(prefix, sizeof prefix, "op '%s' (%s)", g->ops[o].name, g->ops[o].type);
    rotor_error_prefix(err, prefix);
}

/* ---- parameters by ONNX position (graph.h, rotor_attr) ------------------------------------------- */

const double *run_op_param(const rotor_graph *g, int o, double *const *vals, int pos, double *buf, int cap,
                           int64_t *n, int *value) {
    const rotor_op *op = &g->ops[o];
    *n = 0;
    *value = pos >= 0 ? rotor_op_input_at(op, pos) : -1;
    if (*value >= 0) {
        *n = vals[*value] ? g->values[*value].elements : 0;
        return vals[*value];
    }
    char at[16];
    snprintf(at, sizeof at, "@%d", pos);
    const rotor_attr *a = pos >= 0 ? rotor_op_attr(op, at) : NULL;
    if (!a) return NULL;
    if (a->nfloats) {
        *n = a->nfloats;
        return a->floats;
    }
    *n = a->nints < cap ? a->nints : cap;
    for (int i = 0; i < *n; i++) buf[i] = (double)a->ints[i];
    return *n ? buf : NULL;
}

int64_t run_param_index(const int64_t *ts, int tr, const int64_t *ps, int pr, int start, int64_t block, int64_t k) {
    int64_t idx = 0, stride = 1;
    for (int d = tr - 1; d >= 0; d--) {
        int64_t c = k % ts[d];
        k /= ts[d];
        int j = d - start;
        if (j < 0 || j >= pr) continue;
        int64_t at = ps[j] == ts[d] ? c : ps[j] == 1 ? 0 : c / (block > 0 ? block : 1);
        idx += at * stride;
        stride *= ps[j];
    }
    return idx;
}
