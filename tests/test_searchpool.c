/* test_searchpool.c — the searches' shared buffers (rotor_search_pool,
 * src/op/search.c): a session or search that borrows its per-thread
 * buffers from a pool answers exactly as one with its own, whatever the
 * pool's sets held before (another expression's tensor-options memo and
 * lattices, another session's workers). */
#include <criterion/criterion.h>

#include <string.h>

#include "rotor/op/search.h"
#include "fixtures.h"

#define NCAPS 4

/* The answers of one session: the fastest plan under its own cap, then one
 * byte below each answer's memory in turn (the compiler's walk down a
 * frontier), until no plan fits or NCAPS answers. */
typedef struct answers {
    int n;
    rotor_candidate v[NCAPS];
    rotor_search_stats st[NCAPS];
    rotor_status last; /* the status of the search after the last answer */
} answers;

static void ask(rotor_search_session *s, answers *out) {
    memset(out, 0, sizeof *out);
    int64_t cap = 0;
    rotor_error err = {{0}};
    while (out->n < NCAPS) {
        rotor_status st = rotor_search_session_best(s, cap, 1, &out->v[out->n], &out->st[out->n], &err);
        out->last = st;
        if (st == ROTOR_ERR_NOFIT) return;
        cr_assert_eq(st, ROTOR_OK, "%s", err.msg);
        cap = out->v[out->n++].info.memory - 1;
    }
}

static answers fresh_answers(const rotor_expr *e, const rotor_chip *chip) {
    rotor_search_options so = {.threads = 1};
    rotor_search_session *s;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_search_session_open(e, chip, &so, &s, &err), ROTOR_OK, "%s", err.msg);
    answers a;
    ask(s, &a);
    rotor_search_session_close(s);
    return a;
}

/* The same plans, times and memory, and the same search: one thread, so
 * that the counts are the schedule's too (every count but the wall time). */
static void assert_same(const char *label, const answers *got, const answers *want) {
    cr_assert_eq(got->n, want->n, "%s: answers", label);
    cr_assert_eq(got->last, want->last, "%s: the last search", label);
    for (int i = 0; i < want->n; i++) {
        const rotor_candidate *g = &got->v[i], *w = &want->v[i];
        cr_assert(memcmp(&g->plan, &w->plan, sizeof g->plan) == 0, "%s: answer %d's plan", label, i);
        cr_assert_eq(g->cost.total, w->cost.total, "%s: answer %d's time", label, i);
        cr_assert_eq(g->info.memory, w->info.memory, "%s: answer %d's memory", label, i);
        const rotor_search_stats *gs = &got->st[i], *ws = &want->st[i];
        cr_assert_eq(gs->fops, ws->fops, "%s: answer %d", label, i);
        cr_assert_eq(gs->fops_searched, ws->fops_searched, "%s: answer %d", label, i);
        cr_assert_eq(gs->step_vectors, ws->step_vectors, "%s: answer %d", label, i);
        cr_assert_eq(gs->steps_pruned, ws->steps_pruned, "%s: answer %d", label, i);
        cr_assert_eq(gs->plans, ws->plans, "%s: answer %d", label, i);
        cr_assert_eq(gs->nodes_pruned, ws->nodes_pruned, "%s: answer %d", label, i);
    }
}

/* A strided 3x3 convolution (compound dimensions: the memo's options
 * differ from a contraction's) and a MatMul on the IPU Mk2. */
static rotor_expr conv_expr(void) {
    return make_expr("O[b,f,h,w] += I[b,c,2*h+kh,2*w+kw] * W[f,c,kh,kw]", "b=1,c=32,h=14,kh=3,w=14,kw=3,f=32");
}

static rotor_expr matmul_expr(void) {
    return make_expr("C[m,n] += A[m,k] * B[k,n]", "m=256,k=512,n=512");
}

/* The same axes with other extents: its memo keys (tensor, factors,
 * share) are the first MatMul's, its options not, so a memo kept from
 * the MatMul would give it wrong floors. */
static rotor_expr matmul2_expr(void) {
    return make_expr("C[m,n] += A[m,k] * B[k,n]", "m=512,k=1024,n=128");
}

Test(searchpool, pooled_sessions_answer_as_fresh_ones_after_another_expression, .timeout = 300) {
    rotor_chip chip = mk2();
    rotor_expr conv = conv_expr(), mm = matmul_expr(), mm2 = matmul2_expr();
    answers want_conv = fresh_answers(&conv, &chip), want_mm = fresh_answers(&mm, &chip),
            want_mm2 = fresh_answers(&mm2, &chip);
    cr_assert_geq(want_conv.n, 2, "the convolution's walk goes below its fastest plan");
    cr_assert_geq(want_mm.n, 2, "the MatMul's walk goes below its fastest plan");

    rotor_search_pool *pool = rotor_search_pool_new();
    cr_assert_not_null(pool);
    rotor_search_options so = {.threads = 1, .pool = pool};
    rotor_error err = {{0}};
    /* the conv, then the matmul, then another MatMul, then the conv
     * again, one after the other: each later session borrows the set the
     * one before filled */
    const rotor_expr *order[] = {&conv, &mm, &mm2, &conv};
    const answers *want[] = {&want_conv, &want_mm, &want_mm2, &want_conv};
    const char *label[] = {"conv first", "matmul after the conv", "another matmul after the matmul",
                           "conv after the matmuls"};
    rotor_search_session *open[4];
    for (int k = 0; k < 4; k++) {
        cr_assert_eq(rotor_search_session_open(order[k], &chip, &so, &open[k], &err), ROTOR_OK, "%s", err.msg);
        answers got;
        ask(open[k], &got);
        assert_same(label[k], &got, want[k]);
    }
    /* the first session again, still open, after the others used its set:
     * its own fastest plan as before */
    rotor_candidate again;
    cr_assert_eq(rotor_search_session_best(open[0], 0, 1, &again, NULL, &err), ROTOR_OK, "%s", err.msg);
    cr_assert(memcmp(&again.plan, &want_conv.v[0].plan, sizeof again.plan) == 0);
    cr_assert_eq(again.cost.total, want_conv.v[0].cost.total);
    for (int k = 0; k < 4; k++) rotor_search_session_close(open[k]);
    rotor_search_pool_free(pool);
}

/* rotor_search with a pool (the compiler's frontier searches): the same
 * frontier, point by point, after a session of another expression. */
Test(searchpool, a_pooled_frontier_search_equals_a_fresh_one, .timeout = 300) {
    rotor_chip chip = mk2();
    rotor_expr conv = conv_expr(), mm = matmul_expr();
    rotor_search_options plain = {.pareto = true, .pareto_time_ratio = 2, .threads = 2};
    rotor_search_result want, got;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_search(&mm, &chip, &plain, &want, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_gt(want.npareto, 1);

    rotor_search_pool *pool = rotor_search_pool_new();
    cr_assert_not_null(pool);
    rotor_search_options so = {.threads = 2, .pool = pool};
    rotor_search_session *s;
    cr_assert_eq(rotor_search_session_open(&conv, &chip, &so, &s, &err), ROTOR_OK, "%s", err.msg);
    rotor_candidate c;
    cr_assert_eq(rotor_search_session_best(s, 0, 2, &c, NULL, &err), ROTOR_OK, "%s", err.msg);
    rotor_search_options pooled = plain;
    pooled.pool = pool;
    cr_assert_eq(rotor_search(&mm, &chip, &pooled, &got, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(got.npareto, want.npareto);
    for (int i = 0; i < want.npareto; i++) {
        cr_assert(memcmp(&got.pareto[i].plan, &want.pareto[i].plan, sizeof got.pareto[i].plan) == 0, "point %d", i);
        cr_assert_eq(got.pareto[i].cost.total, want.pareto[i].cost.total, "point %d", i);
        cr_assert_eq(got.pareto[i].info.memory, want.pareto[i].info.memory, "point %d", i);
    }
    rotor_search_result_free(&got);
    rotor_search_result_free(&want);
    rotor_search_session_close(s);
    rotor_search_pool_free(pool);
}

/* Sessions on order[k] and chips[k] in turn, one pool for them all, each
 * answering want[k] (what a fresh session answers). */
static void in_turn(int n, const rotor_expr *const *order, const rotor_chip *const *chips,
                    const answers *const *want, const char *const *label) {
    rotor_search_pool *pool = rotor_search_pool_new();
    cr_assert_not_null(pool);
    rotor_search_options so = {.threads = 1, .pool = pool};
    rotor_error err = {{0}};
    for (int k = 0; k < n; k++) {
        rotor_search_session *s;
        cr_assert_eq(rotor_search_session_open(order[k], chips[k], &so, &s, &err), ROTOR_OK, "%s", err.msg);
        answers got;
        ask(s, &got);
        assert_same(label[k], &got, want[k]);
        rotor_search_session_close(s);
    }
    rotor_search_pool_free(pool);
}

/* Where memory decides (64 KiB cores): a MatMul, then a smaller one whose
 * memo keys are the first's, its options and memory floors smaller (a
 * memo kept from the first would prune plans that fit). */
Test(searchpool, a_pooled_session_on_small_cores_answers_as_a_fresh_one, .timeout = 300) {
    rotor_chip chip = mk2();
    chip.sram_bytes = 65536;
    chip.shift_buffer_bytes = 8192;
    rotor_expr big = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=1024,k=2048,n=2048");
    rotor_expr small = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=512,k=1024,n=1024");
    answers want_big = fresh_answers(&big, &chip), want_small = fresh_answers(&small, &chip);
    const rotor_expr *order[] = {&big, &small, &big};
    const rotor_chip *chips[] = {&chip, &chip, &chip};
    const answers *want[] = {&want_big, &want_small, &want_big};
    const char *label[] = {"big", "small after big", "big after small"};
    in_turn(3, order, chips, want, label);
}

/* One pool for sessions on two chips, as GraphTurbo's instance compiles
 * share their outer compile's (compile.h, search_pool) across group chips:
 * 64 KiB cores (where memory decides, as above), then the same cores with
 * links four times slower, in turn.  With the same cores the memo's keys
 * (class, share, extents) meet, and the options' times differ with the
 * links: the classes hold the chip, so each answers as a fresh session on
 * its chip (checked: with search_tensor_desc's chip left out, "other after
 * first" answers otherwise at its third point). */
Test(searchpool, a_pooled_session_on_another_chip_answers_as_a_fresh_one, .timeout = 300) {
    rotor_chip whole = mk2();
    whole.sram_bytes = 65536;
    whole.shift_buffer_bytes = 8192;
    rotor_chip other = whole;
    other.link_gbps = whole.link_gbps / 4;
    rotor_expr e = make_expr("C[m,n] += A[m,k] * B[k,n]", "m=512,k=1024,n=1024");
    answers want_whole = fresh_answers(&e, &whole), want_other = fresh_answers(&e, &other);
    cr_assert(want_whole.n > 1 && want_other.n > 1, "both frontiers have more than one point");
    cr_assert(memcmp(&want_whole.v[0].cost, &want_other.v[0].cost, sizeof want_whole.v[0].cost),
              "the chips price the fastest plans apart");
    const rotor_expr *order[] = {&e, &e, &e, &e};
    const rotor_chip *chips[] = {&whole, &other, &whole, &other};
    const answers *want[] = {&want_whole, &want_other, &want_whole, &want_other};
    const char *label[] = {"first", "other after first", "first after other", "other again"};
    in_turn(4, order, chips, want, label);
}
