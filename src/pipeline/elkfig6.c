/* elkfig6.c — Elk's Figure 6 (§3.2): the HBM bandwidth demand of an LLM's
 * decode step across time, one line per per-core preload space
 * (include/rotor/pipeline/elkfig6.h has the definition of the demand).
 *
 * Decisions where Elk is silent (docs/reproduction.md, "Figure 6", gives
 * the numbers behind them):
 *  - The schedule at a preload space is Static's with its split forced
 *    (Elk §3 studies one split for the whole model, as its Static does;
 *    §3.3's footnote picks Static's split too).
 *  - The default sweep: 0 (no preload space), 32, 64, 128, 256, 384 and 512
 *    KB per core, KB of 1,024 bytes: from nothing to most of the IPU's 624
 *    KB (512 leaves less execution space than some operators need).
 *  - The demand is one chip's HBM in GB/s (the four chips of the package
 *    each load their own shard at the same times).
 *  - "Minimum HBM bandwidth to prevent on-chip execution from stalling" is
 *    taken per preload: the least constant rate that lands its bytes between
 *    the end of the execution it is issued after and the start of its own,
 *    on the timeline of executions back to back.  The sum over the preloads
 *    in flight is the trace; its integral is every byte loaded (serial
 *    preloads included: elkfig6.h). */
#include "rotor/pipeline/elkfig6.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/hbm/schedule.h"
#include "rotor/pipeline/pipeline.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof(a)[0]))

static const int64_t DEFAULT_SPACE_KB[] = {0, 32, 64, 128, 256, 384, 512};

void rotor_elkfig6_series_free(rotor_elkfig6_series *s) {
    if (!s) return;
    free(s->t_us), free(s->gbps), free(s->serial);
    s->t_us = s->gbps = NULL;
    s->serial = NULL;
    s->nseg = 0;
}

/* The timeline's pieces: per op its execution (ps) and the execution k
 * after which its preload is issued (issue[j] == j: a serial preload). */
static rotor_status trace_inputs(const rotor_preload_model *m, const rotor_preload_op_desc *ops,
                                 const rotor_preload_result *r, int64_t *exec, int *issue, rotor_error *err) {
    int n = r->nops;
    for (int i = 0; i < n; i++) {
        const rotor_preload_op_result *o = &r->ops[i];
        int nst = 0;
        const rotor_preload_state *st = o->plan >= 0 && o->plan < ops[i].nplans
                                            ? rotor_preload_model_states(m, i, o->plan, &nst)
                                            : NULL;
        if (!st || o->state < 0 || o->state >= nst)
            return rotor_fail(err, ROTOR_ERR_INPUT, "op %d (%s): plan %d state %d is not one of the model's", i,
                              ops[i].name ? ops[i].name : "?", o->plan, o->state);
        exec[i] = ops[i].plans[o->plan].time_ps + st[o->state].dist_ps;
        issue[i] = -1;
    }
    /* q_k = p_k + k + 1 preloads are issued before execute(k) (docs/preload.md) */
    for (int k = 0, p = 0; k < n; k++)
        for (int q = r->ops[k].preload_number + k + 1; p < q && p < n; p++) {
            int j = r->order[p];
            if (j < 0 || j >= n || issue[j] >= 0 || k > j)
                return rotor_fail(err, ROTOR_ERR_INPUT, "preload order: position %d (op %d) is not a valid preload", p, j);
            issue[j] = k;
        }
    for (int j = 0; j < n; j++)
        if (issue[j] < 0) return rotor_fail(err, ROTOR_ERR_INPUT, "op %d: its preload is never issued", j);
    return ROTOR_OK;
}

static void trace_stats(rotor_elkfig6_series *s) {
    double T = s->t_us[s->nseg], bytes = 0;
    for (int k = 0; k < s->nseg; k++) {
        double len = s->t_us[k + 1] - s->t_us[k];
        bytes += s->gbps[k] * len;
        s->peak_gbps = fmax(s->peak_gbps, s->gbps[k]);
    }
    s->mean_gbps = T > 0 ? bytes / T : 0;
    double var = 0;
    for (int k = 0; k < s->nseg && T > 0; k++) {
        double d = s->gbps[k] - s->mean_gbps;
        var += d * d * (s->t_us[k + 1] - s->t_us[k]) / T;
    }
    s->cov = s->mean_gbps > 0 ? sqrt(var) / s->mean_gbps : 0;
    s->peak_over_mean = s->mean_gbps > 0 ? s->peak_gbps / s->mean_gbps : 0;
}

/* Appends segment [t, t + len_ps) at bytes/ps rate; a zero length is skipped. */
static void push(rotor_elkfig6_series *s, double *t_ps, double len_ps, double rate, bool serial) {
    if (len_ps <= 0) return;
    int k = s->nseg++;
    s->gbps[k] = rate * 1e3; /* bytes/ps to GB/s */
    s->serial[k] = serial;
    *t_ps += len_ps;
    s->t_us[k + 1] = *t_ps * 1e-6;
}

rotor_status rotor_elkfig6_trace(const rotor_preload_model *m, const rotor_preload_op_desc *ops,
                                 const rotor_preload_result *r, rotor_elkfig6_series *out, rotor_error *err) {
    int n = r->nops;
    rotor_elkfig6_series_free(out);
    out->hbm_bytes = out->serial_bytes = 0;
    out->serial_preloads = 0;
    out->exec_us = out->peak_gbps = out->mean_gbps = out->cov = out->peak_over_mean = 0;
    if (n != rotor_preload_model_nops(m))
        return rotor_fail(err, ROTOR_ERR_INPUT, "result: %d operators, the model has %d", n, rotor_preload_model_nops(m));
    int64_t *exec = malloc(sizeof(int64_t) * ((size_t)n + 1));
    int *issue = malloc(sizeof(int) * ((size_t)n + 1));
    double *rate = calloc((size_t)n + 1, sizeof(double)); /* difference array over executions */
    out->t_us = malloc(sizeof(double) * (2 * (size_t)n + 1));
    out->gbps = malloc(sizeof(double) * (2 * (size_t)n + 1));
    out->serial = malloc(sizeof(bool) * (2 * (size_t)n + 1));
    rotor_status st = exec && issue && rate && out->t_us && out->gbps && out->serial ? ROTOR_OK : rotor_nomem(err);
    if (!st) st = trace_inputs(m, ops, r, exec, issue, err);
    if (st) goto done;
    /* a windowed preload's rate: its bytes over executions issue..j-1 */
    for (int j = 0; j < n; j++) {
        out->hbm_bytes += ops[j].hbm_bytes;
        if (issue[j] == 0 || issue[j] == j || ops[j].hbm_bytes == 0) continue;
        double w = 0;
        for (int k = issue[j]; k < j; k++) w += (double)exec[k];
        rate[issue[j]] += (double)ops[j].hbm_bytes / w;
        rate[j] -= (double)ops[j].hbm_bytes / w;
    }
    double t = 0, cur = 0;
    out->nseg = 0;
    out->t_us[0] = 0;
    for (int i = 0; i < n; i++) {
        /* serial preloads, each in its own gap at its state's preload time:
           before execution 0 the start-up's, then op i's own */
        for (int j = i; j < (i ? i + 1 : n); j++) {
            int64_t b = ops[j].hbm_bytes;
            if (issue[j] != i || b == 0) continue;
            int nst = 0;
            const rotor_preload_state *ps = rotor_preload_model_states(m, j, r->ops[j].plan, &nst);
            double g = (double)ps[r->ops[j].state].preload_ps;
            push(out, &t, g, (double)b / g, true);
            out->serial_bytes += b;
            out->serial_preloads++;
        }
        cur += rate[i];
        if (cur < 0) cur = 0; /* rounding of the difference array */
        push(out, &t, (double)exec[i], cur, false);
        out->exec_us += (double)exec[i] * 1e-6;
    }
    trace_stats(out);
done:
    free(exec), free(issue), free(rate);
    return st;
}

/* The operators as the preload model was built from them. */
static rotor_preload_op_desc *descs_of(const rotor_schedule *s) {
    rotor_preload_op_desc *d = calloc((size_t)s->nops + 1, sizeof *d);
    for (int i = 0; d && i < s->nops; i++)
        d[i] = (rotor_preload_op_desc){.name = s->ops[i].name, .hbm_bytes = s->ops[i].hbm_bytes,
                                       .layer = s->ops[i].layer, .layer_begin = s->ops[i].layer_begin,
                                       .nplans = s->ops[i].nplans, .plans = s->ops[i].plans};
    return d;
}

/* One preload space: Static at that split, and its trace. */
static rotor_status one_space(const rotor_schedule *s, const rotor_preload_op_desc *d, rotor_elkfig6_series *out,
                              rotor_error *err) {
    rotor_preload_options o = s->preload;
    o.fixed_preload_space = true;
    o.preload_space_bytes = out->space_bytes;
    rotor_preload_result r;
    rotor_status st = rotor_preload_schedule(s->model, ROTOR_PRELOAD_STATIC, &o, &r, err);
    if (st == ROTOR_ERR_NOFIT) { /* fits stays false */
        snprintf(out->nofit, sizeof out->nofit, "%s", err->msg);
        return ROTOR_OK;
    }
    if (!st) {
        out->fits = true;
        out->latency_us = (double)r.latency_ps * 1e-6;
        st = rotor_elkfig6_trace(s->model, d, &r, out, err);
    }
    rotor_preload_result_free(&r);
    return st;
}

rotor_status rotor_elkfig6_run(const rotor_elkfig6_options *opt, const rotor_chip *chip, rotor_elkfig6_result *out,
                               rotor_error *err) {
    memset(out, 0, sizeof *out);
    const int64_t *kb = opt->space_kb ? opt->space_kb : DEFAULT_SPACE_KB;
    int nk = opt->space_kb ? opt->nspaces : COUNT(DEFAULT_SPACE_KB);
    if (nk < 1 || nk > ROTOR_ELKFIG6_MAX_SIZES)
        return rotor_fail(err, ROTOR_ERR_INPUT, "preload spaces: expected 1..%d, got %d", ROTOR_ELKFIG6_MAX_SIZES, nk);
    for (int k = 0; k < nk; k++) {
        if (kb[k] < 0 || kb[k] > chip->sram_bytes / 1024)
            return rotor_fail(err, ROTOR_ERR_INPUT, "preload space: expected 0..%lld KB per core, got %lld",
                              (long long)(chip->sram_bytes / 1024), (long long)kb[k]);
        out->s[k].space_bytes = kb[k] * 1024;
    }
    out->n = nk;
    out->model = opt->model;
    out->batch = opt->batch;
    out->seq = opt->seq;
    out->sram_bytes = chip->sram_bytes;
    rotor_schedule_options so = {.threads = opt->threads, .memo = opt->memo};
    rotor_pipeline_options po = {.model = opt->model,
                                 .zoo = {.batch = opt->batch, .seq = opt->seq, .phase = ROTOR_PHASE_DECODE},
                                 .schedule = &so};
    po.compile.threads = opt->threads;
    rotor_pipeline p;
    rotor_status st = rotor_pipeline_run(&po, chip, &p, err);
    rotor_preload_op_desc *d = st ? NULL : descs_of(p.schedule);
    if (!st && !d) st = rotor_nomem(err);
    for (int k = 0; k < nk && !st; k++) st = one_space(p.schedule, d, &out->s[k], err);
    free(d);
    rotor_pipeline_free(&p);
    return st;
}

void rotor_elkfig6_free(rotor_elkfig6_result *r) {
    if (!r) return;
    for (int k = 0; k < r->n; k++) rotor_elkfig6_series_free(&r->s[k]);
    r->n = 0;
}
