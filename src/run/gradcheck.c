/* gradcheck.c — the training graph's gradients against central finite
 * differences (include/rotor/run/gradcheck.h, docs/training.md).
 *
 * Decisions where no paper speaks:
 *  - Central differences, h = 1e-3 by default: the run rounds every
 *    operator's inputs to float32, so the loss carries noise of about 1e-7
 *    of itself; a smaller h lets that noise dominate the quotient (1e-4
 *    gives relative errors near 2e-3 on the MLP of tests/test_train.c), a
 *    larger one the curvature and the ReLU kinks it steps over (1e-2: 3e-2).  The step divided by is the difference of
 *    the two float32 weights the operators really read.
 *  - Each parameter is checked at `samples` entries spread evenly over it
 *    (all of them when it has fewer), which keeps a check to 2 x samples
 *    runs of the loss graph per parameter.
 *  - An entry where the forward and backward one-sided differences differ
 *    by more than 10 % straddles a kink of the loss (a ReLU's at 0 within
 *    h): it is skipped, counted, and the next entry checked in its place.
 *  - The relative error's floor (rotor_gradcheck_rel) is 1e-3 of the
 *    parameter's largest analytic entry. */
#include "rotor/run/gradcheck.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "rotor/run/run.h"

double rotor_gradcheck_rel(double a, double n, double floor) {
    double d = fmax(fmax(fabs(a), fabs(n)), floor);
    return d > 0 ? fabs(a - n) / d : 0;
}

static uint64_t mix(uint64_t *s) { /* splitmix64 */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Every input the loss graph reads: the caller's, or pseudo-random. */
static rotor_status make_inputs(const rotor_graph *lg, const rotor_graph *g, const double *const *given, uint64_t seed,
                                double ***out, rotor_error *err) {
    double **in = calloc((size_t)lg->nvalues, sizeof *in);
    if (!in) return rotor_nomem(err);
    uint64_t s = seed;
    for (int v = 0; v < lg->nvalues; v++) {
        const rotor_value *x = &lg->values[v];
        if (x->producer >= 0 || x->data || x->consumers == 0) continue;
        if (!(in[v] = malloc(sizeof(double) * (size_t)x->elements))) {
            for (int u = 0; u < v; u++) free(in[u]);
            free(in);
            return rotor_nomem(err);
        }
        bool real = x->dtype == ROTOR_DTYPE_F32 || x->dtype == ROTOR_DTYPE_F64 || x->dtype == ROTOR_DTYPE_F16 ||
                    x->dtype == ROTOR_DTYPE_BF16;
        for (int64_t k = 0; k < x->elements; k++) {
            if (given && v < g->nvalues && given[v]) in[v][k] = given[v][k];
            else in[v][k] = real ? (double)(mix(&s) >> 11) * 0x1.0p-52 - 1.0 : 0.0;
        }
    }
    *out = in;
    return ROTOR_OK;
}

static rotor_status loss_at(const rotor_graph *lg, int loss, double *const *in, double *l, rotor_error *err) {
    rotor_run_result r;
    rotor_status st = rotor_run(lg, (const double *const *)in, NULL, &r, err);
    if (st) return st;
    *l = r.values[loss][0];
    rotor_run_result_free(&r);
    return ROTOR_OK;
}

/* The central difference of the loss at entry i of w, and whether the
 * two one-sided ones agree: they do not where w +- h crosses a kink of
 * the loss (a ReLU's or a max's at 0 within the step), where no finite
 * difference measures the derivative. */
static rotor_status central(rotor_graph *lg, int loss, double *const *in, rotor_value *w, int64_t i, double h,
                            double l0, double *num, bool *kink, rotor_error *err) {
    double w0 = w->data[i], lp, lm;
    float up = (float)(w0 + h), down = (float)(w0 - h);
    w->data[i] = up;
    rotor_status st = loss_at(lg, loss, in, &lp, err);
    w->data[i] = down;
    if (!st) st = loss_at(lg, loss, in, &lm, err);
    w->data[i] = w0;
    if (st) return st;
    double fwd = (lp - l0) / ((double)up - (double)(float)w0), bwd = (l0 - lm) / ((double)(float)w0 - (double)down);
    *num = (lp - lm) / ((double)up - (double)down);
    *kink = fabs(fwd - bwd) > 0.1 * fmax(fabs(fwd), fabs(bwd));
    return ROTOR_OK;
}

/* Parameter p: its sampled entries' finite differences against grad; an
 * entry at a kink is replaced by the next one (up to 4 tries). */
static rotor_status check_param(rotor_graph *lg, int loss, double *const *in, int p, const double *grad,
                                const rotor_gradcheck_options *o, rotor_gradcheck_param *res, rotor_gradcheck_result *out,
                                rotor_error *err) {
    rotor_value *w = &lg->values[p];
    snprintf(res->name, sizeof res->name, "%s", w->name);
    res->elements = w->elements;
    double scale = 0;
    for (int64_t i = 0; i < w->elements; i++) scale = fmax(scale, fabs(grad[i]));
    int64_t n = w->elements, k = o->samples > 0 ? o->samples : 8;
    if (k > n) k = n;
    double h = o->step > 0 ? o->step : 1e-3;
    for (int64_t j = 0; j < k; j++) {
        int64_t i = k == n ? j : j * (n - 1) / (k > 1 ? k - 1 : 1);
        double num = 0;
        bool kink = true;
        for (int tries = 0; tries < 4 && kink && i < n; tries++, i++) {
            rotor_status st = central(lg, loss, in, w, i, h, out->loss, &num, &kink, err);
            if (st) return st;
            out->evaluations += 2;
            res->kinks += kink;
        }
        if (kink) continue;
        i--;
        double rel = rotor_gradcheck_rel(grad[i], num, 1e-3 * scale);
        res->checked++;
        if (rel >= res->max_rel) res->max_rel = rel, res->analytic = grad[i], res->numeric = num, res->worst = i;
    }
    if (res->max_rel > out->max_rel) out->max_rel = res->max_rel;
    return ROTOR_OK;
}

rotor_status rotor_gradcheck(const rotor_graph *g, const double *const *inputs, const rotor_gradcheck_options *opt,
                             rotor_gradcheck_result *out, rotor_error *err) {
    static const rotor_gradcheck_options defaults = {0};
    const rotor_gradcheck_options *o = opt ? opt : &defaults;
    memset(out, 0, sizeof *out);
    rotor_train_options to = {.no_update = true}, lo = {.loss_only = true};
    rotor_graph tg, lg;
    rotor_train_info ti, li;
    double **in = NULL;
    rotor_run_result r = {0};
    rotor_status st = rotor_train(g, &to, &tg, &ti, err);
    if (st) return st;
    if ((st = rotor_train(g, &lo, &lg, &li, err))) goto done;
    if ((st = make_inputs(&tg, g, inputs, o->seed, &in, err))) goto done;
    if ((st = rotor_run(&tg, (const double *const *)in, NULL, &r, err))) goto done;
    out->loss = r.values[ti.loss][0];
    if (!(out->params = calloc((size_t)ti.nparams, sizeof *out->params))) {
        st = rotor_nomem(err);
        goto done;
    }
    out->nparams = ti.nparams;
    for (int k = 0; k < ti.nparams && !st; k++)
        st = check_param(&lg, li.loss, in, ti.param[k], r.values[ti.grad[k]], o, &out->params[k], out, err);
done:
    rotor_run_result_free(&r);
    for (int v = 0; in && v < tg.nvalues; v++) free(in[v]);
    free(in);
    rotor_train_info_free(&ti);
    rotor_train_info_free(&li);
    rotor_graph_free(&tg);
    rotor_graph_free(&lg);
    if (st) rotor_gradcheck_result_free(out);
    return st;
}

void rotor_gradcheck_result_free(rotor_gradcheck_result *r) {
    if (!r) return;
    free(r->params);
    memset(r, 0, sizeof *r);
}
