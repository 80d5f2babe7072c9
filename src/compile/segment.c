/* segment.c — inter-operator pipelining over core groups (KAPLA §III-A
 * "inter-layer pipelining", §IV-B segment slicing, conservative pruning and
 * the prioritised dynamic program over the chain; issue 25 item 2).
 *
 * T10 and Elk give every operator all the cores.  When an operator is too
 * small to use them well (NeRF's layers, ResNet at batch 1, a decode step),
 * consecutive operators can instead run at once on disjoint groups of cores,
 * streaming activations from group to group as a pipeline over
 * micro-batches.  segment.h defines the segment, its stages and the model;
 * this file chooses them.
 *
 * Decisions where KAPLA is silent, or where rotor's machine differs
 * (docs/kapla.md, "Pipelining", repeats them):
 *  - One chip.  On all-to-all a group is a range of consecutive cores, and
 *    every core still reaches every other at the link rate, so a group is a
 *    chip of fewer cores with the same per-core rates.  Across chips the
 *    inter-chip links would carry the stream; that is not modelled, so
 *    compile refuses --pipeline there.
 *  - On a 2D mesh (issue 41; docs/kapla.md, "Pipelining") a group is a band
 *    of whole rows: mesh_width x h cores from row y0, chip cores y0 * W ..
 *    (y0 + h) * W - 1, so that its plan's local core (x, y) (row-major on
 *    the band's mesh, rotor_segment_group_chip) is the chip's (x, y0 + y),
 *    first_core + local.  An XY route between two cores of a band stays in
 *    its rows, so the band's plan, searched, priced and laid out on a W x h
 *    mesh by op/meshmap.c, has its links to itself, as on a chip of its
 *    own.  Group sizes go in rows (units of W, H of them; a mesh needs at
 *    least 2 rows, and a segment no more stages than rows).
 *  - A mesh's moves cross other bands' links.  Steps keep them apart from
 *    the runs; within a move phase each move (stage k's input t) is one
 *    exchange over the whole chip's mesh: its pieces as the all-to-all move
 *    cuts them, each plan core at its place in its band
 *    (rotor_mesh_map_cores), scheduled by rotor_mesh_exchange (the packets
 *    all ready at once, each holding its XY route; docs/cost-model.md, "On
 *    a 2D mesh", "Setup"), the replay sending that very schedule.  Chosen
 *    over the bound (busiest link / beta + hops * alpha), which a packet
 *    holding its whole route can exceed several times (the hand-offs'
 *    ~5x), so that model and simulation agree to the picosecond: the
 *    choice is by what the replay measures.  The moves of one step follow
 *    each other (serial_moves: the phase is their sum): two moves into
 *    neighbouring bands share the column links of the band between them,
 *    and a sum is exact for the replay, where overlapping exchanges would
 *    need their union scheduled per step.
 *  - What a stage reads from before the segment comes from the even layout,
 *    a sliver from every chip core (as run by run on all-to-all), and on a
 *    mesh also when read once: then it moves before run 0, in the first
 *    move phase (rotor_stage.outside_first), not at setup.  A setup gather
 *    from the neighbours (rotor_mesh_near, an operator's convention when
 *    the program does not say where the bytes are; docs/cost-model.md)
 *    crosses one link a core, far below the exchange that brings a
 *    producer's output from the whole chip into one band: with it, NeRF at
 *    batch 8 on 32 x 46 "won" 1.30x, all of it from fc7 reading fc6's
 *    output at 0.93 us where its hand-off takes 10.99 us.  All-to-all
 *    prices both alike (the receiver's port), so nothing changes there.
 *  - A mesh's setup gathers (weights not kept in the group) stay as on
 *    all-to-all, one round of the stage's bytes per core, from the
 *    neighbour along its row (rotor_mesh_near): one link per receiver,
 *    bytes / beta + alpha, the all-to-all figure.
 *  - An operator after the segment that loses a hand-off gathers from the
 *    even layout, which compile.c prices below the hand-off's exchange at
 *    times: on a mesh from the neighbours, on all-to-all by the receiver's
 *    share alone (the even model counts moving a value into the even layout
 *    as free, docs/compile.md).  The segment's output lies in its last
 *    stage's layout on its group, not in the even layout, so such a price
 *    is a discount nothing earns: the choice (penalty) and the final
 *    schedule charge each such operator at least the hand-off it loses, and
 *    where that is the dearer the program keeps the hand-off (GraphTurbo's
 *    instances on an ICCA chip do the same, gticca.c).  A segment must win
 *    by itself: BERT-Base at batch 1 (two layers) "won" 1.01x from the
 *    gathers after its qkv..attn_scores segments alone, each segment being
 *    slower than its operators unpipelined (5.521 against 5.475 us).
 *  - The stream dimension d is one dimension of every stage's output,
 *    indexed by one axis alone (coefficient 1): rows of a MatMul, the batch
 *    or a spatial dimension of a convolution.  A stage whose output cannot be
 *    sliced there, or whose extent the micro-batch count does not divide,
 *    runs once, after what it reads is whole.
 *  - A stage's run i reads only its producer's run i when the tensor is the
 *    producer's output element for element (same dimensions and extents:
 *    no view) and its dimension d is the consumer's streamed axis alone.
 *    Anything else (a window with a halo, a reduction over the streamed
 *    axis, a view) waits for the producer's last run: conservative, never
 *    wrong.
 *  - Setup: each group gathers its weights (its whole partition: the idle
 *    layouts stay those of the unpipelined schedule, spread over all cores)
 *    and what it reads from before the segment (for every run), from the
 *    even layout, in one round; the groups gather at once, so the segment's
 *    setup is the slowest group's.
 *  - A move between stages carries the consumer plan's partition to each
 *    of its cores from the producer's group; the busier side, one receiver's
 *    partition or one sender's share of all of them, over the link rate,
 *    plus one round.  Moves and runs alternate in steps (segment.h: the
 *    IPU's bulk-synchronous exchange), so a move never shares a port with a
 *    plan's shifts or reduction.  The first model let moves overlap the
 *    receiving group's runs with the ports taken as free; its replay, whose
 *    first-come-first-served ports delay the runs' reduction rounds behind
 *    move packets, was 46-127% slower on NeRF at batch 8 (docs/simulator.md,
 *    "Segments").  That model was physically wrong; the steps are what the
 *    machine can do.
 *  - Outputs read after the segment wait in the even layout, as any value
 *    the hand-off does not reach (docs/compile.md): an operator outside the
 *    segment that would take a stage's output by hand-off gathers it from
 *    the even layout instead, and pays for it in its setup (never less
 *    than the hand-off it loses, above).
 *  - SRAM: a stage's plan must fit in what the unpipelined schedule leaves
 *    it (the SRAM less every operator's idle layout and the activations
 *    live around it), less the buffers the pipeline adds: one run's
 *    partition of every tensor moved before each run, and of the output
 *    when it runs more than once (rotor_stage_buffer_bytes; with steps one
 *    buffer is more than the move needs, as the next run's input lands
 *    once this run is done, but it leaves room for a schedule that
 *    overlaps them).
 *  - Group sizes (KAPLA allocates by workload): in units of N/64 cores (on
 *    a mesh, rows), proportional to each operator's unpipelined time, to its
 *    square root, and equal; every stage gets at least one unit.
 *  - The dynamic program runs over the graph order (a chain; branches of a
 *    DAG may share a segment and then simply run side by side).  A
 *    segment's cost adds the setup it forces on later operators (lost
 *    hand-offs); that cost only overestimates, so the final schedule, costed
 *    exactly, is never slower than the DP's choice nor than the schedule
 *    without pipelining.  "Top-k" (KAPLA §IV-B) is the three allocations and
 *    every micro-batch count tried per segment; the DP itself is exact over
 *    them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/compileint.h"
#include "rotor/compile/program.h"
#include "rotor/compile/segment.h"
#include "rotor/compile/opelem.h"
#include "rotor/op/meshmap.h"
#include "rotor/op/plan.h"

#define UNITS 64        /* group sizes are multiples of N / UNITS cores */
#define DEFAULT_STAGES 4
#define DEFAULT_MICRO 16
#define NALLOC 3

const char *rotor_pipeline_objective_name(rotor_pipeline_objective o) {
    return o == ROTOR_OBJECTIVE_THROUGHPUT ? "throughput" : "latency";
}

bool rotor_pipeline_objective_find(const char *name, rotor_pipeline_objective *out) {
    if (!strcmp(name, "latency")) *out = ROTOR_OBJECTIVE_LATENCY;
    else if (!strcmp(name, "throughput")) *out = ROTOR_OBJECTIVE_THROUGHPUT;
    else return false;
    return true;
}

void rotor_segment_free(rotor_segment *s) {
    if (!s) return;
    free(s->stages);
    memset(s, 0, sizeof *s);
}

static double dmax(double a, double b) { return a > b ? a : b; }
static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t rotor_segment_steps(const rotor_segment *s, int64_t *first) {
    int64_t steps = 0;
    for (int k = 0; k < s->nstages; k++) {
        const rotor_stage *st = &s->stages[k];
        int64_t at = 0;
        for (int t = 1; t < st->micro.ntensors; t++) {
            int p = st->from[t];
            if (p < 0) continue;
            /* streamed: run i after the producer's run i; else after its last */
            int64_t ready = st->streamed[t] ? first[p] + 1 : first[p] + s->stages[p].runs;
            if (ready > at) at = ready;
        }
        first[k] = at;
        if (at + st->runs > steps) steps = at + st->runs;
    }
    return steps;
}

bool rotor_segment_moves(const rotor_stage *st, int t, int64_t i) {
    int p = st->from[t];
    if (p == -1) return false; /* a weight */
    if (p == ROTOR_STAGE_OUTSIDE && !st->per_run[t]) return st->outside_first && i == 0; /* else at setup */
    return i == 0 || st->per_run[t];
}

/* The move phase of step `step` (first: rotor_segment_steps'): every move
 * into a run of the step at once, a core's port carrying its moves one
 * after another, in and out; its time, the busiest group's.  With first
 * NULL, a full step once the pipeline is full: every stage running, every
 * per-run move moving.  in and out: scratch, one per stage. */
static double move_phase(const rotor_segment *s, const int64_t *first, int64_t step, double *in, double *out) {
    for (int k = 0; k < s->nstages; k++) in[k] = out[k] = 0;
    for (int k = 0; k < s->nstages; k++) {
        const rotor_stage *sg = &s->stages[k];
        int64_t i = first ? step - first[k] : sg->runs > 1;
        if (i < 0 || i >= sg->runs) continue;
        for (int t = 1; t < sg->micro.ntensors; t++) {
            if (!rotor_segment_moves(sg, t, i)) continue;
            in[k] += sg->xfer_s[t];
            if (sg->from[t] >= 0) out[sg->from[t]] += sg->xfer_s[t];
        }
    }
    double phase = 0;
    for (int k = 0; k < s->nstages; k++) phase = s->serial_moves ? phase + in[k] : dmax(phase, dmax(in[k], out[k]));
    return phase;
}

rotor_status rotor_segment_times(const rotor_segment *s, double *fin, double *xend, double *run_s,
                                 rotor_error *err) {
    int S = s->nstages;
    int64_t m = s->micro;
    double *f = fin, *x = xend;
    size_t nf = (size_t)S * (size_t)m, nx = nf * ROTOR_MAX_TENSORS;
    int64_t *first = malloc((size_t)S * sizeof *first);
    double *in = calloc((size_t)S, sizeof *in), *out = calloc((size_t)S, sizeof *out);
    if (!fin) f = malloc(nf * sizeof *f);
    if (!xend) x = malloc(nx * sizeof *x);
    rotor_status st = first && in && out && f && x ? ROTOR_OK : rotor_nomem(err);
    double now = 0;
    if (!st) {
        for (size_t i = 0; i < nf; i++) f[i] = -1;
        for (size_t i = 0; i < nx; i++) x[i] = -1;
        int64_t steps = rotor_segment_steps(s, first);
        for (int64_t step = 0; step < steps; step++) {
            now += move_phase(s, first, step, in, out);
            /* the compute phase: every stage's run of this step at once */
            double slowest = 0;
            for (int k = 0; k < S; k++) {
                const rotor_stage *sg = &s->stages[k];
                int64_t i = step - first[k];
                if (i < 0 || i >= sg->runs) continue;
                for (int t = 1; t < sg->micro.ntensors; t++)
                    if (rotor_segment_moves(sg, t, i)) x[((size_t)k * ROTOR_MAX_TENSORS + (size_t)t) * (size_t)m + (size_t)i] = now;
                f[k * m + i] = now + sg->exec_s;
                slowest = dmax(slowest, sg->exec_s);
            }
            now += slowest;
        }
    }
    if (!fin) free(f);
    if (!xend) free(x);
    free(first);
    free(in);
    free(out);
    if (!st) *run_s = now;
    return st;
}

/* Receivers dst0 .. dst0 + nc - 1 each take recv bytes; laid end to end,
 * the bytes are cut into one equal range per sender src0 .. src0 + np - 1,
 * and a piece is a receiver's range met with a sender's (a core's own
 * range it already holds: no piece).  On a mesh sphys and dphys place the
 * j-th sender and receiver at chip core src0 + sphys[j], dst0 + dphys[j]
 * (NULL: the identity). */
static rotor_status cut_pieces(int64_t src0, int64_t np, const int64_t *sphys, int64_t dst0, int64_t nc,
                               const int64_t *dphys, int64_t recv, int op, rotor_move_piece_fn fn, void *ctx,
                               rotor_error *err) {
    int64_t all;
    if (!rotor_mul_i64(recv, nc, &all))
        return rotor_fail(err, ROTOR_ERR_INPUT, "operator %d: a move of %lld bytes to %lld cores overflows", op,
                          (long long)recv, (long long)nc);
    int64_t q = all / np, rem = all % np;
    bool by_recv = recv >= q + (rem > 0);
    int64_t j = 0, sd = 0, pos = 0, jend = recv, send = q + (rem > 0);
    rotor_status st = ROTOR_OK;
    while (pos < all && !st) {
        int64_t end = jend < send ? jend : send;
        int64_t src = src0 + (sphys ? sphys[sd] : sd), dst = dst0 + (dphys ? dphys[j] : j);
        if (src != dst) st = fn(ctx, src, dst, end - pos, by_recv ? j : sd, err);
        pos = end;
        if (pos == jend) j++, jend += recv;
        if (pos == send) sd++, send += q + (sd < rem);
    }
    return st;
}

rotor_status rotor_segment_move_pieces(const rotor_stage *ps, const rotor_stage *cs, int t, rotor_move_piece_fn fn,
                                       void *ctx, rotor_error *err) {
    return cut_pieces(ps->first_core, ps->plan.info.cores, NULL, cs->first_core, cs->plan.info.cores, NULL,
                      cs->plan.info.bytes[t], cs->op, fn, ctx, err);
}

rotor_status rotor_segment_outside_pieces(const rotor_stage *cs, int t, int64_t n, rotor_move_piece_fn fn, void *ctx,
                                          rotor_error *err) {
    return cut_pieces(0, n, NULL, cs->first_core, cs->plan.info.cores, NULL, cs->plan.info.bytes[t], cs->op, fn, ctx,
                      err);
}

/* ---- moves on a mesh ---------------------------------------------------- */

/* The pieces of a mesh move, as rotor_mesh_exchange takes them (receiver,
 * sender, bytes), and the links they load. */
typedef struct mesh_pieces {
    int64_t (*v)[3];
    int64_t n, cap;
    rotor_mesh_load load;
} mesh_pieces;

static rotor_status mesh_piece(void *ctx, int64_t src, int64_t dst, int64_t bytes, int64_t port, rotor_error *err) {
    (void)port;
    mesh_pieces *m = ctx;
    if (m->n == m->cap) {
        int64_t cap = m->cap ? 2 * m->cap : 64;
        int64_t(*v)[3] = realloc(m->v, (size_t)cap * sizeof *v);
        if (!v) return rotor_nomem(err);
        m->v = v;
        m->cap = cap;
    }
    m->v[m->n][0] = dst;
    m->v[m->n][1] = src;
    m->v[m->n][2] = bytes;
    m->n++;
    rotor_mesh_load_add(&m->load, src, dst, bytes);
    return ROTOR_OK;
}

/* Where stage st's plan cores lie in its band (local row-major cores,
 * rotor_mesh_map_cores on the band's chip); *out NULL when out of memory. */
static rotor_status band_cores(const rotor_chip *chip, const rotor_stage *st, int64_t **out, rotor_error *err) {
    rotor_chip gc = rotor_segment_group_chip(chip, st->cores);
    *out = malloc((size_t)st->plan.info.cores * sizeof **out);
    if (!*out) return rotor_nomem(err);
    return rotor_mesh_map_cores(&st->micro, &gc, &st->plan.plan, &st->plan.info, *out, err);
}

/* The mesh move of rotor_segment_xfer: its pieces over the whole chip,
 * their busiest link and their exchange. */
static rotor_status mesh_move(const rotor_chip *chip, const rotor_segment *s, int k, int t, int64_t *bytes,
                              double *xfer_s, rotor_mesh_packet **pk, int64_t *npk, rotor_error *err) {
    const rotor_stage *cs = &s->stages[k], *ps = cs->from[t] >= 0 ? &s->stages[cs->from[t]] : NULL;
    int64_t *dphys = NULL, *sphys = NULL, recv = cs->plan.info.bytes[t], np, span = 0, n, all;
    mesh_pieces m = {0};
    rotor_mesh_packet *got = NULL;
    rotor_status st = rotor_mesh_load_init(&m.load, chip, err);
    if (!st) st = band_cores(chip, cs, &dphys, err);
    if (!st && ps) st = band_cores(chip, ps, &sphys, err);
    if (!st && ps)
        st = cut_pieces(ps->first_core, ps->plan.info.cores, sphys, cs->first_core, cs->plan.info.cores, dphys, recv,
                        cs->op, mesh_piece, &m, err);
    else if (!st) /* from the even layout: sender i is chip core i */
        st = cut_pieces(0, rotor_chip_cores(chip), NULL, cs->first_core, cs->plan.info.cores, dphys, recv, cs->op,
                        mesh_piece, &m, err);
    /* packets as the setup exchange cuts them, by the busiest port (a
     * receiver's partition, or a sender's share: the all-to-all figure) */
    np = ps ? ps->plan.info.cores : rotor_chip_cores(chip);
    if (!rotor_mul_i64(recv, cs->plan.info.cores, &all)) all = INT64_MAX;
    int64_t most = recv > ceil_div(all, np) ? recv : ceil_div(all, np);
    if (!st) st = rotor_mesh_exchange(chip, (const int64_t(*)[3])m.v, m.n, rotor_exchange_packet(most), &got, &n, &span, err);
    *bytes = st ? 0 : rotor_mesh_load_max(&m.load);
    *xfer_s = (double)span * 1e-12;
    if (!st && pk) {
        *pk = got;
        *npk = n;
        got = NULL;
    }
    free(got);
    free(m.v);
    free(dphys);
    free(sphys);
    rotor_mesh_load_free(&m.load);
    return st;
}

rotor_status rotor_segment_xfer(const rotor_chip *chip, const rotor_segment *s, int k, int t, int64_t *bytes,
                                double *xfer_s, rotor_mesh_packet **pk, int64_t *npk, rotor_error *err) {
    if (pk) *pk = NULL, *npk = 0;
    if (chip->topology == ROTOR_TOPO_MESH) return mesh_move(chip, s, k, t, bytes, xfer_s, pk, npk, err);
    const rotor_stage *sg = &s->stages[k];
    if (sg->from[t] == ROTOR_STAGE_OUTSIDE) {
        /* from the even layout: every core sends a sliver, the receiver is the busier port */
        *bytes = sg->plan.info.bytes[t];
    } else {
        const rotor_stage *ps = &s->stages[sg->from[t]];
        int64_t recv = sg->plan.info.bytes[t], all, send;
        if (!rotor_mul_i64(recv, sg->plan.info.cores, &all)) all = INT64_MAX;
        send = ceil_div(all, ps->plan.info.cores);
        *bytes = recv > send ? recv : send;
    }
    *xfer_s = rotor_compile_setup_s(chip, *bytes, 1);
    return ROTOR_OK;
}

/* ---- stage plans ---------------------------------------------------------- */

rotor_chip rotor_segment_group_chip(const rotor_chip *chip, int64_t g) {
    /* the group's share of every rate, of int8_tops too: until 2026-12-02
     * it kept the chip's whole int8 rate, and an 8-bit contraction on a
     * group of N/n cores ran n times too fast (GraphTurbo's instances on a
     * chip file with int8_tops) */
    rotor_chip c = rotor_chip_with_cores(chip, g);
    if (chip->topology == ROTOR_TOPO_MESH && chip->mesh_width > 0) c.mesh_height = g / chip->mesh_width;
    return c;
}

bool rotor_segment_in_bands(const rotor_segment *s, const rotor_chip *chip) {
    if (!s->serial_moves || chip->topology != ROTOR_TOPO_MESH) return false;
    for (int k = 0; k < s->nstages; k++)
        if (s->stages[k].first_core % chip->mesh_width || s->stages[k].cores % chip->mesh_width) return false;
    return true;
}

/* The stage frontiers searched so far, by (expression, extents, cores): the
 * frontier does not depend on the budget or the moves, so each shape and
 * group size is searched once, and each stage picks from it.  An entry not
 * yet searched records that no plan of its shape runs in `slower` seconds
 * or less ("Time caps" below). */
typedef struct plan_entry {
    char *key;
    rotor_search_result fr;
    bool found;    /* false: no plan covers the shape on these cores */
    bool searched; /* false: only slower is known */
    double slower;
    double ratio;  /* searched: the frontier up to ratio x the fastest run */
    bool has_fast; /* the fastest plan is known (a capped check, or a frontier) */
    rotor_candidate fast;
    bool has_fr;        /* fr holds a frontier (the searching path) */
    bool told_fast;     /* the walk: the frontier's search would know fast ("Walks" below) */
    struct walk_answer *wa; /* the walk: its session's answers so far */
    int nwa, cwa;
} plan_entry;

typedef struct plan_memo {
    plan_entry *e;
    int n, cap;
    int searches;
} plan_memo;

static void plan_memo_free(plan_memo *pm) {
    for (int i = 0; i < pm->n; i++) {
        free(pm->e[i].key);
        if (pm->e[i].has_fr) rotor_search_result_free(&pm->e[i].fr);
        free(pm->e[i].wa);
    }
    free(pm->e);
}

/* Room for one more entry. */
static rotor_status plan_memo_grow(plan_memo *pm, rotor_error *err) {
    if (pm->n < pm->cap) return ROTOR_OK;
    int nc = pm->cap ? 2 * pm->cap : 64;
    plan_entry *e2 = realloc(pm->e, (size_t)nc * sizeof *e2);
    if (!e2) return rotor_nomem(err);
    pm->e = e2;
    pm->cap = nc;
    return ROTOR_OK;
}

/* Whether some plan of e on gc (within its SRAM) runs in time_cap seconds
 * or less: *faster false when none does (rotor_search_session_within's
 * NOFIT; its answer is exact, the search only prunes sooner).  Any other
 * failure but out of memory leaves *faster true: the frontier's search
 * then meets it as before.  pool: the compile's search buffers (cc->spool),
 * as every stage search takes them: no answer depends on the pool, and
 * each search no longer allocates and faults in its own. */
static rotor_status fastest_within(const rotor_expr *e, const rotor_chip *gc, const rotor_compile_options *opt,
                                   rotor_search_pool *pool, double time_cap, bool *faster, rotor_candidate *c,
                                   bool *has_c, rotor_error *err) {
    rotor_search_options so = {.threads = opt ? opt->threads : 0, .pool = pool};
    rotor_search_session *ss = NULL;
    rotor_error serr;
    *faster = true;
    *has_c = false;
    rotor_status st = rotor_search_session_open(e, gc, &so, &ss, &serr);
    if (!st) st = rotor_search_session_within(ss, 0, time_cap, 0, c, NULL, &serr);
    rotor_search_session_close(ss);
    if (st == ROTOR_ERR_NOMEM && err) *err = serr;
    if (st == ROTOR_ERR_NOMEM) return st;
    *faster = st != ROTOR_ERR_NOFIT;
    *has_c = st == ROTOR_OK;
    return ROTOR_OK;
}

/* How far along a frontier whose fastest plan is `fast` stage_plan must
 * look, as a ratio to that plan's run ("Frontier cuts" below): its run plus
 * its moves (stage_plan's objective), when it fits in cap bytes a core;
 * else the whole STAGE_RATIO. */
#define STAGE_RATIO 2.0
static double front_ratio(const rotor_chip *chip, const rotor_expr *e, const rotor_candidate *fast, int64_t cap,
                          unsigned moved) {
    if (fast->info.memory > cap || !(fast->cost.total > 0)) return STAGE_RATIO;
    double t = fast->cost.total;
    for (int x = 1; x < e->ntensors; x++)
        if (moved >> x & 1) t += rotor_cost_shift_s(chip, fast->info.bytes[x], 0);
    double r = t / fast->cost.total * (1 + 1e-9); /* above t / run despite rounding */
    return r < STAGE_RATIO ? r : STAGE_RATIO;
}

static char *memo_key(const rotor_expr *e, int64_t g) {
    size_t len = strlen(e->text) + 32 * (size_t)(e->naxes + 2);
    char *k = malloc(len);
    if (!k) return NULL;
    size_t n = (size_t)snprintf(k, len, "%s|%lld|", e->text, (long long)g);
    for (int a = 0; a < e->naxes && n < len; a++)
        n += (size_t)snprintf(k + n, len - n, "%lld,", (long long)e->extent[a]);
    return k;
}

/* The entry of e on g cores in *at, a new one (nothing known) if none. */
static rotor_status memo_find(plan_memo *pm, const rotor_expr *e, int64_t g, int *at, rotor_error *err) {
    char *key = memo_key(e, g);
    if (!key) return rotor_nomem(err);
    for (*at = 0; *at < pm->n; ++*at)
        if (!strcmp(pm->e[*at].key, key)) {
            free(key);
            return ROTOR_OK;
        }
    rotor_status st = plan_memo_grow(pm, err);
    if (st) {
        free(key);
        return st;
    }
    memset(&pm->e[*at], 0, sizeof pm->e[*at]);
    pm->e[*at].key = key;
    pm->n++;
    return ROTOR_OK;
}

/* The frontier of e on g cores, memoised, at least as far as stage_plan
 * needs it for a budget of cap bytes and the tensors in `moved`
 * (front_ratio; searched again further when an earlier search stopped
 * short); *fr NULL when no plan covers it.  With time_cap finite (and the
 * exact solver), *slow true and no frontier when no plan runs in time_cap
 * seconds or less ("Time caps" below). */
static rotor_status stage_frontier(plan_memo *pm, const compiler *cc, const rotor_compile_options *opt,
                                   const rotor_expr *e, int64_t g, double time_cap, int64_t cap, unsigned moved,
                                   const rotor_search_result **fr, bool *slow, rotor_error *err) {
    *slow = false;
    *fr = NULL;
    int at;
    rotor_status st = memo_find(pm, e, g, &at, err);
    if (st) return st;
    if (pm->e[at].searched && !pm->e[at].found) return ROTOR_OK;
    rotor_chip gc = rotor_segment_group_chip(cc->chip, g);
    if (!pm->e[at].searched && time_cap <= pm->e[at].slower) {
        *slow = true;
        return ROTOR_OK;
    }
    if (!pm->e[at].searched && time_cap < INFINITY && cc->solver == ROTOR_SOLVER_EXACT) {
        bool faster = true, has_c = pm->e[at].has_fast;
        if (has_c) /* the fastest plan is known: the capped search's answer */
            faster = pm->e[at].fast.cost.total <= time_cap;
        else if ((st = fastest_within(e, &gc, opt, cc->spool, time_cap, &faster, &pm->e[at].fast, &has_c, err)))
            return st;
        pm->e[at].has_fast = has_c;
        if (!faster) {
            pm->e[at].slower = time_cap;
            *slow = true;
            return ROTOR_OK;
        }
    }
    double need = pm->e[at].has_fast ? front_ratio(cc->chip, e, &pm->e[at].fast, cap, moved) : STAGE_RATIO;
    while (!(pm->e[at].searched && pm->e[at].ratio >= need)) {
        if (pm->e[at].has_fr) rotor_search_result_free(&pm->e[at].fr); /* it stopped short: further */
        pm->e[at].searched = pm->e[at].found = pm->e[at].has_fr = false;
        rotor_search_options so = {.solver = cc->solver, .threads = opt ? opt->threads : 0, .pool = cc->spool};
        so.pareto = true;
        so.pareto_time_ratio = need;
        rotor_error serr;
        st = rotor_search(e, &gc, &so, &pm->e[at].fr, &serr);
        pm->searches++;
        if (st == ROTOR_ERR_NOMEM) {
            if (err) *err = serr;
            return st;
        }
        pm->e[at].searched = true;
        pm->e[at].ratio = need;
        pm->e[at].found = pm->e[at].has_fr = st == ROTOR_OK; /* else NOFIT, or INPUT for a shape no plan covers on g cores */
        if (!pm->e[at].found) return ROTOR_OK;
        /* the cut by the frontier's own fastest point (the capped search's
         * plan, by the same ties): searched again if it needs more */
        pm->e[at].fast = pm->e[at].fr.pareto[0];
        pm->e[at].has_fast = true;
        need = front_ratio(cc->chip, e, &pm->e[at].fast, cap, moved);
    }
    *fr = &pm->e[at].fr;
    return ROTOR_OK;
}

/* ---- walks -------------------------------------------------------------------
 *
 * Issue 45: at large batches the budget stage_fill gives a stage is tight
 * (GoogLeNet at 64 peaks at 98% of the SRAM), the fastest plan rarely fits
 * it, and the frontier cut ("Frontier cuts" below) falls back to the whole
 * STAGE_RATIO: 34 frontiers of 8-22 points, 4.3 of its 5.7 s of pipelining.
 * But stage_plan reads only the frontier's points within the budget, and of
 * those only the ones that run faster than the best run plus moves seen so
 * far.  With the exact solver the frontier is the epsilon-constraint chain
 * (op/pareto.c): each point the fastest plan with strictly less memory than
 * the last, ties to the least memory, then plan order.  So its first point
 * within cap is the fastest plan within cap (that plan is in the smaller
 * set, and the chain's point before it does not fit), and every later point
 * is the fastest plan below the last one's memory: a session's capped
 * searches (rotor_search_session_within), which answer each exactly as
 * rotor_search with that memory cap would, walk that very chain from cap
 * down.  The walk stops at the first point that runs at or above the best
 * J = run + moves so far (J >= run, and the chain only gets slower, so no
 * later point is strictly better), or above the frontier's own end, STAGE_RATIO
 * x the fastest run (a capped search keeps a plan of time <= its cap, as the
 * frontier's search does); each step is capped at that time, so a step past
 * the end costs little.  When the chain's first point runs above the end,
 * no frontier point fits and stage_plan's fallback (rotor_search under the
 * cap) would take that very plan.  The point chosen is the one the frontier
 * gives, to the bit: tests/test_segprune.c compares with pipeline_no_prune,
 * which searches frontiers as before.
 *
 * One answer of a session answers others: the fastest plan r within cap_q
 * is also the fastest within any cap between r's memory and cap_q; "none
 * within cap_q in tcap_q" holds for any smaller cap and time.  The answers
 * are kept per shape (plan_entry.wa) for the other stages and budgets.
 *
 * The printed count of stage searches (plan_memo.searches) stays the count
 * of frontier and fallback searches the searching path makes: the walk
 * counts a frontier search where that path would search one (its reach,
 * front_ratio, from what it would know: told_fast) and a fallback where it
 * would fall back. */
typedef struct walk_answer {
    int64_t cap;
    double tcap;
    bool found; /* else none within cap runs in tcap or less */
    rotor_candidate c;
} walk_answer;

/* The fastest plan of pe's shape within cap bytes a core when it runs in
 * tcap seconds or less (*found), from pe's answers or a capped search of
 * *ss (opened on first use). */
static rotor_status walk_query(plan_entry *pe, const rotor_expr *e, const rotor_chip *gc, const compiler *cc,
                               const rotor_compile_options *opt, rotor_search_session **ss, int64_t cap,
                               double tcap, bool *found, rotor_candidate *c, rotor_error *err) {
    for (int i = 0; i < pe->nwa; i++) {
        const walk_answer *a = &pe->wa[i];
        if (a->found && a->c.info.memory <= cap && cap <= a->cap) {
            *found = a->c.cost.total <= tcap;
            *c = a->c;
            return ROTOR_OK;
        }
        if (!a->found && cap <= a->cap && tcap <= a->tcap) {
            *found = false;
            return ROTOR_OK;
        }
    }
    if (pe->nwa == pe->cwa) {
        int n = pe->cwa ? 2 * pe->cwa : 8;
        walk_answer *v = realloc(pe->wa, (size_t)n * sizeof *v);
        if (!v) return rotor_nomem(err);
        pe->wa = v;
        pe->cwa = n;
    }
    walk_answer *a = &pe->wa[pe->nwa];
    rotor_error serr;
    rotor_status st = ROTOR_OK;
    if (!*ss) {
        rotor_search_options so = {.threads = opt ? opt->threads : 0, .pool = cc->spool};
        st = rotor_search_session_open(e, gc, &so, ss, &serr);
    }
    if (!st) st = rotor_search_session_within(*ss, cap, tcap, 0, &a->c, NULL, &serr);
    if (st == ROTOR_ERR_NOMEM) {
        if (err) *err = serr;
        return st;
    }
    /* NOFIT, or INPUT for a shape no plan covers on these cores: none */
    a->cap = st == ROTOR_OK || *ss ? cap : INT64_MAX;
    a->tcap = *ss ? tcap : INFINITY;
    a->found = *found = st == ROTOR_OK;
    *c = a->c;
    pe->nwa++;
    return ROTOR_OK;
}

static double stage_j(const rotor_chip *chip, const rotor_expr *e, const rotor_candidate *c, unsigned moved) {
    double t = c->cost.total;
    for (int x = 1; x < e->ntensors; x++)
        if (moved >> x & 1) t += rotor_cost_shift_s(chip, c->info.bytes[x], 0); /* no latency: bytes / beta */
    return t;
}

/* The chain from cap down (above) for the entry pe knowing its fastest
 * plan: stage_plan's choice in *out, *fits. */
static rotor_status walk_chain(plan_memo *pm, plan_entry *pe, const compiler *cc, const rotor_compile_options *opt,
                               const rotor_expr *e, const rotor_chip *gc, rotor_search_session **ss, int64_t cap,
                               unsigned moved, rotor_candidate *out, bool *fits, rotor_error *err) {
    double end = pe->fast.cost.total * STAGE_RATIO; /* as rotor_search computes its time cap */
    rotor_candidate p;
    bool found;
    rotor_status st = walk_query(pe, e, gc, cc, opt, ss, cap, INFINITY, &found, &p, err);
    if (st) return st;
    if (!found || p.cost.total > end) { /* no frontier point fits: the fallback's search */
        pm->searches++;
        *fits = found;
        if (found) *out = p;
        return ROTOR_OK;
    }
    double best = INFINITY;
    while (found) {
        double t = stage_j(cc->chip, e, &p, moved);
        if (t < best) { /* ties: the faster run, first in the frontier */
            best = t;
            *out = p;
            *fits = true;
        }
        if (p.info.memory <= 1) break;
        if ((st = walk_query(pe, e, gc, cc, opt, ss, p.info.memory - 1, best < end ? best : end, &found, &p, err)))
            return st;
    }
    return ROTOR_OK;
}

/* stage_plan by walks (exact solver, pruning on): the same bookkeeping as
 * stage_frontier (the time cap's check, the memo's `slower`, the count). */
static rotor_status stage_walk(plan_memo *pm, const compiler *cc, const rotor_compile_options *opt,
                               const rotor_expr *e, int64_t g, int64_t cap, double time_cap, unsigned moved,
                               rotor_candidate *out, bool *fits, rotor_error *err) {
    int at;
    *fits = false;
    rotor_status st = memo_find(pm, e, g, &at, err);
    if (st) return st;
    plan_entry *pe = &pm->e[at];
    if (pe->searched && !pe->found) return ROTOR_OK;
    if (!pe->searched && time_cap <= pe->slower) return ROTOR_OK;
    rotor_chip gc = rotor_segment_group_chip(cc->chip, g);
    if (!pe->searched && time_cap < INFINITY) {
        bool faster = true, has_c = pe->has_fast;
        if (has_c) /* the fastest plan is known: the capped search's answer */
            faster = pe->fast.cost.total <= time_cap, has_c = faster;
        else if ((st = fastest_within(e, &gc, opt, cc->spool, time_cap, &faster, &pe->fast, &has_c, err)))
            return st;
        pe->has_fast = pe->has_fast || has_c;
        pe->told_fast = pe->told_fast || has_c;
        if (!faster) {
            pe->slower = time_cap;
            return ROTOR_OK;
        }
    }
    rotor_search_session *ss = NULL;
    bool found = pe->has_fast;
    if (!found) st = walk_query(pe, e, &gc, cc, opt, &ss, rotor_chip_sram(&gc), INFINITY, &found, &pe->fast, err);
    if (!st) {
        pe->has_fast = found;
        /* where the searching path would search the frontier (to its reach) */
        double need = pe->told_fast ? front_ratio(cc->chip, e, &pe->fast, cap, moved) : STAGE_RATIO;
        if (!(pe->searched && pe->ratio >= need)) {
            pm->searches++;
            pe->searched = true;
            pe->ratio = need;
        }
        pe->found = pe->told_fast = found;
    }
    if (!st && found) st = walk_chain(pm, pe, cc, opt, e, &gc, &ss, cap, moved, out, fits, err);
    rotor_search_session_close(ss);
    return st;
}

/* The plan of e on g cores within cap bytes per core that minimises its
 * run plus the moves into it: the tensors in `moved` (a bit per tensor)
 * each cost their step-0 partition over the link rate.  The fastest plan
 * alone would often replicate an input on every core, which the stream then
 * has to carry.  Chosen from the frontier; when no point of it fits, the
 * fastest plan under cap by a capped search.  *fits false when none fits,
 * or when no plan runs in time_cap (stage_frontier). */
static rotor_status stage_plan(plan_memo *pm, const compiler *cc, const rotor_compile_options *opt,
                               const rotor_expr *e, int64_t g, int64_t cap, double time_cap, unsigned moved,
                               rotor_candidate *out, bool *fits, rotor_error *err) {
    if (cc->solver == ROTOR_SOLVER_EXACT && !(opt && opt->pipeline_no_prune))
        return stage_walk(pm, cc, opt, e, g, cap, time_cap, moved, out, fits, err);
    const rotor_search_result *fr = NULL;
    bool slow; /* then fr is NULL: no plan is chosen */
    rotor_status st = stage_frontier(pm, cc, opt, e, g, time_cap, cap, moved, &fr, &slow, err);
    *fits = false;
    if (st || !fr) return st;
    double best = INFINITY;
    for (int i = 0; i < fr->npareto; i++) {
        const rotor_candidate *c = &fr->pareto[i];
        if (c->info.memory > cap) continue;
        double t = c->cost.total;
        for (int x = 1; x < e->ntensors; x++)
            if (moved >> x & 1) t += rotor_cost_shift_s(cc->chip, c->info.bytes[x], 0); /* no latency: bytes / beta */
        if (t < best) { /* ties: the faster run, first in the frontier */
            best = t;
            *out = *c;
            *fits = true;
        }
    }
    if (*fits) return ROTOR_OK;
    /* below the frontier's leanest point within the ratio */
    rotor_chip gc = rotor_segment_group_chip(cc->chip, g);
    rotor_search_options so = {.solver = cc->solver, .threads = opt ? opt->threads : 0, .pool = cc->spool};
    so.constraints.memory_cap = cap;
    rotor_search_result r;
    rotor_error serr;
    st = rotor_search(e, &gc, &so, &r, &serr);
    pm->searches++;
    if (st == ROTOR_ERR_NOMEM) {
        if (err) *err = serr;
        return st;
    }
    if (st) return ROTOR_OK;
    *out = r.best;
    *fits = true;
    rotor_search_result_free(&r);
    return ROTOR_OK;
}

/* ---- one segment ------------------------------------------------------------ */

int64_t rotor_stage_buffer_bytes(const rotor_stage *s) {
    int64_t extra = 0;
    for (int t = 1; t < s->micro.ntensors; t++)
        if (s->per_run[t]) extra += s->plan.info.bytes[t]; /* the next run's arrives meanwhile */
    if (s->runs > 1) extra += s->plan.info.bytes[0]; /* a run's output waits while the next computes */
    return extra;
}

int rotor_segment_sole_axis(const rotor_expr *e, int t, int d) {
    const rotor_tensor *x = &e->tensors[t];
    if (d >= x->ndims || x->dims[d].nterms != 1 || x->dims[d].coef[0] != 1) return -1;
    return x->dims[d].axis[0];
}

rotor_status rotor_segment_micro_expr(const rotor_expr *e, int a, int64_t m, rotor_expr *out, rotor_error *err) {
    *out = *e;
    if (a < 0 || a >= e->naxes || m == 1) return ROTOR_OK;
    return rotor_expr_with_extent(e, a, e->extent[a] / m, out, err);
}

typedef struct seg_ctx {
    compiler *cc;
    const rotor_compile_options *opt;
    const rotor_compile_result *base;
    plan_memo memo;
    int64_t idle_total;
    int64_t unit, units; /* group sizes: multiples of unit cores, units of them in all */
    int maxs;
    /* per operator: costed at its own element size or rate, so no stage
     * (rotor_op_priced_apart; choose) */
    bool *apart;
} seg_ctx;

/* The graph operator producing op o's tensor t, or -1 (weights, inputs). */
static int producer_of(const rotor_graph *g, int o, int t) {
    int v = g->ops[o].tensor_value[t];
    return v < 0 ? -1 : g->values[v].producer;
}

/* Group sizes for stages first..last by allocation kind (0: by time, 1: by
 * its square root, 2: equal), largest remainder over sx->units units
 * (at least one a stage: segment_best asks only for S <= units). */
static void allocate(const seg_ctx *sx, int first, int last, int kind, int64_t *g) {
    int S = last - first + 1;
    double w[64], sum = 0;
    for (int k = 0; k < S; k++) {
        const rotor_op_schedule *r = &sx->base->ops[first + k];
        double t = r->exec_s > 0 ? r->exec_s : 1e-12;
        w[k] = kind == 0 ? t : kind == 1 ? sqrt(t) : 1;
        sum += w[k];
    }
    int64_t units[64], left = sx->units;
    double rem[64];
    for (int k = 0; k < S; k++) {
        double share = (double)(sx->units - S) * w[k] / sum; /* one unit each, the rest by weight */
        units[k] = 1 + (int64_t)floor(share);
        rem[k] = share - floor(share);
        left -= units[k];
    }
    while (left > 0) {
        int best = 0;
        for (int k = 1; k < S; k++)
            if (rem[k] > rem[best]) best = k;
        units[best]++;
        rem[best] = -1;
        left--;
    }
    int64_t n = sx->cc->cores, used = 0;
    for (int k = 0; k < S; k++) {
        g[k] = units[k] * sx->unit;
        used += g[k];
    }
    g[S - 1] += n - used; /* the cores the units leave over (none on a mesh) */
}

/* Lays out stage k of *out before any search: its group (cores core0 ..
 * core0 + g[k] - 1), stream axis, runs and micro-batch expression, and
 * where each input comes from. */
static rotor_status stage_layout(const seg_ctx *sx, rotor_segment *out, int k, int64_t core0, const int64_t *g,
                                 rotor_error *err) {
    const rotor_graph *gr = sx->cc->g;
    rotor_stage *sg = &out->stages[k];
    int o = out->first + k, d = out->dim;
    int64_t m = out->micro;
    const rotor_expr *e = &gr->ops[o].expr;
    const op_state *os = &sx->cc->st[o];
    sg->op = o;
    sg->outside_first = out->serial_moves;
    sg->first_core = core0;
    sg->cores = g[k];
    int a = rotor_segment_sole_axis(e, 0, d);
    sg->axis = m > 1 && a >= 0 && e->extent[a] % m == 0 ? a : -1;
    sg->runs = sg->axis >= 0 ? m : 1;
    rotor_status st = rotor_segment_micro_expr(e, sg->axis, m, &sg->micro, err);
    if (st) return st;
    for (int t = 1; t < e->ntensors; t++) {
        sg->from[t] = -1;
        int p = producer_of(gr, o, t);
        if (os->kind[t] != T_ACTIVATION) continue;
        sg->per_run[t] = sg->runs > 1 && e->tensors[t].has_axis[sg->axis];
        if (p < out->first || p > out->last) {
            sg->from[t] = ROTOR_STAGE_OUTSIDE;
            continue;
        }
        sg->from[t] = p - out->first;
        const rotor_stage *ps = &out->stages[p - out->first];
        rotor_view view;
        bool plain = rotor_compile_handoff_view(gr, o, t, &view) && !view.set;
        sg->streamed[t] = plain && ps->axis >= 0 && sg->axis >= 0 && rotor_segment_sole_axis(e, t, d) == sg->axis;
    }
    return ROTOR_OK;
}

/* Stage k's plan (within the budget the unpipelined schedule leaves its
 * operator, less the pipeline's buffers), its memory and its setup; *fits
 * false when no plan fits, or when none runs in time_cap (stage_plan). */
static rotor_status stage_fill(seg_ctx *sx, rotor_segment *out, int k, bool resident, double time_cap, bool *fits,
                               rotor_error *err) {
    compiler *cc = sx->cc;
    rotor_stage *sg = &out->stages[k];
    const rotor_expr *e = &cc->g->ops[sg->op].expr;
    const op_state *os = &cc->st[sg->op];
    *fits = false;
    /* the budget the unpipelined schedule leaves this operator */
    int64_t cap = cc->sram - (sx->idle_total - os->idle_bytes) - os->live;
    if (cap <= 0) return ROTOR_OK;
    /* a first search within the budget, then the pipeline's buffers */
    unsigned moved = 0;
    for (int t = 1; t < e->ntensors; t++)
        if (os->kind[t] == T_ACTIVATION || !resident) moved |= 1u << t;
    rotor_status st =
        stage_plan(&sx->memo, cc, sx->opt, &sg->micro, sg->cores, cap, time_cap, moved, &sg->plan, fits, err);
    if (st || !*fits) return st;
    int64_t extra = rotor_stage_buffer_bytes(sg);
    if (sg->plan.info.memory + extra > cap) {
        st = stage_plan(&sx->memo, cc, sx->opt, &sg->micro, sg->cores, cap - extra, time_cap, moved, &sg->plan, fits,
                        err);
        if (st || !*fits) return st;
        extra = rotor_stage_buffer_bytes(sg); /* the leaner plan's own buffers */
        if (sg->plan.info.memory + extra > cap) {
            *fits = false;
            return ROTOR_OK;
        }
    }
    int64_t used = cc->sram - cap + sg->plan.info.memory + extra;
    if (used > out->peak_bytes) out->peak_bytes = used;
    sg->exec_s = sg->plan.cost.total;
    /* setup: weights unless resident, and what it reads once from before the segment */
    for (int t = 1; t < e->ntensors; t++) {
        int64_t b = sg->plan.info.bytes[t];
        if (os->kind[t] == T_RESIDENT) {
            sg->weight_bytes += b;
            if (!resident) sg->setup_bytes += b;
        } else if (sg->from[t] == ROTOR_STAGE_OUTSIDE && !sg->per_run[t] && !sg->outside_first) {
            sg->setup_bytes += b;
        }
    }
    sg->setup_rounds = sg->setup_bytes > 0;
    sg->setup_s = rotor_compile_setup_s(cc->chip, sg->setup_bytes, sg->setup_rounds);
    if (sg->setup_s > out->setup_s) out->setup_s = sg->setup_s;
    return ROTOR_OK;
}

/* ---- pruning ----------------------------------------------------------------
 *
 * Issue 45: --pipeline spent nearly all its time searching the stage
 * frontiers of candidates that then lost.  A candidate (dimension, count,
 * allocation) wins only below a threshold: the budget segment_best is
 * given (the DP's unpipelined cost of the span) and, once one candidate
 * is kept, that candidate's cost (a later one must be strictly cheaper).
 * So a candidate whose cost is proven >= a floor above the threshold
 * cannot change the choice, and its stages need no search.
 *
 * The floor (proof sketch).  Under cost model v1 (the one stage searches
 * use) every plan's time is compute + communication (or its exposed part)
 * + reduction >= compute = T * t_sub(sub_task), and T * prod sub_task =
 * prod padded / prod F_op >= prod E / g on a group of g cores; t_sub pads
 * each group of axes up, so t_sub(s) >= 2 prod s / R_mm for a contraction
 * and flops_per_point * prod s / R_vec otherwise (op/cost.c).  Hence a
 * stage's run takes at least W / g, W its micro-batch's work at one core's
 * rate (stage_floor).  The segment's times (rotor_segment_times and the
 * interval) only add and take maxima of stage run times, move times and
 * setups, all >= 0: they are monotone in each, so the same model with
 * every unsearched stage's run, moves and setup at their floors is a floor
 * of the segment (segment_floor).  A move or a setup carries a plan's
 * partition, at least the elements the operator reads over the group's
 * cores (part_floor); on a mesh a move is an exchange whose makespan this
 * does not bound, and it is taken as 0 there.  Floating point rounds
 * monotonically, and the floors are taken 1e-9 below the exact quotient,
 * so the floor stays below the cost as computed.  A candidate is dropped only when its floor
 * is strictly above the threshold: ties still go to the earlier candidate,
 * as without pruning.  The floor is checked before any search and again
 * after each stage's plan, with that stage at its real times. */

/* The compute floor of one run of stage sg on its group (above). */
static double stage_floor(const rotor_chip *chip, const rotor_stage *sg) {
    const rotor_expr *e = &sg->micro;
    double points = 1;
    for (int a = 0; a < e->naxes; a++) points *= (double)e->extent[a];
    double rate = e->op_class == ROTOR_OP_CONTRACTION ? rotor_chip_matrix_rate(chip) : rotor_chip_vector_rate(chip);
    double per = e->op_class == ROTOR_OP_CONTRACTION ? 2.0 : (double)e->flops_per_point;
    return per * points / ((double)sg->cores * rate) * (1 - 1e-9);
}

/* The distinct values dimension d takes over e's iteration space, or a
 * floor of them: a plain axis, its extent; a window c * a + b (b's
 * coefficient 1), contiguous when c <= b's extent: c * (E_a - 1) + E_b;
 * else at least its longer term's extent (the values along one term are
 * distinct). */
static double dim_values(const rotor_expr *e, const rotor_dim *d) {
    double most = 1;
    for (int k = 0; k < d->nterms; k++)
        if (d->coef[k] > 0 && (double)e->extent[d->axis[k]] > most) most = (double)e->extent[d->axis[k]];
    if (d->nterms != 2 || d->axis[0] == d->axis[1]) return most;
    for (int k = 0; k < 2; k++) {
        int64_t c = d->coef[1 - k], ea = e->extent[d->axis[1 - k]], eb = e->extent[d->axis[k]];
        if (d->coef[k] == 1 && c > 0 && c <= eb) most = dmax(most, (double)c * (double)(ea - 1) + (double)eb);
    }
    return most;
}

/* A floor of the bytes of any plan's partition of tensor t of stage sg on
 * one core of a group of `cores`: the elements the iteration space reads
 * (when no axis indexes two of its dimensions, the product of dim_values)
 * over the cores.  Every element read is read by some point, whose core's
 * partition holds it (a rotating tensor's ring holds its block between
 * them), and every core of a plan holds a partition of the same bytes, so
 * partition * plan cores >= the elements read, plan cores <= cores.  0 when
 * an axis repeats. */
static int64_t part_floor(const rotor_chip *chip, const rotor_stage *sg, int t, int64_t cores) {
    const rotor_expr *e = &sg->micro;
    const rotor_tensor *x = &e->tensors[t];
    double bytes = (double)chip->element_bytes;
    bool seen[ROTOR_MAX_AXES] = {false};
    for (int d = 0; d < x->ndims; d++) {
        for (int k = 0; k < x->dims[d].nterms; k++) {
            int a = x->dims[d].axis[k];
            if (seen[a] && (k == 0 || a != x->dims[d].axis[0])) return 0;
            seen[a] = true;
        }
        bytes *= dim_values(e, &x->dims[d]);
    }
    double per = floor(bytes / (double)cores * (1 - 1e-9));
    return rotor_i64_held(per);
}

/* Stage k's floors in place of its times (above): its run at the compute
 * floor; on all-to-all each move at rotor_segment_xfer's formula with the
 * receiver's partition and the sender's share at their floors (a sum of
 * partitions over at most g cores is at least the tensor); its setup, the
 * bytes stage_fill counts at their floors.  Returns the setup floor. */
static double stage_floors(const seg_ctx *sx, rotor_segment *s, int k, bool resident) {
    const rotor_chip *chip = sx->cc->chip;
    rotor_stage *sg = &s->stages[k];
    const op_state *os = &sx->cc->st[sg->op];
    sg->exec_s = stage_floor(chip, sg);
    int64_t setup = 0;
    for (int t = 1; t < sg->micro.ntensors; t++) {
        int64_t recv = part_floor(chip, sg, t, sg->cores);
        if (os->kind[t] == T_RESIDENT ? !resident
                                      : sg->from[t] == ROTOR_STAGE_OUTSIDE && !sg->per_run[t] && !sg->outside_first)
            setup = setup > INT64_MAX - recv ? INT64_MAX : setup + recv;
        if (chip->topology == ROTOR_TOPO_MESH || !rotor_segment_moves(sg, t, 0)) continue;
        int64_t b = recv;
        if (sg->from[t] >= 0) {
            int64_t send = part_floor(chip, sg, t, s->stages[sg->from[t]].cores);
            if (send > b) b = send;
        }
        sg->xfer_s[t] = rotor_compile_setup_s(chip, b, 1);
    }
    return setup > 0 ? rotor_compile_setup_s(chip, setup, 1) : 0;
}

/* A floor of s's cost by the objective while stages done.. have no plan:
 * theirs at their floors (stage_floors), the rest as planned; with
 * run_at >= 0, stage done's run takes run_at seconds instead. */
static rotor_status segment_floor(const seg_ctx *sx, rotor_segment *s, int done, double run_at, double *floor_s,
                                  rotor_error *err) {
    double setup = s->setup_s;
    for (int k = done; k < s->nstages; k++) setup = dmax(setup, stage_floors(sx, s, k, s->weights_resident));
    if (run_at >= 0 && done < s->nstages) s->stages[done].exec_s = run_at;
    rotor_status st = ROTOR_OK;
    if (sx->opt->objective == ROTOR_OBJECTIVE_THROUGHPUT) {
        double slowest = 0, in[64], outw[64];
        for (int k = 0; k < s->nstages; k++) slowest = dmax(slowest, s->stages[k].exec_s);
        *floor_s = (double)s->micro * (slowest + move_phase(s, NULL, 0, in, outw));
    } else {
        double run = 0;
        st = rotor_segment_times(s, NULL, NULL, &run, err);
        *floor_s = setup + run;
    }
    for (int k = done; k < s->nstages; k++) {
        s->stages[k].exec_s = 0;
        memset(s->stages[k].xfer_s, 0, sizeof s->stages[k].xfer_s);
    }
    return st;
}

/* ---- time caps ---------------------------------------------------------------
 *
 * Issue 45: the floor above cannot drop the candidates close to the winner,
 * and each of their stages searched a whole frontier.  A stage's search only
 * matters when its run can let the candidate win: when stage k's run takes
 * x, the candidate costs at least L(x), segment_floor with stages < k as
 * planned, stage k's run at x and its moves and setup at their floors, the
 * later stages at their floors.  L is nondecreasing in x (the times only add
 * and take maxima, and rounding is monotone).  stage_time_cap finds, by
 * bisection, an x_cap with L(x_cap) > threshold; if no plan of stage k (any
 * memory within the SRAM, which bounds every budget stage_fill gives) runs
 * in x_cap or less, then whatever plan stage_fill would choose runs in
 * x > x_cap, the candidate costs at least L(x) >= L(x_cap) > threshold, and
 * it cannot be kept: segment_best keeps only a cost strictly below the
 * threshold.  rotor_search_session_within answers "no plan in x_cap" exactly
 * (its time cap only prunes) and far faster than a frontier.  Otherwise the
 * frontier is searched as without the cap, so every candidate that is not
 * dropped gets the very plans it got before: the choice, and every output
 * byte, are those of pipeline_no_prune.  A shape found slower than x_cap
 * is remembered (plan_memo.slower) for later candidates with a smaller cap. */

/* ---- frontier cuts -------------------------------------------------------------
 *
 * Issue 45: the frontier searches of the stages (each up to STAGE_RATIO
 * times the fastest run: one capped search per point for a convolution)
 * were 85% of --pipeline's time, and most of their points cannot be
 * chosen.  stage_plan picks the point p (memory within its budget) that
 * minimises J(p) = run(p) + the moved tensors' partitions over the link
 * rate, ties to the faster point.  Every term of J is >= 0, so J(p) >=
 * run(p).  When the fastest plan f fits the budget, J(f) bounds the
 * choice: a point that runs longer than J(f) has J above J(f) and is not
 * chosen.  So the frontier is searched only up to J(f) / run(f) times the
 * fastest run (front_ratio; rotor_search's pareto_time_ratio keeps exactly
 * the whole frontier's points below that time, docs/cost-model.md), taken
 * 1e-9 above so that rounding cannot drop the point J(f) itself.  f is
 * the time cap's capped search's plan (rotor_search_session_within: the
 * fastest plan, ties as the frontier's first point), or the frontier's
 * first point; after each search the cut is taken again from that first
 * point, and the frontier is searched further if it needs more.  An entry
 * searched for one budget and set of moved tensors is searched again,
 * further, when another needs more (the whole STAGE_RATIO when f does not
 * fit its budget, as before).  The point chosen is the whole frontier's,
 * to the bit (tests/test_segprune.c compares with pipeline_no_prune, which
 * searches whole frontiers).  GoogLeNet at batch 8: the same 46
 * searches, 3.1 s of CPU instead of 5.4 (docs/performance.md). */

/* x_cap for stage k of s (above), or INFINITY when the bisection cannot
 * start (a threshold <= 0). */
static rotor_status stage_time_cap(const seg_ctx *sx, rotor_segment *s, int k, double threshold, double *cap,
                                   rotor_error *err) {
    double lo = 0, hi = 2 * threshold, at;
    *cap = INFINITY;
    if (!(threshold > 0)) return ROTOR_OK;
    /* L(x) >= x: a step runs stage k, and the interval is m steps or more */
    rotor_status st = segment_floor(sx, s, k, hi, &at, err);
    if (st || !(at > threshold)) return st;
    for (int i = 0; i < 40 && !st; i++) {
        double mid = 0.5 * (lo + hi);
        if (!(st = segment_floor(sx, s, k, mid, &at, err))) *(at > threshold ? &hi : &lo) = mid;
    }
    if (!st) *cap = hi;
    return st;
}

/* *hit: whether the frontier of stage sg has been searched (plan_memo). */
static rotor_status stage_searched(const plan_memo *pm, const rotor_stage *sg, bool *hit, rotor_error *err) {
    char *key = memo_key(&sg->micro, sg->cores);
    if (!key) return rotor_nomem(err);
    *hit = false;
    for (int i = 0; i < pm->n && !*hit; i++) *hit = pm->e[i].searched && !strcmp(pm->e[i].key, key);
    free(key);
    return ROTOR_OK;
}

/* Builds and costs segment first..last streaming dimension d in m
 * micro-batches with group sizes g.  *ok false when some stage does not
 * fit, or when the segment's floor is above `threshold` (it cannot win:
 * "Pruning" above; INFINITY: never). */
static rotor_status segment_try(seg_ctx *sx, int first, int last, int d, int64_t m, const int64_t *g,
                                bool resident, double threshold, rotor_segment *out, bool *ok, rotor_error *err) {
    compiler *cc = sx->cc;
    int S = last - first + 1;
    *ok = false;
    memset(out, 0, sizeof *out);
    out->stages = calloc((size_t)S, sizeof *out->stages);
    if (!out->stages) return rotor_nomem(err);
    out->first = first;
    out->last = last;
    out->dim = d;
    out->micro = m;
    out->nstages = S;
    out->weights_resident = resident;
    out->serial_moves = cc->chip->topology == ROTOR_TOPO_MESH;
    /* every stage laid out first: a stage that cannot be (an error) is
     * reported where the stages' loop reaches it, as before pruning */
    int laid = 0;
    int64_t core0 = 0;
    rotor_error lerr = {{0}};
    rotor_status lst = ROTOR_OK;
    for (; laid < S && !lst; laid++, core0 += g[laid - 1]) lst = stage_layout(sx, out, laid, core0, g, &lerr);
    if (lst) laid--;
    bool prune = !sx->opt->pipeline_no_prune && threshold < INFINITY && !lst;
    rotor_status st = ROTOR_OK;
    for (int k = 0; k < S && !st; k++) {
        double floor_s = 0, time_cap = INFINITY;
        if (prune && (st = segment_floor(sx, out, k, -1, &floor_s, err))) break;
        if (prune && floor_s > threshold) return ROTOR_OK;
        if (k == laid) {
            if (err) *err = lerr;
            return lst;
        }
        bool searched = true, fits;
        if (prune && (st = stage_searched(&sx->memo, &out->stages[k], &searched, err))) return st;
        if (!searched && (st = stage_time_cap(sx, out, k, threshold, &time_cap, err))) return st;
        if ((st = stage_fill(sx, out, k, resident, time_cap, &fits, err)) || !fits) return st;
        /* transfers from the stages it reads */
        for (int t = 1; t < out->stages[k].micro.ntensors && !st; t++) {
            if (!rotor_segment_moves(&out->stages[k], t, 0)) continue;
            st = rotor_segment_xfer(cc->chip, out, k, t, &out->stages[k].xfer_bytes[t], &out->stages[k].xfer_s[t],
                                    NULL, NULL, err);
        }
    }
    if (st) return st;
    if (resident) {
        /* a core keeps its stage's weights; every stage's idle layout is released */
        int64_t most = 0, released = 0;
        for (int k = 0; k < S; k++) {
            if (out->stages[k].weight_bytes > most) most = out->stages[k].weight_bytes;
            released += cc->st[first + k].idle_bytes;
        }
        out->idle_added = most > released ? most - released : 0;
    }
    if ((st = rotor_segment_times(out, NULL, NULL, &out->run_s, err))) return st;
    out->total_s = out->setup_s + out->run_s;
    /* batches back to back: once the pipeline is full every step runs every
     * stage and every per-run move, and a batch takes `micro` of them; and
     * each batch's inputs from before the segment are new, so the setup
     * that gathers them is paid again every batch (a decision: not hidden
     * under the runs of the batch before, a bulk-synchronous chip's
     * exchanges being the whole chip's; until 2026-12-02 it was left out,
     * and NeRF at batch 8 claimed 1.65x where 1.14x is the gain) */
    double slowest = 0, in[64], outw[64];
    for (int k = 0; k < S; k++) slowest = dmax(slowest, out->stages[k].exec_s);
    out->interval_s = (double)m * (slowest + move_phase(out, NULL, 0, in, outw)) + out->setup_s;
    *ok = true;
    return ROTOR_OK;
}

/* The setup operator o pays when the hand-offs from operators marked in
 * `gone` are lost (they gather from the even layout instead); on a mesh
 * priced as compile.c chooses setups, by the exchange's bound (*link, *hops:
 * its busiest link and longest route). */
static double setup_without(const compiler *cc, int o, const bool *gone, int64_t *bytes, int64_t *rounds,
                            int64_t *link, int64_t *hops) {
    op_state s = cc->st[o];
    const rotor_expr *e = &cc->g->ops[o].expr;
    for (int t = 1; t < e->ntensors; t++)
        if (s.src[t] >= 0 && gone[s.src[t]]) s.src[t] = -1;
    if (cc->chip->topology == ROTOR_TOPO_MESH) {
        compile_setup_mesh(cc, &s, e, &cc->fr[s.frontier], s.active, s.idle_base, s.idle_k, bytes, rounds, link, hops);
        return *bytes < 0 ? INFINITY : rotor_mesh_setup_s(cc->chip, *link, *rounds, *hops);
    }
    compile_setup_need(cc, &s, e, &cc->fr[s.frontier], s.active, s.idle_base, s.idle_k, bytes, rounds);
    return *bytes < 0 ? INFINITY : rotor_compile_setup_s(cc->chip, *bytes, *rounds);
}

/* What segment first..last adds to later operators' setup (lost hand-offs),
 * each operator priced as if this segment alone were pipelined. */
static double penalty(const seg_ctx *sx, int first, int last, bool *gone) {
    const compiler *cc = sx->cc;
    double add = 0;
    for (int o = first; o <= last; o++) gone[o] = true;
    for (int c = last + 1; c < cc->g->nops; c++) {
        const op_state *s = &cc->st[c];
        if (s->frontier < 0) continue;
        bool hit = false;
        for (int t = 1; t < cc->g->ops[c].expr.ntensors; t++)
            if (s->src[t] >= first && s->src[t] <= last) hit = true;
        if (!hit) continue;
        int64_t b, r, l, h;
        double more = setup_without(cc, c, gone, &b, &r, &l, &h) - sx->base->ops[c].setup_s;
        /* never below the hand-off it loses (the final schedule's rule, below) */
        add += more < 0 ? 0 : more;
    }
    for (int o = first; o <= last; o++) gone[o] = false;
    return add;
}

/* Exported for GraphTurbo's instances (gticca.c), which lose hand-offs
 * the way a segment does: one segment's penalty, and one operator's setup
 * with the hand-offs from `gone` lost. */
double compile_handoffs_lost(compiler *cc, const rotor_compile_result *base, int first, int last, bool *gone) {
    seg_ctx sx = {.cc = cc, .base = base};
    return penalty(&sx, first, last, gone);
}

double compile_setup_lost(const compiler *cc, int o, const bool *gone, int64_t *bytes, int64_t *rounds) {
    int64_t link, hops;
    return setup_without(cc, o, gone, bytes, rounds, &link, &hops);
}

static double seg_cost(const seg_ctx *sx, const rotor_segment *s) {
    return sx->opt->objective == ROTOR_OBJECTIVE_THROUGHPUT ? s->interval_s : s->total_s;
}

/* The micro-batch counts tried: 2^i and 3 * 2^i (KAPLA's top-k keeps a few
 * candidates per segment; these divide the batch and row extents models
 * have, and halve the searches against every count up to the cap). */
static bool micro_count(int64_t m) {
    while (m % 2 == 0) m /= 2;
    return m == 1 || m == 3;
}

/* A bound below any one-run (m = 1) candidate of first..last by the
 * objective (conservative pruning, KAPLA §IV-B): with one run no stage
 * overlaps the stages it reads, so the segment takes at least the longest
 * chain of reads, each stage at least its operator's fastest plan on all the
 * cores (a plan on a group is a plan of the whole chip at the same per-core
 * rates); the interval, at least the slowest such stage. */
static double one_run_floor(const seg_ctx *sx, int first, int last) {
    const compiler *cc = sx->cc;
    double path[64], worst = 0, longest = 0;
    for (int o = first; o <= last; o++) {
        const op_state *s = &cc->st[o];
        double fastest = cc->fr[s->frontier].v[0].cost.total, before = 0;
        for (int t = 1; t < cc->g->ops[o].expr.ntensors; t++) {
            int p = producer_of(cc->g, o, t);
            if (s->kind[t] == T_ACTIVATION && p >= first && p < o && path[p - first] > before) before = path[p - first];
        }
        path[o - first] = before + fastest;
        if (path[o - first] > longest) longest = path[o - first];
        if (fastest > worst) worst = fastest;
    }
    return sx->opt->objective == ROTOR_OBJECTIVE_THROUGHPUT ? worst : longest;
}

/* The best segment over first..last costing less than `budget` by the
 * objective (any stream dimension, micro-batch count and allocation); *ok
 * false when none fits or beats it. */
static rotor_status segment_best(seg_ctx *sx, int first, int last, bool resident, double budget,
                                 rotor_segment *best, bool *ok, rotor_error *err) {
    const rotor_graph *g = sx->cc->g;
    bool one_run = one_run_floor(sx, first, last) < budget;
    int64_t maxm = sx->opt->max_micro > 0 ? sx->opt->max_micro : DEFAULT_MICRO;
    int maxrank = 0;
    for (int o = first; o <= last; o++)
        if (g->ops[o].expr.tensors[0].ndims > maxrank) maxrank = g->ops[o].expr.tensors[0].ndims;
    *ok = false;
    memset(best, 0, sizeof *best);
    if (last - first + 1 > sx->units) return ROTOR_OK; /* a mesh of fewer rows than stages */
    for (int kind = 0; kind < NALLOC; kind++) {
        int64_t gs[64];
        allocate(sx, first, last, kind, gs);
        bool dup = false; /* the same sizes as an earlier allocation */
        for (int k2 = 0; k2 < kind && !dup; k2++) {
            int64_t g2[64];
            allocate(sx, first, last, k2, g2);
            dup = !memcmp(gs, g2, sizeof(int64_t) * (size_t)(last - first + 1));
        }
        if (dup) continue;
        for (int d = 0; d < maxrank; d++)
            for (int64_t m = 1; m <= maxm; m++) {
                if (!micro_count(m)) continue;
                if (m == 1 && (d > 0 || !one_run)) continue; /* one run: the dimension does not matter */
                /* m must slice some stage, and stream some tensor (else
                 * micro-batches only add rounds) */
                bool streams = m == 1;
                for (int o = first + 1; o <= last && !streams; o++) {
                    const rotor_expr *e = &g->ops[o].expr;
                    int a = rotor_segment_sole_axis(e, 0, d);
                    if (a < 0 || e->extent[a] % m) continue;
                    for (int t = 1; t < e->ntensors && !streams; t++) {
                        int p = producer_of(g, o, t);
                        if (p < first || p >= o || rotor_segment_sole_axis(e, t, d) != a) continue;
                        int pa = rotor_segment_sole_axis(&g->ops[p].expr, 0, d);
                        streams = pa >= 0 && g->ops[p].expr.extent[pa] % m == 0;
                    }
                }
                if (!streams) continue;
                rotor_segment s;
                bool fits;
                double threshold = *ok ? seg_cost(sx, best) : budget; /* what s must beat */
                rotor_status st = segment_try(sx, first, last, d, m, gs, resident, threshold, &s, &fits, err);
                if (st) {
                    rotor_segment_free(&s);
                    rotor_segment_free(best);
                    return st;
                }
                if (fits && seg_cost(sx, &s) < budget && (!*ok || seg_cost(sx, &s) < seg_cost(sx, best))) {
                    rotor_segment_free(best);
                    *best = s;
                    *ok = true;
                } else {
                    rotor_segment_free(&s);
                }
            }
    }
    return ROTOR_OK;
}

static double single_cost(const rotor_op_schedule *r) { return r->setup_s + r->exec_s; }

/* KAPLA §IV-B's dynamic program over the chain: cost[j] is the best
 * schedule of operators 0..j-1, each either as unpipelined or the last of a
 * segment; the chosen segments go to *segs (by first operator). */
static rotor_status choose(seg_ctx *sx, bool resident, rotor_segment **segs, int *nsegs, int64_t *added,
                           rotor_error *err) {
    compiler *cc = sx->cc;
    const rotor_compile_result *out = sx->base;
    int n = cc->g->nops, maxs = sx->maxs;
    *segs = NULL;
    *nsegs = 0;
    *added = 0;
    double *cost = malloc(sizeof(double) * (size_t)(n + 1));
    int *from = malloc(sizeof(int) * (size_t)(n + 1));
    bool *gone = calloc((size_t)n, sizeof *gone);
    rotor_segment *cand = calloc((size_t)n * (size_t)maxs, sizeof *cand);
    rotor_status st = ROTOR_OK;
    if (!cost || !from || !gone || !cand) st = rotor_nomem(err);
    if (!st) cost[0] = 0;
    for (int j = 1; !st && j <= n; j++) {
        int o = j - 1;
        cost[j] = cost[j - 1] + single_cost(&out->ops[o]);
        from[j] = j - 1;
        for (int len = 2; len <= maxs && len <= j; len++) {
            int first = j - len;
            if (cc->st[first].frontier < 0 || cc->st[o].frontier < 0) break; /* vendor ops keep every core */
            /* an operator over quantized integers costed at its own element
             * size or rate (opelem.h) is no segment's stage: a segment's
             * stage plans are searched, moved and replayed at the chip's;
             * it stays in T10's schedule, priced as it runs (until
             * 2026-12-02 a segment could take it at e = 2 and the FP16 rate) */
            if (sx->apart[first] || sx->apart[o]) break;
            rotor_segment *s = &cand[(size_t)o * (size_t)maxs + (size_t)len - 1];
            bool ok;
            double pen = penalty(sx, first, o, gone);
            if ((st = segment_best(sx, first, o, resident, cost[j] - cost[first] - pen, s, &ok, err))) break;
            if (!ok) continue;
            double c = cost[first] + seg_cost(sx, s) + pen;
            if (c < cost[j]) {
                cost[j] = c;
                from[j] = first;
            }
        }
    }
    int nseg = 0;
    for (int j = n; !st && j > 0; j = from[j])
        if (from[j] < j - 1) nseg++;
    if (!st && nseg && !(*segs = calloc((size_t)nseg, sizeof **segs))) st = rotor_nomem(err);
    if (!st) {
        int k = nseg;
        for (int j = n; j > 0 && nseg; j = from[j]) {
            if (from[j] == j - 1) continue;
            size_t at = (size_t)(j - 1) * (size_t)maxs + (size_t)(j - from[j]) - 1;
            (*segs)[--k] = cand[at];
            *added += cand[at].idle_added;
            memset(&cand[at], 0, sizeof cand[at]); /* moved */
        }
        *nsegs = nseg;
    }
    for (size_t i = 0; cand && i < (size_t)n * (size_t)maxs; i++) rotor_segment_free(&cand[i]);
    free(cost);
    free(from);
    free(gone);
    free(cand);
    return st;
}

rotor_status compile_segments_check(const rotor_chip *chip, rotor_error *err) {
    if (chip->chips != 1)
        return rotor_fail(err, ROTOR_ERR_INPUT,
                          "--pipeline: chip '%s' is several chips; pipelining over core groups needs one chip with an "
                          "all-to-all exchange (docs/kapla.md)",
                          chip->name);
    if (chip->topology == ROTOR_TOPO_MESH) {
        if (chip->mesh_height < 2)
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "--pipeline: chip '%s' is a mesh of %lld row; groups are bands of whole rows and "
                              "need at least 2",
                              chip->name, (long long)chip->mesh_height);
        return ROTOR_OK;
    }
    if (rotor_chip_cores(chip) < UNITS)
        return rotor_fail(err, ROTOR_ERR_INPUT, "--pipeline: chip '%s' has %lld cores; groups need at least %d",
                          chip->name, (long long)rotor_chip_cores(chip), UNITS);
    return ROTOR_OK;
}

rotor_status compile_segments(compiler *cc, const rotor_compile_options *opt, rotor_compile_result *out,
                              rotor_error *err) {
    const rotor_graph *g = cc->g;
    int n = g->nops;
    out->objective = opt->objective;
    out->unpipelined_s = out->total_s;
    seg_ctx sx = {.cc = cc, .opt = opt, .base = out, .unit = cc->cores / UNITS, .units = UNITS};
    if (cc->chip->topology == ROTOR_TOPO_MESH) { /* bands of whole rows */
        sx.unit = cc->chip->mesh_width;
        sx.units = cc->chip->mesh_height;
    }
    sx.maxs = opt->max_stages > 0 ? opt->max_stages : DEFAULT_STAGES;
    if (sx.maxs > 64) sx.maxs = 64;
    for (int o = 0; o < n; o++) sx.idle_total += cc->st[o].idle_bytes;
    if (!(sx.apart = calloc((size_t)(n ? n : 1), sizeof *sx.apart))) return rotor_nomem(err);
    out->pipeline_kept_out = 0;
    for (int o = 0; o < n; o++) out->pipeline_kept_out += sx.apart[o] = rotor_op_priced_apart(g, o, cc->chip);
    /* First with every stage's weights kept in its group; if the weights
     * kept do not fit beside the rest of the schedule (its slack: the SRAM
     * less the unpipelined peak), again with weights gathered at setup. */
    rotor_segment *segs = NULL;
    int nseg = 0;
    int64_t added = 0;
    rotor_status st = choose(&sx, true, &segs, &nseg, &added, err);
    /* the weights kept stay through every segment's run, so they must fit
     * beside the highest peak of the schedule, a segment's included (the
     * final peak below is that highest plus them): against the unpipelined
     * peak alone, BERT-Base at batch 1 kept 3,772 B a core too many and the
     * program's own check refused it (without weights kept, nothing is
     * added and every segment's peak is within the SRAM: stage_fill) */
    int64_t peak = out->peak_bytes;
    for (int s = 0; !st && s < nseg; s++)
        if (segs[s].peak_bytes > peak) peak = segs[s].peak_bytes;
    if (!st && added > cc->sram - peak) {
        for (int s = 0; s < nseg; s++) rotor_segment_free(&segs[s]);
        free(segs);
        st = choose(&sx, false, &segs, &nseg, &added, err);
    }
    out->segments = segs;
    out->nsegments = nseg;
    bool *gone = st ? NULL : calloc((size_t)n, sizeof *gone);
    if (!st && !gone) st = rotor_nomem(err);
    /* the final schedule, costed exactly */
    if (!st) {
        for (int s = 0; s < out->nsegments; s++)
            for (int o = out->segments[s].first; o <= out->segments[s].last; o++) {
                gone[o] = true;
                out->ops[o].segment = s + 1;
            }
        double total = 0, setup = 0, pipe = 0, compute = 0, comm = 0, red = 0, hid = 0;
        for (int o = 0; o < n; o++) {
            rotor_op_schedule *r = &out->ops[o];
            if (r->segment) continue;
            if (!r->vendor) {
                bool hit = false;
                for (int t = 1; t < g->ops[o].expr.ntensors; t++) hit |= r->handoff[t] && gone[r->handoff[t] - 1];
                if (hit) {
                    int64_t l = 0, h = 0, bytes, rounds;
                    double lost = setup_without(cc, o, gone, &bytes, &rounds, &l, &h);
                    if (bytes < 0) {
                        st = cc->hst ? cc->hst : ROTOR_ERR_INPUT;
                        if (err) *err = cc->herr;
                        break;
                    }
                    /* a lost hand-off is never priced below the hand-off:
                     * the segment's output lies in its last stage's layout
                     * on its group, not in the even layout the gather's
                     * price assumes (docs/compile.md: the even model counts
                     * moving a value into it as free), so where that price
                     * is the lower, the tensor still crosses the chip once,
                     * at the hand-off's price, and the program keeps the
                     * hand-off (GraphTurbo's instances do the same,
                     * gticca.c) */
                    if (lost >= r->setup_s) {
                        for (int t = 1; t < g->ops[o].expr.ntensors; t++)
                            if (r->handoff[t] && gone[r->handoff[t] - 1]) {
                                r->handoff[t] = 0;
                                memset(&r->handoff_view[t], 0, sizeof r->handoff_view[t]);
                            }
                        r->setup_s = lost, r->setup_bytes = bytes, r->setup_rounds = rounds;
                        if (cc->chip->topology == ROTOR_TOPO_MESH) r->setup_link_bytes = l, r->setup_hops = h;
                    }
                }
                compute += r->compute_s;
                comm += r->comm_s;
                red += r->reduction_s;
                hid += r->hidden_s;
                setup += r->setup_s;
            }
            total += r->setup_s + r->exec_s;
        }
        for (int s = 0; s < out->nsegments; s++) {
            total += out->segments[s].total_s;
            setup += out->segments[s].setup_s;
            pipe += out->segments[s].run_s;
        }
        if (!st) {
            out->total_s = total;
            out->setup_s = setup;
            out->pipeline_s = pipe;
            out->compute_s = compute;
            out->comm_s = comm;
            out->reduction_s = red;
            out->hidden_s = hid;
            for (int s = 0; s < out->nsegments; s++)
                if (out->segments[s].peak_bytes > out->peak_bytes) out->peak_bytes = out->segments[s].peak_bytes;
            out->peak_bytes += added;
            out->idle_bytes += added;
        }
    }
    out->pipeline_searches = sx.memo.searches;
    plan_memo_free(&sx.memo);
    free(sx.apart);
    free(gone);
    return st;
}
