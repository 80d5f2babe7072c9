/* gtloops.c — GraphTurbo's loop execution within a cluster (§5.1, Table 1's
 * "iter." column): a cluster's batch b run as L passes of b / L images, one
 * after another, each pass the step's schedule of its own batch.
 *
 * The paper chooses each approach's batch a cluster this way.  For one
 * batch size, Table 2 gives TVM and GraphTurbo different batches a cluster
 * (ResNet-50 at 64: TVM 2 a cluster, so 8 passes; GraphTurbo 16, one), and
 * in Table 1 TVM loops once four sentences no longer fit a cluster's LLB.
 * A pass of fewer images has fewer activations waiting, so fewer of them
 * leave the GB for DDR; in exchange every pass reads the weights from DDR
 * again.  The steps rotor_dsa_run times are one pass at the batch they are
 * given, so a step at batch b a cluster that spills is not the best that
 * step can do with b images: this prices every step at every divisor L of
 * b and keeps the fastest.
 *
 * Decisions where the paper is silent (docs/graphturbo.md, "Loop execution
 * within a cluster"):
 *  - L divides b, so that every pass runs the same schedule (a smaller last
 *    pass would be another schedule, and Table 1's loops are even).
 *  - The passes run one after another and carry nothing between them: each
 *    pass is the schedule of its batch, whole, so it reads its weights from
 *    DDR as that schedule does, and none of its transfers overlaps the pass
 *    before.  So L passes take L times one pass.
 *  - A tie goes to fewer passes: the same throughput at a lower latency.
 *    Times within a relative 1e-9 are a tie (rotor_dsa_faster).
 *  - All or nothing: a pass that fails fails the call (its error names the
 *    passes), and the loops stay empty (ran false).  A number of passes
 *    whose buffers DDR cannot hold (the other passes' inputs and outputs
 *    wait there too: rotor_dsa_ddr_check) is not taken for that step.
 *  - Every step loops, the per-layer baseline too (the paper's TVM loops),
 *    so a speedup with loops is one step's best over the baseline's best.
 *  - The model is built again at b / L (the zoo's batch), simplified and
 *    grouped as the pass at b was.  An ONNX file's batch is the file's (or
 *    --dim's, whose batch name rotor cannot know): one pass only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/base/divisors.h"
#include "rotor/pipeline/pipeline.h"

/* opt as a pass at batch / passes runs it: the same stages at that batch,
 * no T10 and no loops of its own. */
static rotor_pipeline_options pass_options(const rotor_pipeline_options *opt, int64_t batch, int64_t passes) {
    rotor_pipeline_options po = *opt;
    po.dsa_loops = false;
    po.t10 = po.vgm = po.vgm_oracle = po.program = po.energy = false;
    po.schedule = NULL;
    po.compile.progress = NULL;
    po.zoo.batch = batch / passes;
    return po;
}

/* The model built again at batch / passes as a pass builds it, its steps
 * not timed (the caller schedules or replays them itself). */
static rotor_status pass_graph(const rotor_pipeline_options *opt, const rotor_chip *chip, int64_t batch, int64_t passes,
                               rotor_pipeline *q, rotor_error *err) {
    rotor_pipeline_options po = pass_options(opt, batch, passes);
    po.graphturbo = false;
    return rotor_pipeline_run(&po, chip, q, err);
}

rotor_status rotor_pipeline_dsa_loops(const rotor_pipeline_options *opt, const rotor_chip *chip, rotor_pipeline *p,
                                      rotor_error *err) {
    rotor_dsa_loops *lp = &p->loops;
    *lp = (rotor_dsa_loops){0}; /* ran stays false until every pass ran: all or nothing */
    if (!opt->graphturbo)
        return rotor_fail(err, ROTOR_ERR_INPUT, "loops: the pipeline ran no GraphTurbo steps to loop");
    rotor_dsa_loops l = {.batch = opt->zoo.batch > 0 ? opt->zoo.batch : 1, .tried = 1};
    for (int k = 0; k < ROTOR_DSA_STEPS; k++)
        l.step[k] = (rotor_dsa_loop){.passes = 1, .pass = p->dsa[k]};
    if (rotor_model_is_onnx(opt->model)) {
        l.file_batch = true;
        l.batch = 0; /* the file's, which the zoo options do not give */
        l.ran = true;
        *lp = l;
        return ROTOR_OK;
    }
    int64_t *div = malloc(sizeof *div * ROTOR_MAX_DIVISORS);
    if (!div) return rotor_nomem(err);
    int nd = rotor_divisors(l.batch, div, ROTOR_MAX_DIVISORS);
    if (nd < 0) {
        free(div);
        return rotor_fail(err, ROTOR_ERR_INPUT, "batch %lld a cluster: more than %d ways to split it into passes",
                          (long long)l.batch, ROTOR_MAX_DIVISORS);
    }
    rotor_status st = ROTOR_OK;
    for (int i = 1; i < nd && !st; i++) { /* div[0] is 1: the steps p ran */
        int64_t passes = div[i];
        rotor_pipeline_options po = pass_options(opt, l.batch, passes);
        rotor_pipeline q;
        st = rotor_pipeline_run(&po, chip, &q, err);
        for (int k = 0; k < ROTOR_DSA_STEPS && !st; k++) {
            rotor_dsa_loop c = {.passes = passes, .pass = q.dsa[k]};
            rotor_error derr;
            if (rotor_dsa_faster(rotor_dsa_loop_s(&c), rotor_dsa_loop_s(&l.step[k])) &&
                rotor_dsa_ddr_check(&q.graph, &q.cluster, &q.dsa[k], passes, &derr) == ROTOR_OK)
                l.step[k] = c;
        }
        rotor_pipeline_free(&q);
        if (st) {
            char prefix[96];
            snprintf(prefix, sizeof prefix, "GraphTurbo's loop of %lld passes of %lld a cluster", (long long)passes,
                     (long long)(l.batch / passes));
            rotor_error_prefix(err, prefix);
        } else {
            l.tried++;
            /* a batch with many divisors takes a while: one step a pass count */
            if (opt->compile.progress) opt->compile.progress(opt->compile.progress_ctx, i, nd - 1);
        }
    }
    free(div);
    if (!st) {
        l.ran = true;
        *lp = l;
    }
    return st;
}

rotor_status rotor_pipeline_dsa_values(const rotor_pipeline_options *opt, const rotor_chip *chip, rotor_pipeline *p,
                                       rotor_error *err) {
    free(p->values);
    p->values = NULL, p->nvalues = 0, p->values_passes = 0;
    const rotor_dsa_step k = ROTOR_DSA_GRAPHTURBO;
    const rotor_dsa_loops *lp = &p->loops;
    int64_t passes = lp->ran && !lp->file_batch ? lp->step[k].passes : 1;
    const rotor_dsa_result *timed = passes > 1 ? &lp->step[k].pass : &p->dsa[k];
    rotor_pipeline q;
    rotor_status st = ROTOR_OK;
    if (passes > 1) st = pass_graph(opt, chip, lp->batch, passes, &q, err); /* as the loops built it */
    const rotor_graph *g = passes > 1 ? &q.graph : &p->graph;
    bool alike = !st && g->nvalues == p->graph.nvalues && g->nops == p->graph.nops;
    for (int v = 0; alike && v < g->nvalues; v++) alike = !strcmp(g->values[v].name, p->graph.values[v].name);
    if (!st && !alike)
        st = rotor_fail(err, ROTOR_ERR_INPUT, "values: the graph of a pass of %lld differs from the batch's",
                        (long long)(lp->batch / passes));
    rotor_dsa_value *rows = NULL;
    int n = 0;
    if (!st) st = rotor_dsa_values(g, &p->cluster, k, &rows, &n, err);
    int count[3] = {0};
    for (int i = 0; !st && i < n; i++) count[rows[i].level]++;
    /* the same schedule the step timed, or these are another's values */
    if (!st && memcmp(count, timed->tensors, sizeof count))
        st = rotor_fail(err, ROTOR_ERR_INPUT, "values: %d, %d, %d in the LB, GB, DDR where the step counted %d, %d, %d",
                        count[0], count[1], count[2], timed->tensors[0], timed->tensors[1], timed->tensors[2]);
    if (passes > 1) rotor_pipeline_free(&q);
    if (st) {
        free(rows);
        return st;
    }
    p->values = rows, p->nvalues = n, p->values_passes = passes;
    return ROTOR_OK;
}

rotor_status rotor_pipeline_dsa_loops_replay(const rotor_pipeline_options *opt, const rotor_chip *chip,
                                             const rotor_pipeline *p, const rotor_gtreplay_result *one,
                                             rotor_gtreplay_result out[ROTOR_DSA_STEPS], rotor_error *err) {
    const rotor_dsa_loops *lp = &p->loops;
    if (!lp->ran)
        return rotor_fail(err, ROTOR_ERR_INPUT, "loops: replayed before rotor_pipeline_dsa_loops chose them");
    rotor_status st = ROTOR_OK;
    bool done[ROTOR_DSA_STEPS] = {false};
    /* the steps that share a number of passes share its pass's graph */
    for (int k = 0; k < ROTOR_DSA_STEPS && !st; k++) {
        if (done[k]) continue;
        int64_t passes = lp->step[k].passes;
        rotor_pipeline q;
        bool built = passes > 1;
        if (built) st = pass_graph(opt, chip, lp->batch, passes, &q, err); /* the replay times its steps */
        const rotor_graph *g = built ? &q.graph : &p->graph;
        for (int j = k; j < ROTOR_DSA_STEPS && !st; j++) {
            if (lp->step[j].passes != passes) continue;
            done[j] = true;
            rotor_gtreplay_result *r = &out[j];
            if (!built && one) *r = one[j]; /* the caller replayed the one pass already */
            else st = rotor_gtreplay_run(g, &p->cluster, (rotor_dsa_step)j, r, err);
            /* the same schedule the loops timed, or the replay checks another */
            if (!st && (r->step != (rotor_dsa_step)j || r->model_s != lp->step[j].pass.seconds))
                st = rotor_fail(err, ROTOR_ERR_INPUT, "loops: step %s in passes of %lld timed %.9g s, now %.9g s",
                                rotor_dsa_step_name((rotor_dsa_step)j), (long long)(lp->batch / passes),
                                lp->step[j].pass.seconds, r->model_s);
            if (st) break;
            /* passes carry nothing between them: each takes one pass's time */
            r->model_s *= (double)passes;
            r->simulated_s *= (double)passes;
            for (int i = 0; i < ROTOR_GTREPLAY_NRES; i++) r->busy_s[i] *= (double)passes;
        }
        if (built) rotor_pipeline_free(&q);
        if (st && built) {
            char prefix[96];
            snprintf(prefix, sizeof prefix, "GraphTurbo's loop of %lld passes of %lld a cluster", (long long)passes,
                     (long long)(lp->batch / passes));
            rotor_error_prefix(err, prefix);
        }
    }
    return st;
}

rotor_status rotor_pipeline_dsa_replay(const rotor_pipeline_options *opt, const rotor_chip *chip,
                                       const rotor_pipeline *p, rotor_gtreplay_result r[ROTOR_DSA_STEPS],
                                       rotor_gtreplay_result lr[ROTOR_DSA_STEPS], bool *looped, rotor_error *err) {
    *looped = false;
    rotor_dsa_cluster cl;
    rotor_status st = rotor_dsa_cluster_of(chip, &cl, err);
    for (int k = 0; !st && k < ROTOR_DSA_STEPS; k++) st = rotor_gtreplay_run(&p->graph, &cl, (rotor_dsa_step)k, &r[k], err);
    *looped = !st && p->loops.ran;
    if (*looped) st = rotor_pipeline_dsa_loops_replay(opt, chip, p, r, lr, err);
    return st;
}

rotor_status rotor_pipeline_graphturbo_flags(bool graphturbo, bool no_loops, bool values, const rotor_chip *chip,
                                             rotor_error *err) {
    if (no_loops && !graphturbo)
        return rotor_fail(err, ROTOR_ERR_INPUT,
                          "--no-loops applies to --group graphturbo (GraphTurbo's passes a cluster)");
    if (values && !graphturbo)
        return rotor_fail(err, ROTOR_ERR_INPUT,
                          "--values applies to --group graphturbo (where its step keeps each value)");
    if (values && chip && !rotor_chip_has_gb(chip))
        return rotor_fail(err, ROTOR_ERR_INPUT,
                          "--values: %s has no global buffer; its instances keep their values in the cores' SRAM "
                          "(docs/graphturbo.md, \"On an ICCA chip\")", chip->name);
    return ROTOR_OK;
}

void rotor_pipeline_graphturbo_options(rotor_pipeline_options *po, const rotor_chip *chip, bool simulate,
                                       bool no_loops) {
    po->simplify = true;
    if (rotor_chip_has_gb(chip)) {
        po->t10 = po->program = po->compile.graphturbo = false;
        po->graphturbo = !simulate || !no_loops;
        po->dsa_loops = !no_loops;
        po->dsa_sizes = true;
    } else {
        po->graphturbo = po->dsa_loops = false;
        po->t10 = po->compile.graphturbo = true;
        po->program = simulate;
    }
}
