/* handoff.c — who holds which output element after a plan has run, and what
 * a consumer's plan must receive (include/rotor/op/handoff.h states the
 * model; docs/compile.md, "Hand-off", the decisions). */
#include "rotor/op/handoff.h"

#include <stdlib.h>
#include <string.h>

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
    free(h);
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
    for (int64_t c = 0; c < h->cores; c++) {
        rotor_place_partition(producer, 0, c, info->total_steps - 1, h->origin + c * h->nd);
        h->sorted[c] = c;
    }
    merge_sort(h, h->sorted, tmp, h->cores);
    free(tmp);
    for (int64_t s = 0; s < h->cores;) {
        int64_t r = s + 1;
        while (r < h->cores && !cmp_origin(h, h->origin + h->sorted[s] * h->nd, h->origin + h->sorted[r] * h->nd)) r++;
        for (int64_t k = s; k < r; k++) {
            h->rank[h->sorted[k]] = k - s;
            h->gsize[h->sorted[k]] = r - s;
        }
        s = r;
    }
    *out = h;
    return ROTOR_OK;
}

bool rotor_handoff_fits(const rotor_expr *producer, const rotor_expr *consumer, int t) {
    const rotor_tensor *y = &producer->tensors[0];
    if (t < 1 || t >= consumer->ntensors || consumer->tensors[t].ndims != y->ndims) return false;
    int64_t gy[ROTOR_MAX_DIMS], gx[ROTOR_MAX_DIMS];
    rotor_emu_tensor_elems(producer, 0, gy);
    rotor_emu_tensor_elems(consumer, t, gx);
    for (int d = 0; d < y->ndims; d++)
        if (gx[d] != gy[d] || y->dims[d].nterms != 1 || y->dims[d].coef[0] != 1) return false;
    return true;
}

bool rotor_handoff_matches(const rotor_handoff *h, const rotor_place *consumer, int t) {
    return rotor_handoff_fits(h->producer, rotor_place_expr(consumer), t);
}

/* Elements of the partition-local box [lo, hi) with local row-major index
 * below x: whole rows of dimension d below x's row, then the partial row. */
static int64_t count_below(const rotor_handoff *h, int d, const int64_t *lo, const int64_t *hi, int64_t x) {
    if (d == h->nd) return x > 0;
    int64_t q = x / h->pstride[d], r = x % h->pstride[d];
    int64_t rows = (q < lo[d] ? lo[d] : q > hi[d] ? hi[d] : q) - lo[d];
    int64_t inner = 1;
    for (int k = d + 1; k < h->nd; k++) inner *= hi[k] - lo[k];
    int64_t n = rows * inner;
    if (q >= lo[d] && q < hi[d]) n += count_below(h, d + 1, lo, hi, r);
    return n;
}

int64_t rotor_handoff_held(const rotor_handoff *h, int64_t core, const int64_t *lo, const int64_t *hi) {
    if (core < 0 || core >= h->cores) return 0;
    const int64_t *o = h->origin + core * h->nd;
    int64_t a[ROTOR_MAX_DIMS], b[ROTOR_MAX_DIMS];
    for (int d = 0; d < h->nd; d++) {
        int64_t l = lo[d] > o[d] ? lo[d] : o[d];
        int64_t u = hi[d] < o[d] + h->pdim[d] ? hi[d] : o[d] + h->pdim[d];
        if (u > h->gdim[d]) u = h->gdim[d];
        if (l < 0) l = 0;
        if (u <= l) return 0;
        a[d] = l - o[d];
        b[d] = u - o[d];
    }
    int64_t chunk = (h->pelems + h->gsize[core] - 1) / h->gsize[core];
    int64_t s0 = h->rank[core] * chunk, s1 = s0 + chunk > h->pelems ? h->pelems : s0 + chunk;
    if (h->nd == 0) return s0 == 0; /* a scalar: rank 0 keeps it */
    return count_below(h, 0, a, b, s1) - count_below(h, 0, a, b, s0);
}

/* The index in sorted of the first core whose partition starts at cell, or
 * -1 when none does. */
static int64_t group_of(const rotor_handoff *h, const int64_t *cell) {
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

rotor_status rotor_handoff_sources(const rotor_handoff *h, const int64_t *lo, const int64_t *hi, rotor_handoff_fn fn,
                                   void *ctx) {
    int64_t first[ROTOR_MAX_DIMS], last[ROTOR_MAX_DIMS], cell[ROTOR_MAX_DIMS];
    for (int d = 0; d < h->nd; d++) {
        if (hi[d] <= lo[d]) return ROTOR_OK;
        first[d] = lo[d] / h->pdim[d];
        last[d] = (hi[d] - 1) / h->pdim[d];
        cell[d] = first[d];
    }
    for (;;) {
        int64_t org[ROTOR_MAX_DIMS] = {0};
        for (int d = 0; d < h->nd; d++) org[d] = cell[d] * h->pdim[d];
        int64_t g = group_of(h, org);
        for (int64_t k = g; g >= 0 && k < h->cores; k++) {
            int64_t src = h->sorted[k];
            if (k > g && cmp_origin(h, h->origin + src * h->nd, org)) break;
            int64_t n = rotor_handoff_held(h, src, lo, hi);
            rotor_status st = n > 0 ? fn(ctx, src, n) : ROTOR_OK;
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

bool rotor_handoff_need(const rotor_place *consumer, int t, int64_t core, int64_t *lo, int64_t *hi) {
    const rotor_expr *e = rotor_place_expr(consumer);
    const rotor_plan_info *info = rotor_place_info(consumer);
    int64_t org[ROTOR_MAX_DIMS], g[ROTOR_MAX_DIMS];
    rotor_place_partition(consumer, t, core, 0, org);
    rotor_emu_tensor_elems(e, t, g);
    bool any = true;
    for (int d = 0; d < e->tensors[t].ndims; d++) {
        lo[d] = org[d] < 0 ? 0 : org[d];
        hi[d] = org[d] + info->part[t][d] < g[d] ? org[d] + info->part[t][d] : g[d];
        if (hi[d] <= lo[d]) any = false;
    }
    return any;
}

void rotor_handoff_receive(const rotor_handoff *h, const rotor_place *consumer, int t, int64_t *recv,
                           int64_t *max) {
    const rotor_plan_info *info = rotor_place_info(consumer);
    *max = 0;
    for (int64_t c = 0; c < info->cores; c++) {
        int64_t lo[ROTOR_MAX_DIMS], hi[ROTOR_MAX_DIMS], need = 0;
        if (rotor_handoff_need(consumer, t, c, lo, hi)) {
            need = 1;
            for (int d = 0; d < h->nd; d++) need *= hi[d] - lo[d];
            need -= rotor_handoff_held(h, c, lo, hi);
        }
        recv[c] = need;
        if (need > *max) *max = need;
    }
}

int64_t rotor_handoff_cores(const rotor_handoff *h) { return h->cores; }

typedef struct traffic {
    int64_t dst;
    int64_t *send;
} traffic;

static rotor_status count_send(void *ctx, int64_t src, int64_t elems) {
    traffic *t = ctx;
    if (src != t->dst) t->send[src] += elems;
    return ROTOR_OK;
}

rotor_status rotor_handoff_traffic(const rotor_handoff *h, const rotor_place *consumer, int t, int64_t *recv,
                                   int64_t *max_recv, int64_t *send, int64_t *max_send) {
    rotor_handoff_receive(h, consumer, t, recv, max_recv);
    memset(send, 0, (size_t)h->cores * sizeof *send);
    traffic tr = {.send = send};
    const rotor_plan_info *info = rotor_place_info(consumer);
    for (int64_t c = 0; c < info->cores; c++) {
        int64_t lo[ROTOR_MAX_DIMS], hi[ROTOR_MAX_DIMS];
        if (!rotor_handoff_need(consumer, t, c, lo, hi)) continue;
        tr.dst = c;
        rotor_handoff_sources(h, lo, hi, count_send, &tr);
    }
    *max_send = 0;
    for (int64_t p = 0; p < h->cores; p++)
        if (send[p] > *max_send) *max_send = send[p];
    return ROTOR_OK;
}
