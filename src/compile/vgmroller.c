/* vgmroller.c — the VGM baseline as Roller builds it on the IPU (T10 §2.2
 * and §6; Roller, OSDI'22, §3-§4, and its artifact, microsoft/nnfusion
 * branch osdi22_artifact, artifacts/roller, read for the rules the paper
 * leaves out).
 *
 * Roller constructs a few candidate tiles and keeps the one that runs
 * fastest when measured (its artifact compiles its top k and times them on
 * the device).  rotor's "device" is the VGM below: each candidate is timed
 * against the tensors' fixed linear layouts, hot spots included, which is
 * what T10 §2.2 says a VGM compiler meets and cannot see while it builds.
 *
 * Decisions (docs/vgm.md, "Roller"):
 *  - The rTile s spans every axis; sub-operators (tasks) are the tiles of
 *    the output's axes, G_sp = prod ceil(E_a / s_a); the other axes (the
 *    reduction) stream through a task in G_red rounds while it keeps its
 *    output tile, stored once at the end.  Task i runs on core i mod N, in
 *    waves.
 *  - The start tile is aligned to the compute unit: a contraction's m, k and
 *    n groups span at least one systolic quantum (rows, rows, cols) or their
 *    whole extent, filled axis by axis from the largest; every other axis
 *    spans 1.  (The IPU's 4-byte exchange word is 2 FP16 elements, which any
 *    tile of 2 or more already meets: no separate transaction alignment.)
 *  - Scale-up: one axis at a time steps to its next aligned size, s_a + u_a
 *    or 2 s_a (u_a: the start extent of an aligned axis, else 1; capped at
 *    its extent), as Roller's policy_rt_v2 steps; the step taken removes
 *    most traffic per byte of tile it adds, Roller's reuse score
 *    (Q - Q') / (F' - F), with Q every tile's
 *    inputs loaded and each output tile stored once: the reduction chunk
 *    changes no traffic, so it grows when nothing else does.  Steps stop
 *    when none fits in the local memory.
 *  - Scale-out.  When the output has fewer tiles than the chip has cores,
 *    the reduction is split F_k = min(G_red, floor(N / G_sp)) ways: a task
 *    streams ceil(G_red / F_k) reduction tiles and stores a partial sum,
 *    which the owners add (not charged).  Roller's GPU artifact has no
 *    rfactor, but T10 §6.2 puts Roller on the IPU in Ansor's space, which
 *    splits reductions, and without the split rotor's Roller was 12-15x
 *    slower than T10 at batch 1, far outside T10's 3.3x at most
 *    (docs/reproduction.md).  If even the split leaves cores idle, the artifact's
 *    try_shrink: the spatial axis whose halving adds least traffic per byte
 *    of tile it frees is halved until the grid has a tile per core.
 *  - Candidates, Roller's top k: the scale-up path's last ROLLER_TOPK tiles
 *    (the largest), its last ROLLER_TOPK whose grid still has a tile per
 *    core (the largest that need no shrinking), and the ROLLER_TOPK a micro-
 *    model with waves ranks first (every byte over the core's own link);
 *    each is scaled out and measured, and the fastest wins (ties: the
 *    first measured, largest first).
 *  - The measurement is sampled on large operators: SAMPLE_WAVES of the full
 *    waves (evenly spaced) stand for all of them, and the last wave for
 *    itself; SAMPLE_ROUNDS rounds per wave likewise.  A box of more than
 *    MAX_SEGMENTS contiguous runs is cut over its outer dimensions into at
 *    most MAX_SEGMENTS sub-boxes, each taken as evenly spread over its own
 *    stretch of the layout.  Small operators are measured exactly.
 *  - Measured time, the VGM's: each tensor lies linearly (row-major) over
 *    the cores, ceil(bytes / N) per core, starting at core 0.  In each round
 *    every core fetches its input tiles from the cores that own them; a core
 *    receives the bytes of its tiles it does not own, and an owner sends
 *    each distinct byte it holds once per round (the IPU exchange lets
 *    several cores receive one send), so many cores reading different data
 *    from one owner pile onto its link (T10 §2.2's hot spot) while cores
 *    reading the same data do not.  A round takes the busiest core's
 *    max(sent, received) / beta + alpha, then the sub-task compute (BSP:
 *    exchange and compute do not overlap on the IPU).  After the last round
 *    of a wave each core stores its output tile to its owners the same way.
 *  - The compute of a round is the cost model's padded sub-task time, as on
 *    the T10 side.
 *  - predicted_s is what a model blind to owners says of the chosen tile:
 *    every byte over the core's own link, no waves (docs/vgm.md compares
 *    it with the measured time). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/op/cost.h"
#include "rotor/op/plan.h"
#include "vgmint.h"

#define MAX_PATH 1000000 /* scale-up steps; each adds at least one element to a tile in SRAM */
#define ROLLER_TOPK 4 /* candidates of each kind measured */

typedef struct roller {
    const vgm_target *t;
    const rotor_expr *e;
    double beta, alpha;
    vgm_mesh *mesh; /* on a mesh, its links (vgmmesh.c); NULL on all-to-all */
    bool spatial[ROTOR_MAX_AXES]; /* an axis of the output: tiles are tasks */
    int64_t unit[ROTOR_MAX_AXES];  /* scale-up step: the start extent of an aligned axis, else 1 */
} roller;

/* Tiles of the grid over the output's axes (spatial) or the others, saturating. */
static int64_t count_tiles(const roller *r, const int64_t *s, bool spatial) {
    int64_t n = 1;
    for (int a = 0; a < r->e->naxes; a++)
        if (r->spatial[a] == spatial && !rotor_mul_i64(n, vgm_ceil_div(r->e->extent[a], s[a]), &n)) return INT64_MAX;
    return n;
}

static int64_t footprint(const roller *r, const int64_t *s) {
    int64_t f = 0;
    for (int x = 0; x < r->e->ntensors; x++) f += vgm_tile_bytes(r->e, x, s, r->t->elem);
    return f;
}

/* Roller's Q: bytes the whole operator moves to and from the VGM. */
static double traffic(const roller *r, const int64_t *s) {
    double in = 0;
    for (int x = 1; x < r->e->ntensors; x++) in += (double)vgm_tile_bytes(r->e, x, s, r->t->elem);
    return (double)count_tiles(r, s, true) *
           ((double)count_tiles(r, s, false) * in + (double)vgm_tile_bytes(r->e, 0, s, r->t->elem));
}

/* Scale-out of tile s: the reduction's split F_k, the tasks and the rounds
 * of one task. */
typedef struct scale_out {
    int64_t g_sp, g_red, f_k, tasks, rounds;
} scale_out;

static scale_out scale(const roller *r, const int64_t *s) {
    scale_out so = {.g_sp = count_tiles(r, s, true), .g_red = count_tiles(r, s, false)};
    int64_t room = so.g_sp < r->t->cores ? r->t->cores / so.g_sp : 1;
    so.f_k = so.g_red < room ? so.g_red : room;
    so.tasks = so.g_sp * so.f_k;
    so.rounds = vgm_ceil_div(so.g_red, so.f_k);
    return so;
}

/* Roller's traffic if each task's tile is measured: a model blind to the
 * owners (every byte over the core's own link, the work spread evenly). */
static double predicted(const roller *r, const int64_t *s, bool waves) {
    double in = 0;
    for (int x = 1; x < r->e->ntensors; x++) in += (double)vgm_tile_bytes(r->e, x, s, r->t->elem);
    scale_out so = scale(r, s);
    double per_core = (double)so.tasks / (double)r->t->cores;
    if (waves) per_core = (double)vgm_ceil_div(so.tasks, r->t->cores);
    else if (per_core < 1) per_core = 1; /* idle cores are idle */
    return per_core * ((double)so.rounds * (in / r->beta + r->alpha +
                                                            rotor_cost_v1_subtask(r->e, r->t->chip, s)) +
                       (double)vgm_tile_bytes(r->e, 0, s, r->t->elem) / r->beta + r->alpha);
}

/* The aligned start tile: each padded group of a contraction spans one
 * systolic quantum or its whole extent, from its largest axis down. */
static void start_tile(const roller *r, int64_t *s) {
    const rotor_expr *e = r->e;
    for (int a = 0; a < e->naxes; a++) s[a] = 1;
    if (e->op_class != ROTOR_OP_CONTRACTION) return;
    const rotor_tensor *y = &e->tensors[0], *x1 = &e->tensors[1], *x2 = &e->tensors[2];
    int group[ROTOR_MAX_AXES]; /* 0 batch, 1 m, 2 k, 3 n: the cost model's groups */
    for (int a = 0; a < e->naxes; a++)
        group[a] = !y->has_axis[a] ? 2 : x1->has_axis[a] && x2->has_axis[a] ? 0 : x1->has_axis[a] ? 1 : 3;
    const int64_t quantum[4] = {1, r->t->chip->systolic_rows, r->t->chip->systolic_rows, r->t->chip->systolic_cols};
    for (int gi = 1; gi < 4; gi++) {
        int64_t need = quantum[gi];
        bool done[ROTOR_MAX_AXES] = {false};
        while (need > 1) {
            int big = -1;
            for (int a = 0; a < e->naxes; a++)
                if (group[a] == gi && !done[a] && (big < 0 || e->extent[a] > e->extent[big])) big = a;
            if (big < 0) break;
            done[big] = true;
            s[big] = e->extent[big] < need ? e->extent[big] : need;
            need = vgm_ceil_div(need, s[big]);
        }
    }
}

/* One scale-up step from s; false when none fits.  Axis a may step to
 * s_a + u_a or to 2 s_a (Roller's next aligned sizes; u_a is the start
 * tile's extent on an aligned axis, else 1), capped at its extent. */
static bool grow(const roller *r, int64_t *s) {
    const rotor_expr *e = r->e;
    int64_t f0 = footprint(r, s), to = 0;
    double q0 = traffic(r, s), best = -1;
    int pick = -1;
    for (int a = 0; a < e->naxes; a++) {
        if (s[a] >= e->extent[a]) continue;
        int64_t keep = s[a], next[2] = {keep + r->unit[a], 2 * keep};
        for (int i = 0; i < 2; i++) {
            s[a] = next[i] < e->extent[a] ? next[i] : e->extent[a];
            int64_t f = footprint(r, s);
            double gain = q0 - traffic(r, s);
            int64_t size = s[a];
            s[a] = keep;
            if (f > r->t->local || gain < 0 || f <= f0) continue;
            double score = gain / (double)(f - f0);
            if (score > best) best = score, pick = a, to = size;
        }
    }
    if (pick < 0) return false;
    s[pick] = to;
    return true;
}

/* Scale-out, when even a split reduction leaves cores idle: halve spatial
 * axes until the grid has a tile per core. */
static void shrink(const roller *r, int64_t *s) {
    const rotor_expr *e = r->e;
    for (;;) {
        int64_t grid;
        if (!rotor_mul_i64(count_tiles(r, s, true), count_tiles(r, s, false), &grid) || grid >= r->t->cores) return;
        int64_t f0 = footprint(r, s);
        double q0 = traffic(r, s), best = INFINITY;
        int pick = -1;
        for (int a = 0; a < e->naxes; a++) {
            if (!r->spatial[a] || s[a] <= 1) continue;
            int64_t keep = s[a];
            s[a] = vgm_ceil_div(keep, 2);
            double loss = traffic(r, s) - q0;
            int64_t freed = f0 - footprint(r, s);
            s[a] = keep;
            double score = loss / (double)(freed > 0 ? freed : 1);
            if (score < best) best = score, pick = a;
        }
        if (pick < 0) return; /* every spatial axis is down to 1 */
        s[pick] = vgm_ceil_div(s[pick], 2);
    }
}

/* ---- the time against the linear layout ---------------------------------- */

#define MAX_SEGMENTS 32  /* a box's segments: its runs, or sub-boxes spread evenly */
#define SAMPLE_WAVES 4   /* full waves measured (evenly spaced), besides the last */
#define SAMPLE_ROUNDS 4  /* rounds measured per wave (evenly spaced) */

typedef struct layout {
    const roller *r;
    const int64_t *s;
    double *recv, *send;  /* per core, this round */
    double *ramp;         /* per core: a difference array of sends (even spreads) */
    int64_t dim[ROTOR_MAX_TENSORS][ROTOR_MAX_DIMS];    /* full extent of each dimension */
    int64_t stride[ROTOR_MAX_TENSORS][ROTOR_MAX_DIMS]; /* elements */
} layout;

/* A stretch [lo, hi) of a tensor's bytes holding `bytes` of a box, taken
 * as evenly spread over the stretch (exact when bytes == hi - lo). */
typedef struct segment {
    int64_t lo, hi;
    double bytes;
} segment;

/* The box tensor x's tile covers at tile coordinates c (per axis). */
static void box_of(const layout *L, int x, const int64_t *c, int64_t *start, int64_t *ext) {
    const rotor_expr *e = L->r->e;
    const rotor_tensor *t = &e->tensors[x];
    for (int d = 0; d < t->ndims; d++) {
        const rotor_dim *dm = &t->dims[d];
        int64_t len[2];
        start[d] = 0;
        for (int k = 0; k < dm->nterms; k++) {
            int a = dm->axis[k];
            int64_t lo = c[a] * L->s[a];
            len[k] = e->extent[a] - lo < L->s[a] ? e->extent[a] - lo : L->s[a];
            start[d] += dm->coef[k] * lo;
        }
        ext[d] = rotor_dim_extent(dm, len);
    }
}

/* The box's segments in the row-major layout: its contiguous runs when
 * there are at most MAX_SEGMENTS, else as many sub-boxes (the outer
 * dimensions enumerated) each spread evenly over its own stretch.
 * Returns the count; *total gets the box's bytes. */
static int segments_of(const layout *L, int x, const int64_t *start, const int64_t *ext, segment *seg,
                       int64_t *total) {
    const rotor_tensor *t = &L->r->e->tensors[x];
    int nd = t->ndims;
    int64_t elem = L->r->t->elem;
    *total = elem;
    for (int d = 0; d < nd; d++) *total *= ext[d];
    if (nd == 0) {
        seg[0] = (segment){0, elem, (double)elem};
        return 1;
    }
    /* dims after j are covered whole: they join dim j's run */
    int j = nd - 1;
    while (j > 0 && start[j] == 0 && ext[j] == L->dim[x][j]) j--;
    /* enumerate dims before q; each sub-box spans dims q.. */
    int q = 0;
    int64_t count = 1;
    while (q < j && count * ext[q] <= MAX_SEGMENTS) count *= ext[q++];
    int64_t sub_bytes = *total / count, span = 0; /* the sub-box's stretch, first to last byte */
    for (int d = q; d < nd; d++) span += (ext[d] - 1) * L->stride[x][d];
    span = (span + 1) * elem;
    if (q < j) span = span > sub_bytes ? span : sub_bytes;
    else span = ext[j] * L->stride[x][j] * elem; /* q == j: a run, exact */
    int64_t idx[ROTOR_MAX_DIMS] = {0};
    int n = 0;
    for (;;) {
        int64_t off = 0;
        for (int d = 0; d < nd; d++) off += (start[d] + (d < q ? idx[d] : 0)) * L->stride[x][d];
        seg[n++] = (segment){off * elem, off * elem + span, (double)sub_bytes};
        int d = q - 1;
        while (d >= 0 && ++idx[d] == ext[d]) idx[d--] = 0;
        if (d < 0) break;
    }
    return n;
}

/* Bytes of segment g on core o's slice. */
static double owned(const segment *g, int64_t o, int64_t slice) {
    int64_t lo = o * slice > g->lo ? o * slice : g->lo, hi = (o + 1) * slice < g->hi ? (o + 1) * slice : g->hi;
    return hi > lo ? g->bytes * (double)(hi - lo) / (double)(g->hi - g->lo) : 0;
}

/* Adds each segment's bytes to its owners' counters (cnt), the interior
 * owners of a long stretch through the difference array. */
static void to_owners(layout *L, const segment *seg, int n, int64_t slice, double *cnt) {
    for (int i = 0; i < n; i++) {
        const segment *g = &seg[i];
        int64_t o0 = g->lo / slice, o1 = (g->hi - 1) / slice;
        if (o0 == o1) {
            cnt[o0] += g->bytes;
            continue;
        }
        double rho = g->bytes / (double)(g->hi - g->lo);
        cnt[o0] += rho * (double)((o0 + 1) * slice - g->lo);
        cnt[o1] += rho * (double)(g->hi - o1 * slice);
        if (o1 > o0 + 1) { /* owners o0+1 .. o1-1 hold rho * slice each */
            L->ramp[o0 + 1] += rho * (double)slice;
            L->ramp[o1] -= rho * (double)slice;
        }
    }
}

/* The busiest core's exchange, then clear the counters; on a mesh, the
 * busiest link's and the longest route's (vgmmesh.c). */
static double exchange(layout *L) {
    if (L->r->mesh) return vgm_mesh_round(L->r->mesh, NULL, NULL);
    double most = 0, run = 0;
    for (int64_t c = 0; c < L->r->t->cores; c++) {
        run += L->ramp[c];
        double sent = L->send[c] + run;
        double m = sent > L->recv[c] ? sent : L->recv[c];
        if (m > most) most = m;
        L->send[c] = L->recv[c] = L->ramp[c] = 0;
    }
    return most / L->r->beta + L->r->alpha;
}

/* Segment g's owners o0..o1 and their bytes: the first's, each between's,
 * the last's (as to_owners counts them). */
static void owner_range(const segment *g, int64_t slice, int64_t *o0, int64_t *o1, double *share) {
    *o0 = g->lo / slice, *o1 = (g->hi - 1) / slice;
    if (*o0 == *o1) {
        share[0] = g->bytes, share[1] = share[2] = 0;
        return;
    }
    double rho = g->bytes / (double)(g->hi - g->lo);
    share[0] = rho * (double)((*o0 + 1) * slice - g->lo);
    share[1] = rho * (double)slice;
    share[2] = rho * (double)(g->hi - *o1 * slice);
}

/* One box (segments seg, `bytes` in all) served to its nr readers: each
 * owner sends its part once; a reader receives what it does not hold; a
 * box read only by one of its owners is not sent by that owner.  On a mesh
 * the owners' parts go down the union of their routes to the readers. */
static void serve(layout *L, const segment *seg, int ns, int64_t bytes, int64_t slice, const int64_t *readers,
                  int64_t nr) {
    if (L->r->mesh) {
        vgm_mesh_readers(L->r->mesh, readers, nr);
        for (int sg = 0; sg < ns; sg++) {
            int64_t o0, o1;
            double share[3];
            owner_range(&seg[sg], slice, &o0, &o1, share);
            vgm_mesh_multicast(L->r->mesh, o0, o1, share[0], share[1], share[2]);
        }
        return;
    }
    to_owners(L, seg, ns, slice, L->send);
    for (int64_t i = 0; i < nr; i++) {
        double own = 0;
        for (int sg = 0; sg < ns; sg++) own += owned(&seg[sg], readers[i], slice);
        L->recv[readers[i]] += (double)bytes - own;
        if (nr == 1) L->send[readers[i]] -= own;
    }
}

/* Core c stores its output box (segments seg, `bytes` in all) to the
 * owners, keeping the part it owns; on a mesh each part along its route. */
static void deliver(layout *L, int64_t c, const segment *seg, int ns, int64_t bytes, int64_t slice) {
    if (L->r->mesh) {
        for (int sg = 0; sg < ns; sg++) {
            int64_t o0, o1;
            double share[3];
            owner_range(&seg[sg], slice, &o0, &o1, share);
            vgm_mesh_unicast(L->r->mesh, c, o0, o1, share[0], share[1], share[2]);
        }
        return;
    }
    double own = 0;
    for (int k = 0; k < ns; k++) own += owned(&seg[k], c, slice);
    to_owners(L, seg, ns, slice, L->recv);
    L->recv[c] -= own;
    L->send[c] += (double)bytes - own;
}

typedef struct keyed {
    int64_t key, core;
} keyed;

static int by_key(const void *pa, const void *pb) {
    const keyed *a = pa, *b = pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->core < b->core ? -1 : a->core > b->core;
}

/* Tile coordinates of grid index `i` on the spatial (or the other) axes,
 * the last axis fastest. */
static void grid_coords(const roller *r, const int64_t *s, bool spatial, int64_t i, int64_t *c) {
    for (int a = r->e->naxes - 1; a >= 0; a--)
        if (r->spatial[a] == spatial) {
            int64_t n = vgm_ceil_div(r->e->extent[a], s[a]);
            c[a] = i % n;
            i /= n;
        }
}

/* Times tile s against the linear layout: load and store. */
static rotor_status layout_time(const roller *r, const int64_t *s, double *load, double *store, rotor_error *err) {
    const rotor_expr *e = r->e;
    scale_out so = scale(r, s);
    int64_t cores = r->t->cores, tasks = so.tasks, rounds = so.rounds;
    int nt = e->ntensors;
    layout L = {.r = r, .s = s};
    for (int x = 0; x < nt; x++) {
        const rotor_tensor *t = &e->tensors[x];
        for (int d = 0; d < t->ndims; d++) {
            int64_t len[2];
            for (int k = 0; k < t->dims[d].nterms; k++) len[k] = e->extent[t->dims[d].axis[k]];
            L.dim[x][d] = rotor_dim_extent(&t->dims[d], len);
        }
        int64_t st = 1;
        for (int d = t->ndims - 1; d >= 0; d--) {
            L.stride[x][d] = st;
            st *= L.dim[x][d];
        }
    }
    size_t n = (size_t)cores;
    L.recv = calloc(n, sizeof(double));
    L.send = calloc(n, sizeof(double));
    L.ramp = calloc(n + 1, sizeof(double));
    segment seg[MAX_SEGMENTS];
    keyed *kr = malloc(sizeof(keyed) * n * (size_t)nt);      /* per input: cores by box */
    int64_t *ngroups = calloc((size_t)nt, sizeof(int64_t));
    int64_t *gstart = malloc(sizeof(int64_t) * (n + 1) * (size_t)nt);
    int64_t *readers = malloc(sizeof(int64_t) * n);
    int64_t (*coord)[ROTOR_MAX_AXES] = malloc(sizeof *coord * n);
    if (!L.recv || !L.send || !L.ramp || !kr || !ngroups || !gstart || !readers || !coord) {
        free(L.recv), free(L.send), free(L.ramp), free(kr), free(ngroups), free(gstart), free(readers), free(coord);
        return rotor_nomem(err);
    }
    *load = *store = 0;
    /* a tensor with a reduction axis: split-K partners read it apart */
    bool reduced[ROTOR_MAX_TENSORS] = {false};
    for (int x = 0; x < nt; x++)
        for (int a = 0; a < e->naxes; a++) reduced[x] |= !r->spatial[a] && e->tensors[x].has_axis[a];
    int64_t waves = vgm_ceil_div(tasks, cores);
    /* sampled: SAMPLE_WAVES of the full waves, evenly spaced, for all of
     * them, and the last wave itself; SAMPLE_ROUNDS rounds likewise */
    int64_t full = waves - 1; /* the waves before the last, which stands for itself */
    int64_t nw = full < SAMPLE_WAVES ? full : SAMPLE_WAVES, nrd = rounds < SAMPLE_ROUNDS ? rounds : SAMPLE_ROUNDS;
    double wweight = nw ? (double)full / (double)nw : 0, rweight = (double)rounds / (double)nrd;
    for (int64_t wi = 0; wi <= nw; wi++) {
        int64_t w = wi < nw ? wi * full / nw : waves - 1;
        double ww = wi < nw ? wweight : 1;
        int64_t active = tasks - w * cores < cores ? tasks - w * cores : cores;
        for (int64_t c = 0; c < active; c++) grid_coords(r, s, true, (w * cores + c) / so.f_k, coord[c]);
        /* readers of one box share the tensor's spatial tile coordinates;
         * the groups hold for every round of the wave */
        for (int x = 1; x < nt; x++) {
            keyed *k = kr + (size_t)x * n;
            for (int64_t c = 0; c < active; c++) {
                int64_t key = reduced[x] ? (w * cores + c) % so.f_k : 0;
                for (int a = 0; a < e->naxes; a++)
                    if (r->spatial[a] && e->tensors[x].has_axis[a])
                        key = key * vgm_ceil_div(e->extent[a], s[a]) + coord[c][a];
                k[c] = (keyed){key, c};
            }
            qsort(k, (size_t)active, sizeof *k, by_key);
            int64_t *gs = gstart + (size_t)x * (n + 1), g = 0;
            for (int64_t i = 0; i < active; i++)
                if (i == 0 || k[i].key != k[i - 1].key) gs[g++] = i;
            gs[g] = active;
            ngroups[x] = g;
        }
        for (int64_t ri = 0; ri < nrd; ri++) {
            int64_t rd = ri * rounds / nrd;
            for (int x = 1; x < nt; x++) {
                const keyed *k = kr + (size_t)x * n;
                const int64_t *gs = gstart + (size_t)x * (n + 1);
                for (int64_t g = 0; g < ngroups[x]; g++) {
                    int64_t nr = gs[g + 1] - gs[g], c0 = k[gs[g]].core;
                    /* the group's reduction tile this round (its split-K share) */
                    int64_t red = ((w * cores + c0) % so.f_k) * rounds + rd, rc[ROTOR_MAX_AXES] = {0};
                    if (red >= so.g_red) { /* the last share has fewer rounds */
                        if (reduced[x]) continue;
                        red = rd; /* a tensor without reduction axes: the same box */
                    }
                    grid_coords(r, s, false, red, rc);
                    for (int64_t i = 0; i < nr; i++) readers[i] = k[gs[g] + i].core;
                    int64_t c[ROTOR_MAX_AXES], start[ROTOR_MAX_DIMS], ext[ROTOR_MAX_DIMS];
                    for (int a = 0; a < e->naxes; a++) c[a] = r->spatial[a] ? coord[c0][a] : rc[a];
                    box_of(&L, x, c, start, ext);
                    int64_t bytes, slice = r->t->slice[x];
                    int ns = segments_of(&L, x, start, ext, seg, &bytes);
                    serve(&L, seg, ns, bytes, slice, readers, nr);
                }
            }
            *load += ww * rweight * exchange(&L);
        }
        for (int64_t c = 0; c < active; c++) {
            int64_t start[ROTOR_MAX_DIMS], ext[ROTOR_MAX_DIMS];
            box_of(&L, 0, coord[c], start, ext);
            int64_t bytes;
            int ns = segments_of(&L, 0, start, ext, seg, &bytes);
            deliver(&L, c, seg, ns, bytes, r->t->slice[0]);
        }
        *store += ww * exchange(&L);
    }
    free(L.recv), free(L.send), free(L.ramp), free(kr), free(ngroups), free(gstart), free(readers), free(coord);
    return ROTOR_OK;
}

/* Fills r with tile s (scaled out) and its measured time. */
static rotor_status measure(const roller *r, const int64_t *s, rotor_vgm_op *out, rotor_error *err) {
    memset(out, 0, sizeof *out);
    memcpy(out->tile, s, sizeof out->tile);
    scale_out so = scale(r, s);
    out->tasks = so.tasks;
    out->waves = vgm_ceil_div(out->tasks, r->t->cores);
    out->rounds = so.rounds;
    out->tile_bytes = footprint(r, s);
    out->predicted_s = predicted(r, s, false);
    out->compute_s = (double)out->waves * (double)out->rounds * rotor_cost_v1_subtask(r->e, r->t->chip, s);
    rotor_status st = layout_time(r, s, &out->load_s, &out->store_s, err);
    out->total_s = out->compute_s + out->load_s + out->store_s;
    return st;
}

rotor_status vgm_roller_op(const vgm_target *t, const char *name, rotor_vgm_op *out, rotor_error *err) {
    const rotor_expr *e = t->e;
    roller r = {.t = t, .e = e, .beta = rotor_chip_link_bw(t->chip), .alpha = rotor_chip_link_latency(t->chip)};
    for (int a = 0; a < e->naxes; a++) r.spatial[a] = e->tensors[0].has_axis[a];
    int64_t s[ROTOR_MAX_AXES];
    start_tile(&r, s);
    int64_t f = footprint(&r, s);
    if (f > t->local)
        return rotor_fail(err, ROTOR_ERR_NOFIT,
                          "vgm: op %s needs %lld bytes per core for its smallest aligned tile; the VGM leaves %lld",
                          name, (long long)f, (long long)t->local);
    for (int a = 0; a < e->naxes; a++) r.unit[a] = s[a] > 1 && s[a] < e->extent[a] ? s[a] : 1;
    if (t->chip->topology == ROTOR_TOPO_MESH) {
        rotor_status st = vgm_mesh_new(t->chip, &r.mesh, err);
        if (st) return st;
    }
    /* Candidates, as Roller's top k: the path's last ROLLER_TOPK tiles, its
     * last ROLLER_TOPK whose grid still has a tile per core (a prefix of the
     * path: tiles only grow), and the ROLLER_TOPK its micro-model ranks
     * first (with waves).  Rings keep the last ones, largest first later. */
    int64_t last[ROLLER_TOPK][ROTOR_MAX_AXES], fill[ROLLER_TOPK][ROTOR_MAX_AXES], top[ROLLER_TOPK][ROTOR_MAX_AXES];
    double top_t[ROLLER_TOPK];
    int steps = 0, nlast = 0, nfill = 0, ntop = 0;
    for (;;) {
        memcpy(last[nlast++ % ROLLER_TOPK], s, sizeof s);
        int64_t grid;
        if (rotor_mul_i64(count_tiles(&r, s, true), count_tiles(&r, s, false), &grid) && grid >= t->cores)
            memcpy(fill[nfill++ % ROLLER_TOPK], s, sizeof s);
        double p = predicted(&r, s, true);
        int at = ntop; /* insertion into the ranked few; ties: the later (larger) tile first */
        while (at > 0 && p <= top_t[at - 1]) at--;
        if (at < ROLLER_TOPK) {
            int end = ntop < ROLLER_TOPK ? ntop : ROLLER_TOPK - 1;
            for (int i = end; i > at; i--) {
                memcpy(top[i], top[i - 1], sizeof s);
                top_t[i] = top_t[i - 1];
            }
            memcpy(top[at], s, sizeof s);
            top_t[at] = p;
            if (ntop < ROLLER_TOPK) ntop++;
        }
        if (steps == MAX_PATH || !grow(&r, s)) break;
        steps++;
    }
    int64_t cand[3 * ROLLER_TOPK][ROTOR_MAX_AXES];
    int ncand = 0;
    for (int i = 0; i < ROLLER_TOPK && i < nlast; i++) memcpy(cand[ncand++], last[(nlast - 1 - i) % ROLLER_TOPK], sizeof s);
    for (int i = 0; i < ROLLER_TOPK && i < nfill; i++) memcpy(cand[ncand++], fill[(nfill - 1 - i) % ROLLER_TOPK], sizeof s);
    for (int i = 0; i < ntop; i++) memcpy(cand[ncand++], top[i], sizeof s);
    /* measure them, largest first: ties keep the larger tile */
    bool have = false;
    rotor_status st = ROTOR_OK;
    int64_t seen[3 * ROLLER_TOPK][ROTOR_MAX_AXES];
    int nseen = 0;
    for (int i = 0; i < ncand; i++) {
        int64_t c[ROTOR_MAX_AXES];
        memcpy(c, cand[i], sizeof c);
        shrink(&r, c);
        bool dup = false;
        for (int j = 0; j < nseen && !dup; j++) dup = !memcmp(seen[j], c, sizeof c);
        if (dup) continue;
        memcpy(seen[nseen++], c, sizeof c);
        /* compute alone bounds the measured time from below */
        scale_out so = scale(&r, c);
        double compute = (double)vgm_ceil_div(so.tasks, t->cores) * (double)so.rounds * rotor_cost_v1_subtask(e, t->chip, c);
        if (have && compute >= out->total_s) continue;
        rotor_vgm_op m;
        if ((st = measure(&r, c, &m, err))) break;
        if (!have || m.total_s < out->total_s) *out = m;
        have = true;
    }
    vgm_mesh_free(r.mesh);
    return st;
}
