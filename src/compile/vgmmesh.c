/* vgmmesh.c — the VGM baseline's exchange rounds priced over a 2D mesh's
 * XY routes (issue 41, deliverable 1: every predicted data movement counts
 * the hops and shared links of the chip's routes; docs/vgm.md, "On a 2D
 * mesh"; docs/cost-model.md, "On a 2D mesh").
 *
 * vgmroller.c times Roller's tiles against the tensors' linear layouts; on
 * all-to-all a round is the busiest core's port.  On a mesh (core c at
 * (c mod W, c div W), one chip) this file counts, per round, what each
 * directed link carries, and prices the round as rotor_mesh_setup_s prices
 * one round of a setup exchange: the busiest link's bytes / beta + the
 * longest route's hops x alpha.
 *
 * Decisions:
 *  - No port rule.  A mesh core drives its four links at once and the
 *    simulator's mesh has no injection port (docs/simulator.md, "2D mesh";
 *    Elk §6: "each core can simultaneously communicate with all its
 *    neighbors"): only links are counted.
 *  - Loads multicast, as on all-to-all (vgmroller.c: an owner sends each
 *    distinct byte once per round).  An owner's bytes read by a group of
 *    readers travel the union of the XY routes from it to them, a tree, each
 *    link carrying them once: along the owner's row to the furthest reader
 *    column on either side, then down and up each reader column to its
 *    furthest reader.  This is the simulator's multicast
 *    (rotor_sim_multicast: "the union of the XY routes, a tree"), the
 *    fan-out of Tenstorrent's NoC (rectangle multicast) and of Cerebras's
 *    router (colour fan-out), and the same favour the all-to-all VGM gets.
 *    A reader that owns part of a box needs no route to itself: its own
 *    bytes cross no link.
 *  - Stores are unicasts: a writer's output tile goes, part by part, to the
 *    owners of those parts (distinct bytes to distinct owners), each along
 *    its XY route.
 *  - The tree's loads factorise.  With the readers' extreme columns xmin,
 *    xmax and each reader column c's extreme rows top[c], bot[c]:
 *      east on row y, link x -> x+1 = [x < xmax]  * (owner bytes on row y at columns <= x)
 *      south on column c, y -> y+1  = [y < bot[c]] * (owner bytes on rows <= y)
 *    (west and north the mirror).  Owners are ranges of consecutive cores,
 *    evenly loaded inside (vgmroller.c's segments), so an owner range is at
 *    most 5 rectangles of uniform bytes (its two ends, a partial first row,
 *    full rows, a partial last row), and each adds a ramp and a constant to
 *    a line.  The lines keep differences twice along a line (a ramp in
 *    O(1)) and once across lines (a block of full rows, or a run of reader
 *    columns with the same extremes, in O(1)): a group costs O(rectangles x
 *    column runs), and the round's sum is taken once, O(W H).
 *  - The longest route of a multicast is the farthest reader from its
 *    farthest owner: max over the four signs of +-(x_r - x_o) +- (y_r - y_o),
 *    taken from the readers' extremes of x + y and x - y.
 *  - Loads are in bytes as doubles: an evenly spread sub-box's owners hold
 *    fractions of a byte, as on all-to-all; the round's busiest link is not
 *    rounded.  A round that moves nothing still costs alpha, its barrier,
 *    as on all-to-all (vgmroller.c's exchange). */
#include <stdlib.h>
#include <string.h>

#include "vgmint.h"

/* One direction's links as lines (rows for east and west, columns for south
 * and north) of len positions; link i of a line leaves position i.  d holds
 * (lines + 1) lines of len + 2: differences twice along a line, once across. */
typedef struct mesh_dir {
    int64_t lines, len;
    double *d;
    int64_t lo, hi; /* the lines touched since the last round: [lo, hi] (hi < lo: none) */
} mesh_dir;

enum { EAST, WEST, SOUTH, NORTH };

struct vgm_mesh {
    int64_t w, h;
    double beta, alpha;
    mesh_dir dir[4];
    double *acc;             /* one line's sum across lines, max(w, h) + 2 */
    int64_t hops;            /* this round's longest route */
    /* the current multicast group's readers */
    int64_t *top, *bot;      /* per column: least and greatest reader row; -1: none */
    int64_t *cols;           /* the columns with readers */
    int64_t *run;            /* runs of neighbouring columns with the same extremes: c1, c2, top, bot */
    int64_t nruns, xmin, xmax;
    int64_t ext[4];          /* max over readers of x + y, x - y, -x + y, -x - y */
};

/* A rectangle of owners, columns x1..x2 and rows y1..y2, each with d bytes. */
typedef struct rect {
    int64_t x1, x2, y1, y2;
    double d;
} rect;

static void line_ramp(double *v, int64_t l, int64_t r, double a, double s, double sign) {
    double end = a + s * (double)(r - 1 - l);
    v[l] += sign * a;
    v[l + 1] += sign * (s - a);
    v[r] -= sign * (end + s);
    v[r + 1] += sign * end;
}

/* Adds a + s (i - l) at positions [l, r) of lines k1..k2. */
static void ramp(mesh_dir *m, int64_t k1, int64_t k2, int64_t l, int64_t r, double a, double s) {
    if (r <= l || k2 < k1) return;
    line_ramp(m->d + k1 * (m->len + 2), l, r, a, s, 1);
    line_ramp(m->d + (k2 + 1) * (m->len + 2), l, r, a, s, -1);
    if (m->hi < m->lo) m->lo = k1, m->hi = k2 + 1;
    if (k1 < m->lo) m->lo = k1;
    if (k2 + 1 > m->hi) m->hi = k2 + 1;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Sources at positions p1..p2 of lines k1..k2, d bytes each, fanning out
 * toward higher positions up to `end`: link i (i -> i + 1), for i < end,
 * carries d times the sources at or before i. */
static void fan_out_hi(mesh_dir *m, int64_t k1, int64_t k2, int64_t p1, int64_t p2, double d, int64_t end) {
    ramp(m, k1, k2, p1, min64(p2 + 1, end), d, d);
    ramp(m, k1, k2, p2 + 1, end, d * (double)(p2 - p1 + 1), 0);
}

/* The mirror, toward lower positions down to `end`: link i (i -> i - 1),
 * for i > end, carries d times the sources at or after i. */
static void fan_out_lo(mesh_dir *m, int64_t k1, int64_t k2, int64_t p1, int64_t p2, double d, int64_t end) {
    int64_t l = max64(p1, end + 1);
    ramp(m, k1, k2, l, p2 + 1, d * (double)(p2 - l + 1), -d);
    ramp(m, k1, k2, end + 1, p1, d * (double)(p2 - p1 + 1), 0);
}

/* One source at s sending d bytes to each destination p1..p2 above it:
 * link i (i -> i + 1), for s <= i, carries d times the destinations > i. */
static void fan_in_hi(mesh_dir *m, int64_t k1, int64_t k2, int64_t s, int64_t p1, int64_t p2, double d) {
    if (p2 <= s) return;
    ramp(m, k1, k2, s, p1, d * (double)(p2 - p1 + 1), 0);
    int64_t l = max64(s, p1);
    ramp(m, k1, k2, l, p2, d * (double)(p2 - l), -d);
}

/* The mirror, destinations below s: link i (i -> i - 1), for i <= s,
 * carries d times the destinations < i. */
static void fan_in_lo(mesh_dir *m, int64_t k1, int64_t k2, int64_t s, int64_t p1, int64_t p2, double d) {
    if (p1 >= s) return;
    ramp(m, k1, k2, p2 + 1, s + 1, d * (double)(p2 - p1 + 1), 0);
    ramp(m, k1, k2, p1 + 1, min64(p2, s) + 1, d, d);
}

rotor_status vgm_mesh_new(const rotor_chip *chip, vgm_mesh **out, rotor_error *err) {
    *out = NULL;
    if (chip->topology != ROTOR_TOPO_MESH || chip->chips != 1)
        return rotor_fail(err, ROTOR_ERR_INPUT, "vgm: chip %s: the mesh pricing takes one chip's mesh", chip->name);
    vgm_mesh *m = calloc(1, sizeof *m);
    if (!m) return rotor_nomem(err);
    int64_t w = chip->mesh_width, h = chip->mesh_height;
    *m = (vgm_mesh){.w = w, .h = h, .beta = rotor_chip_link_bw(chip), .alpha = rotor_chip_link_latency(chip)};
    bool ok = true;
    for (int k = 0; k < 4; k++) {
        mesh_dir *d = &m->dir[k];
        d->lines = k < SOUTH ? h : w;
        d->len = k < SOUTH ? w : h;
        d->lo = 0, d->hi = -1;
        d->d = calloc((size_t)((d->lines + 1) * (d->len + 2)), sizeof *d->d);
        ok &= d->d != NULL;
    }
    m->acc = calloc((size_t)(max64(w, h) + 2), sizeof *m->acc);
    m->top = malloc(sizeof *m->top * (size_t)w);
    m->bot = malloc(sizeof *m->bot * (size_t)w);
    m->cols = malloc(sizeof *m->cols * (size_t)w);
    m->run = malloc(sizeof *m->run * 4 * (size_t)w);
    if (!ok || !m->acc || !m->top || !m->bot || !m->cols || !m->run) {
        vgm_mesh_free(m);
        return rotor_nomem(err);
    }
    for (int64_t c = 0; c < w; c++) m->top[c] = m->bot[c] = -1;
    *out = m;
    return ROTOR_OK;
}

void vgm_mesh_free(vgm_mesh *m) {
    if (!m) return;
    for (int k = 0; k < 4; k++) free(m->dir[k].d);
    free(m->acc), free(m->top), free(m->bot), free(m->cols), free(m->run);
    free(m);
}

static int by_value(const void *pa, const void *pb) {
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return (a > b) - (a < b);
}

void vgm_mesh_readers(vgm_mesh *m, const int64_t *readers, int64_t n) {
    int64_t ncols = 0;
    m->xmin = m->w, m->xmax = -1;
    for (int k = 0; k < 4; k++) m->ext[k] = INT64_MIN;
    for (int64_t i = 0; i < n; i++) {
        int64_t x = readers[i] % m->w, y = readers[i] / m->w;
        if (m->top[x] < 0) m->cols[ncols++] = x, m->top[x] = m->bot[x] = y;
        m->top[x] = min64(m->top[x], y), m->bot[x] = max64(m->bot[x], y);
        m->xmin = min64(m->xmin, x), m->xmax = max64(m->xmax, x);
        const int64_t v[4] = {x + y, x - y, -x + y, -x - y};
        for (int k = 0; k < 4; k++) m->ext[k] = max64(m->ext[k], v[k]);
    }
    qsort(m->cols, (size_t)ncols, sizeof *m->cols, by_value);
    m->nruns = 0;
    for (int64_t i = 0; i < ncols; i++) {
        int64_t c = m->cols[i], *r = m->nruns ? m->run + 4 * (m->nruns - 1) : NULL;
        if (r && r[1] == c - 1 && r[2] == m->top[c] && r[3] == m->bot[c]) {
            r[1] = c;
            continue;
        }
        r = m->run + 4 * m->nruns++;
        r[0] = r[1] = c, r[2] = m->top[c], r[3] = m->bot[c];
    }
    for (int64_t i = 0; i < ncols; i++) m->top[m->cols[i]] = m->bot[m->cols[i]] = -1;
}

/* Owners o0..o1 holding first (o0), mid (each between) and last (o1)
 * bytes as rectangles of uniform bytes; returns how many (at most 5). */
static int rects_of(const vgm_mesh *m, int64_t o0, int64_t o1, double first, double mid, double last, rect *out) {
    int n = 0;
    int64_t w = m->w;
    if (first > 0) out[n++] = (rect){o0 % w, o0 % w, o0 / w, o0 / w, first};
    if (o1 > o0 && last > 0) out[n++] = (rect){o1 % w, o1 % w, o1 / w, o1 / w, last};
    int64_t a = o0 + 1, b = o1 - 1, ya = a / w, yb = b / w;
    if (a > b || mid <= 0) return n;
    if (ya == yb) {
        out[n++] = (rect){a % w, b % w, ya, ya, mid};
        return n;
    }
    out[n++] = (rect){a % w, w - 1, ya, ya, mid};
    if (yb - 1 >= ya + 1) out[n++] = (rect){0, w - 1, ya + 1, yb - 1, mid};
    out[n++] = (rect){0, b % w, yb, yb, mid};
    return n;
}

void vgm_mesh_multicast(vgm_mesh *m, int64_t o0, int64_t o1, double first, double mid, double last) {
    rect r[5];
    int n = rects_of(m, o0, o1, first, mid, last, r);
    for (int i = 0; i < n; i++) {
        const rect *q = &r[i];
        /* along the owners' rows to the furthest reader column each way */
        fan_out_hi(&m->dir[EAST], q->y1, q->y2, q->x1, q->x2, q->d, m->xmax);
        fan_out_lo(&m->dir[WEST], q->y1, q->y2, q->x1, q->x2, q->d, m->xmin);
        /* then down and up every reader column: a row of owners' bytes */
        double row = q->d * (double)(q->x2 - q->x1 + 1);
        for (int64_t k = 0; k < m->nruns; k++) {
            const int64_t *c = m->run + 4 * k;
            fan_out_hi(&m->dir[SOUTH], c[0], c[1], q->y1, q->y2, row, c[3]);
            fan_out_lo(&m->dir[NORTH], c[0], c[1], q->y1, q->y2, row, c[2]);
        }
        /* the farthest reader from the farthest owner */
        const int64_t near[4] = {q->x1 + q->y1, q->x1 - q->y2, -q->x2 + q->y1, -q->x2 - q->y2};
        for (int k = 0; k < 4; k++) m->hops = max64(m->hops, m->ext[k] - near[k]);
    }
}

void vgm_mesh_unicast(vgm_mesh *m, int64_t src, int64_t o0, int64_t o1, double first, double mid, double last) {
    rect r[5];
    int n = rects_of(m, o0, o1, first, mid, last, r);
    int64_t xs = src % m->w, ys = src / m->w;
    for (int i = 0; i < n; i++) {
        const rect *q = &r[i];
        /* along the writer's row to every owner column, a column of owners' bytes */
        double col = q->d * (double)(q->y2 - q->y1 + 1);
        fan_in_hi(&m->dir[EAST], ys, ys, xs, q->x1, q->x2, col);
        fan_in_lo(&m->dir[WEST], ys, ys, xs, q->x1, q->x2, col);
        /* then down or up each owner column from the writer's row */
        fan_in_hi(&m->dir[SOUTH], q->x1, q->x2, ys, q->y1, q->y2, q->d);
        fan_in_lo(&m->dir[NORTH], q->x1, q->x2, ys, q->y1, q->y2, q->d);
        int64_t hx = max64(llabs(q->x1 - xs), llabs(q->x2 - xs)), hy = max64(llabs(q->y1 - ys), llabs(q->y2 - ys));
        m->hops = max64(m->hops, hx + hy);
    }
}

/* The busiest link of direction m (then cleared). */
static double busiest(vgm_mesh *vm, mesh_dir *m) {
    double most = 0;
    if (m->hi < m->lo) return 0;
    int64_t len = m->len;
    memset(vm->acc, 0, sizeof *vm->acc * (size_t)(len + 2));
    for (int64_t k = m->lo; k <= m->hi; k++) {
        double *v = m->d + k * (len + 2), *acc = vm->acc, d1 = 0, load = 0;
        if (k < m->lines)
            for (int64_t i = 0; i < len; i++) { /* one pass: across lines, then twice along */
                acc[i] += v[i];
                d1 += acc[i];
                load += d1;
                if (load > most) most = load;
            }
        acc[len] += v[len], acc[len + 1] += v[len + 1];
        memset(v, 0, sizeof *v * (size_t)(len + 2));
    }
    m->lo = 0, m->hi = -1;
    return most;
}

double vgm_mesh_round(vgm_mesh *m, double *link_bytes, int64_t *hops) {
    double most = 0;
    for (int k = 0; k < 4; k++) {
        double b = busiest(m, &m->dir[k]);
        if (b > most) most = b;
    }
    if (link_bytes) *link_bytes = most;
    if (hops) *hops = m->hops;
    double t = m->hops > 0 ? most / m->beta + (double)m->hops * m->alpha : m->alpha;
    m->hops = 0;
    return t;
}
