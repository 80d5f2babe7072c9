/* gtreplay.c — GraphTurbo's schedules replayed instance by instance on the
 * event-driven simulator (include/rotor/sim/gtreplay.h has the task graph;
 * docs/simulator.md, "GraphTurbo's instances", its decisions).
 *
 * The five resources are five pipelines of the engine: "cores" 0-4 of a
 * five-core chip that has nothing else (no HBM, no GB), each serving its
 * tasks FIFO for a duration the cluster's rates give.  Decision: the
 * cluster's DDR share and GB sides are aggregate rates in the time model
 * (rotor_dsa_cluster), so the replay keeps them aggregate, one server each,
 * rather than routing per-core transfers through the network's GB pool;
 * what it tests is the model's composition of the instances (its sum of
 * per-instance times), not the network. */
#include "rotor/sim/gtreplay.h"

#include <math.h>
#include <stdlib.h>

#include "rotor/sim/sim.h"

static const char *const RES_NAMES[ROTOR_GTREPLAY_NRES] = {"matrix", "vector", "DDR", "GB read", "GB write"};

const char *rotor_gtreplay_res_name(rotor_gtreplay_res r) {
    return (unsigned)r < ROTOR_GTREPLAY_NRES ? RES_NAMES[r] : "?";
}

double rotor_gtreplay_busiest_s(const rotor_gtreplay_result *r) {
    double m = 0;
    for (int i = 0; i < ROTOR_GTREPLAY_NRES; i++)
        if (r->busy_s[i] > m) m = r->busy_s[i];
    return m;
}

/* ---- the replay ------------------------------------------------------------- */

typedef struct gt_replay {
    rotor_sim *sim;
    const rotor_graph *g;
    const rotor_gt_schedule *s;
    const rotor_dsa_cluster *c;
    const rotor_dsa_work *work; /* per position of the order: dsa.c's one owner */
    bool cross;
    int64_t node[ROTOR_GTREPLAY_NRES];
    int64_t busy_ps[ROTOR_GTREPLAY_NRES];
    int64_t *sg_done;        /* per sub-graph: a join of its instances so far (-1: none) */
    int64_t *sg_wload;       /* per sub-graph: the DDR load of weights that stay in the GB (-1) */
    int64_t *deps;           /* scratch: the producers of an instance */
    int64_t comp_end[2];     /* the last compute task of the previous instance and of the one before */
    int64_t last_mm, last_vec;
} gt_replay;

static const rotor_sim_category CATEGORY[ROTOR_GTREPLAY_NRES] = {ROTOR_SIM_COMPUTE, ROTOR_SIM_COMPUTE, ROTOR_SIM_HBM,
                                                                 ROTOR_SIM_COMM, ROTOR_SIM_COMM};

/* Adds ps of work on resource res after deps (-1 entries skipped; at most 8
 * when deps is not r->deps).  Zero work is a join: it does not queue. */
static rotor_status add(gt_replay *r, int res, int64_t ps, int op, int64_t *deps, int n, int64_t *id,
                        rotor_error *err) {
    int m = 0;
    for (int i = 0; i < n; i++)
        if (deps[i] >= 0) deps[m++] = deps[i];
    r->busy_ps[res] += ps;
    rotor_sim_compute t = {.core = r->node[res], .duration_ps = ps, .category = CATEGORY[res], .op = op,
                           .deps = deps, .ndeps = m};
    return rotor_sim_add_compute(r->sim, &t, id, err);
}

/* Tile t's share of d ps: the shares add up to d exactly. */
static int64_t tile_ps(int64_t d, int t) {
    return d * (t + 1) / ROTOR_GTREPLAY_TILES - d * t / ROTOR_GTREPLAY_TILES;
}

static int64_t ps_of(double s) { return llround(s * 1e12); }

/* The DMA's landing of weights from DDR on the GB's write side, after gate:
 * it occupies the side, but the LB reads the weights right behind it (a
 * decision: cut-through, so only DDR's read is on the weights' path). */
static rotor_status landing(gt_replay *r, int op, int64_t ps, int64_t gate, rotor_error *err) {
    int64_t d[1] = {gate}, id;
    return add(r, ROTOR_GTREPLAY_GB_WRITE, ps, op, d, 1, &id, err);
}

/* Without cross-layer scheduling: the instance's weights whole, DDR -> GB
 * after gate, then GB -> LB (its id in *wg). */
static rotor_status weights(gt_replay *r, int64_t pos, int64_t gate, int64_t *wg, rotor_error *err) {
    const rotor_gt_instance *in = &r->s->order[pos];
    const rotor_dsa_work *w = &r->work[pos];
    double w_ddr = w->w_ddr, w_gb = w->w_gb;
    bool resident = w->w_resident;
    int64_t wd, d[2] = {gate, -1};
    rotor_status st = add(r, ROTOR_GTREPLAY_DDR, ps_of(w_ddr / r->c->ddr_bw), in->sg, d, 1, &wd, err);
    if (!st) st = landing(r, in->sg, ps_of(w_ddr / r->c->gb_bw), gate, err);
    if (st) return st;
    if (resident && in->index == 0) r->sg_wload[in->sg] = wd;
    d[0] = wd, d[1] = resident ? r->sg_wload[in->sg] : -1;
    return add(r, ROTOR_GTREPLAY_GB, ps_of(w_gb / r->c->gb_bw), in->sg, d, 2, wg, err);
}

/* A zero-time join of what an instance's first tiles wait for: its
 * producers' instances so far, and first (the weights, or the prefetch
 * gate). */
static rotor_status start_join(gt_replay *r, int64_t pos, int64_t first, int64_t *id, rotor_error *err) {
    const rotor_gt_subgraph *sg = &r->s->sg[r->s->order[pos].sg];
    int n = 0;
    r->deps[n++] = first;
    for (int i = 0; i < sg->ninputs; i++) {
        int pr = r->g->values[r->s->inputs[sg->first_input + i].value].producer;
        if (pr < 0) continue;
        int64_t done = r->sg_done[r->s->sg_of[pr]];
        bool seen = false;
        for (int j = 0; j < n && !seen; j++) seen = r->deps[j] == done;
        if (!seen) r->deps[n++] = done;
    }
    return add(r, ROTOR_GTREPLAY_MATRIX, 0, r->s->order[pos].sg, r->deps, n, id, err);
}

/* One instance's work in ps: its compute, its reads and writes at DDR and
 * the GB, and (streamed, with cross-layer scheduling) its weights. */
typedef struct inst_ps {
    int64_t mm, vec, rd[2], wr[2], w_ddr, w_gbw, w_gb; /* w_gbw: the weights' DDR -> GB on the GB's write side */
    int64_t w_after;         /* the DDR load of resident weights a later instance waits for (-1) */
    bool keep_load;          /* the first instance of resident weights: remember its last DDR tile */
} inst_ps;

/* The instance's tiles after start (wg: its weights, -1 when they stream
 * in the tiles); *comp receives its last compute task, *x and *y its last
 * DDR and GB writes. */
static rotor_status tiles(gt_replay *r, int op, const inst_ps *w, int64_t start, int64_t wg, int64_t *comp, int64_t *x,
                          int64_t *y, rotor_error *err) {
    int64_t a, b, m = -1, v = -1, done[2] = {-1, -1}, wd = -1;
    rotor_status st = ROTOR_OK;
    for (int t = 0; t < ROTOR_GTREPLAY_TILES && !st; t++) {
        int64_t gate = t < 2 ? start : done[t % 2]; /* double buffering: tile t - 2 has computed */
        int64_t d[4] = {gate};
        if (r->cross) { /* weights stream with the tiles (§2.2's fixed LB buffer, §4.4) */
            if ((st = add(r, ROTOR_GTREPLAY_DDR, tile_ps(w->w_ddr, t), op, d, 1, &wd, err)) ||
                (st = landing(r, op, tile_ps(w->w_gbw, t), gate, err)))
                break;
            d[0] = wd, d[1] = w->w_after;
            if ((st = add(r, ROTOR_GTREPLAY_GB, tile_ps(w->w_gb, t), op, d, 2, &wg, err))) break;
            d[0] = gate;
        }
        if ((st = add(r, ROTOR_GTREPLAY_DDR, tile_ps(w->rd[0], t), op, d, 1, &a, err))) break;
        d[0] = gate;
        if ((st = add(r, ROTOR_GTREPLAY_GB, tile_ps(w->rd[1], t), op, d, 1, &b, err))) break;
        /* in order on the matrix units; without cross-layer scheduling after
         * the vector work of the tile before (one after the other) */
        int64_t prev_m = t == 0 ? (r->cross ? r->last_mm : -1) : (r->cross ? m : v);
        int64_t dm[4] = {a, b, r->cross || t == 0 ? wg : -1, prev_m};
        if ((st = add(r, ROTOR_GTREPLAY_MATRIX, tile_ps(w->mm, t), op, dm, 4, &m, err))) break;
        int64_t dv[2] = {m, t == 0 ? r->last_vec : v};
        if ((st = add(r, ROTOR_GTREPLAY_VECTOR, tile_ps(w->vec, t), op, dv, 2, &v, err))) break;
        d[0] = v;
        if ((st = add(r, ROTOR_GTREPLAY_DDR, tile_ps(w->wr[0], t), op, d, 1, x, err))) break;
        d[0] = v;
        if ((st = add(r, ROTOR_GTREPLAY_GB_WRITE, tile_ps(w->wr[1], t), op, d, 1, y, err))) break;
        done[t % 2] = v;
    }
    if (w->keep_load) r->sg_wload[op] = wd;
    r->last_mm = m, r->last_vec = v;
    *comp = v;
    return st;
}

/* The instance at pos: weights, a start join, its tiles, an end join. */
static rotor_status instance(gt_replay *r, int64_t pos, rotor_error *err) {
    const rotor_gt_instance *in = &r->s->order[pos];
    const rotor_dsa_cluster *c = r->c;
    const rotor_dsa_work *k = &r->work[pos];
    bool resident = k->w_resident;
    inst_ps w = {.mm = ps_of(k->mm_s), .vec = ps_of(k->vec_s),
                 .rd = {ps_of(k->read[0] / c->ddr_bw), ps_of(k->read[1] / c->gb_bw)},
                 .wr = {ps_of(k->write[0] / c->ddr_bw), ps_of(k->write[1] / c->gb_bw)},
                 .w_ddr = ps_of(k->w_ddr / c->ddr_bw), .w_gbw = ps_of(k->w_ddr / c->gb_bw),
                 .w_gb = ps_of(k->w_gb / c->gb_bw),
                 .w_after = resident && in->index > 0 ? r->sg_wload[in->sg] : -1,
                 .keep_load = r->cross && resident && in->index == 0};
    /* no prefetch: the weights after the previous instance's compute, the
     * tiles after the weights; a depth of one: the weights and first tiles
     * once the instance before the previous one has computed */
    int64_t wg = -1, start, comp, x = -1, y = -1;
    rotor_status st = r->cross ? ROTOR_OK : weights(r, pos, r->comp_end[0], &wg, err);
    if (!st) st = start_join(r, pos, r->cross ? r->comp_end[1] : wg, &start, err);
    if (!st) st = tiles(r, in->sg, &w, start, wg, &comp, &x, &y, err);
    if (st) return st;
    int64_t d[4] = {x, y, comp, r->sg_done[in->sg]};
    r->comp_end[1] = r->comp_end[0], r->comp_end[0] = comp;
    return add(r, ROTOR_GTREPLAY_MATRIX, 0, in->sg, d, 4, &r->sg_done[in->sg], err);
}

/* Five servers: a chip of five cores and nothing else. */
static rotor_status servers(const rotor_dsa_cluster *c, gt_replay *r, rotor_error *err) {
    rotor_chip chip;
    rotor_status st = rotor_chip_preset("ipu-mk2", &chip, err);
    if (!st) st = rotor_chip_set(&chip, "cores_per_chip=5", err);
    if (!st) st = rotor_sim_create(&chip, &r->sim, err);
    if (st) return st;
    for (int i = 0; i < ROTOR_GTREPLAY_NRES; i++) r->node[i] = i;
    if (!c->units_overlap) r->node[ROTOR_GTREPLAY_VECTOR] = r->node[ROTOR_GTREPLAY_MATRIX]; /* one unit kind at a time */
    return ROTOR_OK;
}

static rotor_status replay_schedule(const rotor_graph *g, const rotor_gt_schedule *s, const rotor_dsa_cluster *c,
                                    bool cross, rotor_gtreplay_result *out, rotor_error *err) {
    gt_replay r = {.g = g, .s = s, .c = c, .cross = cross, .comp_end = {-1, -1}, .last_mm = -1, .last_vec = -1};
    size_t nsg = (size_t)(s->nsg > 0 ? s->nsg : 1);
    int maxin = 1;
    for (int i = 0; i < s->nsg; i++)
        if (s->sg[i].ninputs + 1 > maxin) maxin = s->sg[i].ninputs + 1;
    rotor_dsa_work *work = NULL;
    rotor_status st = rotor_dsa_works(g, s, c, &work, err);
    if (st) return st;
    r.sg_done = malloc(nsg * sizeof *r.sg_done);
    r.sg_wload = malloc(nsg * sizeof *r.sg_wload);
    r.deps = malloc((size_t)maxin * sizeof *r.deps);
    st = r.sg_done && r.sg_wload && r.deps ? ROTOR_OK : rotor_nomem(err);
    if (!st) {
        r.work = work;
        for (size_t i = 0; i < nsg; i++) r.sg_done[i] = r.sg_wload[i] = -1;
        st = servers(c, &r, err);
    }
    for (int64_t pos = 0; pos < s->ninst && !st; pos++) st = instance(&r, pos, err);
    rotor_sim_stats stats;
    if (!st) st = rotor_sim_run(r.sim, &stats, err);
    if (!st) {
        out->simulated_s = (double)stats.makespan_ps * 1e-12;
        out->tasks = stats.tasks;
        out->instances = s->ninst;
        for (int i = 0; i < ROTOR_GTREPLAY_NRES; i++) out->busy_s[i] = (double)r.busy_ps[i] * 1e-12;
    }
    rotor_sim_free(r.sim);
    free(work), free(r.sg_done), free(r.sg_wload), free(r.deps);
    return st;
}

rotor_status rotor_gtreplay_run(const rotor_graph *g, const rotor_dsa_cluster *c, rotor_dsa_step step,
                                rotor_gtreplay_result *out, rotor_error *err) {
    *out = (rotor_gtreplay_result){.step = step};
    rotor_dsa_result model;
    rotor_status st = rotor_dsa_run(g, c, step, &model, err);
    if (st) return st;
    out->model_s = model.seconds;
    rotor_gt_schedule s; /* the schedule rotor_dsa_run times */
    st = rotor_dsa_schedule(g, c, step, &s, err);
    if (!st) st = replay_schedule(g, &s, c, step == ROTOR_DSA_GRAPHTURBO, out, err);
    rotor_gt_schedule_free(&s);
    if (st) rotor_error_prefix(err, "graphturbo replay");
    return st;
}
