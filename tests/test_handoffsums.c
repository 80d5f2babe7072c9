/* test_handoffsums.c — a hand-off's traffic by sums over the consumer's
 * intervals (src/op/handoff.c, "the traffic by sums"; docs/compile.md,
 * "Counting the sends") against the source-by-source walk it replaces, on
 * many producer and consumer plans drawn from fixed seeds: 2-d and 4-d
 * outputs, reduction groups, padding, temporal factors, and consumers
 * element for element, through convolution windows (plain, strided,
 * padded) and through views that reverse, stride, fix, permute or nest
 * several dimensions on one. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/base/divisors.h"
#include "rotor/op/emu.h"
#include "rotor/op/handoff.h"
#include "rotor/op/place.h"
#include "fixtures.h"

/* ---- drawing ------------------------------------------------------------- */

/* A 64-bit linear congruential generator (Knuth's MMIX constants), its high
 * bits: a fixed seed draws the same plans on every run. */
static uint64_t lcg_next(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

/* A whole number in [lo, hi]. */
static int64_t draw(uint64_t *s, int64_t lo, int64_t hi) {
    return lo + (int64_t)(lcg_next(s) % (uint64_t)(hi - lo + 1));
}

/* ---- plans --------------------------------------------------------------- */

/* What a view may do (view_traits): a negative step, a step above 1, a
 * step of 0, several tensor dimensions on one output dimension, an output
 * dimension no tensor dimension moves (a fixed index), coordinates outside
 * the output (padding). */
enum { NEGATIVE, STRIDED, ZERO, SEVERAL, FIXED, PADDING, VIEW_TRAITS };
static const char *const trait_name[VIEW_TRAITS] = {"negative", "strided", "zero", "several", "fixed", "padding"};

/* What the pairs met, for the test's floors (so it cannot pass on a
 * handful of trivial pairs). */
typedef struct tally {
    int plans, rejected;   /* plans drawn; of them refused by rotor_plan_derive or rotor_place_make */
    int unmatched;         /* pairs rotor_handoff_matches refused */
    int pairs, summed;     /* pairs compared; of them priced by sums */
    int moved;             /* pairs where some producer core sends */
    /* of the pairs priced by sums: */
    int groups;            /* the producer has reduction groups (R_Y > 1) */
    int past;              /* ... and a member whose chunk starts at or past the partition's end */
    int padded;            /* the producer pads its output (F_op does not divide an extent) */
    int temporal;          /* some f_t > 1 in either plan */
    int more, fewer;       /* consumer cores more / fewer than producer cores */
    int uneven;            /* the consumer's step-0 origins repeat unevenly along a dimension */
    int viewed;            /* read through a view */
    int idle;              /* some producer core holds no real element (its partition all padding) */
    int needless;          /* some consumer core needs no real element */
    int traits[VIEW_TRAITS]; /* read through a view with each trait (view_traits) */
} tally;

/* Draws a plan for x->e into x->p: F_op[a] in [1, min(E_a, fmax)] (often
 * not dividing E_a: padding), at most cap cores; for each tensor, with
 * probability 1/3, f_t along one of its axes a divisor above 1 of its
 * sharing degree (alignment may still refuse it); a random loop order.
 * Derives and places it; false (nothing to free) when either refuses. */
static bool draw_plan(placed_plan *x, uint64_t *s, int64_t fmax, int64_t cap, const rotor_chip *chip, tally *t) {
    rotor_plan_init(&x->e, &x->p);
    int64_t cores = 1;
    for (int a = 0; a < x->e.naxes; a++) {
        int64_t top = x->e.extent[a] < fmax ? x->e.extent[a] : fmax;
        x->p.fop[a] = draw(s, 1, top);
        cores *= x->p.fop[a];
    }
    while (cores > cap) { /* halve the largest factor */
        int big = 0;
        for (int a = 1; a < x->e.naxes; a++)
            if (x->p.fop[a] > x->p.fop[big]) big = a;
        cores /= x->p.fop[big];
        x->p.fop[big] = (x->p.fop[big] + 1) / 2;
        cores *= x->p.fop[big];
    }
    for (int u = 0; u < x->e.ntensors; u++) {
        if (draw(s, 0, 2)) continue;
        const rotor_tensor *tx = &x->e.tensors[u];
        int64_t share = 1;
        int own[ROTOR_MAX_AXES], nown = 0;
        for (int a = 0; a < x->e.naxes; a++) {
            if (tx->has_axis[a]) own[nown++] = a;
            else share *= x->p.fop[a];
        }
        if (share < 2 || !nown) continue;
        int64_t div[ROTOR_MAX_DIVISORS]; /* ascending, 1 first: the draw takes one above 1 */
        int nd = rotor_divisors(share, div, ROTOR_MAX_DIVISORS);
        cr_assert(nd > 1);
        x->p.ft[u][own[draw(s, 0, nown - 1)]] = div[draw(s, 1, nd - 1)];
    }
    for (int a = 0; a < x->e.naxes; a++) x->p.order[a] = a;
    for (int a = x->e.naxes - 1; a > 0; a--) { /* Fisher-Yates */
        int b = (int)draw(s, 0, a), o = x->p.order[a];
        x->p.order[a] = x->p.order[b], x->p.order[b] = o;
    }
    t->plans++;
    rotor_error err = {{0}};
    x->pl = NULL;
    if (rotor_plan_derive(&x->e, chip, &x->p, &x->info, &err) != ROTOR_OK ||
        rotor_place_make(&x->e, &x->p, &x->info, &x->pl, &err) != ROTOR_OK) {
        t->rejected++;
        return false;
    }
    return true;
}

/* Whether some f_t of the plan exceeds 1. */
static bool temporal(const placed_plan *x) {
    for (int u = 0; u < x->e.ntensors; u++)
        for (int a = 0; a < x->e.naxes; a++)
            if (x->p.ft[u][a] > 1) return true;
    return false;
}

/* ---- consumers ----------------------------------------------------------- */

/* A consumer of the producer's output: its operator, extents and the view
 * its tensor 1 reads through (.set false: none, element for element). */
typedef struct consumer {
    char text[128], dims[128];
    rotor_view view;
} consumer;

/* The offset along an output dimension of extent g that puts a window
 * whose coordinates run from lo to hi (relative to the offset) somewhere
 * across [0, g), sometimes over its edge (padding). */
static int64_t place_window(uint64_t *s, int64_t lo, int64_t hi, int64_t g) {
    int64_t room = g - (hi - lo + 1);
    return -lo + draw(s, -2, room > 1 ? room : 1);
}

/* A view of the consumer tensor's nd dimensions (extents ext) onto the
 * hn output dimensions (extents g): each tensor dimension on a random
 * output dimension (several on one, or none on some: a fixed index),
 * steps nested along each output dimension, innermost first, each a
 * little beyond the span of those inside it, now and then negative, and
 * now and then 0 (the dimension reads one coordinate). */
static void nested_view(uint64_t *s, int nd, const int64_t *ext, int hn, const int64_t *g, rotor_view *v) {
    memset(v, 0, sizeof *v);
    v->set = true;
    for (int d = 0; d < nd; d++) v->dim[d] = (int8_t)draw(s, 0, hn - 1);
    for (int j = 0; j < hn; j++) {
        int on[ROTOR_MAX_DIMS], n = 0;
        for (int d = 0; d < nd; d++)
            if (v->dim[d] == j) on[n++] = d;
        for (int k = n - 1; k > 0; k--) { /* a random nesting order */
            int b = (int)draw(s, 0, k), o = on[k];
            on[k] = on[b], on[b] = o;
        }
        int64_t span = 0, lo = 0, hi = 0;
        for (int k = 0; k < n; k++) {
            int d = on[k];
            int64_t st = draw(s, 0, 9) ? span + draw(s, 1, 2) : 0;
            if (draw(s, 0, 3) == 0) st = -st;
            v->step[d] = st;
            int64_t reach = st * (ext[d] - 1);
            if (reach < 0) lo += reach;
            else hi += reach;
            span += (st < 0 ? -st : st) * (ext[d] - 1);
        }
        v->offset[j] = n ? place_window(s, lo, hi, g[j]) : draw(s, -1, g[j]);
    }
}

/* A consumer of 1 to 4 dimensions of extents 1 to top (a relu, or a
 * product that replicates its input along a new axis z) reading the
 * hn-dimensional output of extents g through a view nested at random. */
static void nested_consumer(uint64_t *s, int64_t top, int hn, const int64_t *g, consumer *c) {
    int nd = (int)draw(s, 1, 4);
    int64_t ext[4];
    char xs[16] = "", ys[16] = "", dims[96] = "";
    const char *names = "abcd";
    bool reduce = nd > 1 && draw(s, 0, 1);
    for (int d = 0; d < nd; d++) {
        ext[d] = draw(s, 1, top);
        size_t at = strlen(dims);
        snprintf(dims + at, sizeof dims - at, "%s%c=%lld", d ? "," : "", names[d], (long long)ext[d]);
        at = strlen(xs);
        snprintf(xs + at, sizeof xs - at, "%s%c", d ? "," : "", names[d]);
        if (!reduce || d < nd - 1) {
            at = strlen(ys);
            snprintf(ys + at, sizeof ys - at, "%s%c", d ? "," : "", names[d]);
        }
    }
    if (reduce) { /* Y lacks X's last axis and has z: X replicated along z */
        snprintf(c->text, sizeof c->text, "Y[%s,z] += X[%s] * Z[%c,z]", ys, xs, names[nd - 1]);
        snprintf(c->dims, sizeof c->dims, "%s,z=%lld", dims, (long long)draw(s, 1, 4));
    } else {
        snprintf(c->text, sizeof c->text, "Y[%s] = relu(X[%s])", ys, xs);
        snprintf(c->dims, sizeof c->dims, "%s", dims);
    }
    nested_view(s, nd, ext, hn, g, &c->view);
}

/* One step per dimension along the identity or a permutation of the
 * output's dimensions: steps 1, -1 or 2 (3 where strided is false: the
 * window's own stride), offsets placing each dimension's window (extents
 * ext) across the output's (g). */
static void step_view(uint64_t *s, int nd, const int *perm, const int64_t *ext, const int64_t *g, bool strided,
                      rotor_view *v) {
    static const int64_t steps[] = {1, 1, 1, -1, 2, -2};
    memset(v, 0, sizeof *v);
    v->set = true;
    for (int d = 0; d < nd; d++) {
        int j = perm[d];
        int64_t st = strided ? steps[draw(s, 0, 3)] : steps[draw(s, 0, 5)];
        v->dim[d] = (int8_t)j;
        v->step[d] = st;
        int64_t reach = st * (ext[d] - 1);
        v->offset[j] = place_window(s, reach < 0 ? reach : 0, reach > 0 ? reach : 0, g[j]);
    }
}

/* A consumer of a 2-d output of extents g (kinds 0-7). */
static void consumer2(uint64_t *s, const int64_t *g, consumer *c) {
    int64_t M = g[0], N = g[1];
    static const int id[2] = {0, 1};
    memset(c, 0, sizeof *c);
    switch (draw(s, 0, 7)) {
    case 0:
        snprintf(c->text, sizeof c->text, "Y[m,n] = relu(X[m,n])");
        snprintf(c->dims, sizeof c->dims, "m=%lld,n=%lld", (long long)M, (long long)N);
        break;
    case 1: /* rows whole on every core of a band split along p: runs of one box */
        snprintf(c->text, sizeof c->text, "E[m,p] += X[m,n] * F[n,p]");
        snprintf(c->dims, sizeof c->dims, "m=%lld,n=%lld,p=%lld", (long long)M, (long long)N, (long long)draw(s, 1, 6));
        break;
    case 2: { /* a window read through a view: padded, reversed, strided */
        int64_t h = draw(s, 1, M), w = draw(s, 1, N), kh = draw(s, 1, 3), kw = draw(s, 1, 3);
        int64_t ext[2] = {h + kh - 1, w + kw - 1};
        snprintf(c->text, sizeof c->text, "O[h,w] += I[h+kh,w+kw] * W[kh,kw]");
        snprintf(c->dims, sizeof c->dims, "h=%lld,w=%lld,kh=%lld,kw=%lld", (long long)h, (long long)w, (long long)kh,
                 (long long)kw);
        step_view(s, 2, id, ext, g, false, &c->view);
        break;
    }
    case 3: { /* a window element for element: its extents the output's */
        int64_t kh = draw(s, 1, M < 3 ? M : 3), kw = draw(s, 1, N < 3 ? N : 3);
        snprintf(c->text, sizeof c->text, "O[h,w] += I[h+kh,w+kw] * W[kh,kw]");
        snprintf(c->dims, sizeof c->dims, "h=%lld,w=%lld,kh=%lld,kw=%lld", (long long)(M - kh + 1),
                 (long long)(N - kw + 1), (long long)kh, (long long)kw);
        break;
    }
    case 4: { /* a stride-2 window element for element: 2 (h - 1) + kh = M */
        int64_t h = draw(s, 1, (M + 1) / 2), w = draw(s, 1, (N + 1) / 2);
        snprintf(c->text, sizeof c->text, "O[h,w] += I[2*h+kh,2*w+kw] * W[kh,kw]");
        snprintf(c->dims, sizeof c->dims, "h=%lld,w=%lld,kh=%lld,kw=%lld", (long long)h, (long long)w,
                 (long long)(M - 2 * h + 2), (long long)(N - 2 * w + 2));
        break;
    }
    case 5: { /* a stride-2 window through a view (padded) */
        int64_t h = draw(s, 1, M / 2 + 1), w = draw(s, 1, N / 2 + 1), kh = draw(s, 1, 3), kw = draw(s, 1, 3);
        int64_t ext[2] = {2 * (h - 1) + kh, 2 * (w - 1) + kw};
        snprintf(c->text, sizeof c->text, "O[h,w] += I[2*h+kh,2*w+kw] * W[kh,kw]");
        snprintf(c->dims, sizeof c->dims, "h=%lld,w=%lld,kh=%lld,kw=%lld", (long long)h, (long long)w, (long long)kh,
                 (long long)kw);
        step_view(s, 2, id, ext, g, true, &c->view);
        break;
    }
    case 6: { /* the heads of a fused projection: Q[b,g,i,j] on C[sb b + si i, sg g + sj j] */
        int64_t b = draw(s, 1, 3), gg = draw(s, 1, 3), i = draw(s, 1, 4), j = draw(s, 1, 4), p = draw(s, 1, 3);
        int64_t si = draw(s, 0, 3) ? 1 : 2, sj = draw(s, 0, 3) ? 1 : 2;
        int64_t sb = si * (i - 1) + draw(s, 1, 3), sg = sj * (j - 1) + draw(s, 1, 3);
        if (!draw(s, 0, 4)) sb = -sb;
        if (!draw(s, 0, 4)) sj = -sj;
        snprintf(c->text, sizeof c->text, "S[b,g,i,p] += Q[b,g,i,j] * F[j,p]");
        snprintf(c->dims, sizeof c->dims, "b=%lld,g=%lld,i=%lld,j=%lld,p=%lld", (long long)b, (long long)gg,
                 (long long)i, (long long)j, (long long)p);
        rotor_view *v = &c->view;
        v->set = true;
        v->dim[0] = 0, v->dim[1] = 1, v->dim[2] = 0, v->dim[3] = 1;
        v->step[0] = sb, v->step[1] = sg, v->step[2] = si, v->step[3] = sj;
        int64_t r0 = sb * (b - 1), r1 = sg * (gg - 1), r2 = si * (i - 1), r3 = sj * (j - 1);
        v->offset[0] = place_window(s, (r0 < 0 ? r0 : 0) + (r2 < 0 ? r2 : 0), (r0 > 0 ? r0 : 0) + (r2 > 0 ? r2 : 0), M);
        v->offset[1] = place_window(s, (r1 < 0 ? r1 : 0) + (r3 < 0 ? r3 : 0), (r1 > 0 ? r1 : 0) + (r3 > 0 ? r3 : 0), N);
        break;
    }
    default: /* 1 to 4 dimensions on the output's 2, nested at random */
        nested_consumer(s, 5, 2, g, c);
        break;
    }
}

/* A consumer of a 4-d output of extents g (B, F, H, W; kinds 0-6). */
static void consumer4(uint64_t *s, const int64_t *g, consumer *c) {
    int64_t B = g[0], F = g[1], H = g[2], W = g[3];
    memset(c, 0, sizeof *c);
    switch (draw(s, 0, 6)) {
    case 0:
        snprintf(c->text, sizeof c->text, "Y[b,c,h,w] = relu(X[b,c,h,w])");
        snprintf(c->dims, sizeof c->dims, "b=%lld,c=%lld,h=%lld,w=%lld", (long long)B, (long long)F, (long long)H,
                 (long long)W);
        break;
    case 1: { /* a convolution element for element */
        int64_t kh = draw(s, 1, H < 3 ? H : 3), kw = draw(s, 1, W < 3 ? W : 3);
        snprintf(c->text, sizeof c->text, "O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]");
        snprintf(c->dims, sizeof c->dims, "b=%lld,c=%lld,h=%lld,w=%lld,f=%lld,kh=%lld,kw=%lld", (long long)B,
                 (long long)F, (long long)(H - kh + 1), (long long)(W - kw + 1), (long long)draw(s, 1, 4),
                 (long long)kh, (long long)kw);
        break;
    }
    case 2: { /* a padded convolution through a view (windows also reversed or strided) */
        int64_t h = draw(s, 1, H), w = draw(s, 1, W), kh = draw(s, 1, 3), kw = draw(s, 1, 3);
        int64_t ext[4] = {B, F, h + kh - 1, w + kw - 1};
        static const int id[4] = {0, 1, 2, 3};
        snprintf(c->text, sizeof c->text, "O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]");
        snprintf(c->dims, sizeof c->dims, "b=%lld,c=%lld,h=%lld,w=%lld,f=%lld,kh=%lld,kw=%lld", (long long)B,
                 (long long)F, (long long)h, (long long)w, (long long)draw(s, 1, 4), (long long)kh, (long long)kw);
        step_view(s, 4, id, ext, g, false, &c->view);
        if (draw(s, 0, 1)) /* batch and channels element for element */
            for (int d = 0; d < 2; d++) c->view.step[d] = 1, c->view.offset[d] = 0;
        break;
    }
    case 3: { /* a stride-2 convolution element for element */
        int64_t h = draw(s, 1, (H + 1) / 2), w = draw(s, 1, (W + 1) / 2);
        snprintf(c->text, sizeof c->text, "O[b,f,h,w] += I[b,c,2*h+kh,2*w+kw] * W[f,c,kh,kw]");
        snprintf(c->dims, sizeof c->dims, "b=%lld,c=%lld,h=%lld,w=%lld,f=%lld,kh=%lld,kw=%lld", (long long)B,
                 (long long)F, (long long)h, (long long)w, (long long)draw(s, 1, 4), (long long)(H - 2 * h + 2),
                 (long long)(W - 2 * w + 2));
        break;
    }
    case 4: { /* a stride-2 convolution through a padding view */
        int64_t h = draw(s, 1, H / 2 + 1), w = draw(s, 1, W / 2 + 1), kh = draw(s, 1, 3), kw = draw(s, 1, 3);
        snprintf(c->text, sizeof c->text, "O[b,f,h,w] += I[b,c,2*h+kh,2*w+kw] * W[f,c,kh,kw]");
        snprintf(c->dims, sizeof c->dims, "b=%lld,c=%lld,h=%lld,w=%lld,f=%lld,kh=%lld,kw=%lld", (long long)B,
                 (long long)F, (long long)h, (long long)w, (long long)draw(s, 1, 4), (long long)kh, (long long)kw);
        rotor_view *v = &c->view;
        v->set = true;
        for (int d = 0; d < 4; d++) v->dim[d] = (int8_t)d, v->step[d] = 1;
        v->offset[2] = -draw(s, 0, 1), v->offset[3] = -draw(s, 0, 1);
        break;
    }
    case 5: { /* a permutation of the dimensions (NHWC of NCHW, and others) */
        int perm[4] = {0, 1, 2, 3};
        for (int k = 3; k > 0; k--) {
            int b = (int)draw(s, 0, k), o = perm[k];
            perm[k] = perm[b], perm[b] = o;
        }
        int64_t ext[4];
        for (int d = 0; d < 4; d++) ext[d] = draw(s, 0, 2) ? g[perm[d]] : draw(s, 1, g[perm[d]]);
        snprintf(c->text, sizeof c->text, "Y[a,b,c,d] = relu(X[a,b,c,d])");
        snprintf(c->dims, sizeof c->dims, "a=%lld,b=%lld,c=%lld,d=%lld", (long long)ext[0], (long long)ext[1],
                 (long long)ext[2], (long long)ext[3]);
        step_view(s, 4, perm, ext, g, false, &c->view);
        break;
    }
    default: /* 1 to 4 dimensions on the output's 4, nested at random */
        nested_consumer(s, 4, 4, g, c);
        break;
    }
}

/* ---- the comparison ------------------------------------------------------ */

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Whether the consumer's step-0 origins of tensor 1 lie on unequal
 * numbers of cores along some dimension (the sums' weights u not all 1). */
static bool uneven_starts(const placed_plan *q) {
    int nd = q->e.tensors[1].ndims;
    int64_t nc = q->info.cores, *org = malloc((size_t)(nc * nd) * sizeof *org), *col = malloc((size_t)nc * sizeof *col);
    cr_assert(org && col);
    rotor_place_partitions_at_0(q->pl, 1, org);
    bool uneven = false;
    for (int d = 0; d < nd && !uneven; d++) {
        for (int64_t c = 0; c < nc; c++) col[c] = org[c * nd + d];
        qsort(col, (size_t)nc, sizeof *col, cmp_i64);
        int64_t lo = INT64_MAX, hi = 0;
        for (int64_t c = 0; c < nc;) {
            int64_t r = c;
            while (r < nc && col[r] == col[c]) r++;
            lo = r - c < lo ? r - c : lo, hi = r - c > hi ? r - c : hi;
            c = r;
        }
        uneven = lo < hi;
    }
    free(org), free(col);
    return uneven;
}

/* The traits of view (read by tensor 1 of q, onto h's output) into t. */
static void view_traits(const rotor_view *view, const placed_plan *q, const placed_plan *p, tally *t) {
    int nd = q->e.tensors[1].ndims, hn = p->e.tensors[0].ndims, on[ROTOR_MAX_DIMS] = {0};
    int64_t gx[ROTOR_MAX_DIMS], gy[ROTOR_MAX_DIMS], lo[ROTOR_MAX_DIMS], hi[ROTOR_MAX_DIMS];
    bool has[VIEW_TRAITS] = {false};
    rotor_emu_tensor_elems(&q->e, 1, gx);
    rotor_emu_tensor_elems(&p->e, 0, gy);
    for (int j = 0; j < hn; j++) lo[j] = hi[j] = view->offset[j];
    for (int d = 0; d < nd; d++) {
        int64_t st = view->step[d], reach = st * (gx[d] - 1);
        has[NEGATIVE] |= st < 0 && gx[d] > 1;
        has[STRIDED] |= (st > 1 || st < -1) && gx[d] > 1;
        has[ZERO] |= st == 0 && gx[d] > 1;
        on[view->dim[d]]++;
        if (reach < 0) lo[view->dim[d]] += reach;
        else hi[view->dim[d]] += reach;
    }
    for (int j = 0; j < hn; j++) {
        has[SEVERAL] |= on[j] > 1;
        has[FIXED] |= on[j] == 0;
        has[PADDING] |= lo[j] < 0 || hi[j] >= gy[j];
    }
    for (int k = 0; k < VIEW_TRAITS; k++) t->traits[k] += has[k];
}

/* Whether some core of producer p holds no real element of its output
 * after the plan (its final partition starts past an extent). */
static bool idle_producer(const placed_plan *p, const rotor_handoff *h) {
    int64_t g[ROTOR_MAX_DIMS], org[ROTOR_MAX_DIMS];
    rotor_emu_tensor_elems(&p->e, 0, g);
    for (int64_t c = 0; c < rotor_handoff_cores(h); c++) {
        rotor_place_partition(p->pl, 0, c, p->info.total_steps - 1, org);
        for (int d = 0; d < p->e.tensors[0].ndims; d++)
            if (org[d] >= g[d]) return true;
    }
    return false;
}

/* Whether some core of consumer q needs no real element of tensor 1. */
static bool needless_consumer(const placed_plan *q) {
    int64_t lo[ROTOR_MAX_DIMS], hi[ROTOR_MAX_DIMS];
    for (int64_t c = 0; c < q->info.cores; c++)
        if (!rotor_handoff_need(q->pl, 1, c, lo, hi)) return true;
    return false;
}

/* The hand-off h of producer p into consumer q's tensor 1 through view:
 * rotor_handoff_traffic_in by sums (memo sums, its sums on) and source by
 * source (memo walk, its sums off) give the same recv, send and maxima,
 * and the receives rotor_handoff_receive's.  Counts the pair into t. */
static void compare(const rotor_handoff *h, const placed_plan *p, const placed_plan *q, const rotor_view *view,
                    rotor_handoff_memo *sums, rotor_handoff_memo *walk, tally *t, const char *what) {
    int64_t nc = q->info.cores, np = rotor_handoff_cores(h);
    int64_t *r[3], *sd[2], mr[3], ms[2];
    for (int k = 0; k < 3; k++) r[k] = malloc((size_t)nc * sizeof *r[k]);
    for (int k = 0; k < 2; k++) sd[k] = malloc((size_t)np * sizeof *sd[k]);
    cr_assert(r[0] && r[1] && r[2] && sd[0] && sd[1]);
    for (int64_t c = 0; c < np; c++) sd[0][c] = sd[1][c] = -7; /* every entry must be written */
    int64_t before = rotor_handoff_memo_sums(sums), walked = rotor_handoff_memo_sums(walk);
    cr_assert_eq(rotor_handoff_traffic_in(h, q->pl, 1, view, sums, r[0], &mr[0], sd[0], &ms[0]), ROTOR_OK, "%s", what);
    cr_assert_eq(rotor_handoff_traffic_in(h, q->pl, 1, view, walk, r[1], &mr[1], sd[1], &ms[1]), ROTOR_OK, "%s", what);
    cr_assert_eq(rotor_handoff_memo_sums(walk), walked, "%s: the walk's memo summed", what);
    rotor_handoff_receive(h, q->pl, 1, view, r[2], &mr[2]);
    for (int64_t c = 0; c < nc; c++) {
        cr_assert_eq(r[0][c], r[1][c], "%s: recv[%lld] %lld by sums, %lld by the walk", what, (long long)c,
                     (long long)r[0][c], (long long)r[1][c]);
        cr_assert_eq(r[1][c], r[2][c], "%s: recv[%lld] against rotor_handoff_receive", what, (long long)c);
    }
    bool moved = false;
    for (int64_t c = 0; c < np; c++) {
        cr_assert_eq(sd[0][c], sd[1][c], "%s: send[%lld] %lld by sums, %lld by the walk", what, (long long)c,
                     (long long)sd[0][c], (long long)sd[1][c]);
        cr_assert_geq(sd[0][c], 0, "%s: send[%lld]", what, (long long)c);
        moved |= sd[0][c] > 0;
    }
    cr_assert(mr[0] == mr[1] && mr[1] == mr[2], "%s: max_recv %lld, %lld, %lld", what, (long long)mr[0],
              (long long)mr[1], (long long)mr[2]);
    cr_assert_eq(ms[0], ms[1], "%s: max_send %lld by sums, %lld by the walk", what, (long long)ms[0], (long long)ms[1]);
    t->pairs++;
    t->moved += moved;
    if (rotor_handoff_memo_sums(sums) > before) {
        const rotor_expr *pe = &p->e;
        int64_t pelems = 1, gs = p->info.rings[0];
        for (int d = 0; d < pe->tensors[0].ndims; d++) pelems *= p->info.part[0][d];
        int64_t chunk = (pelems + gs - 1) / gs;
        bool padded = false;
        for (int a = 0; a < pe->naxes; a++) padded |= pe->tensors[0].has_axis[a] && p->info.padded[a] > pe->extent[a];
        t->summed++;
        t->groups += gs > 1;
        t->past += gs > 1 && (gs - 1) * chunk >= pelems;
        t->padded += padded;
        t->temporal += temporal(p) || temporal(q);
        t->more += nc > np;
        t->fewer += nc < np;
        t->uneven += uneven_starts(q);
        t->viewed += view != NULL;
        if (view) view_traits(view, q, p, t);
        t->idle += idle_producer(p, h);
        t->needless += needless_consumer(q);
    }
    for (int k = 0; k < 3; k++) free(r[k]);
    for (int k = 0; k < 2; k++) free(sd[k]);
}

/* Producers of the output rank nd (2: a MatMul; 4: a 1x1 or a 3x3-ish
 * convolution, its reduction axes c, kh, kw), each with `per` consumers,
 * from seed: every pair that plans and matches compared (compare). */
static void run_pairs(int nd, uint64_t seed, int producers, int per, int scale, tally *t) {
    rotor_chip chip = mk2();
    uint64_t s = seed;
    rotor_handoff_memo *sums = rotor_handoff_memo_new(), *walk = rotor_handoff_memo_new();
    cr_assert(sums && walk);
    rotor_handoff_memo_use_sums(walk, false);
    for (int i = 0; i < producers; i++) {
        placed_plan p;
        char dims[128];
        const char *text;
        if (nd == 2) {
            text = "C[m,n] += A[m,k] * B[k,n]";
            snprintf(dims, sizeof dims, "m=%lld,k=%lld,n=%lld", (long long)draw(&s, 2, 14 * scale),
                     (long long)draw(&s, 1, 8), (long long)draw(&s, 2, 14 * scale));
        } else if (draw(&s, 0, 1)) {
            text = "O[b,f,h,w] += I[b,c,h,w] * W[f,c]";
            snprintf(dims, sizeof dims, "b=%lld,f=%lld,h=%lld,w=%lld,c=%lld", (long long)draw(&s, 1, 3),
                     (long long)draw(&s, 1, 6), (long long)draw(&s, 2, 8 * scale), (long long)draw(&s, 2, 8 * scale),
                     (long long)draw(&s, 1, 6));
        } else {
            text = "O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]";
            snprintf(dims, sizeof dims, "b=%lld,f=%lld,h=%lld,w=%lld,c=%lld,kh=%lld,kw=%lld", (long long)draw(&s, 1, 2),
                     (long long)draw(&s, 1, 5), (long long)draw(&s, 2, 8 * scale), (long long)draw(&s, 2, 8 * scale),
                     (long long)draw(&s, 1, 4), (long long)draw(&s, 1, 3), (long long)draw(&s, 1, 3));
        }
        p.e = make_expr(text, dims);
        if (!draw_plan(&p, &s, (nd == 2 ? 6 : 3) + 2 * (scale - 1), 256 * scale, &chip, t)) continue;
        rotor_handoff *h = handoff_of(&p);
        int64_t g[ROTOR_MAX_DIMS];
        rotor_emu_tensor_elems(&p.e, 0, g);
        for (int k = 0; k < per; k++) {
            consumer c;
            placed_plan q;
            if (nd == 2) consumer2(&s, g, &c);
            else consumer4(&s, g, &c);
            q.e = make_expr(c.text, c.dims);
            if (!draw_plan(&q, &s, (nd == 2 ? 5 : 3) + 2 * (scale - 1), 256 * scale, &chip, t)) continue;
            const rotor_view *view = c.view.set ? &c.view : NULL;
            if (!rotor_handoff_matches(h, q.pl, 1, view)) {
                t->unmatched++;
                rotor_place_free(q.pl);
                continue;
            }
            char what[1024];
            snprintf(what, sizeof what,
                     "seed %llu producer %d (%s [%s]) consumer %d (%s [%s]), view dim %d %d %d %d "
                     "step %lld %lld %lld %lld offset %lld %lld %lld %lld",
                     (unsigned long long)seed, i, text, dims, k, c.text, c.dims, c.view.dim[0], c.view.dim[1],
                     c.view.dim[2], c.view.dim[3], (long long)c.view.step[0], (long long)c.view.step[1],
                     (long long)c.view.step[2], (long long)c.view.step[3], (long long)c.view.offset[0],
                     (long long)c.view.offset[1], (long long)c.view.offset[2], (long long)c.view.offset[3]);
            compare(h, &p, &q, view, sums, walk, t, what);
            rotor_place_free(q.pl);
        }
        rotor_handoff_free(h);
        rotor_place_free(p.pl);
    }
    rotor_handoff_memo_free(sums);
    rotor_handoff_memo_free(walk);
    cr_log_info("%d-d: plans %d (refused %d), unmatched %d, pairs %d, summed %d, moved %d; of the summed: groups %d "
                "(past the end %d), padded %d, temporal %d, more consumer cores %d, fewer %d, uneven %d, idle %d, "
                "needless %d, viewed %d (negative %d, strided %d, zero %d, several %d, fixed %d, padding %d)",
                nd, t->plans, t->rejected, t->unmatched, t->pairs, t->summed, t->moved, t->groups, t->past, t->padded,
                t->temporal, t->more, t->fewer, t->uneven, t->idle, t->needless, t->viewed, t->traits[NEGATIVE],
                t->traits[STRIDED], t->traits[ZERO], t->traits[SEVERAL], t->traits[FIXED], t->traits[PADDING]);
}

/* The floors every run must reach: enough pairs, most of them by sums,
 * and every kind of pair among those. */
static void floors(const tally *t, int pairs) {
    cr_assert_geq(t->pairs, pairs, "only %d pairs compared", t->pairs);
    cr_assert_geq(t->summed * 4, t->pairs * 3, "only %d of %d pairs by sums", t->summed, t->pairs);
    cr_assert_geq(t->moved * 2, t->pairs, "only %d of %d pairs moved anything", t->moved, t->pairs);
    int least = t->pairs / 50;
    cr_assert_geq(t->groups, least, "%d summed pairs with reduction groups", t->groups);
    cr_assert_gt(t->past, 0, "no summed pair with a chunk past its partition");
    cr_assert_geq(t->padded, least, "%d summed pairs with a padded producer", t->padded);
    cr_assert_geq(t->temporal, least, "%d summed pairs with temporal factors", t->temporal);
    cr_assert_geq(t->more, least, "%d summed pairs with more consumer cores", t->more);
    cr_assert_geq(t->fewer, least, "%d summed pairs with fewer consumer cores", t->fewer);
    cr_assert_geq(t->uneven, least, "%d summed pairs with uneven starts", t->uneven);
    cr_assert_geq(t->viewed, least, "%d summed pairs through a view", t->viewed);
    cr_assert_geq(t->idle, least, "%d summed pairs with an idle producer core", t->idle);
    cr_assert_geq(t->needless, least, "%d summed pairs with a consumer core needing nothing", t->needless);
    for (int k = 0; k < VIEW_TRAITS; k++)
        cr_assert_geq(t->traits[k], least, "%d summed pairs through a view with trait %s", t->traits[k], trait_name[k]);
}

/* MatMul outputs (up to 42 x 42, F_op up to 10 per axis, k split: reduction
 * groups) read element for element, by a MatMul whose rows repeat along p,
 * through convolution windows (padded, reversed, stride 2), the heads of a
 * fused projection and random nested views of 1 to 4 dimensions: some
 * 7,000 pairs, every one by sums. */
Test(handoffsums, the_sums_give_the_walks_counts_on_random_two_dimensional_plans) {
    tally t = {0};
    run_pairs(2, 20261201, 150, 24, 1, &t);
    run_pairs(2, 977, 150, 24, 3, &t);
    floors(&t, 6000);
}

/* Convolution outputs (1x1 and windowed, reduction over c, kh and kw)
 * read element for element, by convolutions (plain, padded, stride 2),
 * through permutations of their dimensions and random nested views:
 * some 7,000 pairs, every one by sums. */
Test(handoffsums, the_sums_give_the_walks_counts_on_random_four_dimensional_plans) {
    tally t = {0};
    run_pairs(4, 4417, 150, 24, 1, &t);
    run_pairs(4, 31337, 150, 24, 3, &t);
    floors(&t, 6000);
}

