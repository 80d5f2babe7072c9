/* test_searchwindow.c — issue 45, thirty-fourth session: a tensor's ring
 * options (op/bound.c, tensor_options_run) for windows with an extent-1
 * term (1x1 convolutions: h+kh with kh = 1), which the dynamic program now
 * reads as the plain dimension of the other term (window_term), against a
 * brute force that knows nothing of that shortcut.
 *
 * For every F_op of small convolutions and every tensor X, b_X(Q) is the
 * least elements over every f_t^X vector with product Q (Q | P_X), each
 * axis's partition floored at ceil(E_a / (F_a f_a)) and each window's
 * extent 1 + sum c (l - 1) (op/bound.c's floor, docs/cost-model.md
 * "Bounds"); the options are the front of (bytes, tensor_bound) under the
 * cap, bytes ascending, time strictly falling.  The brute force enumerates
 * the f_t vectors directly.  A shortcut that read the wrong term, dropped
 * a window's stride or the other term's share of the extent, or took the
 * split with the smaller factor on the varying term (a floor made too
 * strong) fails it; so does one too weak.  Dimensions of extent 1 under
 * every ring size (dim_constant) are checked the same way: first, after
 * others, and making up a whole tensor.  (Skipping the first of them too
 * would differ only in options of the same bytes as ring 1's and, under
 * v1, slower: the front drops them, so no test here can see it; the code
 * keeps the first for any model.) */
#include <criterion/criterion.h>

#include <string.h>

#include "fixtures.h"
#include "searchfix.h"
#include "rotor/op/cost.h"

typedef struct brute {
    const ctx *c;
    int t;
    const int64_t *fop;
    int axes[ROTOR_MAX_AXES];
    int naxes;
    int64_t f[ROTOR_MAX_AXES];
    double least; /* elements, over the vectors of product q */
} brute;

static double brute_elems(const brute *b) {
    const rotor_expr *e = b->c->e;
    const rotor_tensor *x = &e->tensors[b->t];
    double elems = 1;
    for (int d = 0; d < x->ndims; d++) {
        const rotor_dim *dim = &x->dims[d];
        int64_t ext = 1;
        for (int k = 0; k < dim->nterms; k++) {
            int a = dim->axis[k];
            int64_t unit = b->fop[a] * b->f[a];
            ext += dim->coef[k] * ((e->extent[a] + unit - 1) / unit - 1);
        }
        elems *= (double)ext;
    }
    return elems;
}

/* every f_t vector over the tensor's axes i.. whose product is q */
static void brute_walk(brute *b, int i, int64_t q) {
    if (i == b->naxes) {
        if (q == 1) {
            double v = brute_elems(b);
            if (v < b->least) b->least = v;
        }
        return;
    }
    int a = b->axes[i];
    for (int64_t f = 1; f <= q; f++) {
        if (q % f) continue;
        b->f[a] = f;
        brute_walk(b, i + 1, q / f);
    }
    b->f[a] = 1;
}

typedef struct opt {
    int64_t bytes;
    double time;
} opt;

static int opt_cmp(const void *x, const void *y) {
    const opt *a = x, *b = y;
    if (a->bytes != b->bytes) return a->bytes < b->bytes ? -1 : 1;
    if (a->time != b->time) return a->time < b->time ? -1 : 1;
    return 0;
}

/* tensor t's options of F_op fop by brute force into v (the front) */
static int brute_options(const ctx *c, int t, const int64_t *fop, opt *v) {
    const rotor_expr *e = c->e;
    brute b = {.c = c, .t = t, .fop = fop};
    int64_t share = 1;
    for (int a = 0; a < e->naxes; a++) {
        b.f[a] = 1;
        if (e->tensors[t].has_axis[a]) b.axes[b.naxes++] = a;
        else share *= fop[a];
    }
    int n = 0;
    for (int64_t q = 1; q <= share; q++) {
        if (share % q) continue;
        b.least = INFINITY;
        brute_walk(&b, 0, q);
        double bytes = b.least * (double)c->chip->element_bytes;
        if (!(bytes <= (double)c->cap)) continue;
        v[n].bytes = (int64_t)bytes;
        v[n].time = c->m->tensor_bound(c->m, e, c->chip, t, v[n].bytes, q, share / q);
        n++;
    }
    qsort(v, (size_t)n, sizeof *v, opt_cmp);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (k == 0 || v[i].time < v[k - 1].time) v[k++] = v[i];
    return k;
}

typedef struct walk {
    ctx *c;
    knap_scratch *ks;
    int64_t fop[ROTOR_MAX_AXES];
    int64_t fops, options;
} walk;

static void check_fop(walk *w) {
    const ctx *c = w->c;
    bool ready;
    search_fop_strong_floor(c, w->ks, w->fop, -1, &ready);
    cr_assert(ready);
    opt v[MAX_DIVISORS];
    for (int t = 0; t < c->e->ntensors; t++) {
        int n = brute_options(c, t, w->fop, v);
        cr_assert_eq(w->ks->nopt[t], n, "%s tensor %d F_op %lld,%lld,%lld,%lld,%lld,%lld,%lld: %d options, brute %d",
                     c->e->text, t, (long long)w->fop[0], (long long)w->fop[1], (long long)w->fop[2],
                     (long long)w->fop[3], (long long)w->fop[4], (long long)w->fop[5], (long long)w->fop[6],
                     w->ks->nopt[t], n);
        for (int j = 0; j < n; j++) {
            cr_assert_eq(w->ks->po[t][j].bytes, v[j].bytes, "%s tensor %d option %d: %lld bytes, brute %lld",
                         c->e->text, t, j, (long long)w->ks->po[t][j].bytes, (long long)v[j].bytes);
            cr_assert_eq(w->ks->po[t][j].time, v[j].time);
        }
        w->options += n;
    }
    w->fops++;
}

/* fixture_each_fop's visit */
static void walk_fops_visit(void *arg) { check_fop(arg); }

/* every F_op of the expression on a 64-core Mk2, under two caps, each
 * tensor's options computed afresh (no memo) against the brute force */
static void options_match(const char *expr, const char *dims, int64_t min_fops) {
    rotor_expr e = make_expr(expr, dims);
    rotor_chip chip = mk2_small(64, 638976, 8192);
    ctx c;
    searchfix_ctx(&c, &e, &chip, rotor_chip_cores(&chip));
    knap_scratch *ks = aligned_alloc(_Alignof(knap_scratch), sizeof *ks);
    cr_assert_not_null(ks);
    for (int k = 0; k < LAT_SLOTS; k++) ks->lat[k].share = 0;
    for (int k = 0; k < MEMO_SLOTS; k++) ks->memo[k].t = -1;
    ks->no_memo = true;
    walk w = {.c = &c, .ks = ks};
    const int64_t caps[] = {rotor_chip_sram(&chip), 3000};
    for (int k = 0; k < 2; k++) {
        c.cap = caps[k];
        fixture_each_fop(w.c->e, w.fop, 0, c.cores, walk_fops_visit, &w);
    }
    cr_assert_geq(w.fops, min_fops, "%lld F_op checked", (long long)w.fops);
    cr_assert_gt(w.options, w.fops, "%lld options checked", (long long)w.options);
    free(ks);
}

Test(searchwindow, one_by_one_convolution_options_match_the_brute_force, .timeout = 240) {
    options_match("O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]", "b=4,c=12,h=6,kh=1,w=6,kw=1,f=8", 2000);
}

Test(searchwindow, strided_and_one_sided_windows_match_the_brute_force, .timeout = 240) {
    /* a stride on the varying term, a window whose first term has extent 1,
     * and one whose terms both vary (the pair loop) */
    options_match("O[b,f,h,w] += I[b,c,2*h+kh,kw+w] * W[f,c,kh,kw]", "b=4,c=6,h=6,kh=1,w=5,kw=1,f=8", 1000);
    options_match("O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]", "b=2,c=4,h=6,kh=3,w=6,kw=1,f=8", 1000);
}

Test(searchwindow, dimensions_of_extent_1_match_the_brute_force, .timeout = 240) {
    /* dimensions whose extent is 1 under every ring size (op/bound.c,
     * dim_constant): after others, first, and a tensor of nothing else */
    options_match("O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[kh,f,c,kw]", "b=4,c=1,h=6,kh=1,w=6,kw=1,f=8", 1000);
    options_match("O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]", "b=1,c=1,h=8,kh=1,w=6,kw=1,f=1", 40);
    /* an output of one element summed over k: every ring size the same
     * bytes, ring 1 the fastest under v1 */
    options_match("C[m,n] += A[m,k] * B[k,n]", "m=1,k=64,n=1", 40);
}
