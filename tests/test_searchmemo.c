/* tests for searchmemo.c: a sweep's frontiers shared between schedules on
 * chips that differ only in their HBM (docs/schedule.md, "Sweeps"). */
#include <criterion/criterion.h>
#include <string.h>

#include "rotor/hbm/schedule.h"
#include "rotor/hbm/searchmemo.h"
#include "rotor/model/zoo.h"
#include "fixtures.h"

static rotor_graph llm_layer(void) {
    rotor_graph g;
    rotor_error err;
    rotor_zoo_options zo = {.batch = 1, .layers = 1, .phase = ROTOR_PHASE_DECODE};
    cr_assert_eq(rotor_zoo_build("llama2-7b", &zo, &g, &err), ROTOR_OK, "%s", err.msg);
    return g;
}

static rotor_schedule *build(const rotor_graph *g, const rotor_chip *c, rotor_search_memo *memo) {
    rotor_schedule_options so = {.threads = 1, .memo = memo};
    rotor_schedule *s;
    rotor_error err;
    cr_assert_eq(rotor_schedule_build(g, c, &so, &s, &err), ROTOR_OK, "%s", err.msg);
    return s;
}

/* Every operator's frontier, candidate by candidate, and every design's
 * latency: the same schedule. */
static void assert_same(const rotor_schedule *a, const rotor_schedule *b) {
    cr_assert_eq(a->nops, b->nops);
    cr_assert_eq(a->searches, b->searches);
    for (int i = 0; i < a->nops; i++) {
        cr_assert_eq(a->ops[i].nplans, b->ops[i].nplans, "op %d", i);
        cr_assert_eq(a->ops[i].vendor, b->ops[i].vendor, "op %d", i);
        if (!a->ops[i].vendor) /* a vendor op has one plan at the vector rate, no frontier */
            cr_assert(!memcmp(a->ops[i].cands, b->ops[i].cands, (size_t)a->ops[i].nplans * sizeof *a->ops[i].cands),
                      "op %d's frontier", i);
    }
    for (int d = 0; d < ROTOR_PRELOAD_NDESIGNS; d++) {
        rotor_schedule_report ra, rb;
        rotor_error err;
        cr_assert_eq(rotor_schedule_run(a, (rotor_preload_design)d, &ra, &err), ROTOR_OK, "%s", err.msg);
        cr_assert_eq(rotor_schedule_run(b, (rotor_preload_design)d, &rb, &err), ROTOR_OK, "%s", err.msg);
        cr_assert_eq(ra.latency_s, rb.latency_s, "design %d", d);
        rotor_schedule_report_free(&ra);
        rotor_schedule_report_free(&rb);
    }
}

Test(searchmemo, a_second_hbm_bandwidth_takes_every_frontier_from_the_memo_and_schedules_the_same) {
    rotor_graph g = llm_layer();
    rotor_chip fast = pod4(), slow = fast;
    slow.hbm_gbps = fast.hbm_gbps / 4;
    rotor_search_memo *m = rotor_search_memo_new();
    cr_assert_not_null(m);
    rotor_schedule *a = build(&g, &fast, m);
    int shapes = a->searches;
    cr_assert_gt(shapes, 3, "a llama layer has several distinct shard shapes");
    cr_assert_eq(rotor_search_memo_size(m), shapes);
    cr_assert_eq(rotor_search_memo_hits(m), 0);
    /* the slower HBM: every frontier from the memo, none searched again */
    rotor_schedule *b = build(&g, &slow, m);
    cr_assert_eq(rotor_search_memo_hits(m), shapes);
    cr_assert_eq(rotor_search_memo_size(m), shapes);
    rotor_schedule *ref = build(&g, &slow, NULL);
    assert_same(b, ref);
    /* the HBM differs, so the schedules do: the memo kept no schedule */
    rotor_schedule_report rf, rs;
    rotor_error err;
    cr_assert_eq(rotor_schedule_run(a, ROTOR_PRELOAD_FULL, &rf, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_schedule_run(b, ROTOR_PRELOAD_FULL, &rs, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_gt(rs.latency_s, rf.latency_s);
    rotor_schedule_report_free(&rf);
    rotor_schedule_report_free(&rs);
    rotor_schedule_free(a);
    rotor_schedule_free(b);
    rotor_schedule_free(ref);
    rotor_search_memo_free(m);
    rotor_graph_free(&g);
}

Test(searchmemo, a_field_the_search_reads_is_in_the_key_and_hbm_fields_are_not) {
    rotor_chip c = pod4(), d = c;
    const char *shape = "C[m,n] += A[m,k] * B[k,n]|m=1,k=4096,n=1024";
    char *base = rotor_search_memo_key(shape, &c, ROTOR_SOLVER_EXACT);
    d.hbm_gbps *= 2;
    d.hbm_bytes /= 2;
    d.hbm_controllers = 2;
    d.interchip_gbps *= 3;
    char *hbm = rotor_search_memo_key(shape, &d, ROTOR_SOLVER_EXACT);
    cr_assert_str_eq(base, hbm);
    d = c;
    d.sram_bytes -= 1024;
    char *sram = rotor_search_memo_key(shape, &d, ROTOR_SOLVER_EXACT);
    cr_assert_str_neq(base, sram);
    d = c;
    d.link_gbps *= 2;
    char *link = rotor_search_memo_key(shape, &d, ROTOR_SOLVER_EXACT);
    cr_assert_str_neq(base, link);
    char *fast = rotor_search_memo_key(shape, &c, ROTOR_SOLVER_FAST);
    cr_assert_str_neq(base, fast);
    free(base), free(hbm), free(sram), free(link), free(fast);
}

Test(searchmemo, a_kept_frontier_is_a_copy_that_outlives_the_result_put) {
    rotor_search_memo *m = rotor_search_memo_new();
    rotor_candidate v[2];
    memset(v, 0, sizeof v);
    v[0].cost.total = 1e-6, v[1].cost.total = 2e-6;
    rotor_search_result r = {.pareto = malloc(sizeof v), .npareto = 2};
    memcpy(r.pareto, v, sizeof v);
    r.best = v[0];
    rotor_error err;
    cr_assert_eq(rotor_search_memo_put(m, "k", &r, &err), ROTOR_OK);
    r.pareto[0].cost.total = 9; /* the caller's own frontier changes; the memo's does not */
    rotor_search_result_free(&r);
    rotor_search_result got;
    bool found = false;
    cr_assert_eq(rotor_search_memo_get(m, "other", &got, &found, &err), ROTOR_OK);
    cr_assert(!found);
    cr_assert_eq(rotor_search_memo_get(m, "k", &got, &found, &err), ROTOR_OK);
    cr_assert(found);
    cr_assert_eq(got.npareto, 2);
    cr_assert_eq(got.pareto[0].cost.total, 1e-6);
    cr_assert_eq(got.pareto[1].cost.total, 2e-6);
    cr_assert_eq(rotor_search_memo_hits(m), 1);
    rotor_search_result_free(&got);
    rotor_search_memo_free(m);
}
