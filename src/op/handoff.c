/* handoff.c — who holds which output element after a plan has run, and what
 * a consumer's plan must receive (include/rotor/op/handoff.h states the
 * model; docs/compile.md, "Hand-off", the decisions). */
#include "rotor/op/handoff.h"

#include <stdlib.h>
#include <string.h>

#include "rotor/base/divisors.h"
#include "rotor/op/emu.h"

struct rotor_handoff {
    const rotor_expr *producer;     /* the producer place's own copy */
    int nd;
    int64_t gdim[ROTOR_MAX_DIMS];   /* the output's real extents */
    int64_t pdim[ROTOR_MAX_DIMS];   /* one partition's extents (padded) */
    int64_t pstride[ROTOR_MAX_DIMS]; /* row-major strides inside a partition */
    int64_t pelems;
    int64_t cores;                  /* the producer plan's cores */
    int64_t *origin;                /* cores x nd: each core's final partition */
    int64_t *sorted;                /* core ids by (origin, id): groups are runs */
    int64_t *rank;                  /* per core: rank in its group */
    int64_t *gsize;                 /* per core: its group's size */
    /* The groups by cell: where every origin is a whole number of
     * partitions from 0 (a plan's output partitions tile the output), the
     * index in sorted of the first core at each cell of the grid
     * ncell[0] x ... (row-major), -1 where none; NULL otherwise, and
     * group_of searches sorted.  The walk asks group_of for every cell of
     * every box it meets. */
    int64_t *grid;
    /* Per cell of the grid, the core of a group of one (most cells: a
     * plan's output partitions are rarely shared), -1 where none, -2 where
     * the group has more (grid says where): the walk's every cell read
     * grid, then sorted and gsize at a core's index, three dependent loads
     * that were a sixth of sources_in (issue 45); now one.  NULL with grid. */
    int32_t *alone;
    int64_t ncell[ROTOR_MAX_DIMS];
};

static int cmp_origin(const rotor_handoff *h, const int64_t *a, const int64_t *b) {
    for (int d = 0; d < h->nd; d++)
        if (a[d] != b[d]) return a[d] < b[d] ? -1 : 1;
    return 0;
}

/* Sorts core ids by (origin, id).  A merge sort, because qsort's
 * comparison could reach the origins only through global state. */
static void merge_sort(const rotor_handoff *h, int64_t *v, int64_t *tmp, int64_t n) {
    if (n < 2) return;
    int64_t m = n / 2;
    merge_sort(h, v, tmp, m);
    merge_sort(h, v + m, tmp, n - m);
    int64_t i = 0, j = m, k = 0;
    while (i < m && j < n) {
        int c = cmp_origin(h, h->origin + v[i] * h->nd, h->origin + v[j] * h->nd);
        tmp[k++] = c < 0 || (c == 0 && v[i] < v[j]) ? v[i++] : v[j++];
    }
    while (i < m) tmp[k++] = v[i++];
    while (j < n) tmp[k++] = v[j++];
    memcpy(v, tmp, (size_t)n * sizeof *v);
}

void rotor_handoff_free(rotor_handoff *h) {
    if (!h) return;
    free(h->origin);
    free(h->sorted);
    free(h->rank);
    free(h->gsize);
    free(h->grid);
    free(h->alone);
    free(h);
}

/* The cells of the origins into ncell and their count into *total, when
 * every origin is a whole number of partitions from 0 and the grid stays
 * within a few times the cores (the grid is only a shortcut: without it
 * group_of searches and the cores are merge-sorted). */
static bool grid_shape(rotor_handoff *h, int64_t *total) {
    *total = 1;
    for (int d = 0; d < h->nd; d++) h->ncell[d] = 1;
    for (int64_t c = 0; c < h->cores; c++)
        for (int d = 0; d < h->nd; d++) {
            int64_t o = h->origin[c * h->nd + d];
            if (o < 0 || o % h->pdim[d]) return false;
            if (o / h->pdim[d] >= h->ncell[d]) h->ncell[d] = o / h->pdim[d] + 1;
        }
    for (int d = 0; d < h->nd; d++)
        if (h->ncell[d] > 4 * h->cores + 16 || (*total *= h->ncell[d]) > 4 * h->cores + 16) return false;
    return true;
}

/* sorted, rank, gsize and grid by the cells: a counting sort, stable in the
 * core ids, gives merge_sort's order (origins on the grid compare as their
 * cells' row-major indices).  cell: scratch for the cores' cells.  False
 * when out of memory (then grid is NULL). */
static bool sort_by_grid(rotor_handoff *h, int64_t total, int64_t *cell) {
    h->grid = calloc((size_t)total, sizeof *h->grid);
    h->alone = malloc((size_t)total * sizeof *h->alone);
    if (!h->grid || !h->alone || h->cores > INT32_MAX) {
        free(h->grid), free(h->alone);
        h->grid = NULL, h->alone = NULL;
        return false;
    }
    for (int64_t c = 0; c < h->cores; c++) {
        const int64_t *o = h->origin + c * h->nd;
        int64_t i = 0;
        for (int d = 0; d < h->nd; d++) i = i * h->ncell[d] + o[d] / h->pdim[d];
        cell[c] = i;
        h->grid[i]++; /* the cells' sizes */
    }
    for (int64_t i = 0, at = 0; i < total; i++) h->grid[i] = at += h->grid[i]; /* their ends */
    for (int64_t c = h->cores - 1; c >= 0; c--) h->sorted[--h->grid[cell[c]]] = c; /* now their starts */
    for (int64_t i = 0; i < total; i++)
        if (h->grid[i] >= h->cores || cell[h->sorted[h->grid[i]]] != i) h->grid[i] = -1;
    for (int64_t s = 0; s < h->cores;) {
        int64_t r = s + 1;
        while (r < h->cores && cell[h->sorted[r]] == cell[h->sorted[s]]) r++;
        for (int64_t k = s; k < r; k++) {
            h->rank[h->sorted[k]] = k - s;
            h->gsize[h->sorted[k]] = r - s;
        }
        s = r;
    }
    for (int64_t i = 0; i < total; i++)
        h->alone[i] = h->grid[i] < 0 ? -1 : h->gsize[h->sorted[h->grid[i]]] > 1 ? -2 : (int32_t)h->sorted[h->grid[i]];
    return true;
}

rotor_status rotor_handoff_make(const rotor_place *producer, rotor_handoff **out, rotor_error *err) {
    *out = NULL;
    const rotor_expr *e = rotor_place_expr(producer);
    const rotor_plan_info *info = rotor_place_info(producer);
    const rotor_tensor *y = &e->tensors[0];
    for (int d = 0; d < y->ndims; d++)
        if (y->dims[d].nterms != 1 || y->dims[d].coef[0] != 1)
            return rotor_fail(err, ROTOR_ERR_INPUT, "hand-off: output dimension %d of '%s' is not a plain axis", d,
                              e->text);
    rotor_handoff *h = calloc(1, sizeof *h);
    if (!h) return rotor_nomem(err);
    h->producer = e;
    h->nd = y->ndims;
    h->cores = info->cores;
    rotor_emu_tensor_elems(e, 0, h->gdim);
    h->pelems = 1;
    for (int d = h->nd - 1; d >= 0; d--) {
        h->pdim[d] = info->part[0][d];
        h->pstride[d] = h->pelems;
        h->pelems *= h->pdim[d];
    }
    size_t nc = (size_t)h->cores;
    h->origin = malloc(nc * (size_t)(h->nd ? h->nd : 1) * sizeof *h->origin);
    h->sorted = malloc(nc * sizeof *h->sorted);
    h->rank = malloc(nc * sizeof *h->rank);
    h->gsize = malloc(nc * sizeof *h->gsize);
    int64_t *tmp = malloc(nc * sizeof *tmp);
    if (!h->origin || !h->sorted || !h->rank || !h->gsize || !tmp) {
        free(tmp);
        rotor_handoff_free(h);
        return rotor_nomem(err);
    }
    for (int64_t c = 0; c < h->cores; c++)
        rotor_place_partition(producer, 0, c, info->total_steps - 1, h->origin + c * h->nd);
    int64_t total;
    if (!grid_shape(h, &total) || !sort_by_grid(h, total, tmp)) {
        for (int64_t c = 0; c < h->cores; c++) h->sorted[c] = c;
        merge_sort(h, h->sorted, tmp, h->cores);
        for (int64_t s = 0; s < h->cores;) {
            int64_t r = s + 1;
            while (r < h->cores && !cmp_origin(h, h->origin + h->sorted[s] * h->nd, h->origin + h->sorted[r] * h->nd))
                r++;
            for (int64_t k = s; k < r; k++) {
                h->rank[h->sorted[k]] = k - s;
                h->gsize[h->sorted[k]] = r - s;
            }
            s = r;
        }
    }
    free(tmp);
    *out = h;
    return ROTOR_OK;
}

/* ---- views and the sets they read --------------------------------------- */

/* Sorts a span's terms by step, largest first (a handful: insertion). */
static void span_sort(rotor_handoff_span *s) {
    for (int i = 1; i < s->nterms; i++)
        for (int k = i; k > 0 && s->step[k] > s->step[k - 1]; k--) {
            int64_t st = s->step[k], c = s->count[k];
            s->step[k] = s->step[k - 1], s->count[k] = s->count[k - 1];
            s->step[k - 1] = st, s->count[k - 1] = c;
        }
}

/* The span output dimension j reads over the consumer box [lo, hi): each
 * tensor dimension moving j adds a term; a negative step walks the same
 * elements from the other end; a step of 0 or a single index adds none. */
static void span_of(const rotor_view *view, int j, int ndims, const int64_t *lo, const int64_t *hi,
                    rotor_handoff_span *s) {
    s->nterms = 0;
    if (!view || !view->set) {
        s->base = lo[j];
        s->step[0] = 1;
        s->count[0] = hi[j] - lo[j];
        s->nterms = hi[j] - lo[j] > 1;
        return;
    }
    s->base = view->offset[j];
    for (int d = 0; d < ndims; d++) {
        if (view->dim[d] != j) continue;
        int64_t st = view->step[d], n = hi[d] - lo[d];
        s->base += st * (st < 0 ? hi[d] - 1 : lo[d]);
        if (st != 0 && n > 1) {
            s->step[s->nterms] = st < 0 ? -st : st;
            s->count[s->nterms++] = n;
        }
    }
    span_sort(s);
}

/* Whether the span's steps nest: each exceeds the span of the smaller ones,
 * so every index vector gives its own coordinate and span_below holds. */
static bool span_nested(const rotor_handoff_span *s) {
    int64_t inner = 0;
    for (int k = s->nterms - 1; k >= 0; k--) {
        if (s->step[k] <= inner) return false;
        inner += s->step[k] * (s->count[k] - 1);
    }
    return true;
}

bool rotor_handoff_fits(const rotor_expr *producer, const rotor_expr *consumer, int t, const rotor_view *view) {
    const rotor_tensor *y = &producer->tensors[0];
    if (t < 1 || t >= consumer->ntensors) return false;
    for (int d = 0; d < y->ndims; d++)
        if (y->dims[d].nterms != 1 || y->dims[d].coef[0] != 1) return false;
    int nd = consumer->tensors[t].ndims;
    int64_t gy[ROTOR_MAX_DIMS], gx[ROTOR_MAX_DIMS];
    rotor_emu_tensor_elems(producer, 0, gy);
    rotor_emu_tensor_elems(consumer, t, gx);
    if (!view || !view->set) {
        if (nd != y->ndims) return false;
        for (int d = 0; d < nd; d++)
            if (gx[d] != gy[d]) return false;
        return true;
    }
    int64_t lo[ROTOR_MAX_DIMS] = {0};
    for (int d = 0; d < nd; d++) {
        if (view->dim[d] < 0 || view->dim[d] >= y->ndims) return false;
        /* coordinates stay far inside int64_t: |step| and |offset| bounded by extents */
        if (view->step[d] > ROTOR_EXTENT_MAX || view->step[d] < -ROTOR_EXTENT_MAX) return false;
    }
    for (int j = 0; j < y->ndims; j++) {
        if (view->offset[j] > ROTOR_EXTENT_MAX || view->offset[j] < -ROTOR_EXTENT_MAX) return false;
        rotor_handoff_span s;
        span_of(view, j, nd, lo, gx, &s);
        if (!span_nested(&s)) return false;
    }
    return true;
}

bool rotor_handoff_matches(const rotor_handoff *h, const rotor_place *consumer, int t, const rotor_view *view) {
    return rotor_handoff_fits(h->producer, rotor_place_expr(consumer), t, view);
}

void rotor_handoff_map(const rotor_handoff *h, const rotor_view *view, int ndims, const int64_t *lo,
                       const int64_t *hi, rotor_handoff_set *out) {
    for (int j = 0; j < h->nd; j++) span_of(view, j, ndims, lo, hi, &out->span[j]);
}

/* Elements of the span below x, terms k and on (x relative to the base):
 * with nested steps, the indices i_k below floor(x / step) lie wholly
 * below x, the one at it partly, and those above not at all. */
static int64_t span_below(const rotor_handoff_span *s, int k, int64_t x) {
    if (k == s->nterms) return x > 0;
    int64_t q = rotor_floor_div(x, s->step[k]);
    int64_t inner = 1;
    for (int l = k + 1; l < s->nterms; l++) inner *= s->count[l];
    int64_t full = q < 0 ? 0 : q > s->count[k] ? s->count[k] : q;
    int64_t n = full * inner;
    if (q >= 0 && q < s->count[k]) n += span_below(s, k + 1, x - q * s->step[k]);
    return n;
}

/* span_in off its run path (not inlined: the recursion's calls). */
static __attribute__((noinline)) int64_t span_in_terms(const rotor_handoff_span *s, int64_t a, int64_t b) {
    return span_below(s, 0, b - s->base) - span_below(s, 0, a - s->base);
}

/* Elements of the span in [a, b).  Inlined: the walks ask it of every
 * cell's window of every box (issue 45). */
static inline __attribute__((always_inline)) int64_t span_in(const rotor_handoff_span *s, int64_t a, int64_t b) {
    if (b <= a) return 0;
    if (s->nterms == 1 && s->step[0] == 1) { /* a run: the usual case, and the compiler's hot path */
        int64_t lo = a > s->base ? a : s->base, hi = b < s->base + s->count[0] ? b : s->base + s->count[0];
        return hi > lo ? hi - lo : 0;
    }
    return span_in_terms(s, a, b);
}

/* The span's first and last coordinates inside [0, g), as a range
 * [*first, *last]; false when it has none there. */
static bool span_range(const rotor_handoff_span *s, int64_t g, int64_t *first, int64_t *last) {
    int64_t top = s->base;
    for (int k = 0; k < s->nterms; k++) top += s->step[k] * (s->count[k] - 1);
    *first = s->base < 0 ? 0 : s->base;
    *last = top >= g ? g - 1 : top;
    return *first <= *last && span_in(s, *first, *last + 1) > 0;
}

int64_t rotor_handoff_set_elems(const rotor_handoff *h, const rotor_handoff_set *s) {
    int64_t n = 1;
    for (int d = 0; d < h->nd; d++) n *= span_in(&s->span[d], 0, h->gdim[d]);
    return n;
}

/* Elements of the set inside the partition at o (window [wl, wh) per
 * dimension, the partition clipped to the output) with local row-major
 * index below x: whole rows of dimension d below x's row, then the
 * partial row.  inner[d]: the set's elements in the window's dimensions
 * from d on. */
static int64_t set_below(const rotor_handoff *h, const rotor_handoff_set *s, const int64_t *o, const int64_t *wl,
                         const int64_t *wh, const int64_t *inner, int d, int64_t x) {
    if (d == h->nd) return x > 0;
    int64_t q = x / h->pstride[d], r = x % h->pstride[d];
    int64_t top = o[d] + q < wh[d] ? o[d] + q : wh[d];
    int64_t n = span_in(&s->span[d], wl[d], top) * inner[d + 1];
    int64_t at = o[d] + q;
    if (at >= wl[d] && at < wh[d] && span_in(&s->span[d], at, at + 1))
        n += set_below(h, s, o, wl, wh, inner, d + 1, r);
    return n;
}

/* One dimension of a partition or a consumer's box, [o, o + part) clipped
 * to the tensor's real extent [0, g) into [*lo, *hi): false when empty (a
 * padded partition past the end, or a window's leading pad).  The one clip
 * of every window and box below. */
static inline bool clip1(int64_t o, int64_t part, int64_t g, int64_t *lo, int64_t *hi) {
    *lo = o < 0 ? 0 : o;
    *hi = o + part < g ? o + part : g;
    return *hi > *lo;
}

/* The window [wl, wh) of the partition at origin o: the partition clipped
 * to the output's real extents; false when it is empty in some dimension
 * (a padded partition past the output's end holds nothing). */
static inline bool part_window(const rotor_handoff *h, const int64_t *o, int64_t *wl, int64_t *wh) {
    bool any = true;
    for (int d = 0; d < h->nd; d++) any &= clip1(o[d], h->pdim[d], h->gdim[d], &wl[d], &wh[d]);
    return any;
}

/* The row-major chunk [*s0, *s1) of its partition's elements that core, a
 * member of a reduction group, keeps after the reduce-scatter (rank r of
 * gsize keeps the r-th of ceil(pelems / gsize); past the end, empty). */
static inline void group_chunk(const rotor_handoff *h, int64_t core, int64_t *s0, int64_t *s1) {
    int64_t chunk = (h->pelems + h->gsize[core] - 1) / h->gsize[core];
    *s0 = h->rank[core] * chunk;
    *s1 = *s0 + chunk > h->pelems ? h->pelems : *s0 + chunk;
}

int64_t rotor_handoff_held(const rotor_handoff *h, int64_t core, const rotor_handoff_set *s) {
    if (core < 0 || core >= h->cores) return 0;
    const int64_t *o = h->origin + core * h->nd;
    int64_t wl[ROTOR_MAX_DIMS], wh[ROTOR_MAX_DIMS], inner[ROTOR_MAX_DIMS + 1];
    if (!part_window(h, o, wl, wh)) return 0;
    inner[h->nd] = 1;
    for (int d = h->nd - 1; d >= 0; d--) {
        inner[d] = inner[d + 1] * span_in(&s->span[d], wl[d], wh[d]);
        if (!inner[d]) return 0;
    }
    if (h->nd == 0) return h->rank[core] == 0; /* a scalar: rank 0 keeps it */
    if (h->gsize[core] == 1) return inner[0];
    int64_t s0, s1;
    group_chunk(h, core, &s0, &s1);
    return set_below(h, s, o, wl, wh, inner, 0, s1) - set_below(h, s, o, wl, wh, inner, 0, s0);
}

/* The set of the box [lo, hi) of output coordinates. */
static void box_set(const rotor_handoff *h, const int64_t *lo, const int64_t *hi, rotor_handoff_set *s) {
    rotor_handoff_map(h, NULL, h->nd, lo, hi, s);
}

int64_t rotor_handoff_held_box(const rotor_handoff *h, int64_t core, const int64_t *lo, const int64_t *hi) {
    for (int d = 0; d < h->nd; d++)
        if (hi[d] <= lo[d]) return 0;
    rotor_handoff_set s;
    box_set(h, lo, hi, &s);
    return rotor_handoff_held(h, core, &s);
}

/* The index in sorted of the first core whose partition starts at cell, or
 * -1 when none does. */
static int64_t group_of(const rotor_handoff *h, const int64_t *cell) {
    if (h->grid) {
        int64_t i = 0;
        for (int d = 0; d < h->nd; d++) {
            if (cell[d] < 0 || cell[d] % h->pdim[d] || cell[d] / h->pdim[d] >= h->ncell[d]) return -1;
            i = i * h->ncell[d] + cell[d] / h->pdim[d];
        }
        return h->grid[i];
    }
    int64_t lo = 0, hi = h->cores;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (cmp_origin(h, h->origin + h->sorted[mid] * h->nd, cell) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo < h->cores && !cmp_origin(h, h->origin + h->sorted[lo] * h->nd, cell) ? lo : -1;
}

int64_t rotor_handoff_holder(const rotor_handoff *h, const int64_t *coord) {
    int64_t cell[ROTOR_MAX_DIMS], f = 0;
    for (int d = 0; d < h->nd; d++) {
        cell[d] = coord[d] - coord[d] % h->pdim[d];
        f += (coord[d] - cell[d]) * h->pstride[d];
    }
    int64_t g = group_of(h, cell);
    if (g < 0) return -1;
    int64_t first = h->sorted[g];
    int64_t chunk = (h->pelems + h->gsize[first] - 1) / h->gsize[first];
    return h->sorted[g + f / chunk];
}

/* The cells' counts a box's sources share: up to SEP_CELLS cells in all
 * dimensions (more: every holder by rotor_handoff_held). */
#define SEP_CELLS 256

static inline rotor_status memo_add(void *ctx, int64_t src, int64_t elems);

/* fn(ctx, src, n), calling the memo's own callback directly (the walks'
 * every source goes through it: the call inlined, issue 45). */
static inline rotor_status emit(rotor_handoff_fn fn, void *ctx, int64_t src, int64_t n) {
    return fn == memo_add ? memo_add(ctx, src, n) : fn(ctx, src, n);
}

/* Whether every span of s is a run of step 1 or a single coordinate: the
 * set is a box, and its part in a window is a box too (box_below). */
static bool set_is_box(const rotor_handoff *h, const rotor_handoff_set *s) {
    for (int d = 0; d < h->nd; d++)
        if (s->span[d].nterms > 1 || (s->span[d].nterms == 1 && s->span[d].step[0] != 1)) return false;
    return true;
}

/* set_below(h, s, o, wl, wh, inner, 0, x) where the set's part in the
 * window is the box [a[d], b[d]) of partition-local coordinates (every
 * extent positive): the same rows below x's row per dimension, and the
 * partial row taken only while x's coordinate lies in the box, without
 * the calls and clamps of span_in (issue 45: the reduction groups'
 * chunk counts were most of GoogLeNet's hand-off phase).  The dimensions
 * after cut span the whole partition: there the box's elements below x
 * are the positions of [a[cut] pstride, b[cut] pstride) below x. */
static int64_t box_below(const rotor_handoff *h, const int64_t *a, const int64_t *b, const int64_t *inner, int cut,
                         int64_t x) {
    int64_t n = 0;
    for (int d = 0; d < cut; d++) {
        int64_t q = x / h->pstride[d];
        int64_t m = (q < b[d] ? q : b[d]) - a[d];
        if (m > 0) n += m * inner[d + 1];
        if (q < a[d] || q >= b[d]) return n;
        x -= q * h->pstride[d];
    }
    int64_t lo = a[cut] * h->pstride[cut], hi = b[cut] * h->pstride[cut];
    return n + (x < lo ? 0 : x < hi ? x - lo : hi - lo);
}

/* The members' counts of the last group group_sources_box priced in one
 * walk (gs 0: none): the groups at the cells along one face of a box read
 * the same box of their partitions (the same a and b), so their members'
 * counts repeat, and they depend on nothing else of the group (its
 * partition's extents and chunks are the hand-off's).  Groups of at most
 * GROUP_MEMO members are kept. */
#define GROUP_MEMO 64
typedef struct group_memo {
    int64_t gs;
    int64_t a[ROTOR_MAX_DIMS], b[ROTOR_MAX_DIMS];
    int64_t n[GROUP_MEMO];
} group_memo;

/* group_sources where the set is a box (set_is_box): the members' counts
 * from box_below, or, where the set covers the whole partition inside the
 * output, the chunks' own lengths, or those of the walk's last group when
 * it read the same box (gm).  The same counts in the same order. */
static rotor_status group_sources_box(const rotor_handoff *h, const rotor_handoff_set *s, int64_t g, bool zeros,
                                      rotor_handoff_fn fn, void *ctx, group_memo *gm) {
    int64_t gs = h->gsize[h->sorted[g]];
    const int64_t *o = h->origin + h->sorted[g] * h->nd;
    int64_t a[ROTOR_MAX_DIMS], b[ROTOR_MAX_DIMS], inner[ROTOR_MAX_DIMS + 1];
    bool none = false, whole = true;
    for (int d = 0; d < h->nd; d++) {
        const rotor_handoff_span *sp = &s->span[d];
        int64_t lo = sp->base, hi = sp->base + (sp->nterms ? sp->count[0] : 1);
        int64_t wl, wh;
        clip1(o[d], h->pdim[d], h->gdim[d], &wl, &wh);
        a[d] = (lo > wl ? lo : wl) - o[d];
        b[d] = (hi < wh ? hi : wh) - o[d];
        none |= b[d] <= a[d];
        whole &= a[d] == 0 && b[d] == h->pdim[d];
    }
    bool keep = !none && !whole && gs <= GROUP_MEMO;
    bool same = keep && gm->gs == gs && !memcmp(gm->a, a, (size_t)h->nd * sizeof *a) &&
                !memcmp(gm->b, b, (size_t)h->nd * sizeof *b);
    if (same) {
        for (int64_t r = 0; r < gs; r++) {
            rotor_status st = gm->n[r] > 0 || zeros ? emit(fn, ctx, h->sorted[g + r], gm->n[r]) : ROTOR_OK;
            if (st) return st;
        }
        return ROTOR_OK;
    }
    if (keep) {
        gm->gs = gs;
        memcpy(gm->a, a, (size_t)h->nd * sizeof *a);
        memcpy(gm->b, b, (size_t)h->nd * sizeof *b);
    }
    inner[h->nd] = 1;
    for (int d = h->nd - 1; d >= 0 && !none; d--) inner[d] = inner[d + 1] * (b[d] - a[d]);
    int cut = h->nd - 1; /* the dimensions after it span the partition */
    while (cut > 0 && a[cut] == 0 && b[cut] == h->pdim[cut]) cut--;
    int64_t chunk = (h->pelems + gs - 1) / gs, prev = 0;
    for (int64_t r = 0; r < gs; r++) {
        int64_t s1 = r * chunk + chunk > h->pelems ? h->pelems : r * chunk + chunk;
        int64_t cur = none ? 0 : whole ? s1 : box_below(h, a, b, inner, cut, s1), n = cur - prev;
        prev = cur;
        if (keep) gm->n[r] = n;
        rotor_status st = n > 0 || zeros ? emit(fn, ctx, h->sorted[g + r], n) : ROTOR_OK;
        if (st) {
            gm->gs = 0; /* its counts not all found */
            return st;
        }
    }
    return ROTOR_OK;
}

/* The sources of the reduction group at sorted[g..] (gsize > 1, nd > 0):
 * rotor_handoff_held's count of each member, telescoped.  The members
 * share the partition's origin, hence its window and the set's counts in
 * it (once, not once per member), and member r holds the row-major chunk
 * [r chunk, min((r + 1) chunk, pelems)): its count is below(its end) less
 * below(its start), and its start's below is the previous member's end's
 * (equal offsets, or both at least pelems, where set_below counts the
 * whole window): gsize + 1 calls of set_below, not 2 gsize (issue 45:
 * GoogLeNet's reduction groups at batch 256 were three quarters of the
 * hand-off phase). */
static rotor_status group_sources(const rotor_handoff *h, const rotor_handoff_set *s, int64_t g, bool zeros,
                                  rotor_handoff_fn fn, void *ctx, group_memo *gm) {
    (void)gm; /* the set is not a box: nothing to share */
    int64_t gs = h->gsize[h->sorted[g]];
    const int64_t *o = h->origin + h->sorted[g] * h->nd;
    int64_t wl[ROTOR_MAX_DIMS], wh[ROTOR_MAX_DIMS], inner[ROTOR_MAX_DIMS + 1];
    /* rotor_handoff_held's early 0: an empty window or no element of s in it */
    bool none = !part_window(h, o, wl, wh);
    inner[h->nd] = 1;
    for (int d = h->nd - 1; d >= 0 && !none; d--) {
        inner[d] = inner[d + 1] * span_in(&s->span[d], wl[d], wh[d]);
        none = !inner[d];
    }
    int64_t chunk = (h->pelems + gs - 1) / gs, prev = none ? 0 : set_below(h, s, o, wl, wh, inner, 0, 0);
    for (int64_t r = 0; r < gs; r++) {
        int64_t s1 = r * chunk + chunk > h->pelems ? h->pelems : r * chunk + chunk;
        int64_t cur = none ? 0 : set_below(h, s, o, wl, wh, inner, 0, s1), n = cur - prev;
        prev = cur;
        rotor_status st = n > 0 || zeros ? emit(fn, ctx, h->sorted[g + r], n) : ROTOR_OK;
        if (st) return st;
    }
    return ROTOR_OK;
}

/* sources_in's walk over the cells [first, last] where the groups are
 * found by their grid index (h->grid, nd > 0): the same cells in the same
 * row-major order, the same holders in the same order and the same
 * counts, but the grid index and the cell's product of row counts kept
 * per level of the odometer and recomputed only from the level that
 * moved, and the innermost dimension whose range holds more than one cell
 * walked in a tight loop (the dimensions after it hold one cell each, so
 * the grid index steps by a constant: a box of a 4-d output at batch 128
 * often spans many cells of one dimension and one cell of the last,
 * where the odometer recomputed two levels for every cell, issue 45).
 * Cells past the grid's extent hold no group: the walk stops at them. */
static rotor_status sources_grid(const rotor_handoff *h, const rotor_handoff_set *s, bool zeros, bool sep,
                                 int64_t *const *row, const int64_t *first, const int64_t *last,
                                 rotor_handoff_fn fn, void *ctx) {
    int nd = h->nd;
    int64_t top[ROTOR_MAX_DIMS], cell[ROTOR_MAX_DIMS], gi[ROTOR_MAX_DIMS + 1], al[ROTOR_MAX_DIMS + 1];
    for (int d = 0; d < nd; d++) {
        top[d] = last[d] < h->ncell[d] - 1 ? last[d] : h->ncell[d] - 1;
        if (top[d] < first[d]) return ROTOR_OK; /* every cell off the grid in d */
        cell[d] = first[d];
    }
    rotor_status (*group)(const rotor_handoff *, const rotor_handoff_set *, int64_t, bool, rotor_handoff_fn, void *,
                          group_memo *) = set_is_box(h, s) ? group_sources_box : group_sources;
    group_memo gm;
    gm.gs = 0;
    int in = nd - 1; /* the tight loop's dimension */
    while (in > 0 && top[in] == first[in]) in--;
    int64_t stride = 1, tail_gi = 0, tail_al = 1; /* the dimensions after it: their grid index and counts */
    for (int d = nd - 1; d > in; d--) {
        tail_gi += first[d] * stride;
        stride *= h->ncell[d];
        if (sep) tail_al *= row[d][0];
    }
    gi[0] = 0, al[0] = 1;
    for (int lv = 0;;) {
        for (int d = lv; d < in; d++) {
            gi[d + 1] = gi[d] * h->ncell[d] + cell[d];
            al[d + 1] = sep ? al[d] * row[d][cell[d] - first[d]] : 1;
        }
        int64_t at = (gi[in] * h->ncell[in] + first[in]) * stride + tail_gi, part = al[in] * tail_al;
        for (int64_t i = first[in]; i <= top[in]; i++, at += stride) {
            int64_t src = h->alone[at];
            if (src == -1) continue;
            /* a group is a run of sorted, gsize long (rotor_handoff_make) */
            rotor_status st;
            if (src == -2) st = group(h, s, h->grid[at], zeros, fn, ctx, &gm);
            else {
                int64_t n = sep ? part * row[in][i - first[in]] : rotor_handoff_held(h, src, s);
                st = n > 0 || zeros ? emit(fn, ctx, src, n) : ROTOR_OK;
            }
            if (st) return st;
        }
        int d = in - 1;
        while (d >= 0 && ++cell[d] > top[d]) {
            cell[d] = first[d];
            d--;
        }
        if (d < 0) return ROTOR_OK;
        lv = d;
    }
}

/* rotor_handoff_sources, and with zeros, also every core it visits that
 * holds none of the set: the cores whose final partition starts at a cell
 * of the set's range (the memo's holders, memo_find). */
static rotor_status sources_in(const rotor_handoff *h, const rotor_handoff_set *s, bool zeros, rotor_handoff_fn fn,
                               void *ctx) {
    int64_t first[ROTOR_MAX_DIMS], last[ROTOR_MAX_DIMS], cell[ROTOR_MAX_DIMS];
    /* A holder alone in its group holds, of the set, the product over the
     * dimensions of the span's elements inside its partition's window
     * (rotor_handoff_held's inner[0]), and every holder at one cell has the
     * same window: in[d][i], the span's elements in the window of cell
     * first[d] + i, found once per box, not once per holder (issue 45). */
    int64_t in[SEP_CELLS], *row[ROTOR_MAX_DIMS], used = 0;
    for (int d = 0; d < h->nd; d++) {
        int64_t a, b;
        if (!span_range(&s->span[d], h->gdim[d], &a, &b)) return ROTOR_OK;
        first[d] = a / h->pdim[d];
        last[d] = b / h->pdim[d];
        cell[d] = first[d];
        used += last[d] - first[d] + 1;
    }
    bool sep = h->nd > 0 && used <= SEP_CELLS;
    for (int d = 0, at = 0; sep && d < h->nd; d++) {
        row[d] = in + at;
        for (int64_t i = first[d]; i <= last[d]; i++) {
            int64_t wl = i * h->pdim[d], wh = wl + h->pdim[d] < h->gdim[d] ? wl + h->pdim[d] : h->gdim[d];
            row[d][i - first[d]] = span_in(&s->span[d], wl, wh);
        }
        at += (int)(last[d] - first[d] + 1);
    }
    if (h->grid && h->nd > 0) return sources_grid(h, s, zeros, sep, row, first, last, fn, ctx);
    for (;;) {
        int64_t org[ROTOR_MAX_DIMS] = {0}, alone = 1;
        for (int d = 0; d < h->nd; d++) {
            org[d] = cell[d] * h->pdim[d];
            if (sep) alone *= row[d][cell[d] - first[d]];
        }
        int64_t g = group_of(h, org);
        /* the group is a run of sorted, gsize long (rotor_handoff_make) */
        for (int64_t k = g, end = g < 0 ? 0 : g + h->gsize[h->sorted[g]]; k < end; k++) {
            int64_t src = h->sorted[k];
            int64_t n = sep && h->gsize[src] == 1 ? alone : rotor_handoff_held(h, src, s);
            rotor_status st = n > 0 || zeros ? fn(ctx, src, n) : ROTOR_OK;
            if (st) return st;
        }
        int d = h->nd - 1;
        while (d >= 0 && ++cell[d] > last[d]) {
            cell[d] = first[d];
            d--;
        }
        if (d < 0) return ROTOR_OK;
    }
}

rotor_status rotor_handoff_sources(const rotor_handoff *h, const rotor_handoff_set *s, rotor_handoff_fn fn,
                                   void *ctx) {
    return sources_in(h, s, false, fn, ctx);
}

rotor_status rotor_handoff_sources_box(const rotor_handoff *h, const int64_t *lo, const int64_t *hi,
                                       rotor_handoff_fn fn, void *ctx) {
    for (int d = 0; d < h->nd; d++)
        if (hi[d] <= lo[d]) return ROTOR_OK;
    rotor_handoff_set s;
    box_set(h, lo, hi, &s);
    return rotor_handoff_sources(h, &s, fn, ctx);
}

/* rotor_handoff_need with the tensor's real extents g given (the walks ask
 * it for every core: the extents once). */
static bool need_at(const rotor_place *consumer, int t, const int64_t *org, const int64_t *g, int64_t *lo,
                    int64_t *hi) {
    const rotor_expr *e = rotor_place_expr(consumer);
    const rotor_plan_info *info = rotor_place_info(consumer);
    bool any = true;
    for (int d = 0; d < e->tensors[t].ndims; d++) any &= clip1(org[d], info->part[t][d], g[d], &lo[d], &hi[d]);
    return any;
}

static bool need_in(const rotor_place *consumer, int t, int64_t core, const int64_t *g, int64_t *lo, int64_t *hi) {
    int64_t org[ROTOR_MAX_DIMS];
    rotor_place_partition(consumer, t, core, 0, org);
    return need_at(consumer, t, org, g, lo, hi);
}

bool rotor_handoff_need(const rotor_place *consumer, int t, int64_t core, int64_t *lo, int64_t *hi) {
    int64_t g[ROTOR_MAX_DIMS];
    rotor_emu_tensor_elems(rotor_place_expr(consumer), t, g);
    return need_in(consumer, t, core, g, lo, hi);
}

void rotor_handoff_receive(const rotor_handoff *h, const rotor_place *consumer, int t, const rotor_view *view,
                           int64_t *recv, int64_t *max) {
    const rotor_plan_info *info = rotor_place_info(consumer);
    int nd = rotor_place_expr(consumer)->tensors[t].ndims;
    *max = 0;
    for (int64_t c = 0; c < info->cores; c++) {
        int64_t lo[ROTOR_MAX_DIMS], hi[ROTOR_MAX_DIMS], need = 0;
        if (rotor_handoff_need(consumer, t, c, lo, hi)) {
            rotor_handoff_set s;
            rotor_handoff_map(h, view, nd, lo, hi, &s);
            need = rotor_handoff_set_elems(h, &s) - rotor_handoff_held(h, c, &s);
        }
        recv[c] = need;
        if (need > *max) *max = need;
    }
}

int64_t rotor_handoff_cores(const rotor_handoff *h) { return h->cores; }

/* ---- the walk: every consumer core's pieces ----------------------------- */

/* The sources of the boxes met so far: open addressing over each box's
 * 2 nd coordinates (lo, then hi); a slot's sources are a run of pair,
 * every core rotor_handoff_sources visits for the box with what it holds,
 * 0 included (those are skipped as pieces, and let the traffic read a
 * receiver's own holding from the run: held_by_run).  It
 * starts afresh when its table is half full (in a table twice as large) or
 * holds MEMO_PAIRS sources, so a hand-off whose every core needs its own
 * box costs no more memory than that. */
#define MEMO_PAIRS ((int64_t)1 << 22)
struct rotor_handoff_memo {
    int nd;
    size_t cap, n;          /* slots (a power of two), boxes held */
    int64_t *key;           /* cap x 2 nd */
    int64_t *first, *count; /* per slot: its run in pair; count < 0: empty */
    int64_t *elems;         /* per slot: the box's real elements (rotor_handoff_set_elems) */
    int64_t (*pair)[2];     /* (src, elems) */
    int64_t *org, norg;     /* the walk's consumer cores' step-0 origins (org_begin) */
    int64_t npair, cappair;
    /* Per producer core, the box it was last seen in and its place in that
     * box's run (rotor_handoff_traffic_in: a core's own entry found without
     * searching the run); ids only grow, so no entry is ever cleared. */
    int64_t (*mark)[2], nmark, mark_id;
    /* What the boxes were found for (memo_begin keeps them for the same):
     * the hand-off's defining content (its partitions' extents and every
     * core's final origin: the groups, ranks and grid follow from them) and
     * the view's meaningful entries; known false: none recorded. */
    bool known;
    int hnd;
    int64_t hcores, hg[ROTOR_MAX_DIMS], hp[ROTOR_MAX_DIMS], *horg, caphorg;
    bool vset;
    int vdim[ROTOR_MAX_DIMS];
    int64_t vstep[ROTOR_MAX_DIMS], voff[ROTOR_MAX_DIMS];
    /* The traffic by sums (traffic_sums): its scratch, kept across walks,
     * and how many traffics it priced. */
    int64_t *sum;
    size_t nsum;
    int64_t nsums;
    bool no_sums; /* rotor_handoff_memo_use_sums(m, false) */
};
typedef struct rotor_handoff_memo box_memo;

static void memo_free(box_memo *m) {
    free(m->sum);
    free(m->mark);
    free(m->horg);
    free(m->org);
    free(m->key);
    free(m->first);
    free(m->count);
    free(m->elems);
    free(m->pair);
}

rotor_handoff_memo *rotor_handoff_memo_new(void) { return calloc(1, sizeof(rotor_handoff_memo)); }

void rotor_handoff_memo_free(rotor_handoff_memo *m) {
    if (!m) return;
    memo_free(m);
    free(m);
}

/* Whether m's boxes were found for the same hand-off content and view as
 * h and view (consumer boxes of nd dimensions): every run of sources and
 * every box's elements depend only on them and the box. */
static bool memo_same(const box_memo *m, const rotor_handoff *h, const rotor_view *view, int nd) {
    bool vset = view && view->set;
    if (!m->known || m->nd != nd || m->hnd != h->nd || m->hcores != h->cores || m->vset != vset) return false;
    for (int d = 0; d < h->nd; d++)
        if (m->hg[d] != h->gdim[d] || m->hp[d] != h->pdim[d] || (vset && m->voff[d] != view->offset[d])) return false;
    for (int d = 0; vset && d < nd; d++)
        if (m->vdim[d] != view->dim[d] || m->vstep[d] != view->step[d]) return false;
    return !memcmp(m->horg, h->origin, (size_t)(h->cores * h->nd) * sizeof *h->origin);
}

/* Records h's content and view as what m's boxes are found for (not
 * known when out of memory: the next walk starts afresh). */
static void memo_note(box_memo *m, const rotor_handoff *h, const rotor_view *view, int nd) {
    int64_t n = h->cores * h->nd;
    m->known = false;
    if (n > m->caphorg) {
        free(m->horg);
        m->caphorg = (m->horg = malloc((size_t)n * sizeof *m->horg)) ? n : 0;
        if (!m->horg) return;
    }
    if (n) memcpy(m->horg, h->origin, (size_t)n * sizeof *h->origin);
    m->hnd = h->nd, m->hcores = h->cores;
    m->vset = view && view->set;
    for (int d = 0; d < h->nd; d++) {
        m->hg[d] = h->gdim[d], m->hp[d] = h->pdim[d];
        m->voff[d] = m->vset ? view->offset[d] : 0;
    }
    for (int d = 0; d < nd; d++) m->vdim[d] = m->vset ? view->dim[d] : 0, m->vstep[d] = m->vset ? view->step[d] : 0;
    m->known = true;
}

/* Readies m for a walk over boxes of nd dimensions from h through view:
 * the boxes already found are kept when they were found for the same
 * hand-off content and view (memo_same: a consumer's candidate plans read
 * one producer's output through boxes of the same partitions, issue 45),
 * else m is emptied, its arrays kept (a reused memo allocates nothing)
 * unless the key's width changes. */
static void memo_begin(box_memo *m, const rotor_handoff *h, const rotor_view *view, int nd) {
    if (memo_same(m, h, view, nd)) return;
    if (m->nd != nd) {
        free(m->key), free(m->first), free(m->count), free(m->elems);
        m->key = m->first = m->count = m->elems = NULL;
        m->cap = 0;
        m->nd = nd;
    }
    for (size_t j = 0; j < m->cap; j++) m->count[j] = -1;
    m->n = 0;
    m->npair = 0;
    memo_note(m, h, view, nd);
}

/* Coordinates are small and often multiples of a partition's extent: the
 * sum is mixed once at the end so that the low bits the table uses depend
 * on every bit. */
static size_t box_hash(const int64_t *box, int n) {
    uint64_t x = 0;
    for (int i = 0; i < n; i++) x = x * 0x100000001b3ull + (uint64_t)box[i];
    x ^= x >> 29;
    x *= 0x94d049bb133111ebull;
    return (size_t)(x ^ x >> 32);
}

/* Whether the boxes a and b (w coordinates each) are equal: a loop the
 * compiler inlines, not a call of memcmp (issue 45: memcmp's calls were
 * a tenth of the hand-off phase's samples). */
static inline bool box_eq(const int64_t *a, const int64_t *b, size_t w) {
    for (size_t i = 0; i < w; i++)
        if (a[i] != b[i]) return false;
    return true;
}

/* The slot of box, or of the empty slot where it belongs. */
static size_t memo_slot(const box_memo *m, const int64_t *box) {
    size_t w = 2 * (size_t)m->nd, j = box_hash(box, 2 * m->nd) & (m->cap - 1);
    while (m->count[j] >= 0 && !box_eq(m->key + j * w, box, w)) j = (j + 1) & (m->cap - 1);
    return j;
}

/* Empties the memo into cap slots. */
static bool memo_reset(box_memo *m, size_t cap) {
    size_t w = 2 * (size_t)m->nd;
    if (cap != m->cap) {
        int64_t *key = malloc(cap * (w ? w : 1) * sizeof *key), *first = malloc(cap * sizeof *first);
        int64_t *count = malloc(cap * sizeof *count), *elems = malloc(cap * sizeof *elems);
        if (!key || !first || !count || !elems) {
            free(key), free(first), free(count), free(elems);
            return false;
        }
        free(m->key), free(m->first), free(m->count), free(m->elems);
        m->key = key, m->first = first, m->count = count, m->elems = elems, m->cap = cap;
    }
    for (size_t j = 0; j < cap; j++) m->count[j] = -1;
    m->n = 0;
    m->npair = 0;
    return true;
}

/* Room for twice the sources (256 at first). */
static __attribute__((noinline)) bool memo_grow(box_memo *m) {
    int64_t cap = m->cappair ? 2 * m->cappair : 256;
    int64_t(*pair)[2] = realloc(m->pair, (size_t)cap * sizeof *pair);
    if (pair) m->pair = pair, m->cappair = cap;
    return pair;
}

/* rotor_handoff_sources' callback: one more source of the box being found
 * (inlined where emit calls it: every source of every box goes through it). */
static inline __attribute__((always_inline)) rotor_status memo_add(void *ctx, int64_t src, int64_t elems) {
    box_memo *m = ctx;
    if (m->npair == m->cappair && !memo_grow(m)) return ROTOR_ERR_NOMEM;
    int64_t *p = m->pair[m->npair++];
    p[0] = src, p[1] = elems;
    return ROTOR_OK;
}

/* The run of pair holding the sources of box (found now if new). */
static rotor_status memo_find(const rotor_handoff *h, const rotor_view *view, box_memo *m, const int64_t *box,
                              int64_t *first, int64_t *count, int64_t *elems, rotor_error *err) {
    size_t j = m->cap ? memo_slot(m, box) : 0;
    if (m->cap && m->count[j] >= 0) {
        *first = m->first[j];
        *count = m->count[j];
        *elems = m->elems[j];
        return ROTOR_OK;
    }
    if (!m->cap || m->npair >= MEMO_PAIRS || (m->n + 1) * 2 > m->cap) {
        /* afresh, twice as large when the table is half full: a box met
         * again costs one more search */
        size_t cap = !m->cap ? 64 : m->npair >= MEMO_PAIRS ? m->cap : 2 * m->cap;
        if (!memo_reset(m, cap)) return rotor_nomem(err);
        j = memo_slot(m, box);
    }
    rotor_handoff_set s;
    rotor_handoff_map(h, view, m->nd, box, box + m->nd, &s);
    int64_t start = m->npair;
    if (sources_in(h, &s, true, memo_add, m)) return rotor_nomem(err);
    memcpy(m->key + j * 2 * (size_t)m->nd, box, 2 * (size_t)m->nd * sizeof *box);
    m->first[j] = *first = start;
    m->count[j] = *count = m->npair - start;
    m->elems[j] = *elems = rotor_handoff_set_elems(h, &s);
    m->n++;
    return ROTOR_OK;
}

/* Whether rotor_handoff_held(h, c, the set of a box) is what the box's run
 * of holders in the memo (count long) says of core c, or 0 when c is not
 * in it: when every final partition starts on the partition grid
 * (h->grid), core c's starts at a cell, and rotor_handoff_sources visits
 * every core at every cell of the set's range, so c holds what the run
 * says, or nothing (its cell lies outside the range, where no element of
 * the set is).  A long run (searching it would cost more), or partitions
 * off the grid: held directly (held_of). */
#define HELD_RUN_MAX 64
static bool held_by_run(const rotor_handoff *h, int64_t count) {
    return h->grid && count <= HELD_RUN_MAX && h->nd > 0;
}

/* rotor_handoff_held(h, c, the set of box through view). */
static int64_t held_of(const rotor_handoff *h, const rotor_view *view, const box_memo *m, const int64_t *box,
                       int64_t c) {
    rotor_handoff_set s;
    rotor_handoff_map(h, view, m->nd, box, box + m->nd, &s);
    return rotor_handoff_held(h, c, &s);
}

/* Every consumer core's step-0 origin of tensor t into m->org
 * (rotor_place_partitions_at_0); NULL when out of memory, and then the
 * walk asks rotor_place_partition core by core (need_of). */
static const int64_t *org_begin(box_memo *m, const rotor_place *consumer, int t) {
    int64_t n = rotor_place_info(consumer)->cores * rotor_place_expr(consumer)->tensors[t].ndims;
    if (n > m->norg) {
        free(m->org);
        m->norg = (m->org = malloc((size_t)(n ? n : 1) * sizeof *m->org)) ? n : 0;
        if (!m->org) return NULL;
    }
    rotor_place_partitions_at_0(consumer, t, m->org);
    return m->org;
}

/* need_in of core c, from the origins org_begin found (org: NULL, none).
 * Inlined, with the partition's extents (part) and the tensor's
 * dimensions (nd) found once per walk: the walks ask it of every consumer
 * core, and the calls for the placement's expression and plan were most
 * of its instructions (issue 45).  The same box as need_at's. */
static inline __attribute__((always_inline)) bool need_of(const rotor_place *consumer, int t, const int64_t *part,
                                                          int nd, const int64_t *org, int64_t c, const int64_t *g,
                                                          int64_t *lo, int64_t *hi) {
    if (!org) return need_in(consumer, t, c, g, lo, hi);
    const int64_t *o = org + c * nd;
    bool any = true;
    for (int d = 0; d < nd; d++) any &= clip1(o[d], part[d], g[d], &lo[d], &hi[d]);
    return any;
}

rotor_status rotor_handoff_walk_in(const rotor_handoff *h, const rotor_place *consumer, int t,
                                   const rotor_view *view, rotor_handoff_memo *memo, rotor_handoff_piece_fn fn,
                                   void *ctx, rotor_error *err) {
    const rotor_plan_info *info = rotor_place_info(consumer);
    box_memo own = {0}, *m = memo ? memo : &own;
    int64_t g[ROTOR_MAX_DIMS];
    rotor_emu_tensor_elems(rotor_place_expr(consumer), t, g);
    memo_begin(m, h, view, rotor_place_expr(consumer)->tensors[t].ndims);
    rotor_status st = ROTOR_OK;
    const int64_t *org = org_begin(m, consumer, t);
    /* the last box found: consecutive cores often need the same box (cores
     * apart only in dimensions the tensor lacks), found again without its
     * hash; no memo_find runs between them, so its run stays put */
    int64_t prev[2 * ROTOR_MAX_DIMS], first = 0, count = 0, elems;
    bool have = false;
    size_t w = 2 * (size_t)m->nd;
    for (int64_t c = 0; c < info->cores && !st; c++) {
        int64_t box[2 * ROTOR_MAX_DIMS];
        if (!need_of(consumer, t, info->part[t], m->nd, org, c, g, box, box + m->nd)) continue;
        if (!have || !box_eq(prev, box, w)) {
            st = memo_find(h, view, m, box, &first, &count, &elems, err);
            memcpy(prev, box, w * sizeof *box);
            have = !st;
        }
        for (int64_t k = 0; !st && k < count; k++)
            if (m->pair[first + k][1] > 0) st = fn(ctx, c, m->pair[first + k][0], m->pair[first + k][1]);
    }
    if (!memo) memo_free(&own);
    return st;
}

rotor_status rotor_handoff_walk(const rotor_handoff *h, const rotor_place *consumer, int t, const rotor_view *view,
                                rotor_handoff_piece_fn fn, void *ctx, rotor_error *err) {
    return rotor_handoff_walk_in(h, consumer, t, view, NULL, fn, ctx, err);
}

/* Adds mult times the run [first, first + count) of m's sources into send
 * (mult <= 0: nothing). */
static void send_run(const box_memo *m, int64_t first, int64_t count, int64_t mult, int64_t *send) {
    if (mult == 1)
        for (int64_t k = first; k < first + count; k++) send[m->pair[k][0]] += m->pair[k][1];
    else if (mult > 1)
        for (int64_t k = first; k < first + count; k++) send[m->pair[k][0]] += mult * m->pair[k][1];
}

/* Room in m->mark for cores producer cores (new entries 0: below every
 * id); false when out of memory. */
static bool mark_begin(box_memo *m, int64_t cores) {
    if (cores <= m->nmark) return true;
    free(m->mark);
    m->mark = calloc((size_t)cores, sizeof *m->mark);
    m->nmark = m->mark ? cores : 0;
    return m->mark;
}

/* The run [first, first + count) of m's sources added once into send, each
 * source marked as in it (a new id), for the cores that need its box. */
static void send_marked(box_memo *m, int64_t first, int64_t count, int64_t *send) {
    int64_t id = ++m->mark_id;
    for (int64_t k = first; k < first + count; k++) {
        int64_t p = m->pair[k][0];
        send[p] += m->pair[k][1];
        m->mark[p][0] = id, m->mark[p][1] = k;
    }
}

/* ---- the traffic by sums ------------------------------------------------ */

/* A producer core's sends are the elements of its holding that every
 * other consumer core's box reads: summed over the consumer's cores, that
 * is what the walk above adds source by source (44 million sources for
 * DenseNet-121's simplified graph at batch 32, 33,000 a hand-off, most of
 * its hand-off phase).  Where the consumer's boxes are every combination
 * of a few intervals per dimension, each combination on the same number
 * of cores (a T10 plan's partitions: a core's coordinate along each of the
 * tensor's axes picks its interval there, the other axes replicate the
 * box), the sum factors by dimension: the elements the boxes read at
 * output coordinate x along dimension j, counted over the combinations of
 * the intervals of the consumer dimensions that view maps to j, give
 * cov_j(x), and a core's sends are the cores per combination times the
 * sum over its holding of the product of cov_j, less what it reads of its
 * own box.  So the sends cost one pass over the producer's cores, not one
 * per (receiver, source) pair; the receives are each core's box less what
 * it holds itself, as the walk has them.  The same integers (the test
 * `fused_traffic_equals_receive_and_sends_core_by_core` compares both
 * with the core-by-core computation).  Consumers whose boxes are not such
 * a product, scalars, and grids too large for the scratch take the walk. */

/* The scratch's bounds: the output's extents summed over its dimensions
 * (the coverage's prefix sums), and the elements of strided spans
 * enumerated into it. */
#define SUM_GRID_MAX ((int64_t)1 << 20)
#define SUM_WORK_MAX ((int64_t)1 << 22)

/* The memo's scratch of n int64_t; NULL when out of memory (then the walk
 * prices the hand-off).  It is kept for the memo's next traffic up to
 * SUM_KEEP entries (a chip of a few thousand cores needs a few hundred
 * thousand), freed after the traffic when larger (sum_release): a wafer's
 * consumer would hold a hundred megabytes in a long-lived memo. */
#define SUM_KEEP ((size_t)1 << 20)
static void sum_release(box_memo *m) {
    if (m->nsum <= SUM_KEEP) return;
    free(m->sum);
    m->sum = NULL;
    m->nsum = 0;
}

static int64_t *sum_scratch(box_memo *m, size_t n) {
    if (n > m->nsum) {
        free(m->sum);
        m->nsum = (m->sum = malloc(n * sizeof *m->sum)) ? n : 0;
    }
    return m->sum;
}

/* Adds weight u for each of span s's elements inside [0, g) to the
 * difference array d (d[x] += u, d[x + 1] -= u); false when the strided
 * elements to enumerate exceed *budget. */
static bool sum_cover(const rotor_handoff_span *s, int64_t g, int64_t u, int64_t *d, int64_t *budget) {
    if (s->nterms == 0 || (s->nterms == 1 && s->step[0] == 1)) {
        int64_t a = s->base < 0 ? 0 : s->base, b = s->base + (s->nterms ? s->count[0] : 1);
        if (b > g) b = g;
        if (a < b) d[a] += u, d[b] -= u;
        return true;
    }
    int64_t n = 1;
    for (int k = 0; k < s->nterms; k++) n *= s->count[k];
    if ((*budget -= n) < 0) return false;
    int64_t at[ROTOR_MAX_DIMS] = {0}, x = s->base;
    for (;;) {
        if (x >= 0 && x < g) d[x] += u, d[x + 1] -= u;
        int k = s->nterms - 1;
        while (k >= 0 && ++at[k] == s->count[k]) {
            x -= (at[k] - 1) * s->step[k];
            at[k--] = 0;
        }
        if (k < 0) return true;
        x += s->step[k];
    }
}

/* set_below with the set's indicator along dimension d replaced by
 * cov_d, from its prefix sums P[d]: the sum over the window's elements of
 * local row-major index below x of the product of cov_d. */
static int64_t sum_below(const rotor_handoff *h, int64_t *const *P, const int64_t *o, const int64_t *wl,
                         const int64_t *wh, const int64_t *inner, int d, int64_t x) {
    if (d == h->nd) return x > 0;
    int64_t q = x / h->pstride[d], r = x % h->pstride[d];
    int64_t top = o[d] + q < wh[d] ? o[d] + q : wh[d];
    int64_t n = top > wl[d] ? (P[d][top] - P[d][wl[d]]) * inner[d + 1] : 0;
    int64_t at = o[d] + q;
    if (at >= wl[d] && at < wh[d]) {
        int64_t cov = P[d][at + 1] - P[d][at];
        if (cov) n += cov * sum_below(h, P, o, wl, wh, inner, d + 1, r);
    }
    return n;
}

/* rotor_handoff_traffic_in by sums (above): recv, *max_recv and send
 * (zeroed by the caller, which takes the sends' maximum); true when done,
 * false when the consumer's boxes are no product, or the scratch cannot
 * be had (nothing written but scratch: the walk prices it). */
static bool traffic_sums(const rotor_handoff *h, const rotor_place *consumer, int t, const rotor_view *view,
                         box_memo *m, const int64_t *org, const int64_t *g, int64_t *recv, int64_t *max_recv,
                         int64_t *send) {
    const rotor_plan_info *info = rotor_place_info(consumer);
    const int64_t *part = info->part[t];
    int nd = m->nd, hn = h->nd;
    int64_t nc = info->cores;
    bool vset = view && view->set;
    if (!org || hn == 0 || nd == 0 || nc < 1 || (!vset && nd != hn)) return false;
    int64_t gsum = 0;
    for (int j = 0; j < hn; j++) gsum += h->gdim[j] + 1;
    if (gsum > SUM_GRID_MAX) return false;
    size_t cap = 16;
    while (cap < 2 * (size_t)nc) cap <<= 1;
    int64_t *w = sum_scratch(m, 3 * (size_t)nc * (size_t)nd + 2 * cap + (size_t)nc + (size_t)gsum);
    if (!w) return false;
    /* kidx: each core's interval index per dimension; list: each
     * dimension's distinct origins, cnt: the cores at each; a hash of
     * origins to their index */
    int64_t *kidx = w, *list = kidx + nc * nd, *cnt = list + nc * nd, *hkey = cnt + nc * nd, *hval = hkey + cap;
    int64_t *hist = hval + cap, *P[ROTOR_MAX_DIMS], len[ROTOR_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        for (size_t k = 0; k < cap; k++) hval[k] = -1;
        int64_t last_o = 0, last_i = -1, n = 0;
        for (int64_t c = 0; c < nc; c++) {
            int64_t o = org[c * nd + d];
            if (last_i < 0 || o != last_o) {
                size_t k = (size_t)(((uint64_t)o * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
                while (hval[k] >= 0 && hkey[k] != o) k = (k + 1) & (cap - 1);
                if (hval[k] < 0) {
                    hkey[k] = o;
                    hval[k] = n;
                    cnt[d * nc + n] = 0;
                    list[d * nc + n++] = o;
                }
                last_o = o, last_i = hval[k];
            }
            kidx[c * nd + d] = last_i;
            cnt[d * nc + last_i]++;
        }
        len[d] = n;
    }
    /* The cores of each combination of intervals: a product M x u_0(i_0)
     * x ... over the dimensions, u_d the cores at each interval of d over
     * their greatest common divisor (every combination on nc / T cores
     * where u is 1; a strided window's origins 2 h + kh repeat unevenly).
     * Then the weights factor by dimension too. */
    int64_t T = 1;
    for (int d = 0; d < nd; d++) {
        if ((T *= len[d]) > nc) return false; /* a combination on no core */
        int64_t gcd = 0;
        for (int64_t i = 0; i < len[d]; i++) gcd = rotor_gcd(cnt[d * nc + i], gcd);
        for (int64_t i = 0; i < len[d]; i++) cnt[d * nc + i] /= gcd;
    }
    memset(hist, 0, (size_t)T * sizeof *hist);
    for (int64_t c = 0; c < nc; c++) {
        int64_t i = 0;
        for (int d = 0; d < nd; d++) i = i * len[d] + kidx[c * nd + d];
        hist[i]++;
    }
    int64_t M = 0, at[ROTOR_MAX_DIMS] = {0};
    for (int64_t i = 0;; i++) { /* at: combination i's intervals */
        int64_t u = 1;
        for (int d = 0; d < nd; d++)
            if ((u *= cnt[d * nc + at[d]]) > nc) return false; /* more than hist[i] can be */
        if (!i) {
            if (hist[0] % u) return false;
            M = hist[0] / u;
        }
        if (hist[i] != M * u) return false;
        int d = nd - 1;
        while (d >= 0 && ++at[d] == len[d]) at[d--] = 0;
        if (d < 0) break;
    }
    /* cov_j's prefix sums over the combinations of the intervals of the
     * consumer dimensions view maps to j (none: the view's fixed index) */
    int64_t budget = SUM_WORK_MAX;
    int64_t off = 0;
    for (int j = 0; j < hn; off += h->gdim[j] + 1, j++) {
        P[j] = hist + nc + off;
        memset(P[j], 0, (size_t)(h->gdim[j] + 1) * sizeof *P[j]);
        int dl[ROTOR_MAX_DIMS], nl = 0;
        for (int d = 0; d < nd; d++)
            if (vset ? view->dim[d] == j : d == j) dl[nl++] = d;
        int64_t lo[ROTOR_MAX_DIMS] = {0}, hi[ROTOR_MAX_DIMS] = {0};
        memset(at, 0, sizeof at);
        for (;;) {
            bool empty = false;
            int64_t u = 1;
            for (int k = 0; k < nl; k++) {
                int d = dl[k];
                empty |= !clip1(list[d * nc + at[k]], part[d], g[d], &lo[d], &hi[d]);
                u *= cnt[d * nc + at[k]];
            }
            if (!empty) { /* an empty interval: its cores need nothing */
                rotor_handoff_span sp;
                span_of(view, j, nd, lo, hi, &sp);
                if (!sum_cover(&sp, h->gdim[j], u, P[j], &budget)) return false;
            }
            int k = nl - 1;
            while (k >= 0 && ++at[k] == len[dl[k]]) at[k--] = 0;
            if (k < 0) break;
        }
        int64_t run = 0, acc = 0; /* differences to cov, cov to prefix sums */
        for (int64_t x = 0; x < h->gdim[j]; x++) {
            run += P[j][x];
            P[j][x] = acc;
            acc += run;
        }
        P[j][h->gdim[j]] = acc;
    }
    /* the sends: each producer core's holding summed over cov */
    for (int64_t p = 0; p < h->cores; p++) {
        const int64_t *o = h->origin + p * hn;
        int64_t wl[ROTOR_MAX_DIMS], wh[ROTOR_MAX_DIMS], inner[ROTOR_MAX_DIMS + 1];
        if (!part_window(h, o, wl, wh)) continue; /* send[p] stays the caller's 0 */
        inner[hn] = 1;
        for (int j = hn - 1; j >= 0; j--) inner[j] = inner[j + 1] * (P[j][wh[j]] - P[j][wl[j]]);
        if (!inner[0]) continue;
        int64_t sum = inner[0];
        if (h->gsize[p] > 1) { /* a member of a reduction group: its row-major chunk (rotor_handoff_held) */
            int64_t s0, s1;
            group_chunk(h, p, &s0, &s1);
            sum = sum_below(h, P, o, wl, wh, inner, 0, s1) - sum_below(h, P, o, wl, wh, inner, 0, s0);
        }
        send[p] = M * sum;
    }
    /* the receives, and what each core reads of its own holding */
    int64_t prev[2 * ROTOR_MAX_DIMS], elems = 0;
    size_t wd = 2 * (size_t)nd;
    bool have = false;
    rotor_handoff_set s;
    for (int64_t c = 0; c < nc; c++) {
        int64_t box[2 * ROTOR_MAX_DIMS];
        recv[c] = 0;
        if (!need_of(consumer, t, part, nd, org, c, g, box, box + nd)) continue;
        if (!have || !box_eq(prev, box, wd)) {
            rotor_handoff_map(h, view, nd, box, box + nd, &s);
            elems = rotor_handoff_set_elems(h, &s);
            memcpy(prev, box, wd * sizeof *box);
            have = true;
        }
        int64_t held = rotor_handoff_held(h, c, &s);
        recv[c] = elems - held;
        if (c < h->cores) send[c] -= held;
        if (recv[c] > *max_recv) *max_recv = recv[c];
    }
    return true;
}

int64_t rotor_handoff_memo_sums(const rotor_handoff_memo *m) { return m ? m->nsums : 0; }

void rotor_handoff_memo_use_sums(rotor_handoff_memo *m, bool on) {
    if (m) m->no_sums = !on;
}

/* rotor_handoff_receive and the sends of rotor_handoff_walk in one pass over
 * the consumer's cores: each core's box is found once (rotor_handoff_need),
 * the box's real elements and sources once per distinct box (the memo), and
 * recv[c] is those elements less what core c itself holds
 * (rotor_handoff_held), as rotor_handoff_receive counts it. */
rotor_status rotor_handoff_traffic_in(const rotor_handoff *h, const rotor_place *consumer, int t,
                                      const rotor_view *view, rotor_handoff_memo *memo, int64_t *recv,
                                      int64_t *max_recv, int64_t *send, int64_t *max_send) {
    const rotor_plan_info *info = rotor_place_info(consumer);
    box_memo own = {0}, *m = memo ? memo : &own;
    int64_t g[ROTOR_MAX_DIMS];
    rotor_emu_tensor_elems(rotor_place_expr(consumer), t, g);
    memo_begin(m, h, view, rotor_place_expr(consumer)->tensors[t].ndims);
    memset(send, 0, (size_t)h->cores * sizeof *send);
    rotor_error err;
    rotor_status st = ROTOR_OK;
    *max_recv = 0;
    const int64_t *org = org_begin(m, consumer, t);
    bool sums = !m->no_sums && traffic_sums(h, consumer, t, view, m, org, g, recv, max_recv, send);
    sum_release(m);
    if (sums) m->nsums++;
    /* Each source of a box's run sends its elements to every core that
     * needs the box but itself: added once when a run of consecutive cores
     * needing the same box begins (send_marked), the rest of the run's
     * cores (mult - 1) added together before the next memo_find (which may
     * move the runs), less each such core's own entry if it is in the run,
     * found by its mark, not by searching the run (the search was most of
     * this function's instructions: runs of 35 sources on average in
     * ResNet-50 b8).  The same integer sums as adding core by core (issue
     * 45). */
    int64_t prev[2 * ROTOR_MAX_DIMS], first = 0, count = 0, elems = 0, mult = 0;
    size_t w = 2 * (size_t)m->nd;
    if (!sums && !mark_begin(m, h->cores)) st = ROTOR_ERR_NOMEM;
    for (int64_t c = 0; c < info->cores && !sums; c++) {
        int64_t box[2 * ROTOR_MAX_DIMS];
        recv[c] = 0;
        if (st || !need_of(consumer, t, info->part[t], m->nd, org, c, g, box, box + m->nd)) continue;
        if (!mult || !box_eq(prev, box, w)) {
            send_run(m, first, count, mult - 1, send);
            mult = 0;
            st = memo_find(h, view, m, box, &first, &count, &elems, &err);
            if (st) continue;
            memcpy(prev, box, w * sizeof *box);
            send_marked(m, first, count, send);
        }
        mult++;
        int64_t mine = 0; /* what c holds, if it is in the run (held_by_run) */
        if (c < h->cores && m->mark[c][0] == m->mark_id) {
            mine = m->pair[m->mark[c][1]][1];
            send[c] -= mine; /* c sends itself nothing */
        }
        recv[c] = elems - (held_by_run(h, count) ? mine : held_of(h, view, m, box, c));
        if (recv[c] > *max_recv) *max_recv = recv[c];
    }
    if (!st && !sums) send_run(m, first, count, mult - 1, send);
    if (!memo) memo_free(&own);
    *max_send = 0;
    for (int64_t p = 0; p < h->cores; p++)
        if (send[p] > *max_send) *max_send = send[p];
    return st;
}

rotor_status rotor_handoff_traffic(const rotor_handoff *h, const rotor_place *consumer, int t,
                                   const rotor_view *view, int64_t *recv, int64_t *max_recv, int64_t *send,
                                   int64_t *max_send) {
    return rotor_handoff_traffic_in(h, consumer, t, view, NULL, recv, max_recv, send, max_send);
}
