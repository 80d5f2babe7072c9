/* meshbase.c — the mesh baselines (issue 41, deliverable 3; docs/mesh.md,
 * "Baselines"): SUMMA GEMM (van de Geijn and Watts, 1997), Cannon GEMM
 * (Cannon, 1969) and a GEMV whose partial sums are reduced along grid rows,
 * then columns (after WaferLLM's MeshGEMV, OSDI 2025, from its public
 * description; no code taken).  Each is a task graph on the simulator,
 * run from idle, beside an alpha-beta prediction of the same algorithm.
 *
 * Decisions (docs/mesh.md gives the reasons):
 *  - Operands start in the algorithm's own layout, as a replayed plan
 *    starts in its step-0 layout (rotor_replay_plan: no setup): SUMMA's and
 *    Cannon's blocks on their owners (Cannon's skew is part of the run),
 *    GEMV's vector on the first row group.
 *  - Every core computes the padded tile ceil(E / parts) (T10's sub-tasks
 *    are uniform too), priced by rotor_cost_v1_subtask; reductions' adds are
 *    not charged (nor are they in rotor's replay or cost model v1).
 *  - SUMMA: k-panels are the ranges where one column of A's blocks meets one
 *    row of B's blocks.  A panel goes along its grid row (B's along its
 *    column) as ONE multicast, the simulator's tree over the XY routes
 *    (cut-through, the limit of a pipelined broadcast); a line's multicasts
 *    go one after another, double-buffered (panel t waits for panel t - 2's
 *    compute on the line), and every core of the line, the root too,
 *    computes panel t once the multicast has ended (a blocking broadcast).
 *  - Cannon: the skew is direct transfers, row i's A blocks i columns left
 *    (column j's B blocks j rows up), wrap-around by the other way round,
 *    issued in rounds of disjoint routes; then p steps with p - 1 shifts of
 *    one position, the wrap-around crossing the whole line.  Memory is the
 *    three blocks plus the chip's shift buffer, T10's rule for rotations.
 *  - GEMV: p / pk row groups of pk rows hold a block of the output's rows;
 *    k is split over the group's pk rows times the q columns.  The vector's
 *    pieces are multicast down the columns from the first group, then every
 *    core runs its local GEMV, then a ring reduce-scatter along each row and
 *    one along each group's column, both on a folded ring (evens up, odds
 *    down: every hop of the ring, wrap-around included, at most 2 links;
 *    WaferLLM's interleaving).  The output ends spread over every core.
 *  - The grid: the least predicted time over every p x q corner
 *    sub-rectangle (rotor_meshbase_run's header has the rule). */
#include "rotor/sim/meshbase.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/base/topology.h"
#include "rotor/compile/energy.h"
#include "rotor/op/cost.h"

enum { RM = 0, RK = 1, RN = 2 };

/* The GEMM's axes by role: the expression's axis of m, k, n (-1: absent)
 * and the extents (1 for an absent axis). */
typedef struct mb_gemm {
    int ax[3];
    int64_t ext[3];
} mb_gemm;

/* One grid's figures, before any task is built. */
typedef struct mb_plan {
    rotor_meshbase_grid g;
    int64_t tile[3], steps, sram, tasks;
    double predicted, compute;
} mb_plan;

typedef enum mb_move { MB_BROADCAST, MB_SHIFT, MB_REDUCE } mb_move;

typedef struct mb_ctx {
    const rotor_expr *e;
    const rotor_chip *chip;
    mb_gemm gm;
    int lrole;            /* GEMV: the role of the output's axis, RM or RN */
    double alpha, beta;   /* s per hop, bytes/s */
    int64_t elem;
    rotor_sim *sim;
    rotor_meshbase_result *res;
    int64_t *deps, *dsts; /* scratch of max(p, q) + 2 each */
} mb_ctx;

typedef struct mb_algo {
    rotor_meshbase_kind kind;
    const char *name;
    bool square; /* p == q */
    bool groups; /* pk may exceed 1 */
    /* The grid's figures into *o; false when the grid leaves a core without
     * work.  A plan whose compute alone reaches `bound` may stop early with
     * predicted INFINITY. */
    bool (*plan)(const mb_ctx *c, const rotor_meshbase_grid *g, double bound, mb_plan *o);
    rotor_status (*build)(mb_ctx *c, const mb_plan *pl, rotor_error *err);
} mb_algo;

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t to_ps(double s) { return llround(s * 1e12); }

/* Every one of n parts of E, each ceil(E / n), holds something. */
static bool all_busy(int64_t E, int64_t n) { return n <= E && (n - 1) * cdiv(E, n) < E; }

/* elem * sum of the products a[i] * b[i]; INT64_MAX when it leaves int64. */
static int64_t words_bytes(int64_t elem, int n, const int64_t *a, const int64_t *b) {
    int64_t sum = 0, x;
    for (int i = 0; i < n; i++)
        if (!rotor_mul_i64(a[i], b[i], &x) || !rotor_add_i64(sum, x, &sum)) return INT64_MAX;
    return rotor_mul_i64(sum, elem, &x) ? x : INT64_MAX;
}

/* The sub-task extents of a tile (tm, tk, tn) per expression axis. */
static void tile_sub(const mb_ctx *c, const int64_t *tile, int64_t *sub) {
    for (int a = 0; a < c->e->naxes; a++) sub[a] = 1;
    for (int r = 0; r < 3; r++)
        if (c->gm.ax[r] >= 0) sub[c->gm.ax[r]] = tile[r];
}

/* One core's local GEMM of a tile, as rotor's replay prices a sub-task. */
static double tile_s(const mb_ctx *c, int64_t tm, int64_t tk, int64_t tn) {
    int64_t sub[ROTOR_MAX_AXES], tile[3] = {tm, tk, tn};
    tile_sub(c, tile, sub);
    return rotor_cost_v1_subtask(c->e, c->chip, sub);
}

/* Alpha-beta: hops latencies and bytes over one link. */
static double xfer_s(const mb_ctx *c, int64_t hops, double bytes) {
    return (double)hops * c->alpha + bytes / c->beta;
}

/* Mesh core of grid core (i, j). */
static int64_t core_at(const mb_ctx *c, const rotor_meshbase_grid *g, int64_t i, int64_t j) {
    int64_t x = g->transposed ? i : j, y = g->transposed ? j : i;
    return y * c->chip->mesh_width + x;
}

/* ---- the GEMM ------------------------------------------------------------------ */

/* The roles of e's axes, or why e is not a GEMM. */
static rotor_status classify(const rotor_expr *e, mb_gemm *g, rotor_error *err) {
    *g = (mb_gemm){{-1, -1, -1}, {1, 1, 1}};
    if (e->op_class != ROTOR_OP_CONTRACTION || e->ntensors != 3)
        return rotor_fail(err, ROTOR_ERR_INPUT, "not a GEMM: '%s' is not a product of two tensors", e->text);
    for (int t = 0; t < 3; t++) {
        const rotor_tensor *x = &e->tensors[t];
        int seen[ROTOR_MAX_AXES] = {0};
        for (int d = 0; d < x->ndims; d++) {
            if (x->dims[d].nterms != 1 || x->dims[d].coef[0] != 1)
                return rotor_fail(err, ROTOR_ERR_INPUT, "not a GEMM: dimension %d of %s is a window or a stride", d,
                                  x->name);
            if (seen[x->dims[d].axis[0]]++)
                return rotor_fail(err, ROTOR_ERR_INPUT, "not a GEMM: axis %s appears twice in %s",
                                  e->axis_name[x->dims[d].axis[0]], x->name);
        }
    }
    const rotor_tensor *y = &e->tensors[0], *a = &e->tensors[1], *b = &e->tensors[2];
    for (int ax = 0; ax < e->naxes; ax++) {
        const char *n = e->axis_name[ax];
        bool in_a = a->has_axis[ax], in_b = b->has_axis[ax];
        if (y->has_axis[ax] && in_a && in_b)
            return rotor_fail(err, ROTOR_ERR_INPUT, "not a GEMM: axis %s is in %s, %s and %s (a batch axis)", n,
                              y->name, a->name, b->name);
        if (y->has_axis[ax] && !in_a && !in_b)
            return rotor_fail(err, ROTOR_ERR_INPUT, "not a GEMM: axis %s is in %s only", n, y->name);
        int role = !y->has_axis[ax] ? RK : in_a ? RM : RN;
        if (role == RK && !(in_a && in_b))
            return rotor_fail(err, ROTOR_ERR_INPUT, "not a GEMM: the reduced axis %s is not in both %s and %s", n,
                              a->name, b->name);
        if (g->ax[role] >= 0)
            return rotor_fail(err, ROTOR_ERR_INPUT, "not a GEMM: axes %s and %s play the same part",
                              e->axis_name[g->ax[role]], n);
        g->ax[role] = ax;
        g->ext[role] = e->extent[ax];
    }
    if (g->ax[RK] < 0) return rotor_fail(err, ROTOR_ERR_INPUT, "not a GEMM: no axis of '%s' is reduced", e->text);
    return ROTOR_OK;
}

/* The chip is a mesh and e a GEMM (its roles into *g), or why not, naming
 * `who`. */
static rotor_status mesh_gemm(const rotor_expr *e, const rotor_chip *chip, const char *who, mb_gemm *g,
                              rotor_error *err) {
    if (chip->topology != ROTOR_TOPO_MESH) {
        const rotor_topo *t = rotor_topo_find(chip->topology);
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: chip %s is %s; the mesh baselines need a 2D mesh (topology mesh)",
                          who, chip->name, t ? t->name : "not a mesh");
    }
    rotor_status st = classify(e, g, err);
    if (st) rotor_error_prefix(err, who);
    return st;
}

rotor_status rotor_meshbase_check(const rotor_expr *e, const rotor_chip *chip, const char *who, rotor_error *err) {
    mb_gemm g;
    return mesh_gemm(e, chip, who, &g, err);
}

/* ---- counting and adding tasks ---------------------------------------------------- */

static rotor_status tally(int64_t *sum, int64_t v, rotor_error *err) {
    if (rotor_add_i64(*sum, v, sum)) return ROTOR_OK;
    return rotor_fail(err, ROTOR_ERR_INPUT, "the bytes moved leave int64");
}

static rotor_status count_move(mb_ctx *c, mb_move kind, int64_t bytes, int64_t hops, rotor_error *err) {
    rotor_meshbase_result *r = c->res;
    r->transfers++;
    r->max_hops = max64(r->max_hops, hops);
    rotor_status st = tally(&r->bytes, bytes, err);
    if (kind == MB_BROADCAST) r->broadcasts++;
    if (!st && kind == MB_BROADCAST) st = tally(&r->broadcast_bytes, bytes, err);
    if (kind == MB_SHIFT) r->shifts++;
    if (!st && kind == MB_SHIFT) st = tally(&r->shift_bytes, bytes, err);
    if (kind == MB_REDUCE) r->reductions++;
    if (!st && kind == MB_REDUCE) st = tally(&r->reduction_bytes, bytes, err);
    if (!st && kind == MB_REDUCE) st = tally(&r->reduction_hops, hops, err);
    return st;
}

static rotor_status put_transfer(mb_ctx *c, mb_move kind, int64_t src, int64_t dst, int64_t bytes,
                                 const int64_t *deps, int nd, int64_t *id, rotor_error *err) {
    rotor_sim_transfer x = {.src = src, .dst = dst, .bytes = bytes, .category = ROTOR_SIM_COMM, .op = 0,
                            .deps = deps, .ndeps = nd};
    rotor_status st = rotor_sim_add_transfer(c->sim, &x, id, err);
    return st ? st : count_move(c, kind, bytes, rotor_topo_mesh_hops(c->chip->mesh_width, src, dst), err);
}

/* One multicast from src to c->dsts[0 .. n), after c->deps[0 .. nd). */
static rotor_status put_multicast(mb_ctx *c, int64_t src, int n, int64_t bytes, int nd, int64_t *id,
                                  rotor_error *err) {
    rotor_sim_multicast m = {.src = src, .dsts = c->dsts, .ndsts = n, .bytes = bytes, .category = ROTOR_SIM_COMM,
                             .op = 0, .deps = c->deps, .ndeps = nd};
    rotor_status st = rotor_sim_add_multicast(c->sim, &m, id, err);
    int64_t far = 0;
    for (int k = 0; k < n; k++) far = max64(far, rotor_topo_mesh_hops(c->chip->mesh_width, src, c->dsts[k]));
    return st ? st : count_move(c, MB_BROADCAST, bytes, far, err);
}

/* One local GEMM of `tile` on core, after deps[0 .. nd). */
static rotor_status put_compute(mb_ctx *c, int64_t core, const int64_t *tile, const int64_t *deps, int nd,
                                int64_t *id, rotor_error *err) {
    int64_t sub[ROTOR_MAX_AXES], fl = c->e->flops_per_point;
    tile_sub(c, tile, sub);
    rotor_sim_work w = {0};
    for (int r = 0; r < 3; r++)
        if (!rotor_mul_i64(fl, tile[r], &fl)) return rotor_fail(err, ROTOR_ERR_INPUT, "a tile's FLOPs leave int64");
    if (!rotor_energy_subtask_bytes(c->e, sub, c->elem, 1, &w.sram_read, &w.sram_write))
        return rotor_fail(err, ROTOR_ERR_INPUT, "a tile's SRAM bytes leave int64");
    w.matrix_flops = fl;
    rotor_sim_compute x = {.core = core, .duration_ps = to_ps(rotor_cost_v1_subtask(c->e, c->chip, sub)),
                           .flops = fl, .work = w, .category = ROTOR_SIM_COMPUTE, .op = 0, .deps = deps,
                           .ndeps = nd};
    return rotor_sim_add_compute(c->sim, &x, id, err);
}

/* ---- SUMMA ------------------------------------------------------------------------ */

/* The end of the k-panel starting at k0: the next boundary of A's column
 * blocks (bq wide) or B's row blocks (bp wide), or K. */
static int64_t panel_end(int64_t k0, int64_t bq, int64_t bp, int64_t K) {
    return min64(min64((k0 / bq + 1) * bq, (k0 / bp + 1) * bp), K);
}

/* The recurrence of SUMMA's broadcast streams and computes (uniform over the
 * grid, so exact on an idle mesh): a line's multicast t waits for its
 * multicast t - 1 and for compute t - 2 (double-buffered, where cores
 * compute while links move data: compute_overlap = 1), else for compute
 * t - 1 into one panel buffer; compute t for compute t - 1 and both of
 * panel t's multicasts. */
static bool summa_plan(const mb_ctx *c, const rotor_meshbase_grid *g, double bound, mb_plan *o) {
    int64_t M = c->gm.ext[RM], K = c->gm.ext[RK], N = c->gm.ext[RN], p = g->p, q = g->q;
    if (g->pk != 1 || !all_busy(M, p) || !all_busy(N, q)) return false;
    int64_t tm = cdiv(M, p), tn = cdiv(N, q), bq = cdiv(K, q), bp = cdiv(K, p), w = min64(min64(bq, bp), K);
    *o = (mb_plan){.g = *g, .tile = {tm, w, tn}};
    int64_t nbuf = c->chip->compute_overlap ? 2 : 1;
    int64_t a[5] = {tm, bp, tm, q > 1 ? nbuf * tm : 0, p > 1 ? nbuf * w : 0}, b[5] = {bq, tn, tn, w, tn};
    o->sram = words_bytes(c->elem, 5, a, b);
    if (o->sram > rotor_chip_sram(c->chip) || tile_s(c, tm, K, tn) > bound) {
        o->predicted = INFINITY; /* over the SRAM, or its compute alone is no better */
        return true;
    }
    double aend = 0, bend = 0, c1 = 0, c2 = 0;
    for (int64_t k0 = 0, k1; k0 < K; k0 = k1) {
        k1 = panel_end(k0, bq, bp, K);
        int64_t ca = k0 / bq, rb = k0 / bp;
        double ct = tile_s(c, tm, k1 - k0, tn), bytes = (double)(k1 - k0) * (double)c->elem;
        double free_at = c->chip->compute_overlap ? c2 : c1; /* the panel buffer's last compute */
        if (q > 1) aend = fmax(aend, free_at) + xfer_s(c, max64(ca, q - 1 - ca), bytes * (double)tm);
        if (p > 1) bend = fmax(bend, free_at) + xfer_s(c, max64(rb, p - 1 - rb), bytes * (double)tn);
        c2 = c1;
        c1 = fmax(c1, fmax(aend, bend)) + ct;
        o->compute += ct;
        o->steps++;
    }
    o->predicted = c1;
    o->tasks = o->steps * (p * q + (q > 1 ? p : 0) + (p > 1 ? q : 0));
    return true;
}

/* Panel t's multicast along grid row `line` (col: along column `line`), after
 * the line's last multicast *last and the line's computes c2 (the panel
 * buffer's last use: panel t - 2, or t - 1 without overlap). */
static rotor_status summa_line(mb_ctx *c, const mb_plan *pl, bool col, int64_t line, int64_t root, int64_t bytes,
                               const int64_t *c2, int64_t *last, rotor_error *err) {
    int64_t len = col ? pl->g.p : pl->g.q;
    int nd = 0, n = 0;
    if (*last >= 0) c->deps[nd++] = *last;
    for (int64_t u = 0; u < len; u++) {
        int64_t i = col ? u : line, j = col ? line : u;
        if (c2[i * pl->g.q + j] >= 0) c->deps[nd++] = c2[i * pl->g.q + j];
        if (u != root) c->dsts[n++] = core_at(c, &pl->g, i, j);
    }
    int64_t src = col ? core_at(c, &pl->g, root, line) : core_at(c, &pl->g, line, root);
    return put_multicast(c, src, n, bytes, nd, last, err);
}

static rotor_status summa_build(mb_ctx *c, const mb_plan *pl, rotor_error *err) {
    int64_t p = pl->g.p, q = pl->g.q, n = p * q, K = c->gm.ext[RK], tm = pl->tile[RM], tn = pl->tile[RN];
    int64_t bq = cdiv(K, q), bp = cdiv(K, p);
    int64_t *buf = malloc(sizeof *buf * (size_t)(p + q + 2 * n));
    if (!buf) return rotor_nomem(err);
    int64_t *lasta = buf, *lastb = buf + p, *c1 = lastb + q, *c2 = c1 + n;
    for (int64_t i = 0; i < p + q + 2 * n; i++) buf[i] = -1;
    rotor_status st = ROTOR_OK;
    for (int64_t k0 = 0, k1; k0 < K && !st; k0 = k1) {
        k1 = panel_end(k0, bq, bp, K);
        int64_t w = k1 - k0, ba, bb, tile[3] = {tm, w, tn};
        if (!rotor_mul_i64(tm * c->elem, w, &ba) || !rotor_mul_i64(tn * c->elem, w, &bb)) {
            st = rotor_fail(err, ROTOR_ERR_INPUT, "a panel's bytes leave int64");
            break;
        }
        const int64_t *used = c->chip->compute_overlap ? c2 : c1;
        for (int64_t i = 0; i < p && q > 1 && !st; i++) st = summa_line(c, pl, false, i, k0 / bq, ba, used, &lasta[i], err);
        for (int64_t j = 0; j < q && p > 1 && !st; j++) st = summa_line(c, pl, true, j, k0 / bp, bb, used, &lastb[j], err);
        for (int64_t i = 0; i < p && !st; i++)
            for (int64_t j = 0; j < q && !st; j++) {
                int nd = 0;
                int64_t deps[3];
                if (c1[i * q + j] >= 0) deps[nd++] = c1[i * q + j];
                if (q > 1) deps[nd++] = lasta[i];
                if (p > 1) deps[nd++] = lastb[j];
                st = put_compute(c, core_at(c, &pl->g, i, j), tile, deps, nd, &c2[i * q + j], err);
            }
        int64_t *t = c1;
        c1 = c2;
        c2 = t;
    }
    free(buf);
    return st;
}

/* ---- Cannon ------------------------------------------------------------------------ */

/* The skew: line s moves its blocks s places in min(s, p - s) rounds of
 * disjoint routes, the longest max(s, p - s) hops.  Then p steps with a
 * shift of d1 (one hop) between each two, but for the wrap-around, dw (p - 1
 * hops).  A chain of steps meets at most one wrap-around of A and one of B
 * (a second would take p moves along the line), unless a wrap-around
 * outlasts a step: then its link is the bottleneck, one wrap-around after
 * the other.  The larger of the two chains, after the latest skew; exact
 * with no link latency (dw = d1). */
static bool cannon_plan(const mb_ctx *c, const rotor_meshbase_grid *g, double bound, mb_plan *o) {
    (void)bound;
    int64_t p = g->p;
    if (g->q != p || g->pk != 1 || !all_busy(c->gm.ext[RM], p) || !all_busy(c->gm.ext[RK], p) ||
        !all_busy(c->gm.ext[RN], p))
        return false;
    int64_t a = cdiv(c->gm.ext[RM], p), b = cdiv(c->gm.ext[RK], p), n = cdiv(c->gm.ext[RN], p);
    *o = (mb_plan){.g = *g, .tile = {a, b, n}, .steps = p};
    int64_t x[3] = {a, b, a}, y[3] = {b, n, n};
    o->sram = words_bytes(c->elem, 3, x, y);
    if (p > 1 && (o->sram == INT64_MAX || !rotor_add_i64(o->sram, c->chip->shift_buffer_bytes, &o->sram)))
        o->sram = INT64_MAX; /* a rotation streams through the shift buffer (T10 §4.3) */
    double t = fmax((double)a * (double)b, (double)b * (double)n) * (double)c->elem / c->beta, skew = 0;
    for (int64_t s = 1; s < p; s++)
        skew = fmax(skew, (double)min64(s, p - s) * ((double)max64(s, p - s) * c->alpha + t));
    double tc = tile_s(c, a, b, n), d1 = c->alpha + t, dw = (double)(p - 1) * c->alpha + t, steps = 0;
    if (p > 1)
        steps = fmax((double)p * tc + (double)(p - 1) * d1 + (double)min64(2, p - 1) * (dw - d1),
                     2 * tc + (double)(p - 1) * dw);
    o->compute = (double)p * tc;
    o->predicted = skew + (p > 1 ? steps : tc);
    o->tasks = p * p * p + 2 * p * (p - 1) + 2 * p * p * (p - 1);
    return true;
}

/* Block of grid line `line` at position `from` to position `to` (rows: A
 * along row `line`; col: B along column `line`); arr[dst] receives it. */
static rotor_status cannon_move(mb_ctx *c, const mb_plan *pl, bool col, int64_t line, int64_t from, int64_t to,
                                int64_t bytes, const int64_t *deps, int nd, int64_t *arr, rotor_error *err) {
    int64_t si = col ? from : line, sj = col ? line : from, di = col ? to : line, dj = col ? line : to;
    return put_transfer(c, MB_SHIFT, core_at(c, &pl->g, si, sj), core_at(c, &pl->g, di, dj), bytes, deps, nd,
                        &arr[di * pl->g.q + dj], err);
}

/* The skew of A (col false) or B: line s moves s places back, round by round
 * (a round: the moves s apart, whose routes are disjoint). */
static rotor_status cannon_skew(mb_ctx *c, const mb_plan *pl, bool col, int64_t bytes, int64_t *arr,
                                rotor_error *err) {
    int64_t p = pl->g.p;
    rotor_status st = ROTOR_OK;
    for (int64_t s = 1; s < p && !st; s++)
        for (int64_t r = 0; r < max64(s, p - s) && !st; r++) {
            for (int64_t j = s + r; r < s && j < p && !st; j += s) /* back s places */
                st = cannon_move(c, pl, col, s, j, j - s, bytes, NULL, 0, arr, err);
            for (int64_t j = r; r < p - s && j < s && !st; j += p - s) /* wrap-around: on p - s places */
                st = cannon_move(c, pl, col, s, j, j + p - s, bytes, NULL, 0, arr, err);
        }
    return st;
}

static rotor_status cannon_build(mb_ctx *c, const mb_plan *pl, rotor_error *err) {
    int64_t p = pl->g.p, n = p * p, ba = words_bytes(c->elem, 1, &pl->tile[RM], &pl->tile[RK]),
            bb = words_bytes(c->elem, 1, &pl->tile[RK], &pl->tile[RN]);
    if (ba == INT64_MAX || bb == INT64_MAX) return rotor_fail(err, ROTOR_ERR_INPUT, "a block's bytes leave int64");
    int64_t *buf = malloc(sizeof *buf * (size_t)(3 * n));
    if (!buf) return rotor_nomem(err);
    int64_t *arra = buf, *arrb = buf + n, *cur = buf + 2 * n;
    for (int64_t i = 0; i < 3 * n; i++) buf[i] = -1;
    rotor_status st = cannon_skew(c, pl, false, ba, arra, err);
    if (!st) st = cannon_skew(c, pl, true, bb, arrb, err);
    for (int64_t s = 0; s < p && !st; s++) {
        for (int64_t x = 0; x < n && !st; x++) {
            int64_t deps[3];
            int nd = 0;
            if (cur[x] >= 0) deps[nd++] = cur[x];
            if (arra[x] >= 0) deps[nd++] = arra[x];
            if (arrb[x] >= 0) deps[nd++] = arrb[x];
            arra[x] = arrb[x] = -1;
            st = put_compute(c, core_at(c, &pl->g, x / p, x % p), pl->tile, deps, nd, &cur[x], err);
        }
        for (int64_t x = 0; x < n && s + 1 < p && !st; x++) {
            int64_t i = x / p, j = x % p;
            st = cannon_move(c, pl, false, i, j, (j + p - 1) % p, ba, &cur[x], 1, arra, err);
            if (!st) st = cannon_move(c, pl, true, j, i, (i + p - 1) % p, bb, &cur[x], 1, arrb, err);
        }
    }
    free(buf);
    return st;
}

/* ---- GEMV --------------------------------------------------------------------------- */

/* The longest hop of a folded ring of n members. */
static int64_t ring_hops(int64_t n) { return n >= 3 ? 2 : 1; }

/* Positions 0 .. n-1 in ring order: evens up, then odds down. */
static void fold(int64_t n, int64_t *out) {
    int64_t k = 0;
    for (int64_t v = 0; v < n; v += 2) out[k++] = v;
    for (int64_t v = n % 2 ? n - 2 : n - 1; v >= 1; v -= 2) out[k++] = v;
}

/* The vector's multicasts (pk serial ones per column, each (p/pk - 1) pk
 * hops), the local GEMV, then the two ring reduce-scatters (BSP bound,
 * exact with no latency). */
static bool gemv_plan(const mb_ctx *c, const rotor_meshbase_grid *g, double bound, mb_plan *o) {
    (void)bound;
    int64_t p = g->p, q = g->q, pk = g->pk, pl = p / pk, L = c->gm.ext[c->lrole], K = c->gm.ext[RK];
    if (p % pk || !all_busy(L, pl) || !all_busy(K, pk * q)) return false;
    int64_t lt = cdiv(L, pl), kt = cdiv(K, pk * q), c1 = cdiv(lt, q), c2 = cdiv(c1, pk);
    *o = (mb_plan){.g = *g, .tile = {1, kt, 1}, .steps = 1};
    o->tile[c->lrole] = lt;
    int64_t a[4] = {lt, 1, 1, q > 1 || pk > 1 ? c1 : 0}, b[4] = {kt, kt, lt, 1};
    o->sram = words_bytes(c->elem, 4, a, b);
    double e = (double)c->elem;
    double bc = pl > 1 ? (double)pk * xfer_s(c, (pl - 1) * pk, (double)kt * e) : 0;
    double r1 = q > 1 ? (double)(q - 1) * xfer_s(c, ring_hops(q), (double)c1 * e) : 0;
    double r2 = pk > 1 ? (double)(pk - 1) * xfer_s(c, ring_hops(pk), (double)c2 * e) : 0;
    o->compute = tile_s(c, o->tile[RM], kt, o->tile[RN]);
    o->predicted = bc + o->compute + r1 + r2;
    o->tasks = (pl > 1 ? pk * q : 0) + p * q * (q + pk - 1);
    return true;
}

/* A ring reduce-scatter of `bytes` per round among the n cores core[0 ..
 * n) in ring order: n - 1 rounds, member u sending to u + 1 after last[u]
 * (what it holds so far); last[] ends with each member's last arrival.
 * ids: scratch of n. */
static rotor_status ring_reduce(mb_ctx *c, const int64_t *core, int64_t *last, int64_t *ids, int64_t n,
                                int64_t bytes, rotor_error *err) {
    rotor_status st = ROTOR_OK;
    for (int64_t round = 1; round < n && !st; round++) {
        for (int64_t u = 0; u < n && !st; u++)
            st = put_transfer(c, MB_REDUCE, core[u], core[(u + 1) % n], bytes, &last[u], 1, &ids[u], err);
        for (int64_t u = 0; u < n && !st; u++) last[(u + 1) % n] = ids[u];
    }
    return st;
}

/* The vector's multicasts: piece (ik, j) from grid core (ik, j) down its
 * column to the same row of every other group; vec[ik * q + j]. */
static rotor_status gemv_vector(mb_ctx *c, const mb_plan *pl, int64_t bytes, int64_t *vec, rotor_error *err) {
    int64_t q = pl->g.q, pk = pl->g.pk, groups = pl->g.p / pk;
    rotor_status st = ROTOR_OK;
    for (int64_t ik = 0; ik < pk && groups > 1 && !st; ik++)
        for (int64_t j = 0; j < q && !st; j++) {
            for (int64_t il = 1; il < groups; il++) c->dsts[il - 1] = core_at(c, &pl->g, il * pk + ik, j);
            st = put_multicast(c, core_at(c, &pl->g, ik, j), (int)(groups - 1), bytes, 0, &vec[ik * q + j], err);
        }
    return st;
}

static rotor_status gemv_build(mb_ctx *c, const mb_plan *pl, rotor_error *err) {
    int64_t p = pl->g.p, q = pl->g.q, pk = pl->g.pk, n = p * q, w = max64(p, q), lt = pl->tile[c->lrole];
    int64_t c1 = cdiv(lt, q), c2 = cdiv(c1, pk), bv, b1, b2;
    if (!rotor_mul_i64(pl->tile[RK], c->elem, &bv) || !rotor_mul_i64(c1, c->elem, &b1) ||
        !rotor_mul_i64(c2, c->elem, &b2))
        return rotor_fail(err, ROTOR_ERR_INPUT, "a piece's bytes leave int64");
    int64_t *buf = malloc(sizeof *buf * (size_t)(pk * q + n + 4 * w));
    if (!buf) return rotor_nomem(err);
    int64_t *vec = buf, *last = vec + pk * q, *order = last + n, *core = order + w, *rl = core + w, *ids = rl + w;
    for (int64_t i = 0; i < pk * q; i++) vec[i] = -1;
    rotor_status st = gemv_vector(c, pl, bv, vec, err);
    for (int64_t x = 0; x < n && !st; x++) {
        int64_t i = x / q, j = x % q, v = vec[(i % pk) * q + j];
        st = put_compute(c, core_at(c, &pl->g, i, j), pl->tile, &v, i >= pk && v >= 0, &last[x], err);
    }
    fold(q, order); /* along each row */
    for (int64_t i = 0; i < p && q > 1 && !st; i++) {
        for (int64_t u = 0; u < q; u++) core[u] = core_at(c, &pl->g, i, order[u]), rl[u] = last[i * q + order[u]];
        st = ring_reduce(c, core, rl, ids, q, b1, err);
        for (int64_t u = 0; u < q; u++) last[i * q + order[u]] = rl[u];
    }
    fold(pk, order); /* then along each group's column */
    for (int64_t g = 0; g < p / pk && pk > 1 && !st; g++)
        for (int64_t j = 0; j < q && !st; j++) {
            for (int64_t u = 0; u < pk; u++)
                core[u] = core_at(c, &pl->g, g * pk + order[u], j), rl[u] = last[(g * pk + order[u]) * q + j];
            st = ring_reduce(c, core, rl, ids, pk, b2, err);
        }
    free(buf);
    return st;
}

/* ---- the table and the driver ---------------------------------------------------------- */

static const mb_algo ALGOS[ROTOR_MESHBASE_NKINDS] = {
    {ROTOR_MESHBASE_SUMMA, "summa", false, false, summa_plan, summa_build},
    {ROTOR_MESHBASE_CANNON, "cannon", true, false, cannon_plan, cannon_build},
    {ROTOR_MESHBASE_GEMV, "gemv", false, true, gemv_plan, gemv_build},
};

const char *rotor_meshbase_name(rotor_meshbase_kind k) {
    return (unsigned)k < ROTOR_MESHBASE_NKINDS ? ALGOS[k].name : NULL;
}

bool rotor_meshbase_find(const char *name, rotor_meshbase_kind *out) {
    for (int i = 0; name && i < ROTOR_MESHBASE_NKINDS; i++)
        if (!strcmp(ALGOS[i].name, name)) {
            *out = ALGOS[i].kind;
            return true;
        }
    return false;
}

/* a is a better grid than b: less predicted time, then fewer cores, fewer
 * rows, untransposed, fewer rows per group. */
static bool better(const mb_plan *a, const mb_plan *b) {
    if (a->predicted != b->predicted) return a->predicted < b->predicted;
    int64_t ca = a->g.p * a->g.q, cb = b->g.p * b->g.q;
    if (ca != cb) return ca < cb;
    if (a->g.p != b->g.p) return a->g.p < b->g.p;
    if (a->g.transposed != b->g.transposed) return !a->g.transposed;
    return a->g.pk < b->g.pk;
}

static rotor_status nofit(const mb_ctx *c, const mb_algo *a, int64_t need, const char *what, rotor_error *err) {
    return rotor_fail(err, ROTOR_ERR_NOFIT, "%s: %s %lld bytes per core; the chip has %lld", a->name, what,
                      (long long)need, (long long)rotor_chip_sram(c->chip));
}

/* The best grid (rotor_meshbase_run's rule). */
static rotor_status choose(const mb_ctx *c, const mb_algo *a, mb_plan *best, rotor_error *err) {
    int64_t w = c->chip->mesh_width, h = c->chip->mesh_height, least = INT64_MAX;
    bool found = false;
    for (int t = 0; t < (w != h ? 2 : 1); t++) {
        int64_t rows = t ? w : h, cols = t ? h : w;
        for (int64_t p = 1; p <= rows; p++)
            for (int64_t q = a->square ? p : 1; q <= (a->square ? min64(p, cols) : cols); q++)
                for (int64_t pk = 1; pk <= (a->groups ? p : 1); pk++) {
                    rotor_meshbase_grid g = {p, q, pk, t == 1};
                    mb_plan pl;
                    if (p % pk || !a->plan(c, &g, found ? best->predicted : INFINITY, &pl)) continue;
                    if (pl.sram > rotor_chip_sram(c->chip)) {
                        least = min64(least, pl.sram);
                        continue;
                    }
                    if (!found || better(&pl, best)) *best = pl, found = true;
                }
    }
    if (found) return ROTOR_OK;
    if (least == INT64_MAX)
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: no grid of the %lldx%lld mesh gives every core work", a->name,
                          (long long)w, (long long)h);
    return nofit(c, a, least, "no grid's tiles fit the SRAM: the smallest need", err);
}

/* The grid the caller gave, checked. */
static rotor_status given(const mb_ctx *c, const mb_algo *a, const rotor_meshbase_grid *g, mb_plan *pl,
                          rotor_error *err) {
    int64_t w = c->chip->mesh_width, h = c->chip->mesh_height, pk = g->pk > 0 ? g->pk : 1;
    rotor_meshbase_grid x = {g->p, g->q, pk, g->transposed};
    if (g->q < 1 || x.p > (x.transposed ? w : h) || x.q > (x.transposed ? h : w) || (!a->groups && pk != 1) ||
        (a->square && x.p != x.q) || x.p % pk)
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: grid %lldx%lld%s (pk %lld) is not one of its grids on the %lldx%lld mesh",
                          a->name, (long long)x.p, (long long)x.q, x.transposed ? " transposed" : "", (long long)pk,
                          (long long)w, (long long)h);
    if (!a->plan(c, &x, INFINITY, pl))
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: grid %lldx%lld leaves a core without work", a->name,
                          (long long)x.p, (long long)x.q);
    return pl->sram > rotor_chip_sram(c->chip) ? nofit(c, a, pl->sram, "the grid's tiles need", err) : ROTOR_OK;
}

/* The task graph of plan pl on a new simulator, run. */
static rotor_status simulate(mb_ctx *c, const mb_algo *a, const mb_plan *pl, rotor_error *err) {
    rotor_meshbase_result *r = c->res;
    if (pl->tasks > ROTOR_MESHBASE_MAX_TASKS)
        return rotor_fail(err, ROTOR_ERR_INPUT,
                          "%s: grid %lldx%lld (predicted %.3f us) makes %lld tasks, more than the %lld simulated",
                          a->name, (long long)pl->g.p, (long long)pl->g.q, pl->predicted * 1e6, (long long)pl->tasks,
                          (long long)ROTOR_MESHBASE_MAX_TASKS);
    rotor_status st = rotor_sim_create(c->chip, &c->sim, err);
    size_t w = (size_t)max64(pl->g.p, pl->g.q) + 2;
    c->deps = st ? NULL : malloc(sizeof *c->deps * w);
    c->dsts = st ? NULL : malloc(sizeof *c->dsts * w);
    if (!st && (!c->deps || !c->dsts)) st = rotor_nomem(err);
    if (!st) st = a->build(c, pl, err);
    if (!st) st = rotor_sim_run(c->sim, &r->stats, err);
    if (!st) {
        r->simulated_s = (double)r->stats.makespan_ps * 1e-12;
        r->tasks = rotor_sim_task_count(c->sim);
    }
    free(c->deps);
    free(c->dsts);
    rotor_sim_free(c->sim);
    return st;
}

rotor_status rotor_meshbase_run(const rotor_expr *e, const rotor_chip *chip, rotor_meshbase_kind kind,
                                const rotor_meshbase_options *opt, rotor_meshbase_result *out, rotor_error *err) {
    memset(out, 0, sizeof *out);
    if ((unsigned)kind >= ROTOR_MESHBASE_NKINDS)
        return rotor_fail(err, ROTOR_ERR_INPUT, "baseline: unknown kind %d", (int)kind);
    const mb_algo *a = &ALGOS[kind];
    mb_ctx c = {.e = e, .chip = chip, .alpha = rotor_chip_link_latency(chip), .beta = rotor_chip_link_bw(chip),
                .elem = chip->element_bytes, .res = out};
    rotor_status st = mesh_gemm(e, chip, a->name, &c.gm, err);
    if (st) return st;
    c.lrole = c.gm.ext[RN] == 1 ? RM : RN;
    if (kind == ROTOR_MESHBASE_GEMV && c.gm.ext[RM] > 1 && c.gm.ext[RN] > 1)
        return rotor_fail(err, ROTOR_ERR_INPUT, "gemv: needs %s = 1 or %s = 1 (a matrix times a vector), got %lld and %lld",
                          c.gm.ax[RM] >= 0 ? e->axis_name[c.gm.ax[RM]] : "m",
                          c.gm.ax[RN] >= 0 ? e->axis_name[c.gm.ax[RN]] : "n", (long long)c.gm.ext[RM],
                          (long long)c.gm.ext[RN]);
    mb_plan pl;
    st = opt && opt->grid.p > 0 ? given(&c, a, &opt->grid, &pl, err) : choose(&c, a, &pl, err);
    if (st) return st;
    *out = (rotor_meshbase_result){.kind = kind, .grid = pl.g, .m = c.gm.ext[RM], .k = c.gm.ext[RK],
                                   .n = c.gm.ext[RN], .tile = {pl.tile[0], pl.tile[1], pl.tile[2]},
                                   .steps = pl.steps, .sram_bytes = pl.sram, .predicted_s = pl.predicted,
                                   .compute_s = pl.compute};
    if (!(opt && opt->predict_only) && (st = simulate(&c, a, &pl, err))) memset(out, 0, sizeof *out);
    return st;
}
