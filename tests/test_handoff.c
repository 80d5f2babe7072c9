/* test_handoff.c — who holds which output element after a plan, and what a
 * consumer's plan receives (src/op/handoff.c; T10 §5; docs/compile.md,
 * "Hand-off"). */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "rotor/op/emu.h"
#include "rotor/op/handoff.h"
#include "fixtures.h"

/* rotor_handoff_sources' callback: elements per source core. */
static rotor_status tally(void *ctx, int64_t src, int64_t elems) {
    ((int64_t *)ctx)[src] += elems;
    return ROTOR_OK;
}

/* The sources of the box [lo, hi) of a 4-d output, counted per producer
 * core into from (np of them), each equal to what rotor_handoff_held says
 * the core holds; their sum, every element of the box once.  *s is the
 * box's set. */
static int64_t box_sources_held(rotor_handoff *h, const int64_t *lo, const int64_t *hi, int64_t *from,
                                rotor_handoff_set *s, size_t i, int m) {
    int64_t np = rotor_handoff_cores(h), sum = 0;
    rotor_handoff_map(h, NULL, 4, lo, hi, s);
    memset(from, 0, (size_t)np * sizeof *from);
    cr_assert_eq(rotor_handoff_sources(h, s, tally, from), ROTOR_OK);
    for (int64_t c = 0; c < np; c++) {
        cr_assert_eq(from[c], rotor_handoff_held(h, c, s), "producer %zu box %d core %lld", i, m, (long long)c);
        sum += from[c];
    }
    cr_assert_eq(sum, rotor_handoff_set_elems(h, s), "producer %zu box %d", i, m);
    return sum;
}

/* The plan F_op = fop (one per axis) with temporal factors ft[t][a] (NULL:
 * none), placed on chip. */
static void place_plan(placed_plan *x, const char *text, const char *dims, const int64_t *fop, const int64_t (*ft)[4],
                       const rotor_chip *chip) {
    x->e = make_expr(text, dims);
    rotor_plan_init(&x->e, &x->p);
    for (int a = 0; a < x->e.naxes; a++) x->p.fop[a] = fop[a];
    for (int t = 0; ft && t < x->e.ntensors; t++)
        for (int a = 0; a < x->e.naxes; a++)
            if (x->e.tensors[t].has_axis[a]) x->p.ft[t][a] = ft[t][a];
    rotor_error err = {{0}};
    cr_assert_eq(rotor_plan_derive(&x->e, chip, &x->p, &x->info, &err), ROTOR_OK, "%s: %s", text, err.msg);
    cr_assert_eq(rotor_place_make(&x->e, &x->p, &x->info, &x->pl, &err), ROTOR_OK, "%s: %s", text, err.msg);
}

#define MATMUL "C[m,n] += A[m,k] * B[k,n]"
#define RELU "Y[m,n] = relu(X[m,n])"

/* The 8x4x8 MatMul under F_op = fop placed into p, and two 8x8 Relus
 * reading its output under F_op = fa (into a) and fb (into b), on an
 * ipu-mk2: the MatMul's hand-off. */
static rotor_handoff *matmul_then_relus(const int64_t *fop, placed_plan *p, const int64_t *fa, placed_plan *a,
                                        const int64_t *fb, placed_plan *b) {
    rotor_chip chip = mk2();
    place_plan(p, MATMUL, "m=8,k=4,n=8", fop, NULL, &chip);
    place_plan(a, RELU, "m=8,n=8", fa, NULL, &chip);
    place_plan(b, RELU, "m=8,n=8", fb, NULL, &chip);
    return handoff_of(p);
}

static void free_all(rotor_handoff *h, placed_plan *p, placed_plan *a, placed_plan *b) {
    rotor_handoff_free(h);
    rotor_place_free(p->pl);
    rotor_place_free(a->pl);
    rotor_place_free(b->pl);
}

Test(handoff, same_partitions_receive_nothing_and_row_bands_receive_half) {
    placed_plan p, same, rows;
    rotor_handoff *h = matmul_then_relus((int64_t[]){2, 1, 2}, &p, (int64_t[]){2, 2}, &same, (int64_t[]){4, 1}, &rows);
    cr_assert(rotor_handoff_matches(h, same.pl, 1, NULL));
    int64_t recv[4], max;
    rotor_handoff_receive(h, same.pl, 1, NULL, recv, &max);
    for (int c = 0; c < 4; c++) cr_assert_eq(recv[c], 0, "core %d", c);
    cr_assert_eq(max, 0);
    /* a 2x8 band of rows needs 16 elements; its core holds a 4x4 block
     * that covers 2x4 of them */
    rotor_handoff_receive(h, rows.pl, 1, NULL, recv, &max);
    for (int c = 0; c < 4; c++) cr_assert_eq(recv[c], 8, "core %d: %lld", c, (long long)recv[c]);
    cr_assert_eq(max, 8);
    free_all(h, &p, &same, &rows);
}

/* A split reduction axis: the two cores reduce-scatter the 8x8 partial
 * sums, core 0 keeping rows 0-3 (flat 0..31), core 1 rows 4-7. */
Test(handoff, reduce_scatter_leaves_each_member_one_chunk) {
    placed_plan p, rows, cols;
    rotor_handoff *h = matmul_then_relus((int64_t[]){1, 2, 1}, &p, (int64_t[]){2, 1}, &rows, (int64_t[]){1, 2}, &cols);
    cr_assert_eq(rotor_handoff_holder(h, (int64_t[]){3, 7}), 0);
    cr_assert_eq(rotor_handoff_holder(h, (int64_t[]){4, 0}), 1);
    int64_t recv[2], max;
    rotor_handoff_receive(h, rows.pl, 1, NULL, recv, &max);
    cr_assert(recv[0] == 0 && recv[1] == 0);
    rotor_handoff_receive(h, cols.pl, 1, NULL, recv, &max);
    cr_assert(recv[0] == 16 && recv[1] == 16, "%lld %lld", (long long)recv[0], (long long)recv[1]);
    free_all(h, &p, &rows, &cols);
}

Test(handoff, a_view_with_other_extents_does_not_match) {
    rotor_chip chip = mk2();
    placed_plan p, other;
    place_plan(&p, MATMUL, "m=8,k=4,n=8", (int64_t[]){2, 1, 2}, NULL, &chip);
    place_plan(&other, RELU, "m=4,n=16", (int64_t[]){2, 2}, NULL, &chip);
    rotor_handoff *h = handoff_of(&p);
    cr_assert_not(rotor_handoff_matches(h, other.pl, 1, NULL));
    cr_assert_not(rotor_handoff_matches(h, other.pl, 0, NULL)); /* the output is no input */
    rotor_handoff_free(h);
    rotor_place_free(p.pl);
    rotor_place_free(other.pl);
}

/* Invariants over many producer and consumer plans, padding and rotation
 * included: every real element has exactly one holder, which the holder
 * query names; held counts agree with it; and what a consumer core receives
 * is exactly its needed elements held elsewhere. */
Test(handoff, every_element_has_one_holder_and_receive_counts_match_brute_force) {
    rotor_chip chip = mk2();
    static const int64_t prod_fop[][3] = {{2, 1, 3}, {2, 2, 2}, {1, 4, 1}, {3, 2, 1}, {1, 3, 2}, {4, 1, 1}};
    static const int64_t cons_fop[][3] = {{3, 1, 2}, {1, 2, 5}, {5, 1, 1}, {2, 2, 2}};
    /* producer: A rotates along k within the k-split cores */
    for (size_t i = 0; i < sizeof prod_fop / sizeof prod_fop[0]; i++) {
        placed_plan p;
        int64_t ft[3][4] = {{1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}};
        if (prod_fop[i][2] > 1) ft[1][1] = prod_fop[i][2]; /* A rotates over the n-split cores */
        place_plan(&p, MATMUL, "m=11,k=6,n=10", prod_fop[i], (const int64_t(*)[4])ft, &chip);
        rotor_handoff *h = handoff_of(&p);
        int64_t *count = calloc(110, sizeof *count);
        for (int64_t c = 0; c < p.info.cores; c++)
            for (int64_t m = 0; m < 11; m++)
                for (int64_t n = 0; n < 10; n++) {
                    int64_t lo[2] = {m, n}, hi[2] = {m + 1, n + 1};
                    if (rotor_handoff_held_box(h, c, lo, hi)) {
                        count[m * 10 + n]++;
                        cr_assert_eq(rotor_handoff_holder(h, lo), c, "plan %zu: (%lld,%lld)", i, (long long)m,
                                     (long long)n);
                    }
                }
        for (int k = 0; k < 110; k++) cr_assert_eq(count[k], 1, "plan %zu: element %d held %lld times", i, k, (long long)count[k]);
        free(count);
        for (size_t j = 0; j < sizeof cons_fop / sizeof cons_fop[0]; j++) {
            placed_plan q; /* the consumer reads C as its A */
            place_plan(&q, "E[m,p] += C[m,n] * F[n,p]", "m=11,n=10,p=7", cons_fop[j], NULL, &chip);
            cr_assert(rotor_handoff_matches(h, q.pl, 1, NULL));
            int64_t recv[64], max, want_max = 0;
            rotor_handoff_receive(h, q.pl, 1, NULL, recv, &max);
            for (int64_t c = 0; c < q.info.cores; c++) {
                int64_t lo[2], hi[2], want = 0, from[64] = {0}, brute[64] = {0};
                if (rotor_handoff_need(q.pl, 1, c, lo, hi))
                    for (int64_t m = lo[0]; m < hi[0]; m++)
                        for (int64_t n = lo[1]; n < hi[1]; n++) {
                            int64_t src = rotor_handoff_holder(h, (int64_t[]){m, n});
                            want += src != c;
                            brute[src]++;
                        }
                cr_assert_eq(recv[c], want, "plans %zu/%zu core %lld", i, j, (long long)c);
                cr_assert_eq(rotor_handoff_sources_box(h, lo, hi, tally, from), ROTOR_OK);
                for (int k = 0; k < 64; k++)
                    cr_assert_eq(from[k], brute[k], "plans %zu/%zu core %lld: source %d", i, j, (long long)c, k);
                if (want > want_max) want_max = want;
            }
            cr_assert_eq(max, want_max);
            rotor_place_free(q.pl);
        }
        rotor_handoff_free(h);
        rotor_place_free(p.pl);
    }
}

/* The chains' producer: the 12 x 8 by 8 x 9 MatMul under F_op = fop placed
 * into p and run on emulated cores of chip with random inputs from `seed`
 * (into pin; pin[1] and pin[2] allocated); its output C, 12 x 9, allocated. */
static float *run_producer(const int64_t *fop, uint64_t seed, const rotor_chip *chip, placed_plan *p, float *pin[3]) {
    place_plan(p, MATMUL, "m=12,k=8,n=9", fop, NULL, chip);
    pin[0] = NULL;
    pin[1] = malloc(12 * 8 * sizeof(float));
    pin[2] = malloc(8 * 9 * sizeof(float));
    float *c = malloc(12 * 9 * sizeof(float));
    rotor_emu_random_inputs(&p->e, seed, pin);
    rotor_emu_result res;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_emu_run(p->pl, chip, NULL, (const float *const *)pin, c, &res, &err), ROTOR_OK, "%s", err.msg);
    return c;
}

/* Frees a chain: the producer's inputs pin and output c, its hand-off h and
 * the placements p and q. */
static void free_chain(float *pin[3], float *c, rotor_handoff *h, placed_plan *p, placed_plan *q) {
    free(pin[1]);
    free(pin[2]);
    free(c);
    rotor_handoff_free(h);
    rotor_place_free(p->pl);
    rotor_place_free(q->pl);
}

/* The emulator proves a transition on real data: the producer's plan runs,
 * each core keeps what the hand-off says it holds, every consumer core
 * assembles its step-0 partition from its own elements and the holders'
 * (each named holder must hold the element), and the consumer's plan then
 * computes the chain's reference. */
Test(handoff, emulated_chain_moves_the_producer_partitions_into_the_consumer_partitions) {
    rotor_chip chip = mk2();
    placed_plan p, q;
    float *pin[3], *c = run_producer((int64_t[]){2, 2, 3}, 11, &chip, &p, pin);
    place_plan(&q, "E[m,p] += C[m,n] * F[n,p]", "m=12,n=9,p=5", (int64_t[]){4, 1, 2}, NULL, &chip);
    rotor_error err = {{0}};
    rotor_emu_result res;

    /* what each producer core holds: a copy of the output masked to its elements */
    rotor_handoff *h = handoff_of(&p);
    float *held = calloc((size_t)p.info.cores * 108, sizeof *held);
    bool *has = calloc((size_t)p.info.cores * 108, sizeof *has);
    for (int64_t core = 0; core < p.info.cores; core++)
        for (int64_t k = 0; k < 108; k++) {
            int64_t lo[2] = {k / 9, k % 9}, hi[2] = {k / 9 + 1, k % 9 + 1};
            if (rotor_handoff_held_box(h, core, lo, hi)) {
                held[core * 108 + k] = c[k];
                has[core * 108 + k] = true;
            }
        }
    /* the transition: each consumer core gathers its partition from holders */
    int64_t recv[8], max, moved_max = 0;
    rotor_handoff_receive(h, q.pl, 1, NULL, recv, &max);
    for (int64_t core = 0; core < q.info.cores; core++) {
        int64_t lo[2], hi[2], moved = 0;
        cr_assert(rotor_handoff_need(q.pl, 1, core, lo, hi));
        for (int64_t m = lo[0]; m < hi[0]; m++)
            for (int64_t n = lo[1]; n < hi[1]; n++) {
                int64_t src = rotor_handoff_holder(h, (int64_t[]){m, n});
                cr_assert(src >= 0 && has[src * 108 + m * 9 + n], "core %lld: (%lld,%lld) not on %lld",
                          (long long)core, (long long)m, (long long)n, (long long)src);
                cr_assert_eq(held[src * 108 + m * 9 + n], c[m * 9 + n]);
                moved += src != core;
            }
        cr_assert_eq(moved, recv[core]);
        if (moved > moved_max) moved_max = moved;
    }
    cr_assert_eq(max, moved_max);
    cr_assert_gt(max, 0, "the two plans differ: something moves");

    /* the consumer runs on what arrived and matches the chain's reference */
    float *qin[3] = {NULL, malloc(108 * sizeof(float)), malloc(9 * 5 * sizeof(float))};
    rotor_emu_random_inputs(&q.e, 12, qin);
    memcpy(qin[1], c, 108 * sizeof(float)); /* C as the hand-off delivered it */
    float *e = malloc(60 * sizeof(float));
    double *ref = malloc(60 * sizeof(double)), *mag = malloc(60 * sizeof(double));
    cr_assert_eq(rotor_emu_run(q.pl, &chip, NULL, (const float *const *)qin, e, &res, &err), ROTOR_OK, "%s", err.msg);
    double *cref = malloc(108 * sizeof(double)), *cmag = malloc(108 * sizeof(double));
    cr_assert_eq(rotor_emu_reference(&p.e, (const float *const *)pin, cref, cmag, &err), ROTOR_OK, "%s", err.msg);
    float *cf = malloc(108 * sizeof(float));
    for (int k = 0; k < 108; k++) cf[k] = (float)cref[k];
    const float *rin[3] = {NULL, cf, qin[2]};
    cr_assert_eq(rotor_emu_reference(&q.e, rin, ref, mag, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_leq(rotor_emu_max_error(&q.e, e, ref, mag), ROTOR_EMU_TOLERANCE);
    free(cf);
    free(cref);
    free(cmag);
    free(ref);
    free(mag);
    free(e);
    free(qin[1]);
    free(qin[2]);
    free(held);
    free(has);
    free_chain(pin, c, h, &p, &q);
}

/* A consumer reading the producer's output through a view: per core, the
 * elements received and their sources equal a brute force that maps every
 * element of the core's step-0 box through the view, drops the padding,
 * and counts each output element once. */
typedef struct view_case {
    const char *text, *dims;
    int naxes;
    int64_t fop[3][5];
    rotor_view view;
} view_case;

Test(handoff, views_receive_what_a_brute_force_maps) {
    rotor_chip chip = mk2();
    static const view_case cases[] = {
        /* heads: Q[b,g,i,j] is C[6b + i, 3 + 3g + j] (a fused projection's column block) */
        {"S[b,g,i,p] += Q[b,g,i,j] * F[j,p]", "b=2,g=2,i=6,p=4,j=3", 5,
         {{2, 1, 3, 1, 1}, {1, 2, 2, 2, 1}, {2, 2, 1, 1, 3}},
         {.set = true, .dim = {0, 1, 0, 1}, .step = {6, 3, 1, 1}, .offset = {0, 3}}},
        /* a padded 3x3 window from -1 */
        {"O[h,w] += I[h+kh,w+kw] * W[kh,kw]", "h=12,w=12,kh=3,kw=3", 4,
         {{3, 2, 1, 1}, {1, 3, 2, 1}, {2, 2, 3, 1}},
         {.set = true, .dim = {0, 1}, .step = {1, 1}, .offset = {-1, -1}}},
        /* rows reversed */
        {"E[m,p] += X[m,n] * F[n,p]", "m=12,p=5,n=12", 3, {{3, 1, 2}, {1, 5, 1}, {4, 1, 3}},
         {.set = true, .dim = {0, 1}, .step = {-1, 1}, .offset = {11, 0}}},
        /* odd rows, columns 2 apart from 1 (and the last one past the edge) */
        {"E[m,p] += X[m,n] * F[n,p]", "m=6,p=5,n=6", 3, {{3, 1, 2}, {2, 1, 1}, {1, 5, 3}},
         {.set = true, .dim = {0, 1}, .step = {2, 2}, .offset = {1, 1}}},
    };
    static const int64_t prod_fop[][3] = {{2, 1, 3}, {2, 2, 2}, {3, 4, 1}};
    for (size_t i = 0; i < sizeof prod_fop / sizeof prod_fop[0]; i++) {
        placed_plan p;
        place_plan(&p, MATMUL, "m=12,k=6,n=12", prod_fop[i], NULL, &chip);
        rotor_handoff *h = handoff_of(&p);
        for (size_t v = 0; v < sizeof cases / sizeof cases[0]; v++)
            for (int f = 0; f < 3; f++) {
                const view_case *vc = &cases[v];
                placed_plan q;
                place_plan(&q, vc->text, vc->dims, vc->fop[f], NULL, &chip);
                cr_assert(rotor_handoff_matches(h, q.pl, 1, &vc->view), "case %zu", v);
                int nd = q.e.tensors[1].ndims;
                int64_t recv[64], max, want_max = 0;
                rotor_handoff_receive(h, q.pl, 1, &vc->view, recv, &max);
                for (int64_t c = 0; c < q.info.cores; c++) {
                    int64_t lo[ROTOR_MAX_DIMS], hi[ROTOR_MAX_DIMS], idx[ROTOR_MAX_DIMS];
                    int64_t want = 0, from[64] = {0}, brute[64] = {0};
                    bool seen[144] = {false};
                    if (rotor_handoff_need(q.pl, 1, c, lo, hi)) {
                        memcpy(idx, lo, sizeof idx);
                        for (;;) {
                            int64_t y[2] = {vc->view.offset[0], vc->view.offset[1]};
                            for (int d = 0; d < nd; d++) y[vc->view.dim[d]] += vc->view.step[d] * idx[d];
                            if (y[0] >= 0 && y[0] < 12 && y[1] >= 0 && y[1] < 12 && !seen[y[0] * 12 + y[1]]) {
                                seen[y[0] * 12 + y[1]] = true;
                                int64_t src = rotor_handoff_holder(h, y);
                                want += src != c;
                                brute[src]++;
                            }
                            int d = nd - 1;
                            while (d >= 0 && ++idx[d] == hi[d]) idx[d] = lo[d], d--;
                            if (d < 0) break;
                        }
                        rotor_handoff_set s;
                        rotor_handoff_map(h, &vc->view, nd, lo, hi, &s);
                        cr_assert_eq(rotor_handoff_sources(h, &s, tally, from), ROTOR_OK);
                    }
                    cr_assert_eq(recv[c], want, "producer %zu case %zu plan %d core %lld", i, v, f, (long long)c);
                    for (int k = 0; k < 64; k++)
                        cr_assert_eq(from[k], brute[k], "producer %zu case %zu plan %d core %lld: source %d", i, v, f,
                                     (long long)c, k);
                    if (want > want_max) want_max = want;
                }
                cr_assert_eq(max, want_max);
                rotor_place_free(q.pl);
            }
        rotor_handoff_free(h);
        rotor_place_free(p.pl);
    }
}

/* A view fits only where its dimensions exist and its steps nest. */
Test(handoff, a_view_fits_where_its_steps_nest) {
    rotor_expr p = make_expr(MATMUL, "m=12,k=6,n=12");
    rotor_expr q = make_expr("S[b,g,i,p] += Q[b,g,i,j] * F[j,p]", "b=2,g=2,i=6,p=4,j=3");
    rotor_view heads = {.set = true, .dim = {0, 1, 0, 1}, .step = {6, 3, 1, 1}};
    cr_assert(rotor_handoff_fits(&p, &q, 1, &heads));
    rotor_view overlap = heads; /* i's six rows would run into the next b's */
    overlap.step[0] = 5;
    cr_assert_not(rotor_handoff_fits(&p, &q, 1, &overlap));
    rotor_view nodim = heads;
    nodim.dim[3] = 2; /* the output has two dimensions */
    cr_assert_not(rotor_handoff_fits(&p, &q, 1, &nodim));
    cr_assert_not(rotor_handoff_fits(&p, &q, 1, NULL)); /* no view: the extents differ */
    cr_assert_not(rotor_handoff_fits(&p, &q, 0, &heads)); /* the output is no input */
}

/* The same proof through a view: a padded 3x3 window reads the producer's
 * 12 x 9 output from (-1, -1).  Every consumer core assembles its step-0
 * box from the holders (padding is zero and comes from nobody); the boxes
 * together give the window tensor, and the consumer's plan computes the
 * reference of the chain. */
Test(handoff, emulated_chain_through_a_padded_window) {
    rotor_chip chip = mk2();
    placed_plan p, q;
    float *pin[3], *c = run_producer((int64_t[]){3, 2, 2}, 21, &chip, &p, pin);
    place_plan(&q, "O[h,w] += I[h+kh,w+kw] * W[kh,kw]", "h=12,w=9,kh=3,kw=3", (int64_t[]){3, 2, 2, 1}, NULL, &chip);
    rotor_view view = {.set = true, .dim = {0, 1}, .step = {1, 1}, .offset = {-1, -1}};
    rotor_error err = {{0}};
    rotor_emu_result res;
    rotor_handoff *h = handoff_of(&p);
    cr_assert(rotor_handoff_matches(h, q.pl, 1, &view));
    /* the window tensor I [14, 11], assembled box by box */
    float win[14 * 11];
    bool got[14 * 11] = {false};
    int64_t recv[16], max;
    rotor_handoff_receive(h, q.pl, 1, &view, recv, &max);
    for (int64_t core = 0; core < q.info.cores; core++) {
        int64_t lo[2], hi[2], moved = 0;
        cr_assert(rotor_handoff_need(q.pl, 1, core, lo, hi));
        for (int64_t i = lo[0]; i < hi[0]; i++)
            for (int64_t j = lo[1]; j < hi[1]; j++) {
                int64_t y[2] = {i - 1, j - 1};
                float x = 0.0f;
                if (y[0] >= 0 && y[0] < 12 && y[1] >= 0 && y[1] < 9) {
                    int64_t src = rotor_handoff_holder(h, y), one[2] = {y[0] + 1, y[1] + 1};
                    cr_assert(src >= 0 && rotor_handoff_held_box(h, src, y, one) == 1);
                    x = c[y[0] * 9 + y[1]];
                    moved += src != core;
                }
                if (got[i * 11 + j]) cr_assert_eq(win[i * 11 + j], x);
                win[i * 11 + j] = x;
                got[i * 11 + j] = true;
            }
        cr_assert_eq(moved, recv[core], "core %lld", (long long)core);
    }
    for (int k = 0; k < 14 * 11; k++) cr_assert(got[k], "window element %d reached no core", k);
    cr_assert_gt(max, 0);
    float *qin[3] = {NULL, win, malloc(9 * sizeof(float))}, scratch[14 * 11];
    rotor_emu_random_inputs(&q.e, 22, (float *[]){NULL, scratch, qin[2]}); /* W at random */
    float e[108];
    cr_assert_eq(rotor_emu_run(q.pl, &chip, NULL, (const float *const *)qin, e, &res, &err), ROTOR_OK, "%s", err.msg);
    /* the reference: the chain in double, padding by hand */
    double cref[108], cmag[108], ref[108], mag[108];
    cr_assert_eq(rotor_emu_reference(&p.e, (const float *const *)pin, cref, cmag, &err), ROTOR_OK, "%s", err.msg);
    float pad[14 * 11] = {0};
    for (int i = 0; i < 12; i++)
        for (int j = 0; j < 9; j++) pad[(i + 1) * 11 + j + 1] = (float)cref[i * 9 + j];
    const float *rin[3] = {NULL, pad, qin[2]};
    cr_assert_eq(rotor_emu_reference(&q.e, rin, ref, mag, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_leq(rotor_emu_max_error(&q.e, e, ref, mag), ROTOR_EMU_TOLERANCE);
    free(qin[2]);
    free_chain(pin, c, h, &p, &q);
}

/* The old computation of rotor_handoff_traffic (before issue 45's fused
 * pass): recv from rotor_handoff_receive, and each producer core's sends
 * core by core through rotor_handoff_need, _map and _sources. */
static void traffic_by_hand(const rotor_handoff *h, const placed_plan *q, const rotor_view *view, int64_t *recv,
                            int64_t *max_recv, int64_t *send, int64_t *max_send) {
    rotor_handoff_receive(h, q->pl, 1, view, recv, max_recv);
    int64_t np = rotor_handoff_cores(h);
    memset(send, 0, (size_t)np * sizeof *send);
    int nd = q->e.tensors[1].ndims;
    for (int64_t c = 0; c < q->info.cores; c++) {
        int64_t lo[ROTOR_MAX_DIMS], hi[ROTOR_MAX_DIMS], from[1472] = {0};
        if (!rotor_handoff_need(q->pl, 1, c, lo, hi)) continue;
        rotor_handoff_set s;
        rotor_handoff_map(h, view, nd, lo, hi, &s);
        cr_assert_eq(rotor_handoff_sources(h, &s, tally, from), ROTOR_OK);
        for (int64_t p = 0; p < np; p++)
            if (p != c) send[p] += from[p];
    }
    *max_send = 0;
    for (int64_t p = 0; p < np; p++)
        if (send[p] > *max_send) *max_send = send[p];
}

/* The traffic into consumer q's tensor 1 four ways (traffic_by_hand,
 * rotor_handoff_traffic_in with memo, rotor_handoff_traffic, and
 * rotor_handoff_traffic_in source by source, without the sums), asserted
 * equal core by core; returns the most a core receives.  what names the
 * case in a failure. */
static int64_t traffic_agrees(const rotor_handoff *h, const placed_plan *q, const rotor_view *view,
                              rotor_handoff_memo *memo, const char *what) {
    int64_t nc = q->info.cores, np = rotor_handoff_cores(h), *r[4], *s[4], mr[4], ms[4];
    for (int k = 0; k < 4; k++) {
        r[k] = calloc((size_t)nc, sizeof *r[k]);
        s[k] = calloc((size_t)np, sizeof *s[k]);
        cr_assert(r[k] && s[k]);
    }
    rotor_handoff_memo *walk = rotor_handoff_memo_new();
    cr_assert(walk);
    rotor_handoff_memo_use_sums(walk, false);
    traffic_by_hand(h, q, view, r[0], &mr[0], s[0], &ms[0]);
    cr_assert_eq(rotor_handoff_traffic_in(h, q->pl, 1, view, memo, r[1], &mr[1], s[1], &ms[1]), ROTOR_OK);
    cr_assert_eq(rotor_handoff_traffic(h, q->pl, 1, view, r[2], &mr[2], s[2], &ms[2]), ROTOR_OK);
    cr_assert_eq(rotor_handoff_traffic_in(h, q->pl, 1, view, walk, r[3], &mr[3], s[3], &ms[3]), ROTOR_OK);
    cr_assert_eq(rotor_handoff_memo_sums(walk), 0);
    for (int k = 1; k < 4; k++) {
        cr_assert(!memcmp(r[0], r[k], (size_t)nc * sizeof *r[0]), "%s: recv (way %d)", what, k);
        cr_assert(!memcmp(s[0], s[k], (size_t)np * sizeof *s[0]), "%s: send (way %d)", what, k);
        cr_assert(mr[0] == mr[k] && ms[0] == ms[k], "%s: the most (way %d)", what, k);
    }
    rotor_handoff_memo_free(walk);
    for (int k = 0; k < 4; k++) free(r[k]), free(s[k]);
    return mr[0];
}

/* rotor_handoff_traffic_in with one memo reused across every pair (and
 * across consumer tensors of 2 and 4 dimensions, so the memo changes its
 * key's width), and rotor_handoff_traffic with a memo of its own, give
 * the old computation's recv, send and maxima on every pair: producers
 * with and without reduction groups (F_op k = 1, 2, 4), consumers through
 * the views above and element for element under 24 plans each. */
Test(handoff, fused_traffic_equals_receive_and_sends_core_by_core) {
    rotor_chip chip = mk2();
    static const int64_t prod_fop[][3] = {{2, 1, 3}, {2, 2, 2}, {3, 4, 1}, {12, 1, 12}, {4, 3, 6}, {1, 6, 1}};
    static const int64_t rm[] = {1, 2, 3, 4, 6, 12}, rn[] = {1, 2, 3, 12};
    static const rotor_view views[] = {
        {.set = true, .dim = {0, 1}, .step = {-1, 1}, .offset = {11, 0}},
        {.set = true, .dim = {0, 1}, .step = {2, 2}, .offset = {1, 1}},
        {.set = true, .dim = {0, 1, 0, 1}, .step = {6, 3, 1, 1}, .offset = {0, 3}},
    };
    rotor_handoff_memo *memo = rotor_handoff_memo_new();
    cr_assert(memo);
    int pairs = 0, summed[2][4] = {{0}}, walked = 0;
    for (size_t i = 0; i < sizeof prod_fop / sizeof prod_fop[0]; i++) {
        placed_plan p;
        place_plan(&p, MATMUL, "m=12,k=6,n=12", prod_fop[i], NULL, &chip);
        rotor_handoff *h = handoff_of(&p);
        bool groups = prod_fop[i][1] > 1; /* F_op k > 1: reduction groups hold the output in chunks */
        for (int v = -1; v < 3; v++)
            for (size_t a = 0; a < 6; a++)
                for (size_t b = 0; b < 4; b++) {
                    placed_plan q;
                    const rotor_view *view = v < 0 ? NULL : &views[v];
                    if (v == 2) { /* the heads of a fused projection: four dimensions */
                        int64_t f[5] = {rm[a] % 2 ? 1 : 2, b % 2 ? 2 : 1, rm[a] <= 6 ? rm[a] : 6, 1, rn[b] <= 4 ? rn[b] : 4};
                        place_plan(&q, "S[b,g,i,p] += Q[b,g,i,j] * F[j,p]", "b=2,g=2,i=6,p=4,j=3", f, NULL, &chip);
                    } else if (v < 0) {
                        int64_t f[2] = {rm[a], rn[b]};
                        place_plan(&q, "Y[m,n] = relu(X[m,n])", "m=12,n=12", f, NULL, &chip);
                    } else {
                        int64_t f[3] = {v && rm[a] > 6 ? 6 : rm[a], rn[b] <= 5 ? rn[b] : 5, 1};
                        place_plan(&q, "E[m,p] += X[m,n] * F[n,p]", v ? "m=6,p=5,n=6" : "m=12,p=5,n=12", f, NULL,
                                   &chip);
                    }
                    if (!rotor_handoff_matches(h, q.pl, 1, view)) {
                        rotor_place_free(q.pl);
                        continue;
                    }
                    char what[96];
                    snprintf(what, sizeof what, "producer %zu view %d plan %zu,%zu", i, v, a, b);
                    int64_t before = rotor_handoff_memo_sums(memo);
                    pairs += traffic_agrees(h, &q, view, memo, what) > 0;
                    /* traffic_agrees asks the memo's walk once */
                    if (rotor_handoff_memo_sums(memo) > before) summed[groups][v + 1]++;
                    else walked++;
                    rotor_place_free(q.pl);
                }
        rotor_handoff_free(h);
        rotor_place_free(p.pl);
    }
    cr_assert_gt(pairs, 100, "only %d pairs moved anything", pairs);
    /* the sums priced pairs with and without reduction groups through every
     * view: strided spans (view 1), two consumer dimensions on one producer
     * dimension (view 2), a reversed one (view 0) */
    for (int gr = 0; gr < 2; gr++)
        for (int v = 0; v < 4; v++) cr_assert_gt(summed[gr][v], 2, "groups %d view %d: %d by sums", gr, v - 1, summed[gr][v]);
    cr_log_info("sums %d %d %d %d / %d %d %d %d, walked %d", summed[0][0], summed[0][1], summed[0][2], summed[0][3], summed[1][0], summed[1][1], summed[1][2], summed[1][3], walked);
    rotor_handoff_memo_free(memo);
}

/* The sums (handoff.c, "the traffic by sums") where a dimension's boxes
 * repeat unevenly: a stride-2 window's rows start at 2 h + kh, so with h
 * and kh both split some starts are shared by two (h, kh) blocks and
 * others by one.  The cores of each combination of starts are still a
 * product over the dimensions, and the sends, weighted by it, equal the
 * core-by-core computation, under producers with and without reduction
 * groups. */
Test(handoff, sums_weigh_the_windows_whose_starts_repeat_unevenly) {
    rotor_chip chip = mk2();
    static const int64_t prod_fop[][3] = {{1, 1, 1}, {11, 1, 3}, {1, 2, 9}, {11, 4, 1}};
    static const int64_t fh[] = {1, 5}, fw[] = {1, 2, 4}, fk[] = {1, 3};
    int uneven = 0;
    for (size_t i = 0; i < sizeof prod_fop / sizeof prod_fop[0]; i++) {
        placed_plan p;
        place_plan(&p, MATMUL, "m=11,k=4,n=9", prod_fop[i], NULL, &chip);
        rotor_handoff *h = handoff_of(&p);
        for (size_t a = 0; a < 2; a++)
            for (size_t b = 0; b < 3; b++)
                for (size_t c = 0; c < 2; c++)
                    for (size_t d = 0; d < 2; d++) {
                        placed_plan q;
                        const char *text = "O[h,w] += I[2*h+kh,2*w+kw] * W[kh,kw]", *dims = "h=5,w=4,kh=3,kw=3";
                        rotor_expr e = make_expr(text, dims);
                        int64_t f[4];
                        for (int x = 0; x < e.naxes; x++) {
                            const char *n = e.axis_name[x];
                            f[x] = !strcmp(n, "h") ? fh[a] : !strcmp(n, "w") ? fw[b] : !strcmp(n, "kh") ? fk[c] : fk[d];
                        }
                        place_plan(&q, text, dims, f, NULL, &chip);
                        cr_assert(rotor_handoff_matches(h, q.pl, 1, NULL));
                        /* whether some row or column start is shared by more cores than another */
                        int64_t rows[11] = {0}, cols[9] = {0};
                        for (int64_t k = 0; k < q.info.cores; k++) {
                            int64_t lo[2], hi[2];
                            if (!rotor_handoff_need(q.pl, 1, k, lo, hi)) continue;
                            rows[lo[0]]++, cols[lo[1]]++;
                        }
                        int64_t rmin = INT64_MAX, rmax = 0, cmin = INT64_MAX, cmax = 0;
                        for (int k = 0; k < 11; k++)
                            if (rows[k]) rmin = rows[k] < rmin ? rows[k] : rmin, rmax = rows[k] > rmax ? rows[k] : rmax;
                        for (int k = 0; k < 9; k++)
                            if (cols[k]) cmin = cols[k] < cmin ? cols[k] : cmin, cmax = cols[k] > cmax ? cols[k] : cmax;
                        rotor_handoff_memo *memo = rotor_handoff_memo_new();
                        cr_assert(memo);
                        char what[96];
                        snprintf(what, sizeof what, "producer %zu plan %lld,%lld,%lld,%lld", i, (long long)f[0],
                                 (long long)f[1], (long long)f[2], (long long)f[3]);
                        traffic_agrees(h, &q, NULL, memo, what);
                        cr_assert_eq(rotor_handoff_memo_sums(memo), 1, "%s: not by sums", what);
                        uneven += rmin < rmax || cmin < cmax;
                        rotor_handoff_memo_free(memo);
                        rotor_place_free(q.pl);
                    }
        rotor_handoff_free(h);
        rotor_place_free(p.pl);
    }
    /* uneven: rows where h is split 5 ways and kh 3 (6 of the 24 plans),
     * columns where w is split 4 ways and kw 3 (4), both in 1: 9 a producer */
    cr_assert_eq(uneven, 4 * 9, "%d consumers with uneven starts", uneven);
}

/* An output whose extents add up past the sums' scratch (2^20 prefix
 * sums) is priced by the walk, and agrees with the core-by-core count; one
 * just under the bound is priced by the sums. */
Test(handoff, an_output_past_the_sums_scratch_is_priced_by_the_walk) {
    rotor_chip chip = mk2();
    static const char *const dims[2][2] = {{"m=1048576,k=1,n=2", "m=1048576,n=2"}, {"m=1048000,k=1,n=2", "m=1048000,n=2"}};
    for (int i = 0; i < 2; i++) {
        placed_plan p, q;
        place_plan(&p, MATMUL, dims[i][0], (int64_t[]){64, 1, 2}, NULL, &chip);
        place_plan(&q, RELU, dims[i][1], (int64_t[]){32, 1}, NULL, &chip);
        rotor_handoff *h = handoff_of(&p);
        rotor_handoff_memo *memo = rotor_handoff_memo_new();
        cr_assert(memo);
        cr_assert_gt(traffic_agrees(h, &q, NULL, memo, dims[i][0]), 0);
        /* 1,048,577 + 3 prefix sums past 2^20; 1,048,001 + 3 under it */
        cr_assert_eq(rotor_handoff_memo_sums(memo), i, "%s", dims[i][0]);
        rotor_handoff_memo_free(memo);
        rotor_handoff_free(h);
        rotor_place_free(p.pl);
        rotor_place_free(q.pl);
    }
}

/* Consumer cores that need the same box one after another (a MatMul
 * split along p reads its X rows whole on every core of a row band):
 * rotor_handoff_traffic_in adds such a run's sends once, times the cores,
 * less each core's own holding (issue 45).  Under producers with and
 * without reduction groups, and with and without the memo, recv, send and
 * their maxima equal the core-by-core computation; the cases include runs
 * of equal boxes whose cores hold part of their own box (where dropping
 * the self-subtraction would change send). */
Test(handoff, runs_of_one_box_send_what_core_by_core_sends) {
    rotor_chip chip = mk2();
    static const int64_t prod_fop[][3] = {{2, 1, 3}, {4, 2, 1}, {3, 1, 4}, {12, 1, 1}, {6, 2, 2}};
    static const int64_t cm[] = {1, 2, 3, 4}, cp[] = {2, 3, 4};
    int runs = 0, self_held = 0;
    for (size_t i = 0; i < sizeof prod_fop / sizeof prod_fop[0]; i++) {
        placed_plan p;
        place_plan(&p, MATMUL, "m=12,k=6,n=12", prod_fop[i], NULL, &chip);
        rotor_handoff *h = handoff_of(&p);
        for (size_t a = 0; a < 4; a++)
            for (size_t b = 0; b < 3; b++) {
                placed_plan q;
                int64_t f[3] = {cm[a], 1, cp[b]}; /* the axes m, n, p */
                place_plan(&q, "E[m,p] += X[m,n] * F[n,p]", "m=12,p=12,n=12", f, NULL, &chip);
                int64_t nc = q.info.cores, np = rotor_handoff_cores(h), plo[2] = {-1, -1}, phi[2] = {-1, -1};
                bool run = false;
                for (int64_t c = 0; c < nc; c++) {
                    int64_t lo[2], hi[2];
                    cr_assert(rotor_handoff_need(q.pl, 1, c, lo, hi));
                    bool same = !memcmp(lo, plo, sizeof lo) && !memcmp(hi, phi, sizeof hi);
                    if (same && c < np) {
                        rotor_handoff_set s;
                        rotor_handoff_map(h, NULL, 2, lo, hi, &s);
                        self_held += rotor_handoff_held(h, c, &s) > 0;
                    }
                    run |= same;
                    memcpy(plo, lo, sizeof lo), memcpy(phi, hi, sizeof hi);
                }
                runs += run;
                rotor_handoff_memo *memo = rotor_handoff_memo_new();
                cr_assert(memo);
                char what[96];
                snprintf(what, sizeof what, "producer %zu plan %zu,%zu", i, a, b);
                traffic_agrees(h, &q, NULL, memo, what);
                rotor_handoff_memo_free(memo);
                rotor_place_free(q.pl);
            }
        rotor_handoff_free(h);
        rotor_place_free(p.pl);
    }
    cr_assert_gt(runs, 20, "only %d consumers met a run of one box", runs);
    cr_assert_gt(self_held, 0, "no core of a run held part of its own box");
}

/* rotor_handoff_make's order (a counting sort by cell where the origins lie
 * on the partition grid, a merge sort otherwise): the cores holding copies
 * of one partition keep its row-major chunks in increasing id order, so
 * along each partition's elements the holders never decrease, every
 * element has exactly one holder, and rotor_handoff_held_box agrees with
 * rotor_handoff_holder (producers with F_op k = 1, 2, 3, 4, 6). */
Test(handoff, reduction_groups_keep_their_chunks_in_id_order) {
    rotor_chip chip = mk2();
    static const int64_t prod_fop[][3] = {{2, 1, 3}, {2, 2, 2}, {3, 4, 1}, {1, 6, 2}, {4, 3, 1}, {12, 1, 12}};
    for (size_t i = 0; i < sizeof prod_fop / sizeof prod_fop[0]; i++) {
        placed_plan p;
        place_plan(&p, MATMUL, "m=12,k=6,n=12", prod_fop[i], NULL, &chip);
        rotor_handoff *h = handoff_of(&p);
        int64_t pm = p.info.part[0][0], pn = p.info.part[0][1], groups = 0;
        for (int64_t cm = 0; cm < 12; cm += pm)
            for (int64_t cn = 0; cn < 12; cn += pn) {
                int64_t last = -1, distinct = 0;
                for (int64_t y0 = cm; y0 < cm + pm; y0++)
                    for (int64_t y1 = cn; y1 < cn + pn; y1++) {
                        int64_t y[2] = {y0, y1}, one[2] = {y0 + 1, y1 + 1}, src = rotor_handoff_holder(h, y), n = 0;
                        cr_assert_geq(src, last, "producer %zu element %lld,%lld", i, (long long)y0, (long long)y1);
                        distinct += src != last;
                        last = src;
                        for (int64_t c = 0; c < p.info.cores; c++) n += rotor_handoff_held_box(h, c, y, one);
                        cr_assert_eq(n, 1);
                        cr_assert_eq(rotor_handoff_held_box(h, src, y, one), 1);
                    }
                cr_assert_eq(distinct, prod_fop[i][1] < pm * pn ? prod_fop[i][1] : pm * pn, "producer %zu", i);
                groups++;
            }
        cr_assert_eq(groups * prod_fop[i][1], p.info.cores);
        rotor_handoff_free(h);
        rotor_place_free(p.pl);
    }
}

/* rotor_handoff_sources reports for every producer core exactly what
 * rotor_handoff_held counts of the set (0: not reported), and the reports
 * add up to the set's real elements: on producers with and without
 * reduction groups and with padded partitions, for every box of a coarse
 * grid of the output read element for element, and for boxes read through
 * the views of the fused traffic's test.  (The sources price a holder
 * alone in its group from per-dimension counts shared by its cell, issue
 * 45: this is the direct computation it must equal.) */
Test(handoff, sources_report_what_held_counts_core_by_core) {
    rotor_chip chip = mk2();
    static const int64_t prod_fop[][3] = {{2, 1, 3}, {2, 2, 2}, {3, 4, 1}, {12, 1, 12}, {4, 3, 6}, {5, 1, 5}};
    static const char *const prod_dims[] = {"m=12,k=6,n=12", "m=12,k=6,n=12", "m=12,k=6,n=12",
                                            "m=12,k=6,n=12", "m=12,k=6,n=12", "m=11,k=6,n=13"};
    static const rotor_view views[] = {
        {.set = true, .dim = {0, 1}, .step = {-1, 1}, .offset = {11, 0}},
        {.set = true, .dim = {0, 1}, .step = {2, 2}, .offset = {1, 1}},
        {.set = true, .dim = {0, 1, 0, 1}, .step = {6, 3, 1, 1}, .offset = {0, 3}},
    };
    static const int64_t cut[] = {0, 1, 3, 4, 6, 7, 9, 11, 12};
    int checked = 0, moved = 0;
    for (size_t i = 0; i < sizeof prod_fop / sizeof prod_fop[0]; i++) {
        placed_plan p;
        place_plan(&p, MATMUL, prod_dims[i], prod_fop[i], NULL, &chip);
        rotor_handoff *h = handoff_of(&p);
        int64_t np = rotor_handoff_cores(h);
        int64_t *from = calloc((size_t)np, sizeof *from);
        for (int v = -1; v < 3; v++)
            for (size_t a0 = 0; a0 < 9; a0++)
                for (size_t a1 = a0 + 1; a1 < 9; a1++)
                    for (size_t b0 = 0; b0 < 9; b0 += 2)
                        for (size_t b1 = b0 + 1; b1 < 9; b1 += 3) {
                            int nd = v == 2 ? 4 : 2;
                            int64_t lo[4] = {cut[a0] / (v > 0 ? 2 : 1), cut[b0] / (v > 0 ? 2 : 1), 0, 0};
                            int64_t hi[4] = {cut[a1] / (v > 0 ? 2 : 1), cut[b1] / (v > 0 ? 2 : 1), 2, 3};
                            if (v == 2) lo[0] = lo[0] % 2, hi[0] = lo[0] + 1, lo[1] = lo[1] % 2, hi[1] = 2;
                            if (hi[0] <= lo[0] || hi[1] <= lo[1]) continue;
                            rotor_handoff_set s;
                            rotor_handoff_map(h, v < 0 ? NULL : &views[v], nd, lo, hi, &s);
                            memset(from, 0, (size_t)np * sizeof *from);
                            cr_assert_eq(rotor_handoff_sources(h, &s, tally, from), ROTOR_OK);
                            int64_t sum = 0;
                            for (int64_t c = 0; c < np; c++) {
                                cr_assert_eq(from[c], rotor_handoff_held(h, c, &s),
                                             "producer %zu view %d box [%lld,%lld)x[%lld,%lld) core %lld", i, v,
                                             (long long)lo[0], (long long)hi[0], (long long)lo[1],
                                             (long long)hi[1], (long long)c);
                                sum += from[c];
                            }
                            cr_assert_eq(sum, rotor_handoff_set_elems(h, &s), "producer %zu view %d", i, v);
                            checked++;
                            moved += sum > 0;
                        }
        free(from);
        rotor_handoff_free(h);
        rotor_place_free(p.pl);
    }
    cr_assert_gt(checked, 1000);
    cr_assert_gt(moved, 1000);
}

/* The sources of four-dimensional producers (a 1x1 convolution's output,
 * as the zoo's CNNs hand off at large batches), with and without reduction
 * groups and with padded partitions (5 and 7 split in 2 and 3): for boxes
 * over a coarse grid in every dimension, every producer core is reported
 * with exactly what rotor_handoff_held counts (the walk over the grid keeps
 * its index and the cell's counts per level of the odometer and clips at
 * the grid's edge, issue 45: this is the direct computation it must
 * equal), and the reports add up to the box's elements. */
Test(handoff, four_dimensional_sources_report_what_held_counts) {
    rotor_chip chip = mk2();
    /* F_op over the axes b, k, h, w, c (their order in the expression) */
    static const int64_t fops[][5] = {{2, 1, 2, 3, 3}, {4, 2, 1, 1, 2}, {1, 1, 5, 7, 1}, {2, 4, 1, 3, 6}, {3, 1, 2, 2, 1}};
    static const int64_t cut[4][4] = {{0, 1, 3, 4}, {0, 2, 5, 6}, {0, 1, 3, 5}, {0, 2, 4, 7}};
    int checked = 0, moved = 0;
    for (size_t i = 0; i < sizeof fops / sizeof fops[0]; i++) {
        placed_plan p;
        place_plan(&p, "Y[b,c,h,w] += X[b,k,h,w] * W[k,c]", "b=4,c=6,h=5,w=7,k=4", fops[i], NULL, &chip);
        rotor_handoff *h = handoff_of(&p);
        int64_t np = rotor_handoff_cores(h);
        int64_t *from = calloc((size_t)np, sizeof *from);
        for (int m = 0; m < 6 * 6 * 6 * 6; m++) {
            static const int pa[6] = {0, 0, 0, 1, 1, 2}, pb[6] = {1, 2, 3, 2, 3, 3};
            int64_t lo[4], hi[4];
            for (int d = 0, x = m; d < 4; d++, x /= 6) lo[d] = cut[d][pa[x % 6]], hi[d] = cut[d][pb[x % 6]];
            rotor_handoff_set s;
            int64_t sum = box_sources_held(h, lo, hi, from, &s, i, m);
            checked++;
            moved += sum > 0;
        }
        free(from);
        rotor_handoff_free(h);
        rotor_place_free(p.pl);
    }
    cr_assert_gt(checked, 500);
    cr_assert_gt(moved, 500);
}

/* A memo reused across hand-offs keeps its boxes only for the same
 * hand-off content and view (issue 45: a consumer's candidate plans read
 * one producer through the same boxes): producers whose partitions have
 * the same extents and cores but lie on other cores (the transposed
 * input orders the cores' digits the other way), asked one after the
 * other through one memo, each give what a memo of their own gives, on
 * every consumer plan, without and through a view. */
Test(handoff, a_reused_memo_keeps_boxes_only_for_the_same_holders) {
    rotor_chip chip = mk2();
    static const char *const text[] = {RELU, "Y[m,n] = relu(X[n,m])", RELU, "Y[m,n] = relu(X[n,m])"};
    static const int64_t fops[][2] = {{2, 3}, {3, 2}, {4, 3}, {3, 4}};
    enum { NP = 4 };
    placed_plan p[NP];
    rotor_handoff *h[NP];
    for (int i = 0; i < NP; i++) {
        place_plan(&p[i], text[i], "m=12,n=12", fops[i], NULL, &chip);
        h[i] = handoff_of(&p[i]);
    }
    static const rotor_view flip = {.set = true, .dim = {0, 1}, .step = {-1, 1}, .offset = {11, 0}};
    rotor_handoff_memo *memo = rotor_handoff_memo_new();
    cr_assert(memo);
    static const int64_t rm[] = {1, 2, 3, 4, 6, 12}, rn[] = {1, 2, 3, 12};
    int moved_apart = 0;
    for (int i = 0; i < NP; i++)
        for (int j = 0; j < NP; j++) {
            bool apart = false; /* some element held by another core */
            for (int64_t y0 = 0; y0 < 12; y0++)
                for (int64_t y1 = 0; y1 < 12; y1++) {
                    int64_t y[2] = {y0, y1};
                    apart |= rotor_handoff_holder(h[i], y) != rotor_handoff_holder(h[j], y);
                }
            moved_apart += apart && rotor_handoff_cores(h[i]) == rotor_handoff_cores(h[j]);
            for (int v = 0; v < 4; v++)
                for (size_t a = 0; a < 6; a++)
                    for (size_t b = 0; b < 4; b++) {
                        placed_plan q;
                        int64_t f[2] = {rm[a], rn[b]};
                        const rotor_view *vi = v & 1 ? &flip : NULL, *vj = v & 2 ? &flip : NULL;
                        place_plan(&q, RELU, "m=12,n=12", f, NULL, &chip);
                        int64_t nc = q.info.cores, np = rotor_handoff_cores(h[j]), mr0, ms0, mr1, ms1;
                        int64_t *r0 = calloc((size_t)nc, sizeof *r0), *r1 = calloc((size_t)nc, sizeof *r1);
                        int64_t *s0 = calloc((size_t)np + 64, sizeof *s0), *s1 = calloc((size_t)np, sizeof *s1);
                        cr_assert_eq(rotor_handoff_traffic_in(h[i], q.pl, 1, vi, memo, r0, &mr0, s0, &ms0), ROTOR_OK);
                        cr_assert_eq(rotor_handoff_traffic_in(h[j], q.pl, 1, vj, memo, r1, &mr1, s1, &ms1), ROTOR_OK);
                        cr_assert_eq(rotor_handoff_traffic(h[j], q.pl, 1, vj, r0, &mr0, s0, &ms0), ROTOR_OK);
                        cr_assert(!memcmp(r0, r1, (size_t)nc * sizeof *r0) && !memcmp(s0, s1, (size_t)np * sizeof *s0),
                                  "producers %d then %d, views %d, plan %zu,%zu", i, j, v, a, b);
                        cr_assert(mr0 == mr1 && ms0 == ms1);
                        free(r0), free(r1), free(s0), free(s1);
                        rotor_place_free(q.pl);
                    }
        }
    cr_assert_gt(moved_apart, 0, "no two producers of equal cores hold apart");
    /* strided views that differ only in their offsets or only in their
     * steps, read by a 6x6 consumer after one another (from partitions 3
     * rows high, where odd and even rows fall apart) */
    static const rotor_view sv[3] = {{.set = true, .dim = {0, 1}, .step = {2, 2}, .offset = {1, 1}},
                                     {.set = true, .dim = {0, 1}, .step = {2, 2}, .offset = {0, 1}},
                                     {.set = true, .dim = {0, 1}, .step = {1, 2}, .offset = {1, 1}}};
    static const int64_t r6[] = {1, 2, 3, 6};
    for (int v = 0; v < 9; v++)
        for (size_t a = 0; a < 4; a++)
            for (size_t b = 0; b < 4; b++) {
                placed_plan q;
                int64_t f[2] = {r6[a], r6[b]}, mr0, ms0, mr1, ms1;
                place_plan(&q, RELU, "m=6,n=6", f, NULL, &chip);
                int64_t nc = q.info.cores, np = rotor_handoff_cores(h[2]);
                int64_t *r0 = calloc((size_t)nc, sizeof *r0), *r1 = calloc((size_t)nc, sizeof *r1);
                int64_t *s0 = calloc((size_t)np, sizeof *s0), *s1 = calloc((size_t)np, sizeof *s1);
                cr_assert_eq(rotor_handoff_traffic_in(h[2], q.pl, 1, &sv[v % 3], memo, r0, &mr0, s0, &ms0), ROTOR_OK);
                cr_assert_eq(rotor_handoff_traffic_in(h[2], q.pl, 1, &sv[v / 3], memo, r1, &mr1, s1, &ms1), ROTOR_OK);
                cr_assert_eq(rotor_handoff_traffic(h[2], q.pl, 1, &sv[v / 3], r0, &mr0, s0, &ms0), ROTOR_OK);
                cr_assert(!memcmp(r0, r1, (size_t)nc * sizeof *r0) && !memcmp(s0, s1, (size_t)np * sizeof *s0),
                          "views %d then %d, plan %zu,%zu", v % 3, v / 3, a, b);
                free(r0), free(r1), free(s0), free(s1);
                rotor_place_free(q.pl);
            }
    rotor_handoff_memo_free(memo);
    for (int i = 0; i < NP; i++) {
        rotor_handoff_free(h[i]);
        rotor_place_free(p[i].pl);
    }
}

/* A reduction group's members priced from the set's box in the partition
 * (group_sources_box, issue 45): where the set covers the whole partition,
 * the chunks' own lengths; where it covers the inner dimensions whole,
 * the positions of the outer rows below each chunk's end; else row by row.
 * On four-dimensional producers whose partitions hold groups of 2, 3 and
 * 4 members (chunks that do and do not divide the partition, padded
 * partitions), for boxes that are whole partitions, cut only in the outer
 * dimensions, only in the inner ones, or in all, every producer core is
 * reported with what rotor_handoff_held counts (the direct computation),
 * and the reports add up to the box's elements. */
Test(handoff, reduction_groups_priced_from_the_box_match_held) {
    rotor_chip chip = mk2();
    /* F_op over the axes b, k, h, w, c; k > 1: groups of k members */
    static const int64_t fops[][5] = {{2, 3, 1, 1, 2}, {1, 2, 1, 2, 3}, {2, 4, 2, 1, 1}, {4, 3, 1, 3, 1}};
    /* per dimension (b, c, h, w of 4, 6, 5, 7): the ranges a box takes */
    static const int64_t rng[4][5][2] = {{{0, 4}, {0, 2}, {2, 4}, {1, 3}, {3, 4}},
                                         {{0, 6}, {0, 3}, {3, 6}, {1, 5}, {2, 3}},
                                         {{0, 5}, {0, 3}, {1, 4}, {4, 5}, {0, 1}},
                                         {{0, 7}, {0, 4}, {2, 7}, {1, 6}, {3, 4}}};
    int checked = 0, grouped = 0;
    for (size_t i = 0; i < sizeof fops / sizeof fops[0]; i++) {
        placed_plan p;
        place_plan(&p, "Y[b,c,h,w] += X[b,k,h,w] * W[k,c]", "b=4,c=6,h=5,w=7,k=12", fops[i], NULL, &chip);
        rotor_handoff *h = handoff_of(&p);
        int64_t np = rotor_handoff_cores(h);
        int64_t *from = calloc((size_t)np, sizeof *from);
        for (int m = 0; m < 5 * 5 * 5 * 5; m++) {
            int64_t lo[4], hi[4];
            for (int d = 0, x = m; d < 4; d++, x /= 5) lo[d] = rng[d][x % 5][0], hi[d] = rng[d][x % 5][1];
            rotor_handoff_set s;
            (void)box_sources_held(h, lo, hi, from, &s, i, m);
            if (m == 0) { /* the whole output: every core holds one chunk of its partition, no more */
                int64_t pelems = 1, most = 0;
                for (int d = 0; d < 4; d++) pelems *= p.info.part[0][d];
                for (int64_t c = 0; c < np; c++) {
                    cr_assert_gt(from[c], 0, "producer %zu core %lld", i, (long long)c);
                    most = from[c] > most ? from[c] : most;
                }
                cr_assert(most < pelems && most * fops[i][1] >= pelems, "producer %zu: chunks of %lld", i,
                          (long long)most);
                grouped++;
            }
            checked++;
        }
        free(from);
        rotor_handoff_free(h);
        rotor_place_free(p.pl);
    }
    cr_assert_eq(checked, 4 * 625);
    cr_assert_eq(grouped, 4);
}
