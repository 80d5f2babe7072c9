/* rotor — what the HTML report draws, decided before it is drawn
 * (include/rotor/pipeline/report.h, docs/report.md): round ticks, colour
 * scales fitted to the data, operators collapsed by shape, a schedule's
 * rows by layer.  Decisions: steps are 1, 2 or 5 times a power of ten (the
 * usual 1-2-5 series; 2.5 is left out because its ticks print with one more
 * digit); a colour scale spans the data's own minimum to maximum rather
 * than 0 to 100%, because a chip whose cores are all 55-61% busy would
 * otherwise be one flat colour (issue 46). */
#include "rotor/pipeline/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double rotor_report_nice_step(double span, int target) {
    if (!(span > 0) || !isfinite(span)) return 1;
    double raw = span / (target >= 1 ? target : 1), p = pow(10.0, floor(log10(raw))), m = raw / p;
    /* 1e-9: a span of exactly 5 steps keeps its step */
    return (m <= 1 + 1e-9 ? 1 : m <= 2 + 1e-9 ? 2 : m <= 5 + 1e-9 ? 5 : 10) * p;
}

void rotor_report_axis_fit(double lo, double hi, int target, rotor_report_axis *out) {
    if (!isfinite(lo) || !isfinite(hi)) lo = hi = 0;
    if (hi < lo) {
        double t = lo;
        lo = hi;
        hi = t;
    }
    if (hi == lo) { /* the unit interval around it: [v, v + 1], or [v - 1, v] below zero */
        if (lo < 0) lo -= 1;
        else hi += 1;
    }
    double step = rotor_report_nice_step(hi - lo, target);
    /* 1e-9 of a step: a value that is a whole number of steps is not rounded out */
    double a = floor(lo / step + 1e-9), b = ceil(hi / step - 1e-9);
    *out = (rotor_report_axis){a * step, b * step, step, (int)(b - a) + 1};
}

double rotor_report_tick(const rotor_report_axis *a, int i) {
    double v = a->lo + i * a->step;
    return fabs(v) < a->step * 1e-9 ? 0 : v;
}

void rotor_report_scale_fit(const double *v, int64_t n, rotor_report_scale *out) {
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0; i < n; i++)
        if (isfinite(v[i])) {
            lo = fmin(lo, v[i]);
            hi = fmax(hi, v[i]);
        }
    if (!isfinite(lo)) lo = hi = 0;
    *out = (rotor_report_scale){lo, hi, lo > 0 && hi / lo > ROTOR_REPORT_LOG_RATIO};
}

double rotor_report_scale_at(const rotor_report_scale *s, double v) {
    if (!isfinite(v)) return 0;
    if (!(s->hi > s->lo)) return 0.5;
    double u = s->log ? (v > 0 ? log(v / s->lo) / log(s->hi / s->lo) : 0) : (v - s->lo) / (s->hi - s->lo);
    return fmin(1, fmax(0, u));
}

/* Whether operators a and b share a chart: see rotor_report_groups. */
static bool same_shape(const rotor_graph *g, const rotor_compile_result *t, int a, int b) {
    const rotor_op *x = &g->ops[a], *y = &g->ops[b];
    if (x->vendor != y->vendor) return false;
    if (x->vendor)
        return !strcmp(x->type, y->type) && !strcmp(x->fused, y->fused) && x->flops == y->flops &&
               x->bytes == y->bytes;
    if (strcmp(x->expr.text, y->expr.text) || x->expr.naxes != y->expr.naxes) return false;
    for (int i = 0; i < x->expr.naxes; i++)
        if (x->expr.extent[i] != y->expr.extent[i]) return false;
    return !t || t->ops[a].frontier == t->ops[b].frontier;
}

rotor_status rotor_report_groups(const rotor_graph *g, const rotor_compile_result *t, bool vendor_too,
                                 rotor_report_group **out, int *n, int *group_of, rotor_error *err) {
    *out = NULL;
    *n = 0;
    rotor_report_group *gr = malloc(sizeof *gr * (size_t)(g->nops > 0 ? g->nops : 1));
    if (!gr) return rotor_nomem(err);
    int ng = 0;
    /* each operator against the groups so far: few, as models repeat their layers */
    for (int o = 0; o < g->nops; o++) {
        int k = -1;
        if (!g->ops[o].vendor || vendor_too) {
            for (k = 0; k < ng && !same_shape(g, t, gr[k].first, o); k++) {}
            if (k == ng) gr[ng++] = (rotor_report_group){o, 0};
            gr[k].count++;
        }
        if (group_of) group_of[o] = k;
    }
    *out = gr;
    *n = ng;
    return ROTOR_OK;
}

int rotor_report_layer_rows(const rotor_schedule *s, int *row_of) {
    int row = -1;
    for (int o = 0; o < s->nops; o++) {
        const rotor_schedule_op *x = &s->ops[o];
        bool starts = o == 0 || x->layer_begin || (x->layer == 0) != (s->ops[o - 1].layer == 0);
        row += starts;
        row_of[o] = row;
    }
    return row + 1;
}
