/* rotor — the energy model: a compiled program's events, priced with the
 * chip's coefficients (docs/energy.md; header in rotor/compile/energy.h).
 *
 * The counts follow the tasks rotor_replay emits (src/sim/replay.c), so
 * that the simulator, which counts the events of the tasks it is given,
 * agrees with the model: the model is the replay's task list without the
 * timing.  Where the replay reads the plan (placement, senders, hand-off
 * pieces) this file calls the same op-stage functions. */
#include "rotor/compile/energy.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/base/topology.h"
#include "compile/energystore.h"
#include "rotor/compile/plancache.h"
#include "rotor/compile/segment.h"
#include "rotor/op/cost.h"
#include "rotor/op/handoff.h"
#include "rotor/op/meshmap.h"
#include "rotor/op/place.h"
#include "rotor/op/reduction.h"

void rotor_energy_price(const rotor_chip *chip, const rotor_energy_counts *c, double seconds, rotor_energy *out) {
    const double pj = 1e-12;
    out->compute_j = ((double)c->matrix_flops / 2.0 * chip->mac_pj + (double)c->vector_flops * chip->vector_flop_pj) * pj;
    out->sram_j = ((double)c->sram_read_bytes * chip->sram_read_pj + (double)c->sram_write_bytes * chip->sram_write_pj) * pj;
    out->link_j = (double)c->byte_hops * chip->link_pj * pj;
    out->hbm_j = (double)c->hbm_bytes * chip->hbm_pj * pj;
    out->interchip_j = (double)c->interchip_bytes * chip->interchip_pj * pj;
    out->static_j = chip->static_w * (double)chip->chips * seconds;
    out->total_j = out->compute_j + out->sram_j + out->link_j + out->hbm_j + out->interchip_j + out->static_j;
    out->seconds = seconds;
    out->edp = out->total_j * seconds;
}

bool rotor_energy_subtask_bytes(const rotor_expr *e, const int64_t *sub, int64_t elem, int64_t steps,
                                int64_t *read, int64_t *written) {
    int64_t rd = 0, wr = 0;
    for (int t = 0; t < e->ntensors; t++) {
        int64_t tile = elem;
        for (int a = 0; a < e->naxes; a++)
            if (e->tensors[t].has_axis[a] && !rotor_mul_i64(tile, sub[a], &tile)) return false;
        /* inputs read once; the output read (accumulated into) and written once */
        if (!rotor_add_i64(rd, tile, &rd)) return false;
        if (t == 0) wr = tile;
    }
    return rotor_mul_i64(rd, steps, read) && rotor_mul_i64(wr, steps, written);
}

int64_t rotor_energy_vendor_flops(const rotor_chip *chip, double exec_s) {
    double f = exec_s * rotor_chip_vector_rate(chip);
    return f > 0 && f < 9e18 ? llround(f) : 0;
}

/* What the model walks: the chip, the running counts, and overflow. */
typedef struct counter {
    const rotor_chip *chip;
    int64_t n; /* cores */
    const int64_t *phys; /* on a mesh: the current plan's layout (op/meshmap.h), as the replay lays it */
    int64_t pair_hops;   /* every two cores' hops when the topology has one distance (rotor_topo), else 0 */
    bool chips;          /* more than one chip: transfers between them are counted apart */
    rotor_energy_counts c;
    bool overflow;
} counter;

/* A counter on chip from acc.  The topology's one distance is looked up
 * once, not per transfer: a setup's gathers are millions of transfers
 * (issue 45: most of the program phase). */
static counter counter_make(const rotor_chip *chip, const rotor_energy_counts *acc) {
    const rotor_topo *t = rotor_topo_find(chip->topology);
    counter k = {.chip = chip, .n = rotor_chip_cores(chip), .pair_hops = t ? t->pair_hops : 0};
    k.chips = chip->cores_per_chip < k.n;
    if (acc) k.c = *acc;
    return k;
}

static void add(counter *k, int64_t *sum, int64_t v) {
    if (!rotor_add_i64(*sum, v, sum)) k->overflow = true;
}

/* One transfer of `bytes` between cores (docs/energy.md, "Events"). */
static void transfer(counter *k, int64_t src, int64_t dst, int64_t bytes) {
    int64_t bh, hops = k->pair_hops ? k->pair_hops : rotor_topo_hops(k->chip, src, dst);
    if (!rotor_mul_i64(bytes, hops, &bh)) k->overflow = true;
    add(k, &k->c.byte_hops, bh);
    add(k, &k->c.sram_read_bytes, bytes);
    add(k, &k->c.sram_write_bytes, bytes);
    if (k->chips && src / k->chip->cores_per_chip != dst / k->chip->cores_per_chip)
        add(k, &k->c.interchip_bytes, bytes);
}

/* The setup of an expression operator: hand-off pieces and the uniform rest
 * in one exchange, or, without a hand-off, setup_rounds gathers of
 * setup_bytes (replay_handoff, replay_setup).  The exchange cuts pieces
 * into packets; their bytes and endpoints are the pieces'. */
/* The chip core of plan core c on cores core0 .. (replay_at). */
static int64_t at(const counter *k, int64_t core0, int64_t c) { return core0 + (k->phys ? k->phys[c] : c); }

/* A gather of `bytes` into each of the plan's cores 0 .. cores - 1 on
 * core0 .. (at) in `rounds` rounds of equal pieces, round r into chip core
 * c from (c + r) mod N, as replay_setup sends it. */
static void count_rounds(counter *k, int64_t core0, int64_t cores, int64_t bytes, int64_t rounds) {
    if (bytes <= 0 || rounds <= 0 || k->n < 2) return;
    if (!k->phys && !k->chips && k->pair_hops > 0 && core0 >= 0 && cores <= k->n - core0) {
        /* One chip of one distance: round r's sources are cores + r, none
         * of them the receiver unless r is a multiple of N, so a round is
         * `cores` transfers of one piece, added at once.  The counts are
         * those of the loop below; the sums only grow, so they leave int64
         * here exactly when they would there (issue 45: this loop was most
         * of GoogLeNet's program phase). */
        for (int64_t r = 1; r <= rounds; r++) {
            int64_t piece = rotor_gather_piece(bytes, rounds, r), all, bh;
            if (r % k->n == 0) continue;
            if (!rotor_mul_i64(piece, cores, &all) || !rotor_mul_i64(all, k->pair_hops, &bh)) {
                k->overflow = true;
                return;
            }
            add(k, &k->c.byte_hops, bh);
            add(k, &k->c.sram_read_bytes, all);
            add(k, &k->c.sram_write_bytes, all);
        }
        return;
    }
    for (int64_t r = 1; r <= rounds; r++)
        for (int64_t j = 0; j < cores; j++) {
            /* on a mesh the nearest cores stand in for the sources (rotor_mesh_near) */
            int64_t c = at(k, core0, j), s = k->phys ? rotor_mesh_near(k->chip, c, r) : (c + r) % k->n;
            int64_t piece = rotor_gather_piece(bytes, rounds, r);
            if (s != c) transfer(k, s, c, piece);
        }
}

/* Lays plan out as the replay does (replay_lay_out): k->phys, into buf of
 * info->cores, on a mesh; nothing otherwise. */
static rotor_status lay_out(counter *k, const rotor_expr *e, const rotor_plan *p, const rotor_plan_info *info,
                            const rotor_chip *chip, int64_t **buf, rotor_error *err) {
    k->phys = NULL;
    if (chip->topology != ROTOR_TOPO_MESH) return ROTOR_OK;
    free(*buf);
    if (!(*buf = malloc((size_t)info->cores * sizeof **buf))) return rotor_nomem(err);
    rotor_status st = rotor_mesh_map_cores(e, chip, p, info, *buf, err);
    if (!st) k->phys = *buf;
    return st;
}

static rotor_status count_setup_piece(void *ctx, int64_t dst, int64_t src, int64_t bytes) {
    transfer(ctx, src, dst, bytes);
    return ROTOR_OK;
}

/* rotor_setup_gather: the uniform rest of a setup, off a mesh, as
 * count_rounds counts a gather (the same transfers, in another order: the
 * sums are the same). */
static void count_gather(void *ctx, int64_t cores, int64_t bytes, int64_t rounds) {
    count_rounds(ctx, 0, cores, bytes, rounds);
}

/* ---- placements, kept while they are among the last used -----------------
 *
 * An operator's active plan was placed for its tiles and again for its
 * setup, and once more, with its hand-off, as the producer of each operator
 * that gathers from it (issue 45: DenseNet-121's warm energy model, 770 M
 * instructions of the compile's 2,100 M; 664 M with the placements kept).
 * The model keeps the placements of its last used operators, with their
 * hand-offs once asked: PLACES of them, fewer on a chip of many cores (a
 * wafer's placement is megabytes), never fewer than PLACES_MIN.  One
 * operator's count holds at most five at once (itself and four producers),
 * and the slot made room with is the least recently used, so none it holds
 * is freed under it. */
#define PLACES 16
#define PLACES_MIN 6           /* one count's five, and one to make room with */
#define PLACE_BUDGET (1 << 20) /* cores over the slots kept: a wafer keeps PLACES_MIN */
typedef struct place_slot {
    int op; /* -1: empty */
    uint64_t used;
    rotor_place *pl;
    rotor_handoff *h; /* NULL until asked */
} place_slot;

typedef struct placer {
    const rotor_program *p;
    int n; /* slots in use: PLACES_MIN .. PLACES, by the chip's cores */
    place_slot s[PLACES];
    uint64_t clock;
} placer;

static int placer_slots(int64_t cores) {
    int64_t n = PLACE_BUDGET / (cores > 0 ? cores : 1);
    return n < PLACES_MIN ? PLACES_MIN : n > PLACES ? PLACES : (int)n;
}

static void placer_free(placer *pr) {
    for (int i = 0; i < PLACES; i++) {
        rotor_handoff_free(pr->s[i].h); /* it reads the placement's expression: first */
        rotor_place_free(pr->s[i].pl);
    }
}

/* rotor_setup_placer: program operator op's placement (and hand-off). */
static rotor_status place_op(void *ctx, int op, const rotor_place **pl, const rotor_handoff **h, rotor_error *err) {
    placer *pr = ctx;
    place_slot *s = NULL, *old = &pr->s[0];
    for (int i = 0; i < pr->n && !s; i++) {
        if (pr->s[i].pl && pr->s[i].op == op) s = &pr->s[i];
        else if (!pr->s[i].pl || (old->pl && pr->s[i].used < old->used)) old = &pr->s[i];
    }
    if (!s) {
        s = old;
        rotor_handoff_free(s->h);
        rotor_place_free(s->pl);
        *s = (place_slot){.op = op};
        const rotor_program_op *po = &pr->p->ops[op];
        rotor_status st = rotor_place_make(&po->expr, &po->active, &po->active_info, &s->pl, err);
        if (st) return st;
    }
    s->used = ++pr->clock;
    if (h && !s->h) {
        rotor_status st = rotor_handoff_make(s->pl, &s->h, err);
        if (st) return st;
    }
    *pl = s->pl;
    if (h) *h = s->h;
    return ROTOR_OK;
}

/* The pieces are counted as they come (rotor_setup_pieces_visit_of), not
 * listed first: the list's growth was a tenth of a warm compile. */
static rotor_status count_setup(counter *k, const rotor_program *p, int op, placer *pr, rotor_error *err) {
    const rotor_program_op *po = &p->ops[op];
    int64_t cores = po->active_info.cores, rounds = po->setup_rounds, n = 0;
    rotor_status st =
        rotor_setup_pieces_visit_of(p, op, k->chip, k->n, place_op, pr, count_setup_piece, count_gather, k, &n, err);
    if (st || n > 0) return st;
    count_rounds(k, 0, cores, po->setup_bytes, rounds);
    return ROTOR_OK;
}

/* The reduce-scatter's transfers: R_Y - 1 rounds in each group of the cores
 * holding one output partition, member u to u + 1 (replay_reduction); the
 * plan's core c is the chip's core0 + c. */
static rotor_status count_reduction(counter *k, const rotor_place *pl, const int64_t *i, int64_t core0,
                                    rotor_error *err) {
    const rotor_plan_info *info = rotor_place_info(pl);
    int64_t R = info->rings[0], cores = info->cores;
    if (R <= 1) return ROTOR_OK;
    int64_t *pairs = malloc((size_t)cores * 2 * sizeof *pairs);
    if (!pairs) return rotor_nomem(err);
    rotor_reduction_groups(pl, i, pairs);
    /* every round moves the same pieces between the same cores: one
     * transfer of R - 1 pieces each (the counts are sums of non-negative
     * terms, so they equal the round-by-round ones and leave int64 alike) */
    int64_t piece = (info->bytes[0] + R - 1) / R, bytes;
    if (!rotor_mul_i64(piece, R - 1, &bytes)) k->overflow = true;
    for (int64_t g = 0; !k->overflow && g + R <= cores; g += R)
        for (int64_t u = 0; u < R; u++)
            transfer(k, at(k, core0, pairs[2 * (g + u) + 1]), at(k, core0, pairs[2 * (g + (u + 1) % R) + 1]), bytes);
    free(pairs);
    return ROTOR_OK;
}

/* Sub-tasks, shifts and reduction of one plan (placed as pl) on cores
 * core0 .. core0 + info->cores - 1 (replay_tiles), its sub-tasks' SRAM
 * bytes at elem bytes an element (the operator's own, rotor_chip_for_op:
 * an 8-bit operator's are 1 byte, not the chip's 2). */
static rotor_status count_tiles(counter *k, const rotor_place *pl, int64_t core0, int64_t elem, rotor_error *err) {
    const rotor_expr *e = rotor_place_expr(pl);
    const rotor_plan_info *info = rotor_place_info(pl);
    rotor_status st;
    int64_t cores = info->cores, fl = e->flops_per_point, total, rd, wr;
    bool ok = true;
    for (int a = 0; a < e->naxes && ok; a++) ok = rotor_mul_i64(fl, info->sub_task[a], &fl);
    ok = ok && rotor_mul_i64(fl, info->total_steps, &total) && rotor_mul_i64(total, cores, &total) &&
         rotor_energy_subtask_bytes(e, info->sub_task, elem, info->total_steps, &rd, &wr) &&
         rotor_mul_i64(rd, cores, &rd) && rotor_mul_i64(wr, cores, &wr);
    if (!ok) k->overflow = true;
    else {
        add(k, e->op_class == ROTOR_OP_CONTRACTION ? &k->c.matrix_flops : &k->c.vector_flops, total);
        add(k, &k->c.sram_read_bytes, rd);
        add(k, &k->c.sram_write_bytes, wr);
    }
    int64_t i_old[ROTOR_MAX_AXES], i_new[ROTOR_MAX_AXES];
    rotor_place_loop(pl, 0, i_old);
    for (int64_t s = 1; s < info->total_steps; s++) {
        rotor_place_loop(pl, s, i_new);
        for (int t = 0; t < e->ntensors; t++) {
            if (!rotor_place_changes(pl, t, i_old, i_new)) continue;
            for (int64_t c = 0; c < cores; c++) {
                int64_t from = rotor_place_sender(pl, t, c, i_old, i_new, false);
                if (from != c) transfer(k, at(k, core0, from), at(k, core0, c), info->bytes[t]);
            }
        }
        memcpy(i_old, i_new, sizeof i_old);
    }
    st = count_reduction(k, pl, i_old, core0, err);
    return st;
}

/* count_tiles of a plan placed here. */
static rotor_status count_tiles_of(counter *k, const rotor_expr *e, const rotor_plan *plan,
                                   const rotor_plan_info *info, int64_t core0, rotor_error *err) {
    rotor_place *pl = NULL;
    rotor_status st = rotor_place_make(e, plan, info, &pl, err);
    if (!st) st = count_tiles(k, pl, core0, k->chip->element_bytes, err);
    rotor_place_free(pl);
    return st;
}

static rotor_status count_piece(void *ctx, int64_t src, int64_t dst, int64_t bytes, int64_t port, rotor_error *err) {
    (void)port;
    (void)err;
    transfer(ctx, src, dst, bytes);
    return ROTOR_OK;
}

/* A move on a mesh's bands: rotor_segment_xfer's packets, as
 * replay_mesh_move sends them. */
static rotor_status count_mesh_move(counter *k, const rotor_segment *s, int q, int t, rotor_error *err) {
    rotor_mesh_packet *pk = NULL;
    int64_t np = 0, bytes;
    double xs;
    rotor_status st = rotor_segment_xfer(k->chip, s, q, t, &bytes, &xs, &pk, &np, err);
    for (int64_t i = 0; i < np && !st; i++) transfer(k, pk[i].src, pk[i].dst, pk[i].bytes);
    free(pk);
    return st;
}

/* A pipelined segment (replay_segment): every group's setup gathers, every
 * stage's runs, and the moves into each run (rotor_segment_move_pieces;
 * per-run inputs from before the segment, rotor_segment_outside_pieces).
 * On a mesh's bands (rotor_segment_in_bands) each stage's plan lies on its
 * band and each move is its exchange's packets. */
static rotor_status count_segment(counter *k, const rotor_segment *s, rotor_error *err) {
    rotor_status st = ROTOR_OK;
    bool band = rotor_segment_in_bands(s, k->chip);
    int64_t *phys = NULL;
    for (int q = 0; q < s->nstages && !st; q++) {
        const rotor_stage *sg = &s->stages[q];
        int64_t lo = sg->first_core;
        rotor_chip gc = rotor_segment_group_chip(k->chip, sg->cores);
        k->phys = NULL;
        if (band) st = lay_out(k, &sg->micro, &sg->plan.plan, &sg->plan.info, &gc, &phys, err);
        if (!st) count_rounds(k, lo, sg->plan.info.cores, sg->setup_bytes, sg->setup_rounds);
        for (int64_t i = 0; i < sg->runs && !st; i++) {
            for (int t = 1; t < sg->micro.ntensors && !st; t++) {
                if (!rotor_segment_moves(sg, t, i)) continue;
                if (band) st = count_mesh_move(k, s, q, t, err);
                else if (sg->from[t] >= 0)
                    st = rotor_segment_move_pieces(&s->stages[sg->from[t]], sg, t, count_piece, k, err);
                else st = rotor_segment_outside_pieces(sg, t, k->n, count_piece, k, err);
            }
            if (!st) st = count_tiles_of(k, &sg->micro, &sg->plan.plan, &sg->plan.info, lo, err);
        }
    }
    k->phys = NULL;
    free(phys);
    return st;
}

/* ---- the events of repeated operators, counted once ----------------------
 *
 * An expression operator's setup and tiles (count_setup, count_tiles) are a
 * function of what the program says of it and of the operators it gathers
 * from: expressions, element sizes, active plans, setup bytes and rounds,
 * hand-off tensors and views (every core is named from core 0, a mesh's
 * layout from the plan).  Repeated layers repeat all of it, so the counts
 * are kept per operator content and added again (issue 45: the setup
 * pieces were a fifth of a warm compile).  The counts are sums of
 * nonnegative terms, so adding an operator's own sum gives the same
 * totals, and the same overflow, as adding its terms. */

typedef struct op_memo {
    uint64_t h;
    char *key; /* NULL: empty */
    size_t len;
    rotor_energy_counts c;
} op_memo;

/* An operator's key, in a buffer made once per program: at most five
 * operators' texts and integers (itself and up to four producers),
 * OP_KEY_MAX bytes; a key that would not fit is not memoised (ok false). */
#define OP_KEY_MAX (ROTOR_MAX_TENSORS * (ROTOR_EXPR_TEXT_MAX + 2048))
typedef struct keybuf {
    char *p;
    size_t n;
    bool ok;
} keybuf;

static void kb_put(keybuf *b, const void *v, size_t n) {
    if (!b->ok || b->n + n > OP_KEY_MAX) {
        b->ok = false;
        return;
    }
    memcpy(b->p + b->n, v, n);
    b->n += n;
}

static void kb_i64(keybuf *b, int64_t v) { kb_put(b, &v, sizeof v); }

/* An operator's expression (text and extents), element size and active
 * plan's meaningful entries. */
static void kb_op(keybuf *b, const rotor_program_op *po) {
    const rotor_expr *e = &po->expr;
    kb_put(b, e->text, strlen(e->text) + 1);
    kb_i64(b, po->elem.bytes);
    kb_i64(b, po->elem.int8);
    kb_i64(b, e->naxes);
    for (int a = 0; a < e->naxes; a++) {
        kb_i64(b, e->extent[a]);
        kb_i64(b, po->active.fop[a]);
        kb_i64(b, po->active.order[a]);
        for (int t = 0; t < e->ntensors; t++) kb_i64(b, po->active.ft[t][a]);
    }
    kb_i64(b, po->active.overlap);
}

/* Operator o's key: itself, its setup, and each hand-off's tensor, view
 * and producer (rotor_setup_pieces_of's inputs). */
static void op_key(keybuf *b, const rotor_program *p, int o) {
    const rotor_program_op *po = &p->ops[o];
    b->n = 0;
    b->ok = true;
    kb_op(b, po);
    kb_i64(b, po->setup_bytes);
    kb_i64(b, po->setup_rounds);
    for (int t = 1; t < po->expr.ntensors; t++) {
        int from = po->handoff[t] - 1;
        if (from < 0 || from >= o) continue;
        const rotor_view *v = &po->handoff_view[t];
        kb_i64(b, t);
        kb_i64(b, v->set);
        kb_i64(b, v->unknown);
        for (int d = 0; v->set && d < ROTOR_MAX_DIMS; d++) {
            kb_i64(b, v->dim[d]);
            kb_i64(b, v->step[d]);
            kb_i64(b, v->offset[d]);
        }
        kb_op(b, &p->ops[from]);
    }
}

static uint64_t kb_hash(const keybuf *b) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < b->n; i++) h = (h ^ (unsigned char)b->p[i]) * 0x100000001b3ull;
    return h;
}

static void counts_add(counter *k, const rotor_energy_counts *c) {
    add(k, &k->c.matrix_flops, c->matrix_flops);
    add(k, &k->c.vector_flops, c->vector_flops);
    add(k, &k->c.sram_read_bytes, c->sram_read_bytes);
    add(k, &k->c.sram_write_bytes, c->sram_write_bytes);
    add(k, &k->c.byte_hops, c->byte_hops);
    add(k, &k->c.hbm_bytes, c->hbm_bytes);
    add(k, &k->c.interchip_bytes, c->interchip_bytes);
}

/* Keeps kb's counts c in memo slot j (empty). */
static rotor_status memo_put(op_memo *m, const keybuf *kb, uint64_t h, const rotor_energy_counts *c,
                             rotor_error *err) {
    if (!(m->key = malloc(kb->n))) return rotor_nomem(err);
    memcpy(m->key, kb->p, kb->n);
    m->len = kb->n;
    m->h = h;
    m->c = *c;
    return ROTOR_OK;
}

/* One expression operator's part of the count (issue 45: the energy model
 * was most of the program phase, 0.04 s of DenseNet-121's compile on one
 * core, after the walk, with the other core idle).  The memo and the store
 * are read and written in operator order, on one thread (plan_jobs, then
 * the sums); the operators whose events must be counted are counted in
 * parallel, each with its own counter, in contiguous runs of operators
 * (so that a thread's placer keeps the placement an operator made as a
 * consumer for the next one, its producer's), and their sums are added in
 * operator order: the counts are sums of nonnegative terms, so the totals
 * and the overflow are those of one thread. */
typedef enum { JOB_SKIP, JOB_MEMO, JOB_STORED, JOB_COUNT } job_kind;
typedef struct op_job {
    job_kind kind;
    size_t slot;           /* the memo slot (JOB_MEMO: the one to add; JOB_COUNT: to fill, if keyed) */
    bool keyed;            /* JOB_COUNT: the key fit (memoised and stored) */
    rotor_energy_counts c; /* JOB_STORED, JOB_COUNT: the operator's own counts */
    bool overflow;         /* JOB_COUNT: its own sum left int64 */
    rotor_status st;
    rotor_error err;
} op_job;

/* Each operator's job, in operator order: a vendor operator or a segment's
 * is the sums' (JOB_SKIP); an operator whose key the memo holds adds that
 * slot's counts (the memo's slot is made at the first operator of its key,
 * filled when the sums reach it, before any later one of the key); one
 * that an earlier compile counted (the store) is added from there; the
 * rest are counted. */
static rotor_status plan_jobs(const rotor_program *p, op_memo *memo, size_t nmemo, keybuf *kb, energy_store *es,
                              op_job *job, int *ncount, rotor_error *err) {
    *ncount = 0;
    for (int o = 0; o < p->nops; o++) {
        const rotor_program_op *po = &p->ops[o];
        job[o] = (op_job){.kind = JOB_SKIP};
        if (po->vendor) continue;
        if (po->segment) {
            int last = p->segments[po->segment - 1].last;
            for (int q = o + 1; q <= last && q < p->nops; q++) job[q] = (op_job){.kind = JOB_SKIP};
            o = last;
            continue;
        }
        op_key(kb, p, o);
        uint64_t h = kb->ok ? kb_hash(kb) : 0;
        size_t j = h & (nmemo - 1);
        bool found = false;
        while (kb->ok && memo[j].key && !found) {
            found = memo[j].h == h && memo[j].len == kb->n && !memcmp(memo[j].key, kb->p, kb->n);
            if (!found) j = (j + 1) & (nmemo - 1);
        }
        if (found) {
            job[o] = (op_job){.kind = JOB_MEMO, .slot = j};
            continue;
        }
        rotor_energy_counts c = {0};
        if (es && kb->ok && compile_energy_store_find(es, kb->p, kb->n, &c)) { /* counted by an earlier compile */
            job[o] = (op_job){.kind = JOB_STORED, .c = c};
            rotor_status st = memo_put(&memo[j], kb, h, &c, err);
            if (st) return st;
            continue;
        }
        job[o] = (op_job){.kind = JOB_COUNT, .slot = j, .keyed = kb->ok};
        (*ncount)++;
        /* keyed now, its counts filled by the sums */
        if (kb->ok) {
            rotor_status st = memo_put(&memo[j], kb, h, &c, err);
            if (st) return st;
        }
    }
    return ROTOR_OK;
}

/* Counts operator o's events into job->c (a JOB_COUNT), with the thread's
 * placer and layout buffer. */
static void count_job(const counter *k, const rotor_program *p, int o, placer *pr, int64_t **phys, op_job *job) {
    const rotor_program_op *po = &p->ops[o];
    counter one = counter_make(k->chip, NULL);
    rotor_chip oc = rotor_chip_for_op(k->chip, po->elem); /* the layout the compiler priced */
    rotor_status st = lay_out(&one, &po->expr, &po->active, &po->active_info, &oc, phys, &job->err);
    if (!st) st = count_setup(&one, p, o, pr, &job->err);
    const rotor_place *pl = NULL;
    if (!st) st = place_op(pr, o, &pl, NULL, &job->err);
    if (!st) st = count_tiles(&one, pl, 0, oc.element_bytes, &job->err);
    job->st = st;
    job->c = one.c;
    job->overflow = one.overflow;
}

/* The JOB_COUNT jobs counted, n of them, in parallel over contiguous runs
 * (schedule static); a job's failure is its own (job->st), reported by the
 * sums in operator order. */
static rotor_status count_jobs(const counter *k, const rotor_program *p, op_job *job, int n, rotor_error *err) {
    int *which = malloc((size_t)(n ? n : 1) * sizeof *which);
    if (!which) return rotor_nomem(err);
    for (int o = 0, i = 0; o < p->nops; o++)
        if (job[o].kind == JOB_COUNT) which[i++] = o;
    int nthreads = n < omp_get_max_threads() ? n : omp_get_max_threads();
#pragma omp parallel num_threads(nthreads > 0 ? nthreads : 1)
    {
        placer pr = {.p = p, .n = placer_slots(k->n)};
        int64_t *phys = NULL;
#pragma omp for schedule(static)
        for (int i = 0; i < n; i++) count_job(k, p, which[i], &pr, &phys, &job[which[i]]);
        placer_free(&pr);
        free(phys);
    }
    free(which);
    return ROTOR_OK;
}

rotor_status rotor_energy_program(const rotor_program *p, const rotor_chip *chip, rotor_energy_counts *out,
                                  rotor_error *err) {
    int damaged;
    return rotor_energy_program_cached(p, chip, NULL, 0, &damaged, out, err);
}

rotor_status rotor_energy_program_cached(const rotor_program *p, const rotor_chip *chip, const char *cache_dir,
                                         int64_t cache_limit, int *damaged, rotor_energy_counts *out,
                                         rotor_error *err) {
    memset(out, 0, sizeof *out);
    *damaged = 0;
    counter k = counter_make(chip, NULL);
    if (k.n != p->cores)
        return rotor_fail(err, ROTOR_ERR_INPUT, "energy: chip %s has %lld cores; the program was compiled for %lld",
                          chip->name, (long long)k.n, (long long)p->cores);
    size_t nmemo = 16;
    while (nmemo < 2 * (size_t)p->nops + 2) nmemo *= 2;
    op_memo *memo = calloc(nmemo, sizeof *memo);
    keybuf kb = {.p = malloc(OP_KEY_MAX)};
    rotor_status st = memo && kb.p ? ROTOR_OK : rotor_nomem(err);
    energy_store *es = NULL;
    if (!st && cache_dir) st = compile_energy_store_open(cache_dir, p->model, chip, &es, damaged, err);
    op_job *job = st ? NULL : malloc((size_t)(p->nops ? p->nops : 1) * sizeof *job);
    if (!st && !job) st = rotor_nomem(err);
    int ncount = 0;
    if (!st) st = plan_jobs(p, memo, nmemo, &kb, es, job, &ncount, err);
    if (!st) st = count_jobs(&k, p, job, ncount, err);
    /* the sums, in operator order (the first failure in that order is the
     * one reported, as counting one after another found it) */
    for (int o = 0; o < p->nops && !st; o++) {
        const rotor_program_op *po = &p->ops[o];
        if (po->vendor) {
            int64_t f;
            if (!rotor_mul_i64(rotor_energy_vendor_flops(chip, po->exec_s), k.n, &f)) k.overflow = true;
            else add(&k, &k.c.vector_flops, f);
            continue;
        }
        if (po->segment) { /* the whole segment, once, at its first operator */
            const rotor_segment *sg = &p->segments[po->segment - 1];
            st = count_segment(&k, sg, err);
            o = sg->last;
            continue;
        }
        op_job *jb = &job[o];
        if (jb->kind == JOB_MEMO) {
            counts_add(&k, &memo[jb->slot].c);
        } else if (jb->kind == JOB_STORED) {
            counts_add(&k, &jb->c);
        } else if (jb->kind == JOB_COUNT) {
            if (jb->st) {
                st = jb->st;
                if (err) *err = jb->err;
                break;
            }
            if (jb->overflow) k.overflow = true;
            counts_add(&k, &jb->c);
            if (!jb->keyed) continue; /* counted, not kept */
            memo[jb->slot].c = jb->c;
            /* an operator's own sum that left int64 is not kept in the
             * store: the next count must overflow as this one did */
            if (es && !jb->overflow && !compile_energy_store_add(es, memo[jb->slot].key, memo[jb->slot].len, &jb->c))
                st = rotor_nomem(err);
        }
    }
    free(job);
    /* what this count learnt, kept for the next compile (only after a
     * whole count: an error leaves the file as it was) */
    if (!st && compile_energy_store_save(es)) rotor_plancache_evict(cache_dir, cache_limit);
    compile_energy_store_free(es);
    for (size_t i = 0; memo && i < nmemo; i++) free(memo[i].key);
    free(memo);
    free(kb.p);
    if (!st && k.overflow) st = rotor_fail(err, ROTOR_ERR_INPUT, "energy: an event count leaves int64");
    if (!st) *out = k.c;
    return st;
}

rotor_status rotor_energy_plan(const rotor_expr *e, const rotor_plan *p, const rotor_plan_info *info,
                               const rotor_chip *chip, rotor_energy_counts *acc, rotor_error *err) {
    counter k = counter_make(chip, acc);
    int64_t *phys = NULL;
    rotor_status st = lay_out(&k, e, p, info, chip, &phys, err);
    if (!st) st = count_tiles_of(&k, e, p, info, 0, err);
    free(phys);
    if (!st && k.overflow) st = rotor_fail(err, ROTOR_ERR_INPUT, "energy: an event count leaves int64");
    if (!st) *acc = k.c;
    return st;
}

void rotor_energy_transfer(const rotor_chip *chip, int64_t src, int64_t dst, int64_t bytes, rotor_energy_counts *acc,
                           bool *overflow) {
    counter k = counter_make(chip, acc);
    transfer(&k, src, dst, bytes);
    if (k.overflow) *overflow = true;
    *acc = k.c;
}
