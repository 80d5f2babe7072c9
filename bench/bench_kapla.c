/* bench_kapla — the fast solver (--solver fast, KAPLA §IV-C) against the
 * exact search: the gap table of docs/kapla.md and docs/performance.md
 * (issue 25).
 *
 * Corpus: every distinct operator shape (expression and extents) of the
 * zoo models below at the batches listed, plus seeded random MatMuls,
 * batch MatMuls and convolutions.  Each is solved by both solvers, for the
 * fastest plan and for the Pareto frontier, on ipu-mk2.
 *
 *   gap       fast best time / exact best time - 1 (exact is the optimum)
 *   coverage  the fraction of exact frontier points that the fast frontier
 *             matches: some fast point with no more memory and a time
 *             within 1e-9 (relative) of the exact point's
 *   HV ratio  hypervolume of the fast frontier over that of the exact one,
 *             in the (time, memory) plane, both minimised, against the
 *             reference point (1.1 x the slowest exact point's time, the
 *             SRAM per core); 1 means the same dominated area
 *   speed-up  exact wall time / fast wall time, one thread each, summed
 *             over the operators (and over convolutions alone)
 *
 * BENCH_KAPLA_QUICK=1 in the environment skips the exact frontiers of
 * convolutions (the long part), and BENCH_KAPLA_FILTER=TEXT keeps only the
 * operators whose name contains TEXT, for quick looks while developing. */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "rotor/base/chip.h"
#include "rotor/model/zoo.h"
#include "rotor/op/expr.h"
#include "rotor/op/search.h"

#define MAX_OPS 512

typedef struct op {
    char name[96];
    rotor_expr e;
    bool conv;
} op;

static op ops[MAX_OPS];
static int nops;

/* Adds e unless an operator of the same expression and extents is there. */
static void add_op(const char *name, const rotor_expr *e) {
    if (e->op_class != ROTOR_OP_CONTRACTION) return; /* element-wise: one plan, no search to speak of */
    for (int i = 0; i < nops; i++)
        if (strcmp(ops[i].e.text, e->text) == 0 && memcmp(ops[i].e.extent, e->extent, sizeof e->extent) == 0)
            return;
    if (nops == MAX_OPS) return;
    op *o = &ops[nops++];
    snprintf(o->name, sizeof o->name, "%s", name);
    o->e = *e;
    o->conv = false;
    for (int t = 0; t < e->ntensors; t++)
        for (int d = 0; d < e->tensors[t].ndims; d++)
            if (e->tensors[t].dims[d].nterms > 1) o->conv = true;
}

static void add_text(const char *name, const char *text, const char *dims) {
    rotor_expr e;
    rotor_error err;
    if (rotor_expr_parse(text, &e, &err) || rotor_expr_bind(&e, dims, &err)) {
        fprintf(stderr, "bench_kapla: %s: %s\n", name, err.msg);
        exit(1);
    }
    add_op(name, &e);
}

static void add_zoo(const char *model, int64_t batch, rotor_phase phase) {
    rotor_zoo_options zo = {.batch = batch, .phase = phase};
    rotor_graph g;
    rotor_error err;
    if (rotor_zoo_build(model, &zo, &g, &err)) {
        fprintf(stderr, "bench_kapla: %s: %s\n", model, err.msg);
        exit(1);
    }
    for (int i = 0; i < g.nops; i++) {
        if (g.ops[i].vendor) continue;
        char name[96];
        snprintf(name, sizeof name, "%s b%lld%s %s", model, (long long)batch,
                 phase == ROTOR_PHASE_DECODE ? " dec" : "", g.ops[i].name);
        add_op(name, &g.ops[i].expr);
    }
    rotor_graph_free(&g);
}

/* log-uniform in [lo, hi] */
static int64_t draw(uint64_t *s, int64_t lo, int64_t hi) {
    double u = (double)(next_rand(s) >> 11) / 9007199254740992.0;
    int64_t v = (int64_t)llround(exp(log((double)lo) + u * (log((double)hi) - log((double)lo))));
    return v < lo ? lo : v > hi ? hi : v;
}

static void add_random(uint64_t seed, int nmm, int nbmm, int nconv) {
    uint64_t s = seed;
    char name[64], dims[160];
    for (int i = 0; i < nmm; i++) {
        snprintf(name, sizeof name, "random MatMul %d", i);
        snprintf(dims, sizeof dims, "m=%lld,k=%lld,n=%lld", (long long)draw(&s, 1, 16384),
                 (long long)draw(&s, 16, 32768), (long long)draw(&s, 16, 32768));
        add_text(name, "C[m,n] += A[m,k] * B[k,n]", dims);
    }
    for (int i = 0; i < nbmm; i++) {
        snprintf(name, sizeof name, "random batch MatMul %d", i);
        snprintf(dims, sizeof dims, "b=%lld,m=%lld,k=%lld,n=%lld", (long long)draw(&s, 1, 256),
                 (long long)draw(&s, 1, 2048), (long long)draw(&s, 16, 512), (long long)draw(&s, 16, 2048));
        add_text(name, "C[b,m,n] += A[b,m,k] * B[b,k,n]", dims);
    }
    for (int i = 0; i < nconv; i++) {
        static const int64_t ks[] = {1, 3, 3, 5};
        int64_t k = ks[next_rand(&s) % 4], hw = draw(&s, 7, 28);
        snprintf(name, sizeof name, "random Conv %d", i);
        snprintf(dims, sizeof dims, "b=%lld,f=%lld,c=%lld,h=%lld,w=%lld,kh=%lld,kw=%lld",
                 (long long)draw(&s, 1, 2), (long long)draw(&s, 16, 512), (long long)draw(&s, 16, 512),
                 (long long)hw, (long long)hw, (long long)k, (long long)k);
        add_text(name, "O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]", dims);
    }
}

/* Wall seconds, or -1 when no plan fits. */
static double solve(const op *o, const rotor_chip *chip, rotor_solver solver, bool pareto,
                    rotor_search_result *r) {
    rotor_search_options opt = {.solver = solver, .pareto = pareto, .threads = 1};
    rotor_error err;
    double t0 = omp_get_wtime();
    rotor_status st = rotor_search(&o->e, chip, &opt, r, &err);
    if (st == ROTOR_ERR_NOFIT) return -1;
    if (st) {
        fprintf(stderr, "bench_kapla: %s (%s): %s\n", o->name, rotor_solver_name(solver), err.msg);
        exit(1);
    }
    return omp_get_wtime() - t0;
}

/* Hypervolume of a frontier (by time ascending, memory descending) against
 * (tref, mref): the area of the (time, memory) region it dominates. */
static double hypervolume(const rotor_candidate *v, int n, double tref, double mref) {
    double hv = 0, mprev = mref;
    for (int i = 0; i < n; i++) {
        double t = v[i].cost.total, m = (double)v[i].info.memory;
        if (t >= tref || m >= mprev) continue;
        hv += (tref - t) * (mprev - m);
        mprev = m;
    }
    return hv;
}

static int matched(const rotor_search_result *fast, const rotor_search_result *exact) {
    int hit = 0;
    for (int i = 0; i < exact->npareto; i++) {
        const rotor_candidate *p = &exact->pareto[i];
        for (int j = 0; j < fast->npareto; j++) {
            const rotor_candidate *q = &fast->pareto[j];
            if (q->info.memory <= p->info.memory && q->cost.total <= p->cost.total * (1 + 1e-9)) {
                hit++;
                break;
            }
        }
    }
    return hit;
}

int main(void) {
    rotor_chip chip;
    if (!bench_chip("ipu-mk2", &chip, "bench_kapla")) return 1;
    bool quick = getenv("BENCH_KAPLA_QUICK") != NULL;
    static const int64_t batches[] = {1, 8, 64};
    static const char *models[] = {"bert-large", "vit-base", "nerf", "dit-xl"};
    for (int m = 0; m < 4; m++)
        for (int b = 0; b < 3; b++) add_zoo(models[m], batches[b], ROTOR_PHASE_PREFILL);
    static const char *llms[] = {"llama2-7b", "llama2-70b", "opt-13b", "gemma2-27b"};
    for (int m = 0; m < 4; m++) {
        add_zoo(llms[m], 1, ROTOR_PHASE_PREFILL);
        add_zoo(llms[m], 8, ROTOR_PHASE_DECODE);
        add_zoo(llms[m], 64, ROTOR_PHASE_DECODE);
    }
    /* convolutions: the exact frontiers cost 0.3-100 s each, so batch 1 */
    add_zoo("resnet-18", 1, ROTOR_PHASE_PREFILL);
    add_zoo("resnet-50", 1, ROTOR_PHASE_PREFILL);
    add_random(25, 60, 20, 12);

    printf("| operator | dims | exact best (us) | fast best (us) | gap | frontier exact/fast | coverage | HV ratio | exact Pareto (s) | fast Pareto (s) | speed-up |\n");
    printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    double sum_gap = 0, worst_gap = 0, sum_hv = 0, sum_cov = 0;
    int worst = -1, nfront = 0, nconv = 0;
    double te_best = 0, tf_best = 0, te_par = 0, tf_par = 0, te_conv = 0, tf_conv = 0;
    int gap1 = 0, gap5 = 0, nofit = 0, missed = 0, nsolved = 0;
    const char *filter = getenv("BENCH_KAPLA_FILTER");
    for (int i = 0; i < nops; i++) {
        const op *o = &ops[i];
        if (filter && !strstr(o->name, filter)) continue;
        rotor_search_result eb, fb, ep = {0}, fp;
        double teb = solve(o, &chip, ROTOR_SOLVER_EXACT, false, &eb);
        double tfb = solve(o, &chip, ROTOR_SOLVER_FAST, false, &fb);
        if (teb < 0 || tfb < 0) {
            /* the fast solver finds a plan only where one exists */
            if (teb >= 0) missed++;
            else nofit++;
            rotor_search_result_free(&eb);
            rotor_search_result_free(&fb);
            continue;
        }
        nsolved++;
        te_best += teb;
        tf_best += tfb;
        double tfp = solve(o, &chip, ROTOR_SOLVER_FAST, true, &fp);
        bool exact_front = !(quick && o->conv);
        double tep = exact_front ? solve(o, &chip, ROTOR_SOLVER_EXACT, true, &ep) : 0;
        double gap = fb.best.cost.total / eb.best.cost.total - 1;
        sum_gap += gap;
        if (gap > worst_gap || worst < 0) {
            worst_gap = gap;
            worst = i;
        }
        gap1 += gap > 0.01;
        gap5 += gap > 0.05;
        char dims[160];
        int n = 0;
        for (int a = 0; a < o->e.naxes; a++)
            n += snprintf(dims + n, sizeof dims - (size_t)n, "%s%s=%lld", a ? "," : "", o->e.axis_name[a],
                          (long long)o->e.extent[a]);
        if (exact_front) {
            double tref = 1.1 * ep.pareto[ep.npareto - 1].cost.total, mref = (double)chip.sram_bytes;
            double hve = hypervolume(ep.pareto, ep.npareto, tref, mref);
            double hv = hve > 0 ? hypervolume(fp.pareto, fp.npareto, tref, mref) / hve : 1;
            double cov = (double)matched(&fp, &ep) / ep.npareto;
            sum_hv += hv;
            sum_cov += cov;
            nfront++;
            te_par += tep;
            tf_par += tfp;
            if (o->conv) {
                te_conv += tep;
                tf_conv += tfp;
                nconv++;
            }
            printf("| %s | %s | %.3f | %.3f | %.2f%% | %d/%d | %.2f | %.3f | %.3f | %.4f | %.0fx |\n", o->name, dims,
                   eb.best.cost.total * 1e6, fb.best.cost.total * 1e6, 100 * gap, ep.npareto, fp.npareto, cov,
                   hv, tep, tfp, tep / tfp);
        } else {
            printf("| %s | %s | %.3f | %.3f | %.2f%% | -/%d | - | - | - | %.4f | - |\n", o->name, dims,
                   eb.best.cost.total * 1e6, fb.best.cost.total * 1e6, 100 * gap, fp.npareto, tfp);
        }
        fflush(stdout);
        rotor_search_result_free(&eb);
        rotor_search_result_free(&fb);
        rotor_search_result_free(&ep);
        rotor_search_result_free(&fp);
    }
    printf("\n%d operators solved by both (%d convolutions with exact frontiers), one thread each; %d fit "
           "no plan (either solver), %d missed by the fast solver\n",
           nsolved, nconv, nofit, missed);
    printf("gap in best time: mean %.3f%%, worst %.2f%% (%s), %d above 1%%, %d above 5%%\n", 100 * sum_gap / nsolved,
           100 * worst_gap, worst >= 0 ? ops[worst].name : "-", gap1, gap5);
    printf("frontier: coverage mean %.3f, hypervolume ratio mean %.4f over %d frontiers\n",
           nfront ? sum_cov / nfront : 0, nfront ? sum_hv / nfront : 0, nfront);
    printf("fastest plan: exact %.2f s, fast %.3f s (%.1fx)\n", te_best, tf_best, te_best / tf_best);
    printf("Pareto frontiers: exact %.2f s, fast %.3f s (%.1fx); convolutions: exact %.2f s, fast %.3f s (%.0fx)\n",
           te_par, tf_par, te_par / tf_par, te_conv, tf_conv, tf_conv > 0 ? te_conv / tf_conv : 0);
    return 0;
}
