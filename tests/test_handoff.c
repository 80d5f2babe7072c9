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

typedef struct placed {
    rotor_expr e;
    rotor_plan p;
    rotor_plan_info info;
    rotor_place *pl;
} placed;

/* The plan F_op = fop (one per axis) with temporal factors ft[t][a] (NULL:
 * none), placed on chip. */
static void place_plan(placed *x, const char *text, const char *dims, const int64_t *fop, const int64_t (*ft)[4],
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

static rotor_handoff *handoff_of(const placed *x) {
    rotor_handoff *h;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_handoff_make(x->pl, &h, &err), ROTOR_OK, "%s", err.msg);
    return h;
}

#define MATMUL "C[m,n] += A[m,k] * B[k,n]"
#define RELU "Y[m,n] = relu(X[m,n])"

Test(handoff, same_partitions_receive_nothing_and_row_bands_receive_half) {
    rotor_chip chip = mk2();
    placed p, same, rows;
    place_plan(&p, MATMUL, "m=8,k=4,n=8", (int64_t[]){2, 1, 2}, NULL, &chip);
    place_plan(&same, RELU, "m=8,n=8", (int64_t[]){2, 2}, NULL, &chip);
    place_plan(&rows, RELU, "m=8,n=8", (int64_t[]){4, 1}, NULL, &chip);
    rotor_handoff *h = handoff_of(&p);
    cr_assert(rotor_handoff_matches(h, same.pl, 1));
    int64_t recv[4], max;
    rotor_handoff_receive(h, same.pl, 1, recv, &max);
    for (int c = 0; c < 4; c++) cr_assert_eq(recv[c], 0, "core %d", c);
    cr_assert_eq(max, 0);
    /* a 2x8 band of rows needs 16 elements; its core holds a 4x4 block
     * that covers 2x4 of them */
    rotor_handoff_receive(h, rows.pl, 1, recv, &max);
    for (int c = 0; c < 4; c++) cr_assert_eq(recv[c], 8, "core %d: %lld", c, (long long)recv[c]);
    cr_assert_eq(max, 8);
    rotor_handoff_free(h);
    rotor_place_free(p.pl);
    rotor_place_free(same.pl);
    rotor_place_free(rows.pl);
}

/* A split reduction axis: the two cores reduce-scatter the 8x8 partial
 * sums, core 0 keeping rows 0-3 (flat 0..31), core 1 rows 4-7. */
Test(handoff, reduce_scatter_leaves_each_member_one_chunk) {
    rotor_chip chip = mk2();
    placed p, rows, cols;
    place_plan(&p, MATMUL, "m=8,k=4,n=8", (int64_t[]){1, 2, 1}, NULL, &chip);
    place_plan(&rows, RELU, "m=8,n=8", (int64_t[]){2, 1}, NULL, &chip);
    place_plan(&cols, RELU, "m=8,n=8", (int64_t[]){1, 2}, NULL, &chip);
    rotor_handoff *h = handoff_of(&p);
    cr_assert_eq(rotor_handoff_holder(h, (int64_t[]){3, 7}), 0);
    cr_assert_eq(rotor_handoff_holder(h, (int64_t[]){4, 0}), 1);
    int64_t recv[2], max;
    rotor_handoff_receive(h, rows.pl, 1, recv, &max);
    cr_assert(recv[0] == 0 && recv[1] == 0);
    rotor_handoff_receive(h, cols.pl, 1, recv, &max);
    cr_assert(recv[0] == 16 && recv[1] == 16, "%lld %lld", (long long)recv[0], (long long)recv[1]);
    rotor_handoff_free(h);
    rotor_place_free(p.pl);
    rotor_place_free(rows.pl);
    rotor_place_free(cols.pl);
}

Test(handoff, a_view_with_other_extents_does_not_match) {
    rotor_chip chip = mk2();
    placed p, other;
    place_plan(&p, MATMUL, "m=8,k=4,n=8", (int64_t[]){2, 1, 2}, NULL, &chip);
    place_plan(&other, RELU, "m=4,n=16", (int64_t[]){2, 2}, NULL, &chip);
    rotor_handoff *h = handoff_of(&p);
    cr_assert_not(rotor_handoff_matches(h, other.pl, 1));
    cr_assert_not(rotor_handoff_matches(h, other.pl, 0)); /* the output is no input */
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
        placed p;
        int64_t ft[3][4] = {{1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}};
        if (prod_fop[i][2] > 1) ft[1][1] = prod_fop[i][2]; /* A rotates over the n-split cores */
        place_plan(&p, MATMUL, "m=11,k=6,n=10", prod_fop[i], (const int64_t(*)[4])ft, &chip);
        rotor_handoff *h = handoff_of(&p);
        int64_t *count = calloc(110, sizeof *count);
        for (int64_t c = 0; c < p.info.cores; c++)
            for (int64_t m = 0; m < 11; m++)
                for (int64_t n = 0; n < 10; n++) {
                    int64_t lo[2] = {m, n}, hi[2] = {m + 1, n + 1};
                    if (rotor_handoff_held(h, c, lo, hi)) {
                        count[m * 10 + n]++;
                        cr_assert_eq(rotor_handoff_holder(h, lo), c, "plan %zu: (%lld,%lld)", i, (long long)m,
                                     (long long)n);
                    }
                }
        for (int k = 0; k < 110; k++) cr_assert_eq(count[k], 1, "plan %zu: element %d held %lld times", i, k, (long long)count[k]);
        free(count);
        for (size_t j = 0; j < sizeof cons_fop / sizeof cons_fop[0]; j++) {
            placed q; /* the consumer reads C as its A */
            place_plan(&q, "E[m,p] += C[m,n] * F[n,p]", "m=11,n=10,p=7", cons_fop[j], NULL, &chip);
            cr_assert(rotor_handoff_matches(h, q.pl, 1));
            int64_t recv[64], max, want_max = 0;
            rotor_handoff_receive(h, q.pl, 1, recv, &max);
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
                cr_assert_eq(rotor_handoff_sources(h, lo, hi, tally, from), ROTOR_OK);
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

/* The emulator proves a transition on real data: the producer's plan runs,
 * each core keeps what the hand-off says it holds, every consumer core
 * assembles its step-0 partition from its own elements and the holders'
 * (each named holder must hold the element), and the consumer's plan then
 * computes the chain's reference. */
Test(handoff, emulated_chain_moves_the_producer_partitions_into_the_consumer_partitions) {
    rotor_chip chip = mk2();
    placed p, q;
    place_plan(&p, MATMUL, "m=12,k=8,n=9", (int64_t[]){2, 2, 3}, NULL, &chip);
    place_plan(&q, "E[m,p] += C[m,n] * F[n,p]", "m=12,n=9,p=5", (int64_t[]){4, 1, 2}, NULL, &chip);
    rotor_error err = {{0}};
    float *pin[3] = {NULL, malloc(12 * 8 * sizeof(float)), malloc(8 * 9 * sizeof(float))};
    float *c = malloc(12 * 9 * sizeof(float));
    rotor_emu_random_inputs(&p.e, 11, pin);
    rotor_emu_result res;
    cr_assert_eq(rotor_emu_run(p.pl, &chip, NULL, (const float *const *)pin, c, &res, &err), ROTOR_OK, "%s", err.msg);

    /* what each producer core holds: a copy of the output masked to its elements */
    rotor_handoff *h = handoff_of(&p);
    float *held = calloc((size_t)p.info.cores * 108, sizeof *held);
    bool *has = calloc((size_t)p.info.cores * 108, sizeof *has);
    for (int64_t core = 0; core < p.info.cores; core++)
        for (int64_t k = 0; k < 108; k++) {
            int64_t lo[2] = {k / 9, k % 9}, hi[2] = {k / 9 + 1, k % 9 + 1};
            if (rotor_handoff_held(h, core, lo, hi)) {
                held[core * 108 + k] = c[k];
                has[core * 108 + k] = true;
            }
        }
    /* the transition: each consumer core gathers its partition from holders */
    int64_t recv[8], max, moved_max = 0;
    rotor_handoff_receive(h, q.pl, 1, recv, &max);
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
    free(c);
    free(pin[1]);
    free(pin[2]);
    rotor_handoff_free(h);
    rotor_place_free(p.pl);
    rotor_place_free(q.pl);
}
