/* meshmap.c — a plan laid on a 2D mesh and priced there (header:
 * rotor/op/meshmap.h, which states the layout and the formulas).
 *
 * Decisions where Elk §5 and WaferLLM are silent (docs/cost-model.md, "On a
 * 2D mesh", repeats them):
 *  - A shift is every ring member sending its partition to the member the
 *    placement names (op/place.c): position p receives from p + delta, delta
 *    +1 on the digits of the axis whose loop counter moved (a carry adds 1 to
 *    each digit it passes, mod its radix).  Each kind of shift a tensor makes
 *    is routed; every shift of the tensor is priced at its worst kind (one
 *    kind for a tensor rotating along one axis with one digit: exact).
 *  - All cores shift at once: the interleaved lines of the inner axes of a
 *    dimension cross the same links, so an axis at stride s carries s times
 *    its own line's load, over s times its distance.
 *  - The reduction is the replay's ring reduce-scatter along the reduced axis
 *    in coordinate order (sim/replay.c), R - 1 rounds of bytes / R. */
#include "rotor/op/meshmap.h"
#include "rotor/op/cost.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Position of coordinate p in a folded segment of length f: 0, 2, 4, ...,
 * then back down the odd positions, so ring neighbours are at most 2 apart. */
static int64_t fold_pos(int64_t p, int64_t f) { return p < (f + 1) / 2 ? 2 * p : 2 * (f - 1 - p) + 1; }

static int64_t unit_of(int64_t c, int64_t f) { return c / f * f + fold_pos(c % f, f); }

/* The geometry of one line of transfers along an axis of extent n folded by
 * f: the most transfers one unit link carries in one direction, and the
 * longest route in units. */
typedef struct line_geo {
    int64_t load, dist;
} line_geo;

/* Routes the transfers src[i] -> dst[i] (coordinates) on the folded line;
 * up/down are scratch of n + 1 counters. */
static line_geo route_line(const int64_t *src, const int64_t *dst, int64_t m, int64_t n, int64_t f, int64_t *up,
                           int64_t *down) {
    memset(up, 0, (size_t)(n + 1) * sizeof *up);
    memset(down, 0, (size_t)(n + 1) * sizeof *down);
    line_geo g = {0, 0};
    for (int64_t i = 0; i < m; i++) {
        int64_t a = unit_of(src[i], f), b = unit_of(dst[i], f);
        if (a == b) continue;
        int64_t *d = a < b ? up : down, lo = a < b ? a : b, hi = a < b ? b : a;
        d[lo]++; /* unit links lo .. hi - 1 */
        d[hi]--;
        if (hi - lo > g.dist) g.dist = hi - lo;
    }
    for (int64_t k = 0, u = 0, w = 0; k < n; k++) {
        u += up[k];
        w += down[k];
        if (u > g.load) g.load = u;
        if (w > g.load) g.load = w;
    }
    return g;
}

/* The digits tensor t sees along axis a (coarse first): the distinct f_t of
 * the tensors carrying a, up to t's own (op/place.c builds the same chain). */
static int tensor_digits(const rotor_expr *e, const rotor_plan *p, int t, int a, int64_t *radix) {
    int64_t chain[ROTOR_MAX_TENSORS];
    int n = 0;
    for (int u = 0; u < e->ntensors; u++) {
        int64_t f = p->ft[u][a];
        if (!e->tensors[u].has_axis[a] || f == 1 || f > p->ft[t][a]) continue;
        bool dup = false;
        for (int k = 0; k < n; k++) dup |= chain[k] == f;
        if (!dup) chain[n++] = f;
    }
    for (int x = 1; x < n; x++)
        for (int y = x; y > 0 && chain[y - 1] > chain[y]; y--) {
            int64_t tmp = chain[y];
            chain[y] = chain[y - 1];
            chain[y - 1] = tmp;
        }
    for (int u = 0, prev = 1; u < n; prev = (int)chain[u], u++) radix[u] = chain[u] / prev;
    return n;
}

/* The one partitioned axis tensor t lacks (-1: none; -2: more than one). */
static int lacked_axis(const rotor_expr *e, const rotor_plan *p, int t) {
    int found = -1;
    for (int a = 0; a < e->naxes; a++)
        if (!e->tensors[t].has_axis[a] && p->fop[a] > 1) found = found == -1 ? a : -2;
    return found;
}

/* Worst line geometry of tensor t's shifts along its lacked axis L (ring Q),
 * the line folded by f: every kind of shift (module comment) routed. */
/* A ring of q stepping by one, folded whole: neighbours 2 apart (1 for two
 * members), every link used once per direction. */
static line_geo ring_geo(int64_t q) { return q <= 1 ? (line_geo){0, 0} : (line_geo){1, q == 2 ? 1 : 2}; }

static rotor_status shift_geo(const rotor_expr *e, const rotor_plan *p, int t, int L, int64_t Q, int64_t f,
                              line_geo *out, rotor_error *err) {
    /* segments of Q folded by Q are alike and disjoint: one suffices (the
     * search costs millions of plans on a wafer) */
    int64_t n = f == Q ? Q : p->fop[L];
    /* t's position digits, most significant first: axis by axis, coarse first */
    int64_t radix[ROTOR_MAX_AXES * ROTOR_MAX_TENSORS];
    int first[ROTOR_MAX_AXES], count[ROTOR_MAX_AXES], nd = 0;
    for (int a = 0; a < e->naxes; a++) {
        first[a] = nd;
        count[a] = e->tensors[t].has_axis[a] ? tensor_digits(e, p, t, a, radix + nd) : 0;
        nd += count[a];
    }
    *out = (line_geo){0, 0};
    if (nd == 1 && f == Q) { /* one digit: every shift steps the ring by one */
        *out = ring_geo(Q);
        return ROTOR_OK;
    }
    int64_t *buf = malloc((size_t)(4 * n + 2) * sizeof *buf);
    if (!buf) return rotor_nomem(err);
    int64_t *src = buf, *dst = buf + n, *up = buf + 2 * n, *down = buf + 3 * n + 1;
    for (int a = 0; a < e->naxes; a++)
        for (int c = 0; c < count[a]; c++) { /* a move along a carrying through c digits */
            for (int64_t r = 0; r < n; r++) {
                int64_t base = r / Q * Q, pos = r % Q, digit[ROTOR_MAX_AXES * ROTOR_MAX_TENSORS];
                for (int k = nd - 1; k >= 0; k--) {
                    digit[k] = pos % radix[k];
                    pos /= radix[k];
                }
                for (int k = first[a] + count[a] - 1 - c; k < first[a] + count[a]; k++)
                    digit[k] = (digit[k] + 1) % radix[k];
                int64_t s = 0;
                for (int k = 0; k < nd; k++) s = s * radix[k] + digit[k];
                src[r] = base + s;
                dst[r] = r;
            }
            line_geo g = route_line(src, dst, n, n, f, up, down);
            if (g.load > out->load) out->load = g.load;
            if (g.dist > out->dist) out->dist = g.dist;
        }
    free(buf);
    return ROTOR_OK;
}

/* The ring reduce-scatter along axis K of extent n (coordinate order), folded by f. */
static rotor_status reduce_geo(int64_t n, int64_t f, line_geo *out, rotor_error *err) {
    if (f == n) { /* the whole axis, folded whole */
        *out = ring_geo(n);
        return ROTOR_OK;
    }
    int64_t *buf = malloc((size_t)(4 * n + 2) * sizeof *buf);
    if (!buf) return rotor_nomem(err);
    for (int64_t r = 0; r < n; r++) {
        buf[r] = r;
        buf[n + r] = (r + 1) % n;
    }
    *out = route_line(buf, buf + n, n, n, f, buf + 2 * n, buf + 3 * n + 1);
    free(buf);
    return ROTOR_OK;
}

/* What every layout shares: per axis, the line geometry of the tensor
 * ringing along it and of the reduction, and the bytes they move. */
typedef struct mesh_terms {
    int ring_tensor[ROTOR_MAX_AXES]; /* -1: none */
    line_geo ring[ROTOR_MAX_AXES];
    double ring_bytes[ROTOR_MAX_AXES]; /* sum of shifts * bytes of tensors along the axis */
    line_geo shift_of[ROTOR_MAX_TENSORS];
    int axis_of[ROTOR_MAX_TENSORS]; /* -1: the tensor does not rotate */
    int red_axis;                   /* -1: no reduction */
    line_geo red;
} mesh_terms;

static rotor_status mesh_terms_of(const rotor_expr *e, const rotor_plan *p, const rotor_plan_info *info,
                                  rotor_mesh_map *m, mesh_terms *mt, rotor_error *err) {
    for (int a = 0; a < e->naxes; a++) {
        mt->ring_tensor[a] = -1;
        mt->ring_bytes[a] = 0;
        m->fold[a] = p->fop[a];
    }
    double best[ROTOR_MAX_AXES] = {0};
    for (int t = 0; t < e->ntensors; t++) {
        mt->axis_of[t] = -1;
        if (info->ring_size[t] <= 1) continue;
        int L = lacked_axis(e, p, t);
        if (L < 0)
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "tensor %s rotates over more than one partitioned axis: its ring has no line on a mesh",
                              e->tensors[t].name);
        mt->axis_of[t] = L;
        double traffic = (double)info->shifts[t] * (double)info->bytes[t];
        mt->ring_bytes[L] += traffic;
        if (mt->ring_tensor[L] < 0 || traffic > best[L]) {
            mt->ring_tensor[L] = t;
            best[L] = traffic;
            m->fold[L] = info->ring_size[t];
        }
    }
    mt->red_axis = -1;
    if (info->rings[0] > 1) {
        int K = lacked_axis(e, p, 0);
        if (K < 0 || info->ring_size[0] > 1)
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "output %s is reduced over %s: its reduction ring has no line on a mesh",
                              e->tensors[0].name, K < 0 ? "more than one partitioned axis" : "rotating rings");
        mt->red_axis = K;
        rotor_status st = reduce_geo(p->fop[K], m->fold[K], &mt->red, err);
        if (st) return st;
    }
    for (int t = 0; t < e->ntensors; t++) {
        if (mt->axis_of[t] < 0) continue;
        int L = mt->axis_of[t];
        rotor_status st = shift_geo(e, p, t, L, info->ring_size[t], m->fold[L], &mt->shift_of[t], err);
        if (st) return st;
    }
    return ROTOR_OK;
}

/* Prices the layout in which axis a goes to dimension dim[a]; false if it
 * does not fit the mesh. */
static bool price_layout(const rotor_expr *e, const rotor_plan *p, const rotor_plan_info *info,
                         const rotor_chip *chip, const mesh_terms *mt, rotor_mesh_map *m) {
    double beta = rotor_chip_link_bw(chip), alpha = rotor_chip_link_latency(chip);
    double weight[ROTOR_MAX_AXES];
    for (int a = 0; a < e->naxes; a++) {
        weight[a] = 0;
        for (int t = 0; t < e->ntensors; t++)
            if (mt->axis_of[t] == a)
                weight[a] += (double)info->shifts[t] * (double)info->bytes[t] * (double)mt->shift_of[t].load;
        if (mt->red_axis == a) weight[a] += (double)info->bytes[0] * (double)mt->red.load;
    }
    int64_t ext[2] = {1, 1};
    for (int d = 0; d < 2; d++) {
        /* innermost first: the heaviest axis, ties to the later axis */
        bool done[ROTOR_MAX_AXES] = {false};
        for (;;) {
            int pick = -1;
            for (int a = 0; a < e->naxes; a++)
                if (m->dim[a] == d && !done[a] && (pick < 0 || weight[a] >= weight[pick])) pick = a;
            if (pick < 0) break;
            done[pick] = true;
            m->stride[pick] = ext[d];
            ext[d] *= m->fop[pick]; /* <= cores: no overflow */
        }
    }
    if (ext[0] > chip->mesh_width || ext[1] > chip->mesh_height) return false;
    m->width = ext[0];
    m->height = ext[1];
    m->comm = m->reduction = 0;
    m->hops = m->load = m->red_hops = m->red_load = 0;
    memset(m->tload, 0, sizeof m->tload);
    memset(m->tdim, 0, sizeof m->tdim);
    for (int t = 0; t < e->ntensors; t++) {
        int L = mt->axis_of[t];
        if (L < 0) continue;
        int64_t load = mt->shift_of[t].load * m->stride[L], hops = mt->shift_of[t].dist * m->stride[L];
        if (load < 1) load = 1;
        if (hops < 1) hops = 1;
        m->tload[t] = load;
        /* a ring of several digits steps by several strides: it is kept
         * from running beside the other dimension's rings (measured: such
         * shifts' busiest links exceed shift_geo's worst kind) */
        m->tdim[t] = rotor_plan_one_digit(e, p, t) ? m->dim[L] : ROTOR_SHIFT_ALL;
        if (load > m->load) m->load = load;
        if (hops > m->hops) m->hops = hops;
    }
    /* the steps' shifts: X's and Y's rings move at once (op/cost.h) */
    rotor_shift_step ss;
    double unused;
    rotor_mesh_map_step(m, info, chip, &ss);
    rotor_cost_shift_walk(e, p, info, &ss, 0, &m->comm, &unused);
    if (mt->red_axis >= 0) {
        int64_t R = info->rings[0], s = m->stride[mt->red_axis];
        m->red_load = mt->red.load * s > 0 ? mt->red.load * s : 1;
        m->red_hops = mt->red.dist * s > 0 ? mt->red.dist * s : 1;
        /* each of the R - 1 rounds sends a whole piece, ceil(bytes / R),
         * as the replay does: v1's (R - 1) / R * bytes is its limit for
         * large partitions, and below it when a partition has fewer bytes
         * than the ring has members (a wafer's GEMV: 26 B over rings of 82,
         * 1 B a round, 81 B against v1's 25.7) */
        double piece = (double)((info->bytes[0] + R - 1) / R);
        m->reduction = (double)(R - 1) * piece * (double)m->red_load / beta + (double)(R - 1) * (double)m->red_hops * alpha;
    }
    return true;
}

rotor_status rotor_mesh_map_plan(const rotor_expr *e, const rotor_chip *chip, const rotor_plan *p,
                                 const rotor_plan_info *info, rotor_mesh_map *out, rotor_error *err) {
    if (chip->topology != ROTOR_TOPO_MESH)
        return rotor_fail(err, ROTOR_ERR_INPUT, "chip %s is not a mesh", chip->name);
    rotor_mesh_map m = {.naxes = e->naxes, .mesh_width = chip->mesh_width};
    int ax[ROTOR_MAX_AXES], k = 0;
    for (int a = 0; a < e->naxes; a++) {
        m.fop[a] = p->fop[a];
        m.dim[a] = -1;
        m.stride[a] = 1;
        if (p->fop[a] > 1) ax[k++] = a;
    }
    mesh_terms mt = {.red_axis = -1};
    rotor_status st = mesh_terms_of(e, p, info, &m, &mt, err);
    if (st) return st;
    bool found = false;
    for (unsigned mask = 0; mask < (1u << k); mask++) {
        rotor_mesh_map c = m;
        for (int i = 0; i < k; i++) c.dim[ax[i]] = (mask >> i) & 1;
        if (!price_layout(e, p, info, chip, &mt, &c)) continue;
        if (!found || c.comm + c.reduction < out->comm + out->reduction) *out = c;
        found = true;
    }
    if (!found)
        return rotor_fail(err, ROTOR_ERR_INPUT,
                          "F_op (%lld cores) has no layout on the %lldx%lld mesh with each partitioned axis "
                          "along one mesh dimension",
                          (long long)info->cores, (long long)chip->mesh_width, (long long)chip->mesh_height);
    return ROTOR_OK;
}

void rotor_mesh_map_step(const rotor_mesh_map *m, const rotor_plan_info *info, const rotor_chip *chip,
                         rotor_shift_step *out) {
    memset(out, 0, sizeof *out);
    out->lat = (double)(m->hops ? m->hops : 1) * rotor_chip_link_latency(chip);
    for (int t = 0; t < ROTOR_MAX_TENSORS; t++) {
        out->w[t] = (double)info->bytes[t] * (double)m->tload[t] / rotor_chip_link_bw(chip);
        out->dim[t] = m->tdim[t];
    }
}

int64_t rotor_mesh_map_core(const rotor_mesh_map *m, int64_t core) {
    int64_t xy[2] = {0, 0};
    for (int a = m->naxes - 1; a >= 0; a--) { /* axis 0 most significant */
        int64_t c = core % m->fop[a];
        core /= m->fop[a];
        if (m->dim[a] >= 0) xy[m->dim[a]] += unit_of(c, m->fold[a]) * m->stride[a];
    }
    return xy[1] * m->mesh_width + xy[0];
}

rotor_status rotor_mesh_map_cores(const rotor_expr *e, const rotor_chip *chip, const rotor_plan *p,
                                  const rotor_plan_info *info, int64_t *phys, rotor_error *err) {
    if (chip->topology != ROTOR_TOPO_MESH) {
        for (int64_t c = 0; c < info->cores; c++) phys[c] = c;
        return ROTOR_OK;
    }
    rotor_mesh_map m;
    rotor_error why;
    rotor_status st = rotor_mesh_map_plan(e, chip, p, info, &m, &why);
    if (st == ROTOR_ERR_INPUT) { /* a plan chosen for another chip: row-major, as placed */
        for (int64_t c = 0; c < info->cores; c++) phys[c] = c;
        return ROTOR_OK;
    }
    if (st) return rotor_fail(err, st, "%s", why.msg);
    for (int64_t c = 0; c < info->cores; c++) phys[c] = rotor_mesh_map_core(&m, c);
    return ROTOR_OK;
}

int64_t rotor_mesh_near(const rotor_chip *chip, int64_t core, int64_t k) {
    int64_t n = rotor_chip_cores(chip);
    if (chip->topology != ROTOR_TOPO_MESH) return (core + k) % n;
    int64_t w = chip->mesh_width, h = chip->mesh_height, cpc = chip->cores_per_chip;
    int64_t base = core / cpc * cpc, local = core % cpc, x = local % w, y = local / w;
    k %= w > h ? w : h;
    if (x + k < w) return base + local + k;
    if (x - k >= 0) return base + local - k;
    if (y + k < h) return base + local + k * w;
    if (y - k >= 0) return base + local - k * w;
    return core; /* a mesh too small to be k away: nothing to fetch */
}

int64_t rotor_mesh_route(const rotor_chip *chip, int64_t src, int64_t dst, int64_t amount, int64_t *links) {
    int64_t w = chip->mesh_width, cpc = chip->cores_per_chip, a = src % cpc, b = dst % cpc;
    int64_t x = a % w, y = a / w, tx = b % w, ty = b / w, hops = 0;
    if (!links) return llabs(tx - x) + llabs(ty - y);
    for (; x != tx; hops++) { /* X first, then Y: dimension order, as the simulator */
        int d = tx > x ? 0 : 1;
        if (links) links[4 * (y * w + x) + d] += amount;
        x += d ? -1 : 1;
    }
    for (; y != ty; hops++) {
        int d = ty > y ? 2 : 3;
        if (links) links[4 * (y * w + x) + d] += amount;
        y += d == 3 ? -1 : 1;
    }
    return hops;
}

double rotor_mesh_setup_s(const rotor_chip *chip, int64_t link_bytes, int64_t rounds, int64_t hops) {
    if (link_bytes <= 0) return 0.0;
    return (double)link_bytes / rotor_chip_link_bw(chip) +
           (double)(rounds > 0 ? rounds : 1) * (double)(hops > 0 ? hops : 1) * rotor_chip_link_latency(chip);
}

void rotor_mesh_gather(const rotor_chip *chip, int64_t bytes, int64_t rounds, int64_t *link_bytes, int64_t *hops) {
    *link_bytes = *hops = 0;
    int64_t span = (chip->mesh_width > chip->mesh_height ? chip->mesh_width : chip->mesh_height) - 1;
    for (int64_t k = 1; k <= rounds && bytes > 0; k++) {
        int64_t piece = rotor_gather_piece(bytes, rounds, k), d = k % (span + 1);
        if (d == 0) continue; /* rotor_mesh_near: no core that far, nothing fetched */
        *link_bytes += d * piece;
        if (d > *hops) *hops = d;
    }
}

typedef struct piece_ref {
    int64_t dst, src, i;
} piece_ref;

static int piece_cmp(const void *a, const void *b) {
    const piece_ref *x = a, *y = b;
    if (x->dst != y->dst) return x->dst < y->dst ? -1 : 1;
    if (x->src != y->src) return x->src < y->src ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* The orders tried (rotor_mesh_exchange keeps the one that ends first):
 * pieces by receiver in rounds of one packet each; by receiver, each piece
 * whole; longest route first, whole; shortest first, whole.  Ties go by
 * (receiver, sender, index): the route orders are the receiver order
 * sorted stably by hops. */
enum { ORDER_ROUNDS, ORDER_WHOLE, ORDER_LONG, ORDER_SHORT, NORDERS };

/* The pieces of v by (receiver, sender, index) into base (n indices). */
static bool receiver_order(const int64_t (*v)[3], int64_t n, int64_t *base) {
    piece_ref *ref = malloc((size_t)n * sizeof *ref);
    if (!ref) return false;
    bool sorted = true;
    for (int64_t i = 0; i < n; i++) {
        ref[i] = (piece_ref){v[i][0], v[i][1], i};
        if (i && piece_cmp(&ref[i - 1], &ref[i]) > 0) sorted = false;
    }
    /* the setups' pieces mostly come by receiver already (setuppieces.c):
     * the sort would only confirm it */
    if (!sorted) qsort(ref, (size_t)n, sizeof *ref, piece_cmp);
    for (int64_t i = 0; i < n; i++) base[i] = ref[i].i;
    free(ref);
    return true;
}

/* base sorted stably by the pieces' hops, longest first (long) or shortest
 * first, into ord: a counting sort over count (w + h slots, hops < w + h). */
static void route_order(const rotor_chip *chip, const int64_t (*v)[3], int64_t n, const int64_t *base, bool longest,
                        int64_t *count, int64_t *ord) {
    int64_t slots = chip->mesh_width + chip->mesh_height;
    memset(count, 0, (size_t)slots * sizeof *count);
    for (int64_t i = 0; i < n; i++) count[rotor_mesh_route(chip, v[i][1], v[i][0], 0, NULL)]++;
    for (int64_t k = 0, at = 0; k < slots; k++) { /* first position of each hop count */
        int64_t h = longest ? slots - 1 - k : k, c = count[h];
        count[h] = at;
        at += c;
    }
    for (int64_t i = 0; i < n; i++) {
        const int64_t *p = v[base[i]];
        ord[count[rotor_mesh_route(chip, p[1], p[0], 0, NULL)]++] = base[i];
    }
}

/* The links' free times in rotor_mesh_exchange's schedule, line by line:
 * a route is a run of links along its row and one along its column (X
 * first), each a range of one line (a row or a column, one direction).  A
 * packet's head reaches its i-th link i latencies after it starts, and the
 * link carries its bytes from then on (sim/sim.c, claim_all: pipelined
 * links).  So the line keeps, per link at position p, its free time less
 * p latencies on a line that runs toward higher positions (east, south)
 * and plus p latencies on the others: the key.  A run's links are then all
 * free in time for a start s exactly when s is at least the run's latest
 * key less one constant, and after the packet every key of the run is the
 * same value, no earlier than any of theirs.  Hence a link's key is the
 * later of its own and its block's (the last range that covered the block
 * whole), and each block keeps its latest key: a run costs O(LINK_BLOCK +
 * run / LINK_BLOCK) instead of O(run), with the same times as setting link
 * by link (a wafer's exchange has millions of pieces of hundreds of
 * hops).  Keys start at LINK_FREE: every link free at time 0. */
#define LINK_BLOCK 16
#define LINK_FREE (-((int64_t)1 << 60))
typedef struct link_times {
    int64_t w, h, bw, bh; /* the mesh; blocks per row line, per column line */
    int64_t *t;           /* per link: the rows' lines (east, west; y), then the columns' (south, north; x) */
    int64_t *tag, *most;  /* per block, laid out alike */
} link_times;

static bool link_times_init(link_times *l, int64_t w, int64_t h) {
    *l = (link_times){.w = w, .h = h, .bw = (w + LINK_BLOCK - 1) / LINK_BLOCK, .bh = (h + LINK_BLOCK - 1) / LINK_BLOCK};
    size_t links = (size_t)(4 * w * h), blocks = (size_t)(2 * h * l->bw + 2 * w * l->bh);
    l->t = malloc(links * sizeof *l->t);
    l->tag = malloc(blocks * sizeof *l->tag);
    l->most = malloc(blocks * sizeof *l->most);
    return l->t && l->tag && l->most;
}

static void link_times_clear(link_times *l) {
    size_t links = (size_t)(4 * l->w * l->h), blocks = (size_t)(2 * l->h * l->bw + 2 * l->w * l->bh);
    for (size_t i = 0; i < links; i++) l->t[i] = LINK_FREE;
    for (size_t i = 0; i < blocks; i++) l->tag[i] = l->most[i] = LINK_FREE;
}

static void link_times_free(link_times *l) {
    free(l->t);
    free(l->tag);
    free(l->most);
}

/* One run: positions [lo, hi) of the line whose links start at t[base] and
 * blocks at tag[bbase]. */
typedef struct link_run {
    int64_t base, bbase, lo, hi;
    bool up; /* toward higher positions (east, south) */
} link_run;

/* The runs of the XY route from local core a to b (none where it does not
 * move): the link leaving position p east is position p of the row's east
 * line, the one leaving it west position p of its west line, alike along
 * the column of the target x. */
static int route_runs(const link_times *l, int64_t a, int64_t b, link_run *run) {
    int64_t w = l->w, h = l->h, x = a % w, y = a / w, tx = b % w, ty = b / w;
    int n = 0;
    if (tx != x) {
        int64_t line = (tx > x ? 0 : h) + y;
        run[n++] = (link_run){line * w, line * l->bw, tx > x ? x : tx + 1, tx > x ? tx : x + 1, tx > x};
    }
    if (ty != y) {
        int64_t line = (ty > y ? 0 : w) + tx;
        run[n++] = (link_run){2 * h * w + line * h, 2 * h * l->bw + line * l->bh, ty > y ? y : ty + 1,
                              ty > y ? ty : y + 1, ty > y};
    }
    return n;
}

/* The latest key of the run's links. */
static int64_t run_latest(const link_times *l, const link_run *r) {
    int64_t m = LINK_FREE;
    for (int64_t p = r->lo; p < r->hi;) {
        int64_t b = p / LINK_BLOCK, end = (b + 1) * LINK_BLOCK;
        if (p % LINK_BLOCK == 0 && end <= r->hi) { /* the whole block */
            if (l->most[r->bbase + b] > m) m = l->most[r->bbase + b];
            p = end;
            continue;
        }
        if (l->tag[r->bbase + b] > m) m = l->tag[r->bbase + b];
        for (int64_t e = end < r->hi ? end : r->hi; p < e; p++)
            if (l->t[r->base + p] > m) m = l->t[r->base + p];
    }
    return m;
}

/* Sets the run's keys to v (no earlier than any of theirs). */
static void run_hold(link_times *l, const link_run *r, int64_t v) {
    for (int64_t p = r->lo; p < r->hi;) {
        int64_t b = p / LINK_BLOCK, end = (b + 1) * LINK_BLOCK;
        if (p % LINK_BLOCK == 0 && end <= r->hi) {
            l->tag[r->bbase + b] = l->most[r->bbase + b] = v;
            p = end;
            continue;
        }
        for (int64_t e = end < r->hi ? end : r->hi; p < e; p++) l->t[r->base + p] = v;
        if (v > l->most[r->bbase + b]) l->most[r->bbase + b] = v;
    }
}

/* The greedy schedule of the pieces in order ord into pk (total packets;
 * rounds: the most packets of a piece); its makespan, or, as soon as a
 * packet ends after `limit`, that packet's end (the schedule left
 * unfinished: it ends no sooner). */
static int64_t schedule_order(const rotor_chip *chip, const int64_t (*v)[3], int64_t n, int64_t packet,
                              int64_t rounds, bool by_round, const int64_t *ord, link_times *lt,
                              rotor_mesh_packet *pk, int64_t limit, int64_t *work) {
    int64_t cpc = chip->cores_per_chip, span = 0, np = 0;
    int64_t lat = llround(chip->link_latency_ns * 1000.0);
    link_times_clear(lt);
    for (int64_t outer = 0; outer < (by_round ? rounds : n); outer++)
        for (int64_t inner = 0; inner < (by_round ? n : rounds); inner++) {
            const int64_t *pc = v[ord[by_round ? inner : outer]];
            int64_t r = by_round ? outer : inner, bytes = pc[2], k = (bytes + packet - 1) / packet;
            if (r >= k) {
                if (by_round) continue;
                break;
            }
            link_run run[2];
            int nr = route_runs(lt, pc[1] % cpc, pc[0] % cpc, run);
            int64_t b = bytes / k + (r < bytes % k), hops = 0, start = 0, c[2];
            for (int i = 0; i < nr; i++) {
                /* link p of the run is the head's hop o0 + (p - lo) going
                 * up, o0 + (hi - 1 - p) going down: key - c[i] is the
                 * start it needs */
                c[i] = (run[i].up ? hops - run[i].lo : hops + run[i].hi - 1) * lat;
                int64_t m = run_latest(lt, &run[i]) - c[i];
                hops += run[i].hi - run[i].lo;
                if (m > start) start = m;
            }
            int64_t bt = llround((double)b * 1000.0 / chip->link_gbps), dur = hops * lat + bt;
            for (int i = 0; i < nr; i++) run_hold(lt, &run[i], start + c[i] + bt);
            pk[np++] = (rotor_mesh_packet){pc[1], pc[0], b, start + dur};
            if (start + dur > span) span = start + dur;
            if (span > limit) goto done;
        }
done:
    *work += np;
    return span;
}

int64_t rotor_mesh_exchange_packets(const int64_t (*v)[3], int64_t n, int64_t packet) {
    int64_t total = 0;
    for (int64_t i = 0; i < n; i++) total += (v[i][2] + packet - 1) / packet;
    return total;
}

rotor_status rotor_mesh_exchange(const rotor_chip *chip, const int64_t (*v)[3], int64_t n, int64_t packet,
                                 rotor_mesh_packet **out, int64_t *npackets, int64_t *makespan_ps, rotor_error *err) {
    int64_t work = 0;
    return rotor_mesh_exchange_within(chip, v, n, packet, INT64_MAX, out, npackets, makespan_ps, &work, err);
}

rotor_status rotor_mesh_exchange_within(const rotor_chip *chip, const int64_t (*v)[3], int64_t n, int64_t packet,
                                        int64_t limit_ps, rotor_mesh_packet **out, int64_t *npackets,
                                        int64_t *makespan_ps, int64_t *work, rotor_error *err) {
    if (out) *out = NULL;
    *npackets = *makespan_ps = 0;
    if (n <= 0) return ROTOR_OK;
    int64_t cpc = chip->cores_per_chip;
    for (int64_t i = 0; i < n; i++)
        if (v[i][0] / cpc != v[i][1] / cpc)
            return rotor_fail(err, ROTOR_ERR_INPUT, "mesh exchange: a piece from core %lld to core %lld crosses chips",
                              (long long)v[i][1], (long long)v[i][0]);
    int64_t total = rotor_mesh_exchange_packets(v, n, packet);
    int64_t rounds = 0;
    for (int64_t i = 0; i < n; i++)
        if ((v[i][2] + packet - 1) / packet > rounds) rounds = (v[i][2] + packet - 1) / packet;
    int64_t *base = malloc((size_t)n * sizeof *base), *ord = malloc((size_t)n * sizeof *ord);
    int64_t *count = malloc((size_t)(chip->mesh_width + chip->mesh_height) * sizeof *count);
    rotor_mesh_packet *pk = malloc((size_t)total * sizeof *pk), *best = malloc((size_t)total * sizeof *best);
    link_times lt;
    bool ok = link_times_init(&lt, chip->mesh_width, chip->mesh_height) && base && ord && count && pk && best &&
              receiver_order(v, n, base);
    bool found = false;
    int64_t over = INT64_MAX; /* none within the limit: the least end seen past it */
    for (int order = 0; ok && order < NORDERS; order++) {
        /* one packet a piece: by rounds and whole are the same schedule */
        if (order == ORDER_WHOLE && rounds <= 1) continue;
        if (order == ORDER_LONG || order == ORDER_SHORT) route_order(chip, v, n, base, order == ORDER_LONG, count, ord);
        /* an order that ends after the best so far (or the limit) is not
         * taken, wherever it ends: its schedule stops there */
        int64_t cap = found && *makespan_ps < limit_ps ? *makespan_ps : limit_ps;
        int64_t span = schedule_order(chip, v, n, packet, rounds, order == ORDER_ROUNDS,
                                      order == ORDER_ROUNDS || order == ORDER_WHOLE ? base : ord, &lt, pk, cap, work);
        if (span > cap) {
            if (!found && span < over) over = span;
            continue;
        }
        if (!found || span < *makespan_ps) { /* ties: the earlier order */
            found = true;
            *makespan_ps = span;
            rotor_mesh_packet *t = best;
            best = pk;
            pk = t;
        }
    }
    free(base), free(ord), free(count), free(pk), link_times_free(&lt);
    if (!ok) {
        free(best);
        *makespan_ps = 0;
        return rotor_nomem(err);
    }
    if (!found) {
        free(best);
        *makespan_ps = over;
        return ROTOR_OK;
    }
    if (out)
        *out = best;
    else
        free(best);
    *npackets = total;
    return ROTOR_OK;
}

bool rotor_mesh_fits(const rotor_chip *chip, const int64_t *fop, int naxes) {
    int64_t f[ROTOR_MAX_AXES], total = 1;
    int k = 0;
    for (int a = 0; a < naxes; a++)
        if (fop[a] > 1) {
            if (fop[a] > chip->mesh_width && fop[a] > chip->mesh_height) return false;
            f[k++] = fop[a];
            total *= fop[a]; /* <= cores: the plan fits the chip */
        }
    for (unsigned mask = 0; mask < (1u << k); mask++) {
        int64_t x = 1;
        for (int i = 0; i < k; i++)
            if (mask >> i & 1) x *= f[i];
        if (x <= chip->mesh_width && total / x <= chip->mesh_height) return true;
    }
    return false;
}

rotor_status rotor_mesh_load_init(rotor_mesh_load *l, const rotor_chip *chip, rotor_error *err) {
    *l = (rotor_mesh_load){.w = chip->mesh_width, .h = chip->mesh_height};
    size_t nr = (size_t)(l->h * (l->w + 1)), nc = (size_t)(l->w * (l->h + 1));
    l->hit = calloc((size_t)(2 * (l->w + l->h)), 1);
    for (int d = 0; d < 2; d++) {
        l->row[d] = calloc(nr, sizeof *l->row[d]);
        l->col[d] = calloc(nc, sizeof *l->col[d]);
        if (!l->row[d] || !l->col[d] || !l->hit) {
            rotor_mesh_load_free(l);
            return rotor_nomem(err);
        }
    }
    return ROTOR_OK;
}

int64_t rotor_mesh_load_add_at(rotor_mesh_load *l, int64_t x, int64_t y, int64_t tx, int64_t ty, int64_t amount) {
    /* east: the links leaving x .. tx - 1; west: those leaving x .. tx + 1
     * (toward x - 1); likewise south and north along column tx */
    int64_t *east = l->row[0] + y * (l->w + 1), *west = l->row[1] + y * (l->w + 1);
    int64_t *south = l->col[0] + tx * (l->h + 1), *north = l->col[1] + tx * (l->h + 1);
    if (tx > x) east[x] += amount, east[tx] -= amount, l->hit[y] = 1;
    if (tx < x) west[tx + 1] += amount, west[x + 1] -= amount, l->hit[l->h + y] = 1;
    if (ty > y) south[y] += amount, south[ty] -= amount, l->hit[2 * l->h + tx] = 1;
    if (ty < y) north[ty + 1] += amount, north[y + 1] -= amount, l->hit[2 * l->h + l->w + tx] = 1;
    return llabs(tx - x) + llabs(ty - y);
}

int64_t rotor_mesh_load_add(rotor_mesh_load *l, int64_t src, int64_t dst, int64_t amount) {
    int64_t cpc = l->w * l->h, a = src % cpc, b = dst % cpc;
    return rotor_mesh_load_add_at(l, a % l->w, a / l->w, b % l->w, b / l->w, amount);
}

/* Line k of the load (hit's numbering): its difference array and length. */
static int64_t *load_line(const rotor_mesh_load *l, int64_t k, int64_t *len) {
    int64_t h = l->h, w = l->w;
    *len = k < 2 * h ? w : h;
    if (k < 2 * h) return l->row[k / h] + k % h * (w + 1);
    k -= 2 * h;
    return l->col[k / w] + k % w * (h + 1);
}

int64_t rotor_mesh_load_max(const rotor_mesh_load *l) {
    int64_t most = 0;
    for (int64_t k = 0; k < 2 * (l->w + l->h); k++) {
        if (!l->hit[k]) continue; /* no route along it: all zero */
        int64_t len, *v = load_line(l, k, &len);
        for (int64_t i = 0, run = 0; i < len; i++)
            if ((run += v[i]) > most) most = run;
    }
    return most;
}

void rotor_mesh_load_clear(rotor_mesh_load *l) {
    for (int64_t k = 0; k < 2 * (l->w + l->h); k++) {
        if (!l->hit[k]) continue;
        int64_t len, *v = load_line(l, k, &len);
        memset(v, 0, (size_t)(len + 1) * sizeof *v);
        l->hit[k] = 0;
    }
}

void rotor_mesh_load_free(rotor_mesh_load *l) {
    for (int d = 0; d < 2; d++) {
        free(l->row[d]);
        free(l->col[d]);
    }
    free(l->hit);
    memset(l, 0, sizeof *l);
}
