/* test_searchfast2.c — issue 45, second round: each search worker's memo of
 * tensor options (op/bound.c, tensor_options; op/searchint.h, opt_memo)
 * returns exactly what the dynamic program computes afresh.
 *
 * A tensor's options are a function of its own axes' extents L_a =
 * ceil(E_a / F_a) and of the product of the others' factors (share), and
 * the cap only filters them; the memo is keyed on (tensor, those extents,
 * share) and keeps the uncapped front, of which a search takes the prefix
 * under its cap.  The test walks every F_op
 * of a convolution (and a matmul) on the IPU Mk2 through one memo kept
 * across several caps, as a session's capped searches do, and compares
 * each F_op's strong memory floor, its time floor under the cap and every
 * tensor's options with those of a scratch that never memoises (the
 * unmemoised answer).  A memo keyed without share, or without a tensor's
 * factor, or not filtered by the cap, fails it. */
#include <criterion/criterion.h>

#include <string.h>

#include "fixtures.h"
#include "searchfix.h"
#include "rotor/op/cost.h"
#include "san.h"

typedef struct walk {
    ctx *c;
    knap_scratch *memo, *fresh;
    int64_t fop[ROTOR_MAX_AXES];
    int64_t fops, options; /* F_op compared, options compared */
} walk;

static knap_scratch *scratch(bool no_memo) {
    knap_scratch *ks = aligned_alloc(_Alignof(knap_scratch), sizeof *ks);
    cr_assert_not_null(ks);
    for (int k = 0; k < LAT_SLOTS; k++) ks->lat[k].share = 0;
    for (int k = 0; k < MEMO_SLOTS; k++) ks->memo[k].t = -1;
    ks->no_memo = no_memo;
    return ks;
}

static void compare_fop(walk *w) {
    const ctx *c = w->c;
    bool r1, r2;
    int64_t m1 = search_fop_strong_floor(c, w->memo, w->fop, -1, &r1);
    int64_t m2 = search_fop_strong_floor(c, w->fresh, w->fop, -1, &r2);
    cr_assert_eq(m1, m2, "cap %lld: strong floor %lld, afresh %lld", (long long)c->cap, (long long)m1,
                 (long long)m2);
    for (int t = 0; t < c->e->ntensors; t++) {
        cr_assert_eq(w->memo->nopt[t], w->fresh->nopt[t], "cap %lld tensor %d: %d options, afresh %d",
                     (long long)c->cap, t, w->memo->nopt[t], w->fresh->nopt[t]);
        for (int j = 0; j < w->memo->nopt[t]; j++) {
            cr_assert_eq(w->memo->po[t][j].bytes, w->fresh->po[t][j].bytes);
            cr_assert_eq(w->memo->po[t][j].time, w->fresh->po[t][j].time);
        }
        w->options += w->memo->nopt[t];
    }
    double t1 = search_cap_time_floor(c, w->memo, w->fop, r1, NULL);
    double t2 = search_cap_time_floor(c, w->fresh, w->fop, r2, NULL);
    cr_assert(t1 == t2 || (isinf(t1) && isinf(t2)), "cap %lld: time floor %g, afresh %g", (long long)c->cap, t1, t2);
    w->fops++;
}

/* fixture_each_fop's visit */
static void walk_fops_visit(void *arg) { compare_fop(arg); }

/* every F_op under each cap, the memo kept across caps (largest first and
 * then back up, as a session's searches go) */
static void memo_matches(const char *expr, const char *dims, int64_t min_options) {
    rotor_expr e = make_expr(expr, dims);
    rotor_chip chip = mk2();
    ctx c;
    searchfix_ctx(&c, &e, &chip, rotor_chip_cores(&chip));
    walk w = {.c = &c, .memo = scratch(false), .fresh = scratch(true)};
    /* Under the sanitizers (tests/san.h) three of the five caps: the whole
     * SRAM, the least, then back up; the same memo code, 60% of the walks.
     * The plain build walks all five. */
    const int64_t caps[] = {rotor_chip_sram(&chip), 65536, 12000, 6437, 200000};
    const int san_caps[] = {0, 3, 4};
    for (int k = 0; k < (ROTOR_TEST_SAN ? 3 : 5); k++) {
        c.cap = caps[ROTOR_TEST_SAN ? san_caps[k] : k];
        fixture_each_fop(w.c->e, w.fop, 0, c.cores, walk_fops_visit, &w);
    }
    cr_assert_gt(w.fops, 1000, "%lld F_op compared", (long long)w.fops);
    cr_assert_geq(w.options, min_options, "%lld options compared", (long long)w.options);
    free(w.memo);
    free(w.fresh);
}

Test(searchfast2, memoised_tensor_options_match_a_fresh_conv, .timeout = 240) {
    /* a small 3x3 convolution: every F_op of it, five caps */
    memo_matches("O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]", "b=2,c=16,h=14,kh=3,w=14,kw=3,f=32", 100000);
}

Test(searchfast2, memoised_tensor_options_match_a_fresh_matmul, .timeout = 240) {
    memo_matches("C[m,n] += A[m,k] * B[k,n]", "m=64,k=96,n=128", 10000);
}

/* ---- the options depend on a factor only through its extent ----
 *
 * The memo's key holds L_a = ceil(E_a / F_a), not F_a (issue 45): F_op
 * whose factors differ but whose tensor's extents and share agree read one
 * slot.  Every F_op of a convolution, each tensor's options computed afresh
 * (no memo): all the F_op of one key must have the same options, bit for
 * bit, and many keys must gather several factor vectors (else the key
 * change did nothing).  Options depending on F_a beyond L_a (a dynamic
 * program reading fop[a] * q instead of its ceiling) fail it. */
#define LKEY_SLOTS (1 << 18)
typedef struct lkey_entry {
    int t;
    int64_t l[ROTOR_MAX_AXES], share, f[ROTOR_MAX_AXES];
    int nopt;
    knap_opt opt[64];
} lkey_entry;

typedef struct lkey_walk {
    ctx *c;
    knap_scratch *fresh;
    int64_t fop[ROTOR_MAX_AXES];
    lkey_entry *v;
    int32_t *slot; /* 1 + entry, 0: empty */
    int64_t n, cap, compared, merged;
} lkey_walk;

static void lkey_visit(void *arg) {
    lkey_walk *w = arg;
    const ctx *c = w->c;
    const rotor_expr *e = c->e;
    bool ready;
    search_fop_strong_floor(c, w->fresh, w->fop, -1, &ready);
    cr_assert(ready);
    for (int t = 0; t < e->ntensors; t++) {
        lkey_entry k = {.t = t, .share = 1};
        for (int a = 0; a < e->naxes; a++) {
            if (e->tensors[t].has_axis[a]) {
                k.l[a] = (e->extent[a] + w->fop[a] - 1) / w->fop[a];
                k.f[a] = w->fop[a];
            } else {
                k.share *= w->fop[a];
            }
        }
        uint64_t h = (uint64_t)t * 0x9e3779b97f4a7c15u ^ (uint64_t)k.share * 0xff51afd7ed558ccdu;
        for (int a = 0; a < ROTOR_MAX_AXES; a++) h = (h ^ (uint64_t)k.l[a]) * 0x100000001b3u;
        uint32_t s = (uint32_t)(h ^ h >> 29) & (LKEY_SLOTS - 1);
        for (; w->slot[s]; s = (s + 1) & (LKEY_SLOTS - 1)) {
            lkey_entry *o = &w->v[w->slot[s] - 1];
            if (o->t != t || o->share != k.share || memcmp(o->l, k.l, sizeof k.l)) continue;
            cr_assert_eq(w->fresh->nopt[t], o->nopt, "tensor %d: %d options, %d at the same extents", t,
                         w->fresh->nopt[t], o->nopt);
            for (int j = 0; j < o->nopt; j++) {
                cr_assert_eq(w->fresh->po[t][j].bytes, o->opt[j].bytes);
                cr_assert_eq(w->fresh->po[t][j].time, o->opt[j].time);
            }
            w->compared++;
            w->merged += memcmp(o->f, k.f, sizeof k.f) != 0;
            break;
        }
        if (w->slot[s]) continue;
        cr_assert_lt(w->n, w->cap, "the test's table is full");
        cr_assert_leq(w->fresh->nopt[t], 64, "the test keeps 64 options");
        k.nopt = w->fresh->nopt[t];
        memcpy(k.opt, w->fresh->po[t], (size_t)k.nopt * sizeof *k.opt);
        w->v[w->n++] = k;
        w->slot[s] = (int32_t)w->n;
    }
}

static void options_follow_extents(const char *expr, const char *dims, int64_t min_merged) {
    rotor_expr e = make_expr(expr, dims);
    rotor_chip chip = mk2();
    ctx c;
    searchfix_ctx(&c, &e, &chip, rotor_chip_cores(&chip));
    c.cap = rotor_chip_sram(&chip);
    lkey_walk w = {.c = &c, .fresh = scratch(true), .cap = LKEY_SLOTS / 2};
    w.v = malloc((size_t)w.cap * sizeof *w.v);
    w.slot = calloc(LKEY_SLOTS, sizeof *w.slot);
    cr_assert(w.v && w.slot);
    fixture_each_fop(&e, w.fop, 0, c.cores, lkey_visit, &w);
    cr_assert_geq(w.merged, min_merged, "%lld of %lld lookups met another factor vector (%lld keys)",
                  (long long)w.merged, (long long)w.compared, (long long)w.n);
    cr_log_info("%lld of %lld lookups met another factor vector (%lld keys)", (long long)w.merged,
                (long long)w.compared, (long long)w.n);
    free(w.v);
    free(w.slot);
    free(w.fresh);
}

Test(searchfast2, options_depend_on_a_factor_only_through_its_extent_conv, .timeout = 240) {
    options_follow_extents("O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]", "b=2,c=16,h=14,kh=3,w=14,kw=3,f=32",
                           10000);
}

Test(searchfast2, options_depend_on_a_factor_only_through_its_extent_1x1_strided, .timeout = 240) {
    options_follow_extents("O[b,f,h,w] += I[b,c,2*h+kh,2*w+kw] * W[f,c,kh,kw]", "b=4,c=24,h=7,kh=1,w=7,kw=1,f=20",
                           10000);
}

/* ---- a pool's memo shared by the ctx of one tensor class ----
 *
 * A pool gives the tensors of its ctx classes by their description
 * (op/searchint.h, tensor_desc; search.c, pool_class), and a buffer set
 * keeps its memo from one ctx to the next.  Two 1x1 convolutions that
 * differ only in their input channels describe their output alike and
 * their input and weights not; one memo scratch walked over every F_op of
 * the first and then of the second (classes given as a pool gives them)
 * must answer each F_op of both as a scratch that never memoises. */
static void classes_as_a_pool(ctx *a, ctx *b) {
    int16_t next = 1;
    for (int t = 0; t < a->e->ntensors; t++) a->tclass[t] = next++;
    for (int t = 0; t < b->e->ntensors; t++) {
        tensor_desc db, da;
        search_tensor_desc(b, t, &db);
        b->tclass[t] = 0;
        for (int u = 0; u < a->e->ntensors && !b->tclass[t]; u++) {
            search_tensor_desc(a, u, &da);
            if (memcmp(&da, &db, sizeof da) == 0) b->tclass[t] = a->tclass[u];
        }
        if (!b->tclass[t]) b->tclass[t] = next++;
    }
}

Test(searchfast2, a_memo_shared_by_two_convolutions_matches_a_fresh_one, .timeout = 240) {
    const char *conv = "O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]";
    rotor_expr e1 = make_expr(conv, "b=4,c=16,h=7,kh=1,w=7,kw=1,f=24");
    rotor_expr e2 = make_expr(conv, "b=4,c=48,h=7,kh=1,w=7,kw=1,f=24");
    rotor_chip chip = mk2();
    ctx c1, c2;
    searchfix_ctx(&c1, &e1, &chip, rotor_chip_cores(&chip));
    searchfix_ctx(&c2, &e2, &chip, rotor_chip_cores(&chip));
    classes_as_a_pool(&c1, &c2);
    cr_assert_eq(c2.tclass[0], c1.tclass[0], "the outputs describe alike");
    cr_assert_neq(c2.tclass[1], c1.tclass[1], "the inputs do not");
    cr_assert_neq(c2.tclass[2], c1.tclass[2], "nor the weights");
    knap_scratch *memo = scratch(false), *fresh = scratch(true);
    walk w = {.memo = memo, .fresh = fresh};
    const int64_t caps[] = {rotor_chip_sram(&chip), 20000};
    for (int k = 0; k < 2; k++) {
        c1.cap = c2.cap = caps[k];
        w.c = &c1;
        fixture_each_fop(&e1, w.fop, 0, c1.cores, walk_fops_visit, &w);
        w.c = &c2;
        fixture_each_fop(&e2, w.fop, 0, c2.cores, walk_fops_visit, &w);
    }
    cr_assert_gt(w.fops, 10000, "%lld F_op compared", (long long)w.fops);
    free(memo);
    free(fresh);
}
