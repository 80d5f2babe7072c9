/* replay.c — a compiled program replayed event by event on the simulator
 * (Elk §5 "Simulation framework"; the schedule is T10's compute-shift
 * execution, T10 §4.1, §4.4 and Figure 10).
 *
 * Decisions (docs/simulator.md, "Replay", repeats them):
 *  - Operators run one after another with a barrier between them, as the
 *    program's predicted total (a sum over operators) assumes and as the IPU's
 *    bulk-synchronous execution does.  The barrier is a zero-time compute task
 *    on core 0 that waits for every core's last task of the operator.
 *  - The placement (place.c) decides everything inside an operator: core c
 *    runs its T sub-tasks in loop order; at a transition every tensor whose
 *    block changes arrives from the core rotor_place_sender names.  Steps with
 *    no transition between them become one compute task (the same time as T
 *    tasks back to back, with fewer events).
 *  - A shift leaves a core when that core has finished the run that used the
 *    partition; a run starts when every partition it needs has arrived.  The
 *    reserved shift buffer lets a core receive while it computes.
 *  - The output's partial sums are reduced by a ring reduce-scatter among the
 *    R_Y cores that hold copies of one partition: R_Y - 1 rounds, each core
 *    sending ceil(bytes / R_Y) to the next, matching cost-model-v1's
 *    (R-1)/R * bytes / beta + (R-1) * alpha on an idle all-to-all chip.
 *  - Setup: the program records, per operator, the bytes one core receives
 *    and the gather rounds (compile.c, setup_need).  Core c receives them in
 *    `rounds` transfers of equal size, round r from core (c + r) mod N: each
 *    round is a permutation, so on the all-to-all chip no port is shared and
 *    the replay costs bytes / beta + rounds * alpha, as the model.  The
 *    program does not record where the gathered bytes really live (the idle
 *    layout's peers, the even activation layout); on a mesh the neighbour
 *    offsets stand in for them.
 *  - Vendor operators (no tensor expression) run exec_s on every core.
 *
 * The end of this file streams preloads from HBM (multicast pieces, SRAM
 * pauses); hbm/schedreplay.c replays a whole Elk HBM schedule with it
 * (docs/simulator.md, "Replaying an HBM schedule"). */
#include "rotor/sim/replay.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/base/topology.h"
#include "rotor/compile/energy.h"
#include "rotor/compile/segment.h"
#include "rotor/op/cost.h"
#include "rotor/op/handoff.h"
#include "rotor/op/meshmap.h"
#include "rotor/op/place.h"
#include "rotor/op/reduction.h"
#include "sim/replayer.h"

static int64_t to_ps(double s) { return (int64_t)llround(s * 1e12); }


rotor_status replay_idlist_push(idlist *l, int64_t id, rotor_error *err) {
    if (l->n == l->cap) {
        int64_t cap = l->cap ? 2 * l->cap : 16;
        int64_t *v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v) return rotor_nomem(err);
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = id;
    return ROTOR_OK;
}


static void replay_tick(void *ctx, int64_t now_ps, int64_t events) {
    replay_ticker *t = ctx;
    t->p->fn(t->p->ctx, t->done, t->total, now_ps, events);
}

rotor_status replay_run_begin(rotor_sim *sim, bool stream, const rotor_replay_options *opt, int total,
                              replay_ticker *t, rotor_error *err) {
    *t = (replay_ticker){.p = &opt->progress, .total = total};
    rotor_status st = stream ? rotor_sim_stream_begin(sim, err) : ROTOR_OK;
    if (!st && stream && opt->trace) st = rotor_sim_trace_stream(sim, opt->trace_filter, opt->trace, err);
    if (!st && opt->progress.fn) rotor_sim_set_progress(sim, replay_tick, t);
    return st;
}

rotor_status replay_run_end(rotor_sim *sim, bool stream, const rotor_replay_options *opt, rotor_sim_stats *stats,
                            rotor_sim_trace_summary *sum, rotor_error *err) {
    rotor_status st = stream ? rotor_sim_stream_end(sim, stats, err) : rotor_sim_run(sim, stats, err);
    rotor_sim_set_progress(sim, NULL, NULL); /* the ticker goes with the caller's frame */
    for (int64_t c = 0; !st && opt->core_busy_ps && c < rotor_sim_cores(sim); c++)
        opt->core_busy_ps[c] = rotor_sim_core_busy_ps(sim, c);
    if (!st && opt->trace)
        st = stream ? (*sum = rotor_sim_trace_summary_of(sim), ROTOR_OK)
                    : rotor_sim_trace_write(sim, opt->trace_filter, opt->trace, sum, err);
    return st;
}

/* A transfer of more than r->packet bytes as a chain of packets, each
 * waiting for the one before, so that on a busy port the packets of
 * different transfers take turns (schedule replay, docs/simulator.md
 * "Packets") instead of a small transfer waiting behind a whole large one. */
rotor_status replay_add_packets(replayer *r, const rotor_sim_transfer *x, int64_t *id, rotor_error *err) {
    int64_t k = (x->bytes + r->packet - 1) / r->packet, prev = -1;
    rotor_sim_transfer p = *x;
    for (int64_t i = 0; i < k; i++) {
        p.bytes = x->bytes / k + (i < x->bytes % k);
        if (i > 0) {
            p.deps = &prev;
            p.ndeps = 1;
        }
        rotor_status st = rotor_sim_add_transfer(r->sim, &p, &prev, err);
        if (st) return st;
    }
    *id = prev;
    return ROTOR_OK;
}

/* The pieces a preload stream keeps in flight: on all-to-all, enough to
 * cover a link latency, as a DMA engine keeps requests outstanding, 1 +
 * ceil(latency / a piece's bytes' time at the link rate), at most
 * REPLAY_WINDOW_MAX; one with no latency (the IPU presets: the replay is
 * the same as before).  Until 2026-12-04 a stream kept one, each piece
 * waiting for the one before to arrive: nerf's Elk-Full schedule on
 * stcp920 (20 ns, 16 ns a 1 KiB piece) replayed +77 % over its analytical
 * time (docs/schedule.md, "Link latency").  On a mesh one (decision: its
 * streams are its edge ports, paced round by round, and the schedule
 * measures its preloads on this very replay, port_load in hbm/schedule.c).
 * A plan's shifts keep their packets one in flight (replay_add_packets):
 * a window there too, tried, took Elk-Full on stcp920 from +5.73 % to
 * +23.20 %, its packets no longer taking turns with other transfers'. */
static int64_t stream_window(const rotor_chip *chip, int64_t packet) {
    if (packet <= 0 || chip->topology == ROTOR_TOPO_MESH || !(chip->link_latency_ns > 0) || !(chip->link_gbps > 0))
        return 1;
    double w = 1.0 + ceil(chip->link_latency_ns * 1000.0 / ((double)packet * 1000.0 / chip->link_gbps));
    return w < REPLAY_WINDOW_MAX ? (int64_t)w : REPLAY_WINDOW_MAX;
}

void replay_inbox_clear(replayer *r, int64_t cores) {
    for (int64_t c = 0; c < cores; c++) r->inbox[c].n = 0;
}

/* A replayer on a new simulator of chip, its scratch sized for the cores. */
rotor_status replay_init(replayer *r, const rotor_chip *chip, int64_t packet, rotor_error *err) {
    *r = (replayer){.barrier = -1, .packet = packet, .chip = *chip};
    rotor_status st = rotor_sim_create(chip, &r->sim, err);
    if (st) return st;
    r->n = rotor_sim_cores(r->sim);
    r->last = malloc((size_t)r->n * sizeof *r->last);
    r->cur = malloc((size_t)r->n * sizeof *r->cur);
    r->inbox = calloc((size_t)r->n, sizeof *r->inbox);
    r->gate = calloc((size_t)r->n, sizeof *r->gate);
    r->prev = malloc((size_t)r->n * sizeof *r->prev);
    r->pairs = malloc((size_t)r->n * 2 * sizeof *r->pairs);
    r->places = malloc(REPLAY_PLACES * sizeof *r->places);
    if (!r->last || !r->cur || !r->inbox || !r->gate || !r->prev || !r->pairs || !r->places) return rotor_nomem(err);
    if (chip->topology == ROTOR_TOPO_MESH && !(r->phys_buf = malloc((size_t)r->n * sizeof *r->phys_buf)))
        return rotor_nomem(err);
    return ROTOR_OK;
}

/* Frees the scratch; the simulator too unless keep_sim. */
void replay_free(replayer *r, bool keep_sim) {
    for (int64_t c = 0; r->inbox && c < r->n; c++) free(r->inbox[c].v);
    free(r->inbox);
    for (int64_t c = 0; r->gate && c < r->n; c++) free(r->gate[c].v);
    free(r->gate);
    free(r->prev);
    free(r->scratch.v);
    exchange_cache_free(&r->xcache);
    for (int i = 0; i < r->nplaces; i++) {
        free(r->places[i].key);
        rotor_place_free(r->places[i].pl);
    }
    free(r->places);
    free(r->key.v);
    free(r->finals.v);
    free(r->last);
    free(r->cur);
    free(r->pairs);
    free(r->phys_buf);
    if (!keep_sim) rotor_sim_free(r->sim);
    memset(r, 0, sizeof *r);
}

rotor_status replay_add_barrier(replayer *r, int op, int64_t cores, rotor_error *err) {
    r->finals.n = 0;
    rotor_status st;
    for (int64_t i = 0; i < cores; i++) {
        int64_t c = r->phys && cores < r->n ? replay_at(r, i) : i;
        if (r->last[c] >= 0 && (st = replay_idlist_push(&r->finals, r->last[c], err))) return st;
    }
    rotor_sim_compute b = {.core = 0, .duration_ps = 0, .category = ROTOR_SIM_COMPUTE, .op = op,
                           .deps = r->finals.v, .ndeps = (int)r->finals.n};
    return rotor_sim_add_compute(r->sim, &b, &r->barrier, err);
}

rotor_status replay_lay_out(replayer *r, const rotor_expr *e, const rotor_plan *p, const rotor_plan_info *info,
                            const rotor_chip *chip, rotor_error *err) {
    r->phys = NULL;
    if (!r->phys_buf || chip->topology != ROTOR_TOPO_MESH) return ROTOR_OK;
    rotor_status st = rotor_mesh_map_cores(e, chip, p, info, r->phys_buf, err);
    if (!st) r->phys = r->phys_buf;
    return st;
}

/* Setup transfers into cores lo..lo+cores-1; the last round into a core
 * lands in its inbox. */
static rotor_status replay_setup(replayer *r, int op, int64_t lo, int64_t cores, int64_t bytes, int64_t rounds,
                                 rotor_error *err) {
    if (rounds <= 0 || r->n < 2) return ROTOR_OK;
    /* Round k into core c follows round k - 1 into c (a gather is a sequence
     * of steps); each round is a permutation, so no port is shared. */
    for (int64_t k = 1; k <= rounds; k++) {
        int64_t piece = rotor_gather_piece(bytes, rounds, k);
        for (int64_t i = lo; i < lo + cores; i++) {
            /* on a mesh the nearest cores stand in for the sources (meshmap.h) */
            int64_t c = r->phys ? replay_at(r, i) : i, src = r->phys ? rotor_mesh_near(&r->chip, c, k) : (i + k) % r->n;
            int64_t deps[1] = {r->inbox[c].n ? r->inbox[c].v[r->inbox[c].n - 1] : r->barrier};
            rotor_sim_transfer x = {.src = src, .dst = c, .bytes = piece, .category = ROTOR_SIM_SETUP, .op = op,
                                    .deps = deps, .ndeps = deps[0] >= 0};
            if (x.src == c) continue; /* rounds >= N: nothing left to fetch from a peer */
            int64_t id;
            rotor_status st = replay_add_transfer(r, &x, &id, err);
            if (st) return st;
            /* the round stands for the one before it in the inbox, its
             * ancestor: a run waiting for the inbox then waits for one task,
             * not one per round (up to 244 for DiT-XL on ipu-pod4) */
            if (r->inbox[c].n) r->inbox[c].v[r->inbox[c].n - 1] = id;
            else if ((st = replay_idlist_push(&r->inbox[c], id, err))) return st;
        }
    }
    return ROTOR_OK;
}

/* Compute tasks of one run of `steps` sub-tasks on every core.  With
 * overlap, each core's inbox becomes its gate and its compute task before
 * (none on the first run) its prev (replayer.h). */
static rotor_status emit_run(replayer *r, int op, const rotor_expr *e, const int64_t *sub, int64_t cores,
                             int64_t steps, int64_t sub_ps, int64_t sub_flops, int overlap, int64_t elem,
                             rotor_error *err) {
    int64_t dur, fl;
    rotor_sim_work w = {0};
    if (!rotor_mul_i64(steps, sub_ps, &dur) || !rotor_mul_i64(steps, sub_flops, &fl) ||
        !rotor_energy_subtask_bytes(e, sub, elem, steps, &w.sram_read, &w.sram_write))
        return rotor_fail(err, ROTOR_ERR_INPUT, "operator %d: compute time overflows", op);
    /* energy (docs/energy.md): contractions run on the matrix units, the rest on the vector units */
    if (e->op_class == ROTOR_OP_CONTRACTION) w.matrix_flops = fl;
    else w.vector_flops = fl;
    int64_t deps[1] = {r->barrier};
    for (int64_t i = 0; i < cores; i++) {
        int64_t c = replay_at(r, i);
        rotor_sim_compute x = {.core = c, .duration_ps = dur, .flops = fl, .work = w,
                               .category = ROTOR_SIM_COMPUTE, .op = op};
        if (r->inbox[c].n) {
            x.deps = r->inbox[c].v;
            x.ndeps = (int)r->inbox[c].n;
        } else if (r->barrier >= 0) {
            x.deps = deps;
            x.ndeps = 1;
        }
        if (overlap) r->prev[c] = overlap > 1 ? r->cur[c] : -1;
        rotor_status st = rotor_sim_add_compute(r->sim, &x, &r->cur[c], err);
        if (st) return st;
        r->last[c] = r->cur[c];
        if (overlap) {
            idlist g = r->gate[c];
            r->gate[c] = r->inbox[c];
            r->inbox[c] = g;
        }
    }
    for (int64_t i = 0; i < cores; i++) r->inbox[replay_at(r, i)].n = 0;
    return ROTOR_OK;
}

/* Whether no two of the reduction's groups (R members each, at r->pairs)
 * share a resource of the network in their rings' routes: then the order in
 * which the groups' transfers are added changes no claim, and so no time
 * (docs/simulator.md, "Streaming a long reduction"). */
static rotor_status rings_disjoint(replayer *r, int64_t R, int64_t cores, bool *out, rotor_error *err) {
    int64_t nres = rotor_sim_resource_count(r->sim), cap = 64, n, hops;
    int32_t *owner = calloc((size_t)nres, sizeof *owner); /* 1 + the group using it, 0: none */
    int64_t *res = malloc((size_t)cap * sizeof *res);
    rotor_status st = owner && res ? ROTOR_OK : rotor_nomem(err);
    *out = true;
    for (int64_t g = 0; g < cores && !st && *out; g += R) {
        const int64_t *m = r->pairs + 2 * g;
        for (int64_t u = 0; u < R && !st && *out; u++) {
            int64_t src = replay_at(r, m[2 * u + 1]), dst = replay_at(r, m[2 * ((u + 1) % R) + 1]);
            st = rotor_sim_route(r->sim, src, dst, res, cap, &n, &hops, err);
            if (!st && n > cap) { /* a longer route than any before: room, and again */
                int64_t *v = realloc(res, (size_t)n * sizeof *res);
                if (!v) st = rotor_nomem(err);
                else res = v, cap = n, st = rotor_sim_route(r->sim, src, dst, res, cap, &n, &hops, err);
            }
            for (int64_t i = 0; i < n && !st; i++) {
                int32_t gi = (int32_t)(g / R + 1);
                if (owner[res[i]] && owner[res[i]] != gi) *out = false;
                owner[res[i]] = gi;
            }
        }
    }
    free(owner);
    free(res);
    return st;
}

/* One round of the reduction for groups [g0, g1) (rows of R at r->pairs):
 * member u sends to u+1 what it holds after the round before. */
static rotor_status reduction_round(replayer *r, int op, int64_t R, int64_t g0, int64_t g1, int64_t piece,
                                    int64_t *ids, rotor_error *err) {
    rotor_status st = ROTOR_OK;
    for (int64_t g = g0; g < g1 && !st; g += R) {
        const int64_t *m = r->pairs + 2 * g;
        for (int64_t u = 0; u < R && !st; u++) {
            int64_t src = replay_at(r, m[2 * u + 1]), dst = replay_at(r, m[2 * ((u + 1) % R) + 1]);
            int64_t deps[1] = {r->last[src]};
            rotor_sim_transfer x = {.src = src, .dst = dst, .bytes = piece, .category = ROTOR_SIM_COMM,
                                    .op = op, .deps = deps, .ndeps = 1};
            st = replay_add_transfer(r, &x, &ids[u], err);
        }
        for (int64_t u = 0; u < R && !st; u++) r->last[replay_at(r, m[2 * ((u + 1) % R) + 1])] = ids[u];
    }
    return st;
}

/* The reduction of a streamed replay, round by round over every group,
 * each round run until the first of its transfers would finish before the
 * next is added (its transfers wait for them: in time), and the finished
 * tasks retired once they outnumber those kept.  Memory follows a round,
 * not R - 1 of them: l0.ffn_down of Llama-2-7B's decode layer on wse2 is
 * 626,994 cores in rings of 918, 575 M transfers.  The groups' rings share
 * no resource (rings_disjoint), so the claims are the group-by-group
 * order's; the operator's phases are watched from here, the barrier next. */
static rotor_status reduction_by_rounds(replayer *r, int op, int64_t R, int64_t cores, int64_t piece,
                                        int64_t *ids, rotor_error *err) {
    int64_t *o = r->opids, red = cores / R * R * (R - 1);
    int64_t b[5] = {o[0], o[1], o[2], o[2] + red, o[2] + red + 1};
    rotor_status st = rotor_sim_watch(r->sim, b, 4, err);
    memcpy(r->wb, b, sizeof b);
    r->watched = !st;
    for (int64_t round = 1; round < R && !st; round++) {
        int64_t lo = rotor_sim_task_count(r->sim);
        st = reduction_round(r, op, R, 0, cores, piece, ids, err);
        int64_t hi = rotor_sim_task_count(r->sim);
        if (!st && round + 1 < R) st = rotor_sim_advance_before(r->sim, lo, hi, err);
        if (!st) st = rotor_sim_retire_finished(r->sim, err);
    }
    return st;
}

/* Ring reduce-scatter of the output's partial sums (see the head comment). */
static rotor_status replay_reduction(replayer *r, int op, const rotor_place *pl, const int64_t *i,
                                     rotor_error *err) {
    const rotor_plan_info *info = rotor_place_info(pl);
    int64_t R = info->rings[0], cores = info->cores;
    if (R <= 1) return ROTOR_OK;
    rotor_reduction_groups(pl, i, r->pairs); /* cores holding the same output partition */
    int64_t piece = (info->bytes[0] + R - 1) / R;
    for (int64_t g = 0; g < cores; g += R) {
        const int64_t *m = r->pairs + 2 * g;
        if (g + R > cores || m[0] != m[2 * (R - 1)] || (g + R < cores && m[2 * R] == m[0]))
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "operator %d: the output's copies do not form groups of R_Y = %lld cores", op,
                              (long long)R);
    }
    int64_t sent[64], *ids = R <= 64 ? sent : malloc((size_t)R * sizeof *ids);
    if (!ids) return rotor_nomem(err);
    bool apart = false;
    rotor_status st = ROTOR_OK;
    if (r->opids && r->packet <= 0 && cores / R * (R - 1) * R > r->hold) st = rings_disjoint(r, R, cores, &apart, err);
    if (!st && apart) st = reduction_by_rounds(r, op, R, cores, piece, ids, err);
    /* else group by group, every round of one before the next group's */
    for (int64_t g = 0; g < cores && !st && !apart; g += R)
        for (int64_t round = 1; round < R && !st; round++) st = reduction_round(r, op, R, g, g + R, piece, ids, err);
    if (ids != sent) free(ids);
    return st;
}

/* Keys of what a placement is made from (rotor_place_make, and through it
 * rotor_setup_pieces_of): the extents, every tensor's dimensions and axes,
 * F_op, f_t, the loop order and the derived quantities, as words.  Names
 * and text are left out: they are all repeated layers differ in. */
static void key_words(idlist *k, const int64_t *words, int64_t nwords, rotor_status *st, rotor_error *err) {
    for (int64_t i = 0; i < nwords && !*st; i++) *st = replay_idlist_push(k, words[i], err);
}

static void key_put(idlist *k, int64_t w, rotor_status *st, rotor_error *err) { key_words(k, &w, 1, st, err); }

static void key_plan(idlist *k, const rotor_expr *e, const rotor_plan *p, const rotor_plan_info *info,
                     rotor_status *st, rotor_error *err) {
    int A = e->naxes, T = e->ntensors;
    key_put(k, A, st, err);
    key_put(k, T, st, err);
    for (int a = 0; a < A; a++) {
        int64_t w[7] = {e->extent[a], p->fop[a], p->order[a], info->steps[a], info->padded[a], info->sub_op[a],
                        info->sub_task[a]};
        key_words(k, w, 7, st, err);
    }
    for (int t = 0; t < T; t++) {
        const rotor_tensor *x = &e->tensors[t];
        int64_t w[5] = {x->ndims, info->sharing[t], info->ring_size[t], info->rings[t], info->bytes[t]};
        key_words(k, w, 5, st, err);
        for (int d = 0; d < x->ndims; d++) {
            const rotor_dim *dm = &x->dims[d];
            int64_t v[6] = {dm->nterms, info->part[t][d], dm->axis[0], dm->coef[0], -1, 0};
            if (dm->nterms > 1) v[4] = dm->axis[1], v[5] = dm->coef[1];
            key_words(k, v, 6, st, err);
        }
        for (int a = 0; a < A; a++) {
            int64_t f[2] = {x->has_axis[a], p->ft[t][a]};
            key_words(k, f, 2, st, err);
        }
    }
    key_put(k, info->cores, st, err);
    key_put(k, info->total_steps, st, err);
}

/* The placement of (e, p, info): one made before for the same key
 * (key_plan), else made now and kept.  A model's layers repeat their plans,
 * and making a placement of a pod's plan costs 17 M instructions (DiT-XL
 * b256 on ipu-pod4: 3 % of the replay).  The cache owns the placement; the
 * oldest go past REPLAY_PLACES placements or REPLAY_PLACE_BYTES of their
 * per-core tables (rings, positions, members, offsets: estimated, the
 * placement being opaque), so a pod of 16 chips keeps about 19. */
static rotor_status place_of(replayer *r, const rotor_expr *e, const rotor_plan *p, const rotor_plan_info *info,
                             const rotor_place **out, rotor_error *err) {
    rotor_status st = ROTOR_OK;
    r->key.n = 0;
    key_plan(&r->key, e, p, info, &st, err);
    if (st) return st;
    size_t bytes = (size_t)r->key.n * sizeof *r->key.v;
    for (int i = 0; i < r->nplaces; i++)
        if (r->places[i].nkey == r->key.n && !memcmp(r->places[i].key, r->key.v, bytes)) {
            *out = r->places[i].pl;
            return ROTOR_OK;
        }
    replay_place k = {.nkey = r->key.n, .key = malloc(bytes),
                      .bytes = info->cores * (e->ntensors * 3 * (int64_t)sizeof(int32_t) +
                                              e->naxes * (int64_t)sizeof(int64_t))};
    if (!k.key) return rotor_nomem(err);
    memcpy(k.key, r->key.v, bytes);
    if ((st = rotor_place_make(e, p, info, &k.pl, err))) {
        free(k.key);
        return st;
    }
    while (r->nplaces > 0 && (r->nplaces == REPLAY_PLACES || r->place_bytes + k.bytes > REPLAY_PLACE_BYTES)) {
        r->place_bytes -= r->places[0].bytes;
        free(r->places[0].key);
        rotor_place_free(r->places[0].pl);
        memmove(r->places, r->places + 1, (size_t)(r->nplaces - 1) * sizeof *r->places);
        r->nplaces--;
    }
    r->places[r->nplaces++] = k;
    r->place_bytes += k.bytes;
    *out = k.pl;
    return ROTOR_OK;
}

/* One shift of a partition from core `from` to core c (chip cores) at a
 * transition.  Without overlap it leaves when the sender has computed its
 * run on it.  With overlap (docs/simulator.md, "Overlap") it leaves as soon
 * as the sender has it (the arrivals its run waited for; its run before if
 * nothing arrived) and the receiver's second buffer is free (the receiver's
 * run before the current one has ended). */
static rotor_status replay_shift(replayer *r, int op, int64_t from, int64_t c, int64_t bytes, int ov,
                                 rotor_error *err) {
    idlist *d = &r->scratch;
    d->n = 0;
    rotor_status st = ROTOR_OK;
    if (!ov) {
        st = replay_idlist_push(d, r->cur[from], err);
    } else {
        for (int64_t k = 0; k < r->gate[from].n && !st; k++) st = replay_idlist_push(d, r->gate[from].v[k], err);
        if (!st && !r->gate[from].n && r->prev[from] >= 0) st = replay_idlist_push(d, r->prev[from], err);
        if (!st && r->prev[c] >= 0) st = replay_idlist_push(d, r->prev[c], err);
        if (!st && !d->n && r->barrier >= 0) st = replay_idlist_push(d, r->barrier, err);
    }
    if (st) return st;
    int64_t id;
    rotor_sim_transfer x = {.src = from, .dst = c, .bytes = bytes, .category = ROTOR_SIM_COMM, .op = op,
                            .deps = d->v, .ndeps = (int)d->n};
    st = replay_add_transfer(r, &x, &id, err);
    return st ? st : replay_idlist_push(&r->inbox[c], id, err);
}

/* Sub-tasks, shifts and the reduction of one plan (expression e, plan p,
 * info) on cores r->core0 .. r->core0 + info->cores - 1 (replayer.h), its
 * sub-tasks timed and their SRAM bytes counted on chip (the operator's:
 * rotor_chip_for_op's element size and rate).  The
 * first run of a core waits for its inbox, else for r->barrier; r->last
 * receives each core's last task.  ids[0..1] receive the first task id of
 * the main phase and the reduction. */
rotor_status replay_tiles(replayer *r, int op, const rotor_expr *e, const rotor_plan *p,
                                 const rotor_plan_info *info, const rotor_chip *chip, int64_t *ids,
                                 rotor_error *err) {
    const rotor_place *pl = NULL;
    rotor_status st = place_of(r, e, p, info, &pl, err);
    if (st) return st;
    int64_t cores = info->cores;
    int64_t sub_ps = to_ps(rotor_cost_v1_subtask(e, chip, info->sub_task));
    int64_t sub_flops = e->flops_per_point;
    for (int a = 0; a < e->naxes; a++) sub_flops *= info->sub_task[a];
    ids[0] = rotor_sim_task_count(r->sim);
    int64_t i_old[ROTOR_MAX_AXES], i_new[ROTOR_MAX_AXES];
    rotor_place_loop(pl, 0, i_old);
    int64_t run = 1;
    int ov = info->overlap; /* 0: none; 1: before the first run; 2: after it */
    for (int64_t s = 1; s < info->total_steps && !st; s++) {
        rotor_place_loop(pl, s, i_new);
        bool any = false;
        for (int t = 0; t < e->ntensors && !any; t++) any = rotor_place_changes(pl, t, i_old, i_new);
        if (any) {
            st = emit_run(r, op, e, info->sub_task, cores, run, sub_ps, sub_flops, ov, chip->element_bytes, err);
            run = 0;
            ov += ov == 1;
            for (int t = 0; t < e->ntensors && !st; t++) {
                if (!rotor_place_changes(pl, t, i_old, i_new)) continue;
                for (int64_t c = 0; c < cores && !st; c++) {
                    int64_t from = rotor_place_sender(pl, t, c, i_old, i_new, false);
                    if (from != c) st = replay_shift(r, op, replay_at(r, from), replay_at(r, c), info->bytes[t], ov, err);
                }
            }
        }
        run++;
        memcpy(i_old, i_new, sizeof i_old);
    }
    if (!st) st = emit_run(r, op, e, info->sub_task, cores, run, sub_ps, sub_flops, ov, chip->element_bytes, err);
    ids[1] = rotor_sim_task_count(r->sim);
    if (!st) st = replay_reduction(r, op, pl, i_old, err);
    return st;
}

/* The pieces as transfers, in the exchange's schedule (exchange.c), all
 * ready at once (after what each core was already waiting for): added in
 * the schedule's order, each claims its ports behind the one before it
 * through either, so a port takes the next packet as soon as the last one's
 * bytes have left it, and a core's packets pay the latency once, as the
 * model's setup does (docs/simulator.md, "Pipelined links").  Until
 * 2026-12-04 a packet waited for the one before it to arrive, and each paid
 * the latency: nerf-t10 on stcp920 replayed 58 % over its model. */
static rotor_status emit_packets(replayer *r, int op, const xschedule *x, rotor_error *err) {
    rotor_status st = ROTOR_OK;
    /* a core's inbox gets only its last packet: the packets into a core are
     * chained through its in port, so the last ends last (this saved a
     * push per packet, a tenth of a pod replay) */
    int64_t *ids = malloc((size_t)x->n * sizeof *ids), *last = malloc((size_t)r->n * sizeof *last);
    if (!ids || !last) {
        free(ids);
        free(last);
        return rotor_nomem(err);
    }
    for (int64_t c = 0; c < r->n; c++) last[c] = -1;
    for (int64_t i = 0; i < x->n && !st; i++) {
        const xpacket *k = &x->v[i];
        int64_t deps[1], nd = 0, c = k->dst;
        if (r->inbox[c].n) deps[nd++] = r->inbox[c].v[r->inbox[c].n - 1];
        else if (r->barrier >= 0) deps[nd++] = r->barrier;
        rotor_sim_transfer t = {.src = k->src, .dst = c, .bytes = k->bytes, .category = ROTOR_SIM_SETUP, .op = op,
                                .deps = deps, .ndeps = (int)nd};
        st = replay_add_transfer(r, &t, &ids[i], err);
        last[c] = ids[i];
    }
    for (int64_t c = 0; c < r->n && !st; c++)
        if (last[c] >= 0) st = replay_idlist_push(&r->inbox[c], last[c], err);
    free(ids);
    free(last);
    return st;
}

/* The key of op's hand-off pieces: everything rotor_setup_pieces_of reads
 * (the consumer's and each producer's expression and plan, the views, the
 * setup bytes and rounds, the chip's core count and element size), in r->key. */
static rotor_status handoff_key(replayer *r, const rotor_program *p, int op, rotor_error *err) {
    const rotor_program_op *po = &p->ops[op];
    idlist *k = &r->key;
    rotor_status st = ROTOR_OK;
    k->n = 0;
    int64_t head[4] = {r->n, rotor_chip_for_op(&r->chip, po->elem).element_bytes, po->setup_bytes, po->setup_rounds};
    key_words(k, head, 4, &st, err);
    key_plan(k, &po->expr, &po->active, &po->active_info, &st, err);
    for (int t = 1; t < po->expr.ntensors; t++) {
        int from = po->handoff[t] - 1;
        if (from < 0 || from >= op) {
            key_put(k, -1, &st, err);
            continue;
        }
        const rotor_program_op *src = &p->ops[from];
        const rotor_view *v = &po->handoff_view[t];
        key_put(k, (v->set ? 1 : 0) + (v->unknown ? 2 : 0), &st, err);
        key_plan(k, &src->expr, &src->active, &src->active_info, &st, err);
        if (!v->set) continue;
        for (int d = 0; d < po->expr.tensors[t].ndims; d++) {
            int64_t w[2] = {v->dim[d], v->step[d]};
            key_words(k, w, 2, &st, err);
        }
        for (int j = 0; j < src->expr.tensors[0].ndims; j++) key_put(k, v->offset[j], &st, err);
    }
    return st;
}

/* The hand-off part of op's setup (docs/compile.md, "Hand-off"): every core
 * receives, from the cores holding them, the elements of its step-0
 * partitions that the producers' plans left elsewhere (emit_packets says in
 * what order).  *most gets the bytes through the busiest port, in or out:
 * the part of setup_bytes this accounts for.  A hand-off seen before (by
 * its key) reuses its schedule without computing its pieces again. */
/* A mesh's setup exchange (every setup is one there: hand-offs and
 * gathers): the packets in rotor_mesh_exchange's order, all after the
 * barrier, so the simulator runs the very schedule the compiler priced;
 * each receiver's inbox gets its last packet to end. */
static rotor_status replay_mesh_exchange(replayer *r, const rotor_program *p, int op, const rotor_chip *chip,
                                         int64_t *most, bool *exchanged, rotor_error *err) {
    rotor_setup_pieces pc;
    rotor_status st = rotor_setup_pieces_of(p, op, chip, r->n, &pc, err);
    rotor_mesh_packet *pk = NULL;
    int64_t np = 0, span = 0;
    if (!st && pc.handed) {
        *most = pc.most;
        st = rotor_mesh_exchange(chip, (const int64_t(*)[3])pc.v, pc.n, exchange_packet(pc.most), &pk, &np, &span, err);
    }
    int64_t *last = !st && np ? malloc((size_t)r->n * sizeof *last) : NULL, *end = last ? malloc((size_t)r->n * sizeof *end) : NULL;
    if (!st && np && (!last || !end)) st = rotor_nomem(err);
    for (int64_t c = 0; !st && np && c < r->n; c++) last[c] = -1, end[c] = -1;
    for (int64_t i = 0; !st && i < np; i++) {
        int64_t deps[1] = {r->barrier}, id;
        rotor_sim_transfer t = {.src = pk[i].src, .dst = pk[i].dst, .bytes = pk[i].bytes, .category = ROTOR_SIM_SETUP,
                                .op = op, .deps = deps, .ndeps = r->barrier >= 0};
        st = rotor_sim_add_transfer(r->sim, &t, &id, err); /* whole: the packet is the schedule's */
        if (!st && pk[i].end_ps > end[pk[i].dst]) end[pk[i].dst] = pk[i].end_ps, last[pk[i].dst] = id;
    }
    for (int64_t c = 0; !st && np && c < r->n; c++)
        if (last[c] >= 0) st = replay_idlist_push(&r->inbox[c], last[c], err);
    *exchanged = !st && pc.handed;
    free(last);
    free(end);
    free(pk);
    rotor_setup_pieces_free(&pc);
    return st;
}

static rotor_status replay_handoff(replayer *r, const rotor_program *p, int op, const rotor_chip *chip,
                                   int64_t *most, bool *exchanged, rotor_error *err) {
    const rotor_program_op *po = &p->ops[op];
    *most = 0;
    *exchanged = false;
    if (chip->topology == ROTOR_TOPO_MESH) return replay_mesh_exchange(r, p, op, chip, most, exchanged, err);
    rotor_status st = handoff_key(r, p, op, err);
    if (st) return st;
    const xschedule *x = exchange_find(&r->xcache, r->key.v, r->key.n, most);
    if (!x) {
        rotor_setup_pieces pc;
        st = rotor_setup_pieces_of(p, op, chip, r->n, &pc, err);
        if (!st && pc.handed) {
            *most = pc.most;
            if (pc.n) /* on a mesh the pieces name chip cores, receivers anywhere */
                st = exchange_schedule(&r->xcache, pc.v, pc.n, r->phys ? r->n : po->active_info.cores, r->n, &x, err);
            if (!st && x) st = exchange_tag(&r->xcache, x, r->key.v, r->key.n, pc.most, err);
        }
        rotor_setup_pieces_free(&pc);
    }
    if (!st && x) {
        st = emit_packets(r, op, x, err);
        *exchanged = true;
    }
    if (!st && *most > po->setup_bytes)
        st = rotor_fail(err, ROTOR_ERR_INPUT,
                        "operator %d: its hand-off moves %lld bytes through one core's port, more than its "
                        "setup_bytes %lld",
                        op, (long long)*most, (long long)po->setup_bytes);
    return st;
}

/* A hand-off loads cores unevenly.  The exchange ends for all cores at once
 * (the IPU's bulk-synchronous exchange, and the model's setup-then-execute
 * sum): a zero-time task on core 0 waits for every core's setup, and every
 * core's first run waits for it.  Without it, cores done early would start
 * shifting into ports still busy with others' setup. */
static rotor_status replay_setup_sync(replayer *r, int op, int64_t cores, rotor_error *err) {
    r->finals.n = 0;
    rotor_status st = ROTOR_OK;
    for (int64_t i = 0; i < cores && !st; i++) {
        int64_t c = replay_at(r, i);
        if (r->inbox[c].n) st = replay_idlist_push(&r->finals, r->inbox[c].v[r->inbox[c].n - 1], err);
    }
    if (st || !r->finals.n) return st;
    rotor_sim_compute b = {.core = 0, .duration_ps = 0, .category = ROTOR_SIM_COMPUTE, .op = op,
                           .deps = r->finals.v, .ndeps = (int)r->finals.n};
    int64_t sync;
    if ((st = rotor_sim_add_compute(r->sim, &b, &sync, err))) return st;
    replay_inbox_clear(r, r->phys ? r->n : cores);
    for (int64_t i = 0; i < cores && !st; i++) st = replay_idlist_push(&r->inbox[replay_at(r, i)], sync, err);
    return st;
}

/* The tasks of one expression operator; ids[0..3] receive the first task id
 * of setup, main phase, reduction and the barrier. */
static rotor_status replay_op(replayer *r, const rotor_program *p, int op, const rotor_chip *chip, int64_t *ids,
                              rotor_error *err) {
    const rotor_program_op *po = &p->ops[op];
    int64_t cores = po->active_info.cores, hand = 0;
    bool exchanged = false;
    rotor_chip oc = rotor_chip_for_op(chip, po->elem); /* the layout the compiler priced */
    rotor_status st = replay_lay_out(r, &po->expr, &po->active, &po->active_info, &oc, err);
    int64_t used = r->phys ? r->n : cores; /* on a mesh the plan's cores lie anywhere */
    for (int64_t c = 0; c < used; c++) r->last[c] = -1;
    replay_inbox_clear(r, used);
    ids[0] = rotor_sim_task_count(r->sim);
    if (!st) st = replay_handoff(r, p, op, chip, &hand, &exchanged, err);
    /* the rest of the setup loads every core alike (weights, even-layout
     * gathers); with a hand-off it joined the hand-off's schedule, also
     * when every core already held its hand-off elements (hand = 0: then
     * the exchange is the rest of the setup alone, sent once) */
    if (!st && !exchanged && po->setup_bytes > 0)
        st = replay_setup(r, op, 0, cores, po->setup_bytes, po->setup_rounds, err);
    if (!st && exchanged) st = replay_setup_sync(r, op, cores, err);
    /* on the operator's own chip: an 8-bit contraction's sub-tasks at the
     * int8 rate, its SRAM bytes at 1 byte (until 2026-12-02 the replay took
     * the chip's FP16 rate and 2 bytes: +45 % against the model on four
     * QLinearMatMuls with int8_tops 500) */
    if (!st) st = replay_tiles(r, op, &po->expr, &po->active, &po->active_info, &oc, ids + 1, err);
    else ids[1] = ids[2] = rotor_sim_task_count(r->sim);
    ids[3] = rotor_sim_task_count(r->sim);
    if (!st) st = replay_add_barrier(r, op, cores, err);
    replay_lay_out_end(r);
    return st;
}

static rotor_status replay_vendor(replayer *r, int op, const rotor_program_op *po, int64_t *ids,
                                  rotor_error *err) {
    ids[0] = ids[1] = rotor_sim_task_count(r->sim);
    int64_t deps[1] = {r->barrier};
    for (int64_t c = 0; c < r->n; c++) {
        rotor_sim_compute x = {.core = c, .duration_ps = to_ps(po->exec_s), .category = ROTOR_SIM_COMPUTE,
                               .work = {.vector_flops = rotor_energy_vendor_flops(&r->chip, po->exec_s)},
                               .op = op, .deps = deps, .ndeps = r->barrier >= 0};
        rotor_status st = rotor_sim_add_compute(r->sim, &x, &r->last[c], err);
        if (st) return st;
    }
    ids[2] = ids[3] = rotor_sim_task_count(r->sim);
    return replay_add_barrier(r, op, r->n, err);
}

/* ---- pipelined segments (docs/simulator.md, "Replay", "Segments") ------ */

/* A zero-time task on `core` after deps.  A core's pipeline is serial, so a
 * join must sit where nothing else is queued: a segment's joins close a
 * phase on core 0, after every task of the phase, and every task of the
 * next phase waits for them. */
static rotor_status join_on(replayer *r, int op, int64_t core, const idlist *deps, int64_t *id, rotor_error *err) {
    rotor_sim_compute b = {.core = core, .duration_ps = 0, .category = ROTOR_SIM_COMPUTE, .op = op,
                           .deps = deps->v, .ndeps = (int)deps->n};
    return rotor_sim_add_compute(r->sim, &b, id, err);
}

/* One move's pieces (rotor_segment_move_pieces, _outside_pieces) as
 * transfers: each after `after` (the previous step's barrier) and after the
 * previous piece through its busier-side port (chain, per port); each lands
 * in its receiver's inbox, which the move phase's join gathers. */
typedef struct move_ctx {
    replayer *r;
    int op;
    int64_t after, *chain;
} move_ctx;

static rotor_status move_piece(void *ctx, int64_t src, int64_t dst, int64_t bytes, int64_t port, rotor_error *err) {
    move_ctx *m = ctx;
    int64_t deps[2], nd = 0, id;
    if (m->after >= 0) deps[nd++] = m->after;
    if (m->chain[port] >= 0) deps[nd++] = m->chain[port];
    rotor_sim_transfer x = {.src = src, .dst = dst, .bytes = bytes, .category = ROTOR_SIM_COMM, .op = m->op,
                            .deps = deps, .ndeps = (int)nd};
    /* whole: in the move phase no plan's shifts share its ports (segment.h) */
    rotor_status st = replay_add_transfer(m->r, &x, &id, err);
    if (!st) st = replay_idlist_push(&m->r->inbox[dst], id, err);
    m->chain[port] = id;
    return st;
}

static rotor_status replay_move(replayer *r, int op, const rotor_stage *ps, const rotor_stage *cs, int t,
                                int64_t after, int64_t *chain, rotor_error *err) {
    move_ctx m = {.r = r, .op = op, .after = after, .chain = chain};
    return rotor_segment_move_pieces(ps, cs, t, move_piece, &m, err);
}

/* A move on a mesh (docs/simulator.md, "Segments"): the exchange schedule
 * rotor_segment_xfer prices, its packets whole, in its order, after *after
 * (the previous move: a step's moves follow each other there); *after
 * becomes a join on core 0 of them all. */
static rotor_status replay_mesh_move(replayer *r, const rotor_segment *s, int k, int t, int64_t *after,
                                     rotor_error *err) {
    rotor_mesh_packet *pk = NULL;
    int64_t np = 0, bytes, id;
    double xs;
    rotor_status st = rotor_segment_xfer(&r->chip, s, k, t, &bytes, &xs, &pk, &np, err);
    r->finals.n = 0;
    for (int64_t i = 0; i < np && !st; i++) {
        rotor_sim_transfer x = {.src = pk[i].src, .dst = pk[i].dst, .bytes = pk[i].bytes, .category = ROTOR_SIM_COMM,
                                .op = s->stages[k].op, .deps = after, .ndeps = *after >= 0};
        st = rotor_sim_add_transfer(r->sim, &x, &id, err);
        if (!st) st = replay_idlist_push(&r->finals, id, err);
    }
    if (!st && r->finals.n) st = join_on(r, s->stages[k].op, 0, &r->finals, after, err);
    free(pk);
    return st;
}

/* On a mesh's bands, stage sg's plan laid out on its band (replay_lay_out:
 * r->phys), r->core0 its first core; elsewhere r->phys NULL. */
static rotor_status band_lay_out(replayer *r, bool band, const rotor_stage *sg, const rotor_chip *chip,
                                 rotor_error *err) {
    rotor_chip gc = rotor_segment_group_chip(chip, sg->cores);
    r->core0 = sg->first_core;
    r->phys = NULL;
    return band ? replay_lay_out(r, &sg->micro, &sg->plan.plan, &sg->plan.info, &gc, err) : ROTOR_OK;
}

/* A per-run input from before the segment: slivers from every core of the
 * chip (rotor_segment_outside_pieces), as replay_move's pieces. */
static rotor_status replay_outside_move(replayer *r, int op, const rotor_stage *cs, int t, int64_t after,
                                        int64_t *chain, rotor_error *err) {
    move_ctx m = {.r = r, .op = op, .after = after, .chain = chain};
    return rotor_segment_outside_pieces(cs, t, r->n, move_piece, &m, err);
}

/* Segment s replayed whole, step for step as rotor_segment_times models it
 * (segment.h): after the previous barrier, every group's setup at once
 * (replay_setup on its cores) and a join on core 0 when all are done; then
 * per step, its moves (replay_move, replay_outside_move), all after the
 * previous step's barrier, and a join when all have landed; then every run
 * of the step (replay_tiles on its group's cores, core0), and the step's
 * barrier on core 0 after all of them.  ids: as replay_op's (setup, main,
 * reduction, barrier): the steps are the main phase, the runs' reductions
 * inside it. */
static rotor_status replay_segment(replayer *r, const rotor_segment *s, const rotor_chip *chip, int64_t *ids,
                                   rotor_error *err) {
    int S = s->nstages;
    int64_t prev = r->barrier;
    int64_t *first = malloc((size_t)S * sizeof *first);
    int64_t *chain = malloc((size_t)r->n * sizeof *chain);
    rotor_status st = first && chain ? ROTOR_OK : rotor_nomem(err);
    ids[0] = rotor_sim_task_count(r->sim);
    /* setup: every group at once */
    replay_inbox_clear(r, r->n);
    bool band = rotor_segment_in_bands(s, chip);
    for (int k = 0; k < S && !st; k++) {
        const rotor_stage *sg = &s->stages[k];
        /* on a mesh the plan lies on its band, gathering from its neighbours (rotor_mesh_near) */
        st = band_lay_out(r, band, sg, chip, err);
        if (!st)
            st = replay_setup(r, sg->op, r->phys ? 0 : sg->first_core, sg->plan.info.cores, sg->setup_bytes,
                              sg->setup_rounds, err);
        replay_lay_out_end(r);
        r->core0 = 0;
    }
    r->finals.n = 0;
    for (int64_t c = 0; c < r->n && !st; c++)
        if (r->inbox[c].n) st = replay_idlist_push(&r->finals, r->inbox[c].v[r->inbox[c].n - 1], err);
    if (!st && r->finals.n) st = join_on(r, s->first, 0, &r->finals, &prev, err);
    replay_inbox_clear(r, r->n);
    ids[1] = rotor_sim_task_count(r->sim);
    int64_t steps = st ? 0 : rotor_segment_steps(s, first);
    for (int64_t step = 0; step < steps && !st; step++) {
        /* the move phase */
        int64_t mv = prev;
        for (int k = 0; k < S && !st; k++) {
            const rotor_stage *sg = &s->stages[k];
            int64_t i = step - first[k];
            if (i < 0 || i >= sg->runs) continue;
            for (int t = 1; t < sg->micro.ntensors && !st; t++) {
                if (!rotor_segment_moves(sg, t, i)) continue;
                for (int64_t c = 0; c < r->n; c++) chain[c] = -1;
                if (band) st = replay_mesh_move(r, s, k, t, &mv, err);
                else if (sg->from[t] == ROTOR_STAGE_OUTSIDE) st = replay_outside_move(r, sg->op, sg, t, prev, chain, err);
                else st = replay_move(r, sg->op, &s->stages[sg->from[t]], sg, t, prev, chain, err);
            }
        }
        r->finals.n = 0;
        if (!st && mv != prev) st = replay_idlist_push(&r->finals, mv, err);
        for (int64_t c = 0; c < r->n && !st; c++)
            for (int64_t q = 0; q < r->inbox[c].n && !st; q++) st = replay_idlist_push(&r->finals, r->inbox[c].v[q], err);
        if (!st && r->finals.n) st = join_on(r, s->first, 0, &r->finals, &prev, err);
        replay_inbox_clear(r, r->n);
        /* the compute phase */
        idlist done = {0};
        for (int k = 0; k < S && !st; k++) {
            const rotor_stage *sg = &s->stages[k];
            int64_t i = step - first[k];
            if (i < 0 || i >= sg->runs) continue;
            int64_t nc = sg->plan.info.cores;
            rotor_chip gc = rotor_segment_group_chip(chip, sg->cores);
            st = band_lay_out(r, band, sg, chip, err);
            for (int64_t j = 0; j < nc && !st; j++) {
                r->last[replay_at(r, j)] = -1;
                if (prev >= 0) st = replay_idlist_push(&r->inbox[replay_at(r, j)], prev, err);
            }
            int64_t tids[2];
            if (!st) st = replay_tiles(r, sg->op, &sg->micro, &sg->plan.plan, &sg->plan.info, &gc, tids, err);
            for (int64_t j = 0; j < nc && !st; j++)
                if (r->last[replay_at(r, j)] >= 0) st = replay_idlist_push(&done, r->last[replay_at(r, j)], err);
            replay_lay_out_end(r);
            r->core0 = 0;
        }
        if (!st && done.n) st = join_on(r, s->first, 0, &done, &prev, err);
        free(done.v);
        replay_inbox_clear(r, r->n);
    }
    ids[2] = ids[3] = rotor_sim_task_count(r->sim);
    r->finals.n = 0;
    if (!st && prev >= 0) st = replay_idlist_push(&r->finals, prev, err);
    if (!st) st = join_on(r, s->last, 0, &r->finals, &r->barrier, err);
    free(first);
    free(chain);
    r->core0 = 0;
    return st;
}

/* An operator's four phases (setup, main phase, reduction, barrier): each
 * one's latest end (-1 without tasks) and longest wait from ready to start. */
typedef struct op_phases {
    int64_t end[4], wait[4];
} op_phases;

/* The phases read off the tasks [ids[k], ids[k + 1]) after a whole run. */
static op_phases phases_read(const rotor_sim *s, const int64_t *ids) {
    op_phases ph;
    for (int k = 0; k < 4; k++) {
        ph.end[k] = -1;
        ph.wait[k] = 0;
        rotor_sim_range_timing(s, ids[k], ids[k + 1], &ph.end[k], &ph.wait[k]);
    }
    return ph;
}

/* The same, as a stream gathered them (rotor_sim_watch on ids). */
static op_phases phases_watched(const rotor_sim *s) {
    op_phases ph;
    for (int k = 0; k < 4; k++) {
        ph.end[k] = -1;
        ph.wait[k] = 0;
        rotor_sim_watch_timing(s, k, &ph.end[k], &ph.wait[k]);
    }
    return ph;
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Operator o's simulated phases, from its tasks' timing (ids: the first task
 * of setup, main phase, reduction, barrier, and the end; ph: their timing);
 * *prev_end moves to its end.  A phase without tasks ends where the one
 * before it did.  The first operator of a segment reports the whole segment; its
 * other operators stay zero, marked with the segment. */
static void op_result(const rotor_program *p, int o, const int64_t *ids, const op_phases *ph,
                      rotor_replay_result *out, int64_t *prev_end) {
    const rotor_program_op *po = &p->ops[o];
    rotor_replay_op *x = &out->ops[o];
    int64_t wait = max64(ph->wait[0], max64(ph->wait[1], ph->wait[2])); /* not the barrier's */
    int64_t setup_end = max64(*prev_end, ph->end[0]);
    int64_t main_end = max64(setup_end, ph->end[1]);
    int64_t red_end = max64(main_end, ph->end[2]);
    int64_t end = max64(red_end, ph->end[3]);
    if (po->segment) {
        /* the segment as one entry, on its first operator (docs/simulator.md) */
        const rotor_segment *sg = &p->segments[po->segment - 1];
        x->segment = po->segment;
        x->predicted_s = sg->total_s;
        x->predicted_setup_s = sg->setup_s;
        x->predicted_main_s = sg->run_s;
        x->predicted_reduction_s = 0;
    } else {
        x->predicted_s = po->setup_s + po->exec_s;
        x->predicted_setup_s = po->setup_s;
        x->predicted_reduction_s = po->vendor ? 0 : po->active_cost.reduction;
        x->predicted_main_s = po->exec_s - x->predicted_reduction_s;
    }
    x->simulated_s = (double)(end - *prev_end) * 1e-12;
    x->simulated_setup_s = (double)(setup_end - *prev_end) * 1e-12;
    x->simulated_main_s = (double)(main_end - setup_end) * 1e-12;
    x->simulated_reduction_s = (double)(red_end - main_end) * 1e-12;
    x->wait_s = (double)wait * 1e-12;
    x->tasks = ids[4] - ids[0];
    out->predicted_s += x->predicted_s;
    *prev_end = end;
}

/* Without sim_out the replay streams (docs/simulator.md, "Streaming"): every
 * task of an operator is an ancestor of its barrier, and every task of the
 * next waits for that barrier, so the run can go to the barrier, read the
 * operator's phases, and drop its tasks.  Memory then follows the largest
 * operator, not the program, and the times are the whole run's. */
rotor_status rotor_replay(const rotor_program *p, const rotor_chip *chip, const rotor_replay_options *opt,
                          rotor_replay_result *out, rotor_sim **sim_out, rotor_error *err) {
    rotor_replay_options none = {0};
    if (!opt) opt = &none;
    memset(out, 0, sizeof *out);
    if (sim_out) *sim_out = NULL;
    if (rotor_chip_cores(chip) != p->cores)
        return rotor_fail(err, ROTOR_ERR_INPUT, "chip %s has %lld cores; the program was compiled for %lld",
                          chip->name, (long long)rotor_chip_cores(chip), (long long)p->cores);
    replayer r;
    bool stream = sim_out == NULL;
    rotor_status st = replay_init(&r, chip, 0, err);
    r.hold = opt->reduction_hold > 0 ? opt->reduction_hold : ROTOR_REPLAY_REDUCTION_HOLD;
    out->ops = calloc((size_t)(p->nops ? p->nops : 1), sizeof *out->ops);
    int64_t(*ids)[5] = malloc((size_t)(p->nops ? p->nops : 1) * sizeof *ids);
    if (!st && (!out->ops || !ids)) st = rotor_nomem(err);
    replay_ticker ticker = {0};
    if (!st) st = replay_run_begin(r.sim, stream, opt, p->nops, &ticker, err);
    int64_t prev_end = 0;
    for (int o = 0; o < p->nops && !st; o++) {
        const rotor_program_op *po = &p->ops[o];
        const rotor_segment *sg = po->segment ? &p->segments[po->segment - 1] : NULL;
        ticker.done = o;
        for (int q = o; q <= (sg ? sg->last : o) && !st; q++) st = rotor_sim_set_op_name(r.sim, q, p->ops[q].name, err);
        if (st) break;
        r.opids = stream && !sg ? ids[o] : NULL;
        r.watched = false;
        st = sg ? replay_segment(&r, sg, chip, ids[o], err)
                : po->vendor ? replay_vendor(&r, o, po, ids[o], err) : replay_op(&r, p, o, chip, ids[o], err);
        ids[o][4] = rotor_sim_task_count(r.sim);
        /* the phases are gathered as the tasks finish: no second pass over
         * them (a reduction streamed by rounds set the watch itself) */
        if (!st && stream && !r.watched) st = rotor_sim_watch(r.sim, ids[o], 4, err);
        if (!st && r.watched && memcmp(r.wb, ids[o], sizeof r.wb))
            st = rotor_fail(err, ROTOR_ERR_INPUT, "internal: the reduction streamed by rounds watched tasks %lld..%lld, "
                            "the operator's are %lld..%lld", (long long)r.wb[0], (long long)r.wb[4] - 1,
                            (long long)ids[o][0], (long long)ids[o][4] - 1);
        if (!st && stream) st = rotor_sim_advance(r.sim, r.barrier, err);
        if (!st && stream) {
            op_phases ph = phases_watched(r.sim);
            op_result(p, o, ids[o], &ph, out, &prev_end);
            st = rotor_sim_retire(r.sim, r.barrier, err); /* the barrier stays: the next operator waits for it */
        }
        if (st) {
            char prefix[160];
            if (sg) snprintf(prefix, sizeof prefix, "replay of the segment of operators %d '%s' .. %d '%s'", o, po->name,
                             sg->last, p->ops[sg->last].name);
            else snprintf(prefix, sizeof prefix, "replay of operator %d '%s'", o, po->name);
            rotor_error_prefix(err, prefix);
        }
        for (; sg && o < sg->last; o++) out->ops[o + 1].segment = po->segment; /* reported on its first operator */
    }
    if (!st) st = replay_run_end(r.sim, stream, opt, &out->stats, &out->trace, err);
    else if (r.sim) rotor_sim_set_progress(r.sim, NULL, NULL);
    if (!st) {
        out->nops = p->nops;
        for (int o = 0; o < p->nops && !stream; o++) {
            op_phases ph = phases_read(r.sim, ids[o]);
            op_result(p, o, ids[o], &ph, out, &prev_end);
            if (p->ops[o].segment) o = p->segments[p->ops[o].segment - 1].last;
        }
        out->simulated_s = (double)out->stats.makespan_ps * 1e-12;
    }
    free(ids);
    if (st) {
        rotor_replay_result_free(out);
        replay_free(&r, false);
        return st;
    }
    if (sim_out) *sim_out = r.sim;
    replay_free(&r, sim_out != NULL);
    return ROTOR_OK;
}

/* Each core of an operator's plan runs at most T compute tasks and takes at
 * most one shift per run (a transition), plus its setup (the rounds, or a
 * hand-off's packets: at most setup_bytes / EXCHANGE_PACKET_MIN), R_Y - 1
 * reduction rounds and the barrier.  A vendor operator is one task per core.
 * A segment counts so for every run of every stage, plus its moves' pieces
 * into each core (a few per move) and two joins per step. */
int64_t rotor_replay_task_estimate(const rotor_program *p) {
    double n = 0;
    for (int o = 0; o < p->nops; o++) {
        const rotor_program_op *po = &p->ops[o];
        if (po->segment) {
            /* a segment: every stage's runs on its group, its setup rounds, its moves' pieces */
            const rotor_segment *sg = &p->segments[po->segment - 1];
            for (int k = 0; k < sg->nstages; k++) {
                const rotor_stage *st = &sg->stages[k];
                double c = (double)st->plan.info.cores, moved = 0;
                for (int t = 1; t < st->micro.ntensors; t++)
                    if (st->from[t] != -1) moved += 3;
                n += c * ((double)st->setup_rounds +
                          (double)st->runs * (2.0 * (double)st->plan.info.total_steps +
                                              (double)st->plan.info.rings[0] + 1.0 + moved));
            }
            o = sg->last;
            continue;
        }
        double setup = (double)po->setup_rounds;
        for (int t = 0; t < ROTOR_MAX_TENSORS; t++)
            if (po->handoff[t]) {
                setup += (double)po->setup_bytes / EXCHANGE_PACKET_MIN; /* at most: packets grow with the exchange */
                break;
            }
        n += po->vendor ? (double)p->cores
                        : (double)po->active_info.cores * (2.0 * (double)po->active_info.total_steps + setup +
                                                           (double)po->active_info.rings[0] + 1.0);
    }
    return rotor_i64_held(n);
}

rotor_status rotor_replay_plan(const rotor_expr *e, const rotor_plan *p, const rotor_plan_info *info,
                               const rotor_chip *chip, int64_t packet, int64_t *out_ps, int64_t *out_link_ps,
                               rotor_error *err) {
    *out_ps = 0;
    if (out_link_ps) *out_link_ps = 0;
    if (info->cores > rotor_chip_cores(chip))
        return rotor_fail(err, ROTOR_ERR_INPUT, "the plan uses %lld cores; chip %s has %lld", (long long)info->cores,
                          chip->name, (long long)rotor_chip_cores(chip));
    replayer r;
    rotor_status st = replay_init(&r, chip, packet, err);
    int64_t ids[2];
    for (int64_t c = 0; !st && c < r.n; c++) r.last[c] = -1;
    if (!st) st = replay_lay_out(&r, e, p, info, chip, err);
    if (!st) st = replay_tiles(&r, 0, e, p, info, chip, ids, err);
    if (!st) st = replay_add_barrier(&r, 0, info->cores, err);
    rotor_sim_stats stats;
    if (!st) st = rotor_sim_run(r.sim, &stats, err);
    if (!st) *out_ps = stats.makespan_ps;
    if (!st && out_link_ps) *out_link_ps = llround(stats.link_util_peak * (double)stats.makespan_ps);
    replay_free(&r, false);
    return st;
}

void rotor_replay_result_free(rotor_replay_result *r) {
    free(r->ops);
    memset(r, 0, sizeof *r);
}

void rotor_replay_explain(const rotor_replay_op *op, char *buf, size_t size) {
    double d[3] = {op->simulated_setup_s - op->predicted_setup_s,
                   op->simulated_main_s - op->predicted_main_s,
                   op->simulated_reduction_s - op->predicted_reduction_s};
    static const char *const phase[3] = {"setup", "compute+shifts", "reduction"};
    int k = 0;
    for (int i = 1; i < 3; i++)
        if (fabs(d[i]) > fabs(d[k])) k = i;
    double total = op->simulated_s - op->predicted_s;
    if (fabs(total) <= 0.001 * op->predicted_s + 1e-12) {
        snprintf(buf, size, "agrees");
        return;
    }
    int n = snprintf(buf, size, "%s %+.3f us", phase[k], d[k] * 1e6);
    if (n >= 0 && (size_t)n < size && op->wait_s > 0)
        snprintf(buf + n, size - (size_t)n, ", waited %.3f us for links", op->wait_s * 1e6);
}

/* ---- preloads from HBM (docs/simulator.md, "Replaying an HBM schedule") ----------- */


/* Appends id to sr->deps unless it is negative or equal to the last one. */
rotor_status replay_dep_add(preload_replayer *sr, int64_t id, rotor_error *err) {
    if (id < 0 || (sr->deps.n && sr->deps.v[sr->deps.n - 1] == id)) return ROTOR_OK;
    return replay_idlist_push(&sr->deps, id, err);
}

int64_t replay_zero_join(preload_replayer *sr, int op, rotor_status *st, rotor_error *err) {
    rotor_sim_compute j = {.core = 0, .category = ROTOR_SIM_COMPUTE, .op = op, .deps = sr->deps.v,
                           .ndeps = (int)sr->deps.n};
    int64_t id = -1;
    *st = rotor_sim_add_compute(sr->r.sim, &j, &id, err);
    return id;
}

rotor_status replay_preload_init(preload_replayer *sr, const rotor_chip *chip, bool blocking, int n_ops,
                                        rotor_error *err) {
    memset(sr, 0, sizeof *sr);
    sr->prev_barrier = sr->last_pre_join = -1;
    rotor_status st = replay_init(&sr->r, chip, REPLAY_PIECE_BYTES, err);
    if (st) {
        replay_free(&sr->r, false);
        return st;
    }
    sr->n = sr->r.n;
    sr->nctrl = chip->hbm_controllers;
    sr->ports = rotor_sim_hbm_ports(sr->r.sim) > 0;
    sr->w = chip->topology == ROTOR_TOPO_MESH ? chip->mesh_width : 0;
    sr->nstreams = sr->ports ? rotor_sim_hbm_ports(sr->r.sim) : sr->nctrl * rotor_sim_hbm_lanes(sr->r.sim);
    sr->blocking = blocking;
    sr->win = stream_window(chip, REPLAY_PIECE_BYTES);
    size_t nc = (size_t)sr->n, no = (size_t)(n_ops > 0 ? n_ops : 1), ns = (size_t)(sr->nstreams > 0 ? sr->nstreams : 1);
    sr->stail = malloc(ns * (size_t)sr->win * sizeof *sr->stail);
    sr->stail_seq = calloc(ns * (size_t)sr->win, sizeof *sr->stail_seq);
    sr->scount = calloc(ns, sizeof *sr->scount);
    sr->sgroups = malloc(ns * sizeof *sr->sgroups);
    sr->sround = malloc(ns * sizeof *sr->sround);
    sr->gport = malloc(nc * sizeof *sr->gport);
    sr->gctrl = malloc(nc * sizeof *sr->gctrl);
    sr->grev = malloc(nc * sizeof *sr->grev);
    sr->dsts = malloc(nc * sizeof *sr->dsts);
    sr->pre_join = malloc(no * sizeof *sr->pre_join);
    sr->pre_ids = calloc(no, sizeof *sr->pre_ids);
    sr->exe_ids = calloc(no, sizeof *sr->exe_ids);
    if (!sr->stail || !sr->stail_seq || !sr->scount || !sr->sgroups || !sr->sround || !sr->gport || !sr->gctrl || !sr->grev || !sr->dsts ||
        !sr->pre_join || !sr->pre_ids || !sr->exe_ids) {
        replay_preload_free(sr, false);
        return rotor_nomem(err);
    }
    for (int64_t k = 0; k < sr->nstreams * sr->win; k++) sr->stail[k] = -1;
    for (size_t i = 0; i < no; i++) sr->pre_join[i] = -1;
    return ROTOR_OK;
}

void replay_preload_free(preload_replayer *sr, bool keep_sim) {
    free(sr->stail);
    free(sr->stail_seq);
    free(sr->scount);
    free(sr->sgroups);
    free(sr->sround);
    free(sr->gport);
    free(sr->gctrl);
    free(sr->grev);
    free(sr->dsts);
    free(sr->deps.v);
    free(sr->pre_join);
    free(sr->pre_ids);
    free(sr->exe_ids);
    replay_free(&sr->r, keep_sim);
    memset(sr, 0, sizeof *sr);
}

/* Cores lo .. hi-1 (a group) in the order its multicast path visits them
 * (docs/simulator.md, "Multicast paths"): on a mesh row by row,
 * each row's part west to east on even rows and east to west on odd ones
 * (for whole rows a snake: one hop from row to row; the order measured
 * best, against core order and a chip-wide snake); reversed when `rev`.
 * Else in core order. */
void replay_group_path(int64_t w, int64_t lo, int64_t hi, bool rev, int64_t *out) {
    int64_t k = 0;
    for (int64_t row = w > 0 ? lo / w : 0; w > 0 && row * w < hi; row++) {
        int64_t a = row * w > lo ? row * w : lo, b = (row + 1) * w < hi ? (row + 1) * w : hi;
        for (int64_t i = 0; i < b - a; i++) out[k++] = row % 2 ? b - 1 - i : a + i;
    }
    for (; k < hi - lo; k++) out[k] = lo + k; /* not a mesh */
    for (int64_t i = 0; rev && i < (hi - lo) / 2; i++) {
        int64_t t = out[i];
        out[i] = out[hi - lo - 1 - i];
        out[hi - lo - 1 - i] = t;
    }
}

/* A preload of W bytes as sim op `op`, issued after the barrier `after`
 * (-1: none); *join is the zero-time task that ends it.  The datum shared
 * by P cores is split into c chunks; each chunk goes to m = P / c
 * consecutive cores (a group) by multicast, so HBM reads each byte once:
 * the W bytes are spread over the G = ceil(cores / m) groups, each
 * group's share cut into R pieces of at most REPLAY_PIECE_BYTES.  Piece r of group
 * g is item r G + g.  All-to-all: the HBM controllers serve S = min(G, lanes
 * of every controller) streams, item t going to stream t mod S, so every
 * stream carries the same work and every group receives at the same pace;
 * stream s runs from controller s mod controllers.  Mesh: one stream per
 * edge port; each piece is a path multicast through the group's cores
 * (group_path), starting from the end nearer the grid's edge, and the
 * group's pieces go to the stream of the port nearest that end, from that
 * port's controller (the port is a single link, so its stream is its
 * queue).  A stream runs its pieces one after another and
 * goes on with the next preload where it left this one (preloads in order,
 * one at a time, none overtaking another). */
rotor_status replay_preload_groups(preload_replayer *sr, int64_t W, int64_t m, int64_t op, int64_t after,
                                int64_t *join, rotor_error *err) {
    int64_t n = sr->n, G = (n + m - 1) / m;
    int64_t per = W / G + (W % G != 0), R = (per + REPLAY_PIECE_BYTES - 1) / REPLAY_PIECE_BYTES;
    int64_t S = sr->ports ? sr->nstreams : G < sr->nstreams ? G : sr->nstreams;
    rotor_status st = ROTOR_OK;
    /* Mesh: the port feeding the most groups sets the pace (docs/simulator.md,
     * "Paced ports"); every other port starts round r (its piece r of each of
     * its groups) once the pacing port has finished round r - 1. */
    int64_t pace = -1, pace_prev = -1, pace_cur = -1;
    if (sr->ports) {
        for (int64_t k = 0; k < S; k++) sr->sgroups[k] = 0, sr->sround[k] = -1;
        for (int64_t g = 0; g < G; g++) {
            int64_t lo = g * m, hi = lo + m < n ? lo + m : n;
            replay_group_path(sr->w, lo, hi, false, sr->dsts);
            sr->grev[g] = rotor_topo_mesh_edge_hops(sr->w, n / sr->w, sr->dsts[hi - lo - 1]) < rotor_topo_mesh_edge_hops(sr->w, n / sr->w, sr->dsts[0]);
            int64_t k = sr->gport[g] =
                rotor_sim_hbm_port_nearest(sr->r.sim, sr->dsts[sr->grev[g] ? hi - lo - 1 : 0], &sr->gctrl[g]);
            if (++sr->sgroups[k] > (pace < 0 ? 0 : sr->sgroups[pace])) pace = k;
        }
    }
    for (int64_t t = 0; t < R * G && W > 0 && !st; t++) {
        int64_t r = t / G, g = t % G, str = t % S, ctrl = str % sr->nctrl;
        if (sr->ports) str = sr->gport[g], ctrl = sr->gctrl[g];
        if (g == 0) pace_prev = pace_cur;
        int64_t bytes = W / G + (g < W % G); /* the group's share */
        int64_t pb = bytes / R + (r < bytes % R);
        if (pb == 0) continue;
        int64_t lo = g * m, hi = lo + m < n ? lo + m : n;
        replay_group_path(sr->w, lo, hi, sr->ports && sr->grev[g], sr->dsts);
        /* the stream's piece win before this one; a stream the previous
         * preload did not use waits for that preload to end, and so does a
         * piece whose piece win before is older than the previous preload
         * (the 2nd to win-th of a stream the previous one left idle): none
         * overtakes it (found by a review helper) */
        sr->deps.n = 0;
        st = replay_dep_add(sr, after, err);
        int64_t *tail = sr->stail + str * sr->win, *tseq = sr->stail_seq + str * sr->win;
        int64_t last = (sr->scount[str] + sr->win - 1) % sr->win, slot = sr->scount[str] % sr->win;
        bool used = tseq[last] >= sr->pre_seq; /* by this preload or the previous one */
        if (!st) st = replay_dep_add(sr, used ? tail[slot] : sr->last_pre_join, err);
        if (!st && used && tseq[slot] < sr->pre_seq) st = replay_dep_add(sr, sr->last_pre_join, err);
        if (!st && sr->ports && sr->sround[str] != r) {
            if (sr->sgroups[str] < sr->sgroups[pace]) st = replay_dep_add(sr, pace_prev, err);
            sr->sround[str] = r;
        }
        int64_t id = -1;
        rotor_sim_multicast mc = {.src = rotor_sim_hbm_node(sr->r.sim, 0, ctrl), .dsts = sr->dsts,
                                  .ndsts = (int)(hi - lo), .bytes = pb, .category = ROTOR_SIM_HBM, .op = (int)op,
                                  .deps = sr->deps.v, .ndeps = (int)sr->deps.n,
                                  /* SRAM blocking: the landing writes pause each receiver */
                                  .pause_receivers = sr->blocking, .path = sr->w > 0};
        if (!st) st = rotor_sim_add_multicast(sr->r.sim, &mc, &id, err);
        if (st) break;
        tail[slot] = id;
        tseq[slot] = sr->pre_seq + 1;
        sr->scount[str]++;
        if (str == pace) pace_cur = id;
    }
    /* done when every stream has delivered its last piece of it */
    sr->deps.n = 0;
    if (!st) st = replay_dep_add(sr, after, err);
    if (!st) st = replay_dep_add(sr, sr->last_pre_join, err);
    for (int64_t k = 0; k < S * sr->win && W > 0 && !st; k++)
        if (sr->stail_seq[k] == sr->pre_seq + 1) st = replay_dep_add(sr, sr->stail[k], err);
    if (!st) *join = sr->last_pre_join = replay_zero_join(sr, (int)op, &st, err);
    sr->pre_seq++;
    return st;
}

rotor_status rotor_replay_shift(const rotor_chip *chip, int64_t d, int64_t bytes, int64_t *out_ps, rotor_error *err) {
    *out_ps = 0;
    int64_t n = rotor_chip_cores(chip);
    if (bytes < 0) return rotor_fail(err, ROTOR_ERR_INPUT, "shift bytes: expected a size >= 0, got %lld", (long long)bytes);
    if (d < 1 || d >= n)
        return rotor_fail(err, ROTOR_ERR_INPUT, "shift distance: expected 1..%lld cores, got %lld", (long long)(n - 1),
                          (long long)d);
    replayer r;
    rotor_status st = replay_init(&r, chip, ROTOR_REPLAY_PACKET, err);
    for (int64_t c = 0; !st && c < r.n && bytes > 0; c++) {
        int64_t id;
        rotor_sim_transfer t = {.src = (c + d) % r.n, .dst = c, .bytes = bytes, .category = ROTOR_SIM_SETUP, .op = 0};
        st = replay_add_transfer(&r, &t, &id, err);
    }
    rotor_sim_stats stats;
    if (!st) st = rotor_sim_run(r.sim, &stats, err);
    if (!st) *out_ps = stats.makespan_ps;
    replay_free(&r, false);
    return st;
}

rotor_status rotor_replay_preload(const rotor_chip *chip, int64_t bytes, int64_t m, int64_t *out_ps,
                                  rotor_error *err) {
    *out_ps = 0;
    if (bytes < 0) return rotor_fail(err, ROTOR_ERR_INPUT, "preload bytes: expected a size >= 0, got %lld", (long long)bytes);
    if (m < 1 || m > rotor_chip_cores(chip))
        return rotor_fail(err, ROTOR_ERR_INPUT, "preload group: expected 1..%lld cores, got %lld",
                          (long long)rotor_chip_cores(chip), (long long)m);
    if (chip->hbm_gbps <= 0)
        return rotor_fail(err, ROTOR_ERR_INPUT, "chip '%s' has no HBM (hbm_gbps is 0)", chip->name);
    preload_replayer sr;
    rotor_status st = replay_preload_init(&sr, chip, false, 1, err);
    if (st) return st;
    st = rotor_sim_set_op_name(sr.r.sim, 1, "preload", err);
    if (!st) st = replay_preload_groups(&sr, bytes, m, 1, -1, &sr.pre_join[0], err);
    rotor_sim_stats stats;
    if (!st) st = rotor_sim_run(sr.r.sim, &stats, err);
    if (!st) *out_ps = stats.makespan_ps;
    replay_preload_free(&sr, false);
    return st;
}
