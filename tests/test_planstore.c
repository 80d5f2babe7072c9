/* test_planstore.c — the in-memory plan store (src/compile/planstore.c;
 * docs/compile.md, "Plan store"): compiles that share one decide exactly as
 * compiles without it (the program's bytes, the frontiers bit for bit), the
 * second compile of a graph searches nothing, with or without a disk cache,
 * on several threads at once, and GraphTurbo's instance compiles through it. */
#include <criterion/criterion.h>

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "rotor/compile/compile.h"
#include "rotor/compile/planstore.h"
#include "rotor/compile/program.h"
#include "rotor/pipeline/pipeline.h"

/* The program's text of r (malloc'd). */
static char *program_of(const rotor_graph *g, const rotor_chip *chip, const rotor_compile_result *r) {
    char *text = NULL;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_program_write(g, chip, r, &text, &err), ROTOR_OK, "%s", err.msg);
    return text;
}

/* Same program bytes, total, searches and frontiers (each point's memory
 * and cost bit for bit). */
static void assert_same(const rotor_graph *g, const rotor_chip *chip, const rotor_compile_result *a,
                        const rotor_compile_result *b) {
    char *pa = program_of(g, chip, a), *pb = program_of(g, chip, b);
    cr_assert_str_eq(pa, pb);
    free(pa);
    free(pb);
    cr_assert(!memcmp(&a->total_s, &b->total_s, sizeof(double)));
    cr_assert_eq(a->searches, b->searches);
    cr_assert_eq(a->nfrontiers, b->nfrontiers);
    for (int i = 0; i < a->nfrontiers; i++) {
        cr_assert_eq(a->frontiers[i].n, b->frontiers[i].n);
        for (int j = 0; j < a->frontiers[i].n; j++) {
            const rotor_candidate *x = &a->frontiers[i].v[j], *y = &b->frontiers[i].v[j];
            cr_assert_eq(x->info.memory, y->info.memory);
            cr_assert(!memcmp(&x->cost, &y->cost, sizeof x->cost));
            cr_assert(!memcmp(x->plan.fop, y->plan.fop, sizeof x->plan.fop));
        }
    }
}

static void compile_with(const rotor_graph *g, const rotor_chip *chip, rotor_plan_store *s, const char *dir,
                         rotor_compile_result *r) {
    rotor_compile_options o = {.plan_store = s, .cache_dir = dir, .threads = 1};
    rotor_error err = {{0}};
    cr_assert_eq(rotor_compile(g, chip, &o, r, &err), ROTOR_OK, "%s", err.msg);
}

/* Three 3x3 convolutions on 92 cores with 4096 bytes of SRAM (as
 * test_plancache's time-capped test): the walk grows the cut frontiers
 * point by point, so the entries hold points, tails and slow answers. */
static rotor_chip small_mk2(void) {
    rotor_chip chip = mk2();
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_set(&chip, "cores_per_chip=92", &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_chip_set(&chip, "sram_bytes=4096", &err), ROTOR_OK, "%s", err.msg);
    return chip;
}

Test(planstore, a_second_compile_through_the_store_searches_nothing_and_decides_the_same) {
    rotor_graph g;
    conv3_chain(&g);
    rotor_chip chip = small_mk2();
    rotor_plan_store *s = rotor_plan_store_new();
    cr_assert_not_null(s);
    rotor_compile_result none, first, second;
    compile_with(&g, &chip, NULL, NULL, &none);
    compile_with(&g, &chip, s, NULL, &first);
    cr_assert_eq(none.cache_hits, 0);
    cr_assert_eq(first.cache_hits, 0, "an empty store answers nothing");
    cr_assert_gt(first.searches, first.nfrontiers, "the walk searched under caps too: the test proves more");
    cr_assert_eq(rotor_plan_store_count(s), first.nfrontiers);
    compile_with(&g, &chip, s, NULL, &second);
    cr_assert_eq(second.cache_hits, second.searches, "second: %d of %d searches from the store", second.cache_hits,
                 second.searches);
    cr_assert_eq(rotor_plan_store_count(s), first.nfrontiers, "nothing new to keep");
    assert_same(&g, &chip, &none, &first);
    assert_same(&g, &chip, &none, &second);
    rotor_compile_result_free(&none);
    rotor_compile_result_free(&first);
    rotor_compile_result_free(&second);
    rotor_plan_store_free(s);
    rotor_graph_free(&g);
}

/* With a disk cache too: a compile with a new store reads the disk's
 * entries, keeps them in its store, and a compile through that store alone
 * (no directory) then searches nothing. */
Test(planstore, the_store_reads_the_disk_first_and_answers_without_it) {
    char d[] = "/tmp/rotor-planstore-XXXXXX";
    cr_assert(mkdtemp(d));
    rotor_graph g;
    ffn_stack(&g, 2, 128, 1024, 4096);
    rotor_chip chip = mk2();
    rotor_plan_store *a = rotor_plan_store_new(), *b = rotor_plan_store_new();
    rotor_compile_result none, cold, disk, mem;
    compile_with(&g, &chip, NULL, NULL, &none);
    compile_with(&g, &chip, a, d, &cold);
    cr_assert_eq(cold.cache_hits, 0);
    compile_with(&g, &chip, b, d, &disk);
    cr_assert_eq(disk.cache_hits, disk.searches, "from the disk");
    compile_with(&g, &chip, b, NULL, &mem);
    cr_assert_eq(mem.cache_hits, mem.searches, "from the store the disk filled");
    assert_same(&g, &chip, &none, &cold);
    assert_same(&g, &chip, &none, &disk);
    assert_same(&g, &chip, &none, &mem);
    rotor_compile_result_free(&none);
    rotor_compile_result_free(&cold);
    rotor_compile_result_free(&disk);
    rotor_compile_result_free(&mem);
    rotor_plan_store_free(a);
    rotor_plan_store_free(b);
    rotor_graph_free(&g);
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
    cr_assert_eq(system(cmd), 0);
}

/* Four compiles on two threads through one store, in whatever order they
 * finish: each decides as the compile without it. */
Test(planstore, compiles_on_threads_sharing_a_store_decide_as_alone) {
    rotor_graph g;
    conv3_chain(&g);
    rotor_chip chip = small_mk2();
    rotor_plan_store *s = rotor_plan_store_new();
    rotor_compile_result none, r[4];
    compile_with(&g, &chip, NULL, NULL, &none);
    rotor_status st[4];
#pragma omp parallel for num_threads(2) schedule(dynamic, 1)
    for (int k = 0; k < 4; k++) {
        rotor_compile_options o = {.plan_store = s, .threads = 1};
        rotor_error err;
        st[k] = rotor_compile(&g, &chip, &o, &r[k], &err);
    }
    for (int k = 0; k < 4; k++) {
        cr_assert_eq(st[k], ROTOR_OK);
        assert_same(&g, &chip, &none, &r[k]);
        rotor_compile_result_free(&r[k]);
    }
    rotor_compile_result again;
    compile_with(&g, &chip, s, NULL, &again);
    cr_assert_eq(again.cache_hits, again.searches, "the merged entries answer every search");
    assert_same(&g, &chip, &none, &again);
    rotor_compile_result_free(&again);
    rotor_compile_result_free(&none);
    rotor_plan_store_free(s);
    rotor_graph_free(&g);
}

/* Merging keeps every answer the store does not already imply, once. */
Test(planstore, put_merges_answers_once) {
    rotor_plan_store *s = rotor_plan_store_new();
    rotor_error err;
    rotor_candidate c0, c1;
    memset(&c0, 0, sizeof c0);
    memset(&c1, 0, sizeof c1);
    c0.cost.total = 1e-6, c0.info.memory = 800;
    c1.cost.total = 2e-6, c1.info.memory = 300;
    rotor_plancache_entry e = {.key = strdup("k")};
    cr_assert_eq(rotor_plancache_set_first(&e, &c0, 1, true, 1.5e-6, &err), ROTOR_OK);
    cr_assert_eq(rotor_plancache_note_point(&e, 500, &c1, &err), ROTOR_OK);
    cr_assert_eq(rotor_plan_store_put(s, &e, &err), ROTOR_OK);
    cr_assert_eq(rotor_plan_store_put(s, &e, &err), ROTOR_OK, "again: nothing new");
    rotor_plancache_entry f = {.key = strdup("k")};
    cr_assert_eq(rotor_plancache_note_slow(&f, 200, 3e-6, &err), ROTOR_OK);
    cr_assert_eq(rotor_plancache_note_point(&f, 400, &c1, &err), ROTOR_OK); /* implied by [300, 500] */
    cr_assert_eq(rotor_plan_store_put(s, &f, &err), ROTOR_OK);
    cr_assert_eq(rotor_plan_store_count(s), 1);
    rotor_plancache_entry got;
    bool found;
    cr_assert_eq(rotor_plan_store_get(s, "k", &got, &found, &err), ROTOR_OK);
    cr_assert(found);
    cr_assert_not(got.dirty);
    cr_assert(got.has_first && got.first_truncated && got.first_tcut == 1.5e-6 && got.nfirst == 1);
    cr_assert_eq(got.first[0].info.memory, 800);
    cr_assert_eq(got.nanswers, 2, "the point under 500 and the slow answer under 200");
    rotor_candidate out;
    cr_assert_eq(rotor_plancache_point(&got, 350, &out), 1);
    cr_assert_eq(out.info.memory, 300);
    cr_assert(rotor_plancache_slow(&got, 150, 2e-6));
    rotor_plancache_entry miss;
    cr_assert_eq(rotor_plan_store_get(s, "other", &miss, &found, &err), ROTOR_OK);
    cr_assert_not(found);
    cr_assert_str_eq(miss.key, "other");
    cr_assert_not(miss.has_first);
    rotor_plancache_entry_free(&miss);
    rotor_plancache_entry_free(&got);
    rotor_plancache_entry_free(&e);
    rotor_plancache_entry_free(&f);
    rotor_plan_store_free(s);
}

/* GraphTurbo's instance compiles (gticca.c) through the caller's store:
 * the same choice as with their own; a second compile adds no shape. */
Test(planstore, graphturbo_through_the_callers_store_chooses_the_same) {
    rotor_chip chip = mk2();
    rotor_error err = {{0}};
    rotor_pipeline own, shared, again;
    rotor_pipeline_options po = {.model = "resnet-18", .zoo = {.batch = 2}, .t10 = true, .simplify = true};
    po.compile.graphturbo = true;
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &own, &err), ROTOR_OK, "%s", err.msg);
    rotor_plan_store *s = rotor_plan_store_new();
    po.compile.plan_store = s;
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &shared, &err), ROTOR_OK, "%s", err.msg);
    int shapes = rotor_plan_store_count(s);
    cr_assert_gt(shapes, shared.t10.nfrontiers, "the instances' shapes (group chips) beside T10's");
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &again, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(again.t10.cache_hits, again.t10.searches);
    cr_assert_eq(rotor_plan_store_count(s), shapes);
    const rotor_pipeline *ps[2] = {&shared, &again};
    for (int k = 0; k < 2; k++) {
        const rotor_gticca_result *a = &own.t10.gticca, *b = &ps[k]->t10.gticca;
        cr_assert(!memcmp(&a->total_s, &b->total_s, sizeof(double)));
        cr_assert_eq(a->nsg, b->nsg);
        cr_assert_eq(a->compiles, b->compiles);
        for (int i = 0; i < a->nsg; i++) {
            cr_assert_eq(a->sg[i].first, b->sg[i].first);
            cr_assert_eq(a->sg[i].instances, b->sg[i].instances);
            cr_assert(!memcmp(&a->sg[i].grouped_s, &b->sg[i].grouped_s, sizeof(double)));
            cr_assert(!memcmp(&a->sg[i].compute_s, &b->sg[i].compute_s, sizeof(double)));
            cr_assert_eq(a->sg[i].peak_bytes, b->sg[i].peak_bytes);
        }
    }
    rotor_pipeline_free(&own);
    rotor_pipeline_free(&shared);
    rotor_pipeline_free(&again);
    rotor_plan_store_free(s);
}
