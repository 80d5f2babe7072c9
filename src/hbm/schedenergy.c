/* schedenergy.c — the energy events of one design's HBM schedule
 * (docs/energy.md, "Schedules").
 *
 * The counts follow the tasks rotor_schedule_replay emits for one chip
 * (schedreplay.c; replay_preload_groups and replay_tiles in sim/replay.c),
 * so that the simulator, which counts the events of the tasks it is given,
 * agrees with the model: per operator its preload (multicast from HBM to
 * groups of cores), its distribution (the chunks a core lacks, from its
 * peers), and its execution (a plan's sub-tasks, shifts and reduce-scatter,
 * rotor_energy_plan; a vendor operator's FLOPs).  Every chip of the tensor-
 * parallel package runs the same, so one chip's counts are multiplied by T;
 * the ring all-reduces and the reshards across chips, which the replay
 * models as a delay, are added to the inter-chip bytes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/base/topology.h"
#include "rotor/compile/energy.h"
#include "rotor/hbm/schedule.h"
#include "rotor/op/cost.h"
#include "sim/replayer.h"

/* What the walk accumulates for one chip. */
typedef struct walk {
    const rotor_chip *chip;
    int64_t n; /* cores of one chip */
    rotor_energy_counts c;
    bool overflow;
    int64_t *path; /* a group's receivers in path order (n of them) */
} walk;

static void add(walk *w, int64_t *sum, int64_t v) {
    if (!rotor_add_i64(*sum, v, sum)) w->overflow = true;
}

/* bytes to one receiver over hops: byte-hops and its SRAM write (an HBM
 * source has no SRAM to read). */
static void land(walk *w, int64_t bytes, int64_t hops) {
    int64_t bh;
    if (!rotor_mul_i64(bytes, hops, &bh)) w->overflow = true;
    add(w, &w->c.byte_hops, bh);
    add(w, &w->c.sram_write_bytes, bytes);
}

/* The preload of W bytes to groups of m consecutive cores
 * (replay_preload_groups): group g's share of W, cut into pieces whose
 * bytes sum to the share, goes to each of its cores.  All-to-all: one
 * multicast, one hop to every receiver.  Mesh: a path from the end nearer
 * the grid's edge, each receiver forwarding to the next (read from its
 * SRAM, the XY distance between them); the first receiver's route from
 * the controller is counted as its distance to the nearest edge plus the
 * port's hop, which the simulator's route equals when the controller's
 * nearest port is the grid's nearest (docs/energy.md). */
static void preload(walk *w, int64_t W, int64_t m) {
    int64_t n = w->n, G = (n + m - 1) / m, mw = w->chip->topology == ROTOR_TOPO_MESH ? w->chip->mesh_width : 0;
    if (W <= 0) return;
    add(w, &w->c.hbm_bytes, W);
    for (int64_t g = 0; g < G; g++) {
        int64_t bytes = W / G + (g < W % G), lo = g * m, hi = lo + m < n ? lo + m : n;
        if (bytes == 0) continue;
        if (!mw) {
            for (int64_t k = lo; k < hi; k++) land(w, bytes, 1);
            continue;
        }
        replay_group_path(mw, lo, hi, false, w->path);
        bool rev = rotor_topo_mesh_edge_hops(mw, n / mw, w->path[hi - lo - 1]) < rotor_topo_mesh_edge_hops(mw, n / mw, w->path[0]);
        if (rev) replay_group_path(mw, lo, hi, true, w->path);
        land(w, bytes, 1 + rotor_topo_mesh_edge_hops(mw, n / mw, w->path[0]));
        for (int64_t k = 1; k < hi - lo; k++)
            rotor_energy_transfer(w->chip, w->path[k - 1], w->path[k], bytes, &w->c, &w->overflow);
    }
}

/* The distribution (emit_execute): c - 1 rounds, in round k every core
 * fetches its piece of dist from the core k m ahead. */
static void distribution(walk *w, int64_t dist, int64_t c, int64_t m) {
    int64_t rounds = c - 1, n = w->n;
    for (int64_t k = 1; k <= rounds && dist > 0; k++)
        for (int64_t core = 0; core < n; core++) {
            int64_t piece = rotor_gather_piece(dist, rounds, k), src = (core + k * m) % n;
            if (src != core && piece != 0) rotor_energy_transfer(w->chip, src, core, piece, &w->c, &w->overflow);
        }
}

/* One plan's events, kept for the operators that run the same plan on the
 * same shape (a model's identical layers): the walk over its steps and
 * cores is the cost of this model, and a layer repeats it 40 times. */
typedef struct memo {
    const rotor_expr *e;
    const rotor_plan *p;
    rotor_energy_counts delta;
} memo;

static bool same_plan(const rotor_expr *a, const rotor_plan *pa, const rotor_expr *b, const rotor_plan *pb) {
    if (strcmp(a->text, b->text) || a->naxes != b->naxes || a->ntensors != b->ntensors) return false;
    for (int x = 0; x < a->naxes; x++) {
        if (a->extent[x] != b->extent[x] || pa->fop[x] != pb->fop[x] || pa->order[x] != pb->order[x]) return false;
        for (int t = 0; t < a->ntensors; t++)
            if (pa->ft[t][x] != pb->ft[t][x]) return false;
    }
    return true;
}

static void add_counts(walk *w, const rotor_energy_counts *d) {
    add(w, &w->c.matrix_flops, d->matrix_flops);
    add(w, &w->c.vector_flops, d->vector_flops);
    add(w, &w->c.sram_read_bytes, d->sram_read_bytes);
    add(w, &w->c.sram_write_bytes, d->sram_write_bytes);
    add(w, &w->c.byte_hops, d->byte_hops);
    add(w, &w->c.hbm_bytes, d->hbm_bytes);
    add(w, &w->c.interchip_bytes, d->interchip_bytes);
}

/* Adds a candidate's events (rotor_energy_plan), from the memo (room for
 * one entry per operator) when an earlier operator ran the same plan. */
static rotor_status plan_events(walk *w, memo *mm, int *nm, const rotor_expr *e, const rotor_candidate *cand,
                                rotor_error *err) {
    for (int k = 0; k < *nm; k++)
        if (same_plan(mm[k].e, mm[k].p, e, &cand->plan)) {
            add_counts(w, &mm[k].delta);
            return ROTOR_OK;
        }
    memo *m = &mm[(*nm)++];
    *m = (memo){.e = e, .p = &cand->plan};
    rotor_status st = rotor_energy_plan(e, &cand->plan, &cand->info, w->chip, &m->delta, err);
    if (!st) add_counts(w, &m->delta);
    return st;
}

/* Multiplies one chip's counts by the T chips. */
static bool times(rotor_energy_counts *c, int64_t T) {
    int64_t *v[] = {&c->matrix_flops, &c->vector_flops, &c->sram_read_bytes, &c->sram_write_bytes,
                    &c->byte_hops, &c->hbm_bytes, &c->interchip_bytes};
    bool ok = true;
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) ok = ok && rotor_mul_i64(*v[i], T, v[i]);
    return ok;
}

rotor_status rotor_schedule_chip_energy(const rotor_schedule *s, const rotor_schedule_report *r,
                                        rotor_energy_counts *out, rotor_error *err) {
    memset(out, 0, sizeof *out);
    const rotor_preload_result *res = &r->result;
    if (res->nops != s->nops || !res->ops)
        return rotor_fail(err, ROTOR_ERR_INPUT, "energy: the report has %d operators; the schedule has %d", res->nops,
                          s->nops);
    walk w = {.chip = &s->chip, .n = s->chip.cores_per_chip};
    memo *mm = malloc((size_t)(s->nops > 0 ? s->nops : 1) * sizeof *mm);
    int nm = 0;
    if (!mm || (s->chip.topology == ROTOR_TOPO_MESH && !(w.path = malloc((size_t)w.n * sizeof *w.path)))) {
        free(mm);
        return rotor_nomem(err);
    }
    rotor_status st = ROTOR_OK;
    for (int i = 0; i < s->nops && !st; i++) {
        const rotor_schedule_op *so = &s->ops[i];
        const rotor_preload_op_result *x = &res->ops[i];
        int nst = 0;
        const rotor_preload_state *ps =
            x->plan >= 0 && x->plan < so->nplans ? rotor_preload_model_states(s->model, i, x->plan, &nst) : NULL;
        if (!ps || x->state < 0 || x->state >= nst) {
            st = rotor_fail(err, ROTOR_ERR_INPUT, "energy: operator %d '%s': plan %d, preload state %d: not in the "
                            "schedule's model", i, so->name, x->plan, x->state);
            break;
        }
        /* as emit_preload and emit_execute: the datum shared by P cores in c chunks, m = P / c a group */
        int64_t c = ps[x->state].chunks, P = so->plans[x->plan].share;
        int64_t m = c > 0 && P % c == 0 ? P / c : 1;
        preload(&w, so->hbm_bytes, m);
        distribution(&w, ps[x->state].dist_bytes, c, m);
        if (so->vendor) {
            /* the shard's FLOPs on the vector units, rounded once for the chip (emit_execute splits them) */
            add(&w, &w.c.vector_flops, so->flops > 0 && so->flops < 9e18 ? llround(so->flops) : 0);
        } else if (!so->cands) {
            st = rotor_fail(err, ROTOR_ERR_INPUT, "energy: operator %d '%s' has no plans", i, so->name);
        } else {
            st = plan_events(&w, mm, &nm, &so->expr, &so->cands[x->plan], err);
        }
    }
    free(mm);
    free(w.path);
    if (!st && w.overflow) st = rotor_fail(err, ROTOR_ERR_INPUT, "energy: an event count of the schedule leaves int64");
    if (!st) *out = w.c;
    return st;
}

rotor_status rotor_schedule_energy(const rotor_schedule *s, const rotor_schedule_report *r,
                                   rotor_energy_counts *out, rotor_error *err) {
    rotor_status st = rotor_schedule_chip_energy(s, r, out, err);
    if (st) return st;
    int64_t T = s->tensor_parallel, e = s->chip.element_bytes, ring = 0;
    bool ok = times(out, T);
    for (int o = 0; o < s->nops && ok; o++) {
        const rotor_schedule_op *so = &s->ops[o];
        /* ring all-reduce of a reduction-split shard: 2 (T - 1) / T of y from each of the T chips */
        int64_t b;
        if (!so->vendor && so->shard == ROTOR_SHARD_REDUCTION && T > 1)
            ok = ok && rotor_mul_i64(rotor_tensor_elements(&so->expr, 0), e * 2 * (T - 1), &b) &&
                 rotor_add_i64(ring, b, &ring);
        /* its reshards: what every chip receives (until 2026-12-03 the
         * busiest chip's bytes T times over: 20 % high for a padded cut of
         * 40 rows gathered on 16 chips; found by a review helper) */
        ok = ok && rotor_add_i64(ring, so->reshard_total_bytes, &ring);
    }
    if (!ok || !rotor_add_i64(out->interchip_bytes, ring, &out->interchip_bytes)) {
        memset(out, 0, sizeof *out);
        return rotor_fail(err, ROTOR_ERR_INPUT, "energy: an event count of the schedule leaves int64");
    }
    return ROTOR_OK;
}
