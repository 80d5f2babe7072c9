/* test_gticca.c — GraphTurbo's sub-graph instances on an ICCA chip's core
 * groups (src/compile/gticca.c, docs/graphturbo.md "On an ICCA chip"): a
 * two-convolution chain on a 256-core IPU, its instances compiled on groups
 * of NC / n cores, the choice the cheaper of T10 alone and the best
 * instance count, SRAM kept, and the refusals. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "fixtures.h"
#include "onnxbuild.h"
#include "quantbuild.h"
#include "rotor/compile/compile.h"
#include "rotor/compile/segment.h"
#include "rotor/model/group.h"
#include "rotor/pipeline/pipeline.h"

#define CONV "O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]"

#define NC 256 /* the small chip's cores */
#define CH 16  /* the chain's channels */
#define HW 30  /* its output's height and width */

/* ipu-mk2 cut to 256 cores at its per-core rates: a small ICCA chip (no GB). */
static rotor_chip small_ipu(void) {
    rotor_chip c = mk2();
    return rotor_segment_group_chip(&c, NC);
}

static int value4(rotor_graph *g, const char *name, int64_t a, int64_t b, int64_t c, int64_t d, rotor_role role) {
    int64_t shape[4] = {a, b, c, d};
    int v;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_graph_add_value(g, name, ROTOR_DTYPE_F16, 4, shape, role, &v, &err), ROTOR_OK, "%s",
                 err.msg);
    return v;
}

static void conv(rotor_graph *g, const char *name, int x, int w, int y, int64_t b, int64_t ch, int64_t hw) {
    char dims[128];
    snprintf(dims, sizeof dims, "b=%lld,c=%lld,f=%lld,h=%lld,w=%lld,kh=3,kw=3", (long long)b, (long long)ch,
             (long long)ch, (long long)hw, (long long)hw);
    int in[2] = {x, w};
    rotor_op_desc d = {.name = name, .type = "Conv", .expr = CONV, .dims = dims, .inputs = in, .ninputs = 2,
                       .outputs = &y, .noutputs = 1};
    for (int t = 0; t < ROTOR_MAX_TENSORS; t++) d.tensor_value[t] = -1;
    d.tensor_value[0] = y, d.tensor_value[1] = x, d.tensor_value[2] = w;
    rotor_error err = {{0}};
    int o;
    cr_assert_eq(rotor_graph_add_op(g, &d, &o, &err), ROTOR_OK, "%s", err.msg);
}

/* x[b,C,H+4,H+4] -> 3x3 conv -> y1[b,C,H+2,H+2] -> 3x3 conv -> y2[b,C,H,H]
 * (valid windows: no padding view). */
static void chain(rotor_graph *g, int64_t b) {
    rotor_graph_init(g, "two-conv");
    int x = value4(g, "x", b, CH, HW + 4, HW + 4, ROTOR_ROLE_ACTIVATION);
    int w1 = value4(g, "w1", CH, CH, 3, 3, ROTOR_ROLE_WEIGHT);
    int y1 = value4(g, "y1", b, CH, HW + 2, HW + 2, ROTOR_ROLE_ACTIVATION);
    int w2 = value4(g, "w2", CH, CH, 3, 3, ROTOR_ROLE_WEIGHT);
    int y2 = value4(g, "y2", b, CH, HW, HW, ROTOR_ROLE_ACTIVATION);
    conv(g, "conv1", x, w1, y1, b, CH, HW + 2);
    conv(g, "conv2", y1, w2, y2, b, CH, HW);
    rotor_error err = {{0}};
    cr_assert_eq(rotor_graph_set_output(g, y2, &err), ROTOR_OK, "%s", err.msg);
}

static rotor_status compile_chain(int64_t b, const rotor_chip *chip, bool gt, rotor_compile_result *r,
                                  rotor_error *err) {
    rotor_graph g;
    chain(&g, b);
    rotor_compile_options o = {.graphturbo = gt, .threads = 1};
    rotor_status st = rotor_compile(&g, chip, &o, r, err);
    rotor_graph_free(&g);
    return st;
}

Test(gticca, the_chain_runs_as_the_cheaper_of_t10_alone_and_its_best_instances) {
    rotor_chip chip = small_ipu();
    rotor_error err = {{0}};
    rotor_compile_result r, plain;
    cr_assert_eq(compile_chain(8, &chip, true, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(compile_chain(8, &chip, false, &plain, &err), ROTOR_OK, "%s", err.msg);
    const rotor_gticca_result *gt = &r.gticca;
    cr_assert(gt->done);
    /* the T10 schedule itself is untouched: T10 alone is the plain compile's */
    cr_assert_eq(r.total_s, plain.total_s);
    cr_assert_eq(gt->t10_s, plain.total_s);
    cr_assert_not(plain.gticca.done);
    /* each instance count by hand: the chain at batch 8 / n compiled on a
     * group of NC / n cores, the chip's per-core rates */
    double best = plain.total_s;
    int64_t best_n = 0;
    for (int64_t n = 2; n <= 8; n *= 2) {
        rotor_chip gc = rotor_segment_group_chip(&chip, NC / n);
        cr_assert_eq(gc.cores_per_chip, NC / n);
        rotor_compile_result ri;
        cr_assert_eq(compile_chain(8 / n, &gc, false, &ri, &err), ROTOR_OK, "%s", err.msg);
        cr_assert_leq(ri.peak_bytes, rotor_chip_sram(&chip));
        if (ri.total_s < best) best = ri.total_s, best_n = n;
        rotor_compile_result_free(&ri);
    }
    /* the choice equals the best of the two; never slower than T10 alone */
    cr_assert_eq(gt->total_s, best, "graphturbo %.9g, the best by hand %.9g", gt->total_s, best);
    cr_assert_leq(gt->total_s, gt->t10_s);
    cr_assert_eq(gt->nsg, best_n ? 1 : 0);
    /* alone, this chain is faster under T10 on all 256 cores than split in
     * 2, 4 or 8 (instances win on ResNet-18's blocks, below) */
    cr_assert_eq(best_n, 0);
    if (best_n) {
        const rotor_gticca_sg *s = &gt->sg[0];
        cr_assert_eq(s->first, 0);
        cr_assert_eq(s->last, 1);
        cr_assert_eq(s->instances, best_n);
        cr_assert_eq(s->group_cores, NC / best_n);
        cr_assert_eq(s->grouped_s, best);
        cr_assert_eq(s->penalty_s, 0); /* nothing reads the chain's output after it */
        cr_assert_eq(s->t10_s, plain.total_s);
        /* SRAM per core: the instance beside nothing else (a two-operator graph) */
        cr_assert_leq(s->peak_bytes, rotor_chip_sram(&chip));
    }
    rotor_compile_result_free(&r);
    rotor_compile_result_free(&plain);
}

/* A group has one core at least: on 6 cores the chain at batch 8 is tried
 * as 2 instances of 3 cores and 4 of 1, never 8 or 16 (groups of 0 cores
 * divided by zero in the instance's compile: SIGFPE); on one core, never. */
Test(gticca, no_group_has_fewer_than_one_core) {
    rotor_chip mk = mk2();
    rotor_error err = {{0}};
    int64_t cores[2] = {6, 1}, tried[2] = {2, 0};
    for (int k = 0; k < 2; k++) {
        rotor_chip chip = rotor_segment_group_chip(&mk, cores[k]);
        rotor_compile_result r;
        cr_assert_eq(compile_chain(8, &chip, true, &r, &err), ROTOR_OK, "%s", err.msg);
        cr_assert(r.gticca.done);
        cr_assert_eq(r.gticca.candidates, tried[k], "%lld cores: %d candidates", (long long)cores[k],
                     r.gticca.candidates);
        cr_assert_leq(r.gticca.total_s, r.gticca.t10_s);
        for (int i = 0; i < r.gticca.nsg; i++) cr_assert_geq(r.gticca.sg[i].group_cores, 1);
        rotor_compile_result_free(&r);
    }
}

/* x -> 6 x (MatMul 8 x 256 x 256) -> y, f32: each layer's 256 KiB of
 * weights spread over every core under T10, whole in every group as an
 * instance. */
static void mlp(rotor_graph *g) {
    rotor_graph_init(g, "mlp6");
    rotor_error err = {{0}};
    int64_t act[2] = {8, 256}, wsh[2] = {256, 256};
    int x;
    cr_assert_eq(rotor_graph_add_value(g, "x", ROTOR_DTYPE_F32, 2, act, ROTOR_ROLE_ACTIVATION, &x, &err), ROTOR_OK);
    for (int l = 0; l < 6; l++) {
        char wn[16], yn[16], on[16];
        snprintf(wn, sizeof wn, "w%d", l), snprintf(yn, sizeof yn, "y%d", l), snprintf(on, sizeof on, "fc%d", l);
        int w, y, o;
        cr_assert_eq(rotor_graph_add_value(g, wn, ROTOR_DTYPE_F32, 2, wsh, ROTOR_ROLE_WEIGHT, &w, &err), ROTOR_OK);
        cr_assert_eq(rotor_graph_add_value(g, yn, ROTOR_DTYPE_F32, 2, act, ROTOR_ROLE_ACTIVATION, &y, &err), ROTOR_OK);
        int in[2] = {x, w};
        rotor_op_desc d = {.name = on, .type = "MatMul", .expr = "Y[m,n] += X[m,k] * W[k,n]", .dims = "m=8,k=256,n=256",
                           .inputs = in, .ninputs = 2, .outputs = &y, .noutputs = 1};
        for (int t = 0; t < ROTOR_MAX_TENSORS; t++) d.tensor_value[t] = -1;
        d.tensor_value[0] = y, d.tensor_value[1] = x, d.tensor_value[2] = w;
        cr_assert_eq(rotor_graph_add_op(g, &d, &o, &err), ROTOR_OK, "%s", err.msg);
        x = y;
    }
    cr_assert_eq(rotor_graph_set_output(g, x, &err), ROTOR_OK, "%s", err.msg);
}

/* The chosen sub-graphs as one program: each keeps its weights whole in
 * every group, and the others hold that beside them.  On 8 cores (the
 * chip's rates) the dynamic program takes sub-graphs that each fit beside
 * T10's layouts but not beside each other's copies: with 638,976 B of
 * SRAM both halves as 8 one-core instances, 344,064 B of copies each; with
 * 300,000 B the second half as 4 instances beside the first as 4.  The one
 * that gains least per byte is turned away and the program runs again,
 * once each; with 400,000 B what it takes fits at once.  What is kept
 * fits: every sub-graph's peak and every other operator's, each with the
 * others' excess, and the excess is the instance's idle layouts, compiled
 * by hand, less T10's of the same operators. */
Test(gticca, the_chosen_sub_graphs_fit_the_sram_together) {
    rotor_chip mk = mk2();
    rotor_error err = {{0}};
    int64_t sram[3] = {300000, 400000, 0};
    int dropped[3] = {1, 0, 1};
    for (int k = 0; k < 3; k++) {
        rotor_chip chip = mk; /* 8 cores, the chip's rates */
        cr_assert_eq(rotor_chip_set(&chip, "cores_per_chip=8", &err), ROTOR_OK, "%s", err.msg);
        if (sram[k]) chip.sram_bytes = sram[k];
        rotor_graph g;
        mlp(&g);
        rotor_compile_options o = {.graphturbo = true, .threads = 1};
        rotor_compile_result r;
        cr_assert_eq(rotor_compile(&g, &chip, &o, &r, &err), ROTOR_OK, "%s", err.msg);
        const rotor_gticca_result *gt = &r.gticca;
        cr_assert_eq(gt->dropped, dropped[k], "SRAM %lld: %d dropped", (long long)sram[k], gt->dropped);
        cr_assert_geq(gt->nsg, 1);
        cr_assert_lt(gt->total_s, gt->t10_s);
        int64_t extra = 0, sramb = rotor_chip_sram(&chip);
        bool in_sg[6] = {false};
        for (int i = 0; i < gt->nsg; i++) {
            const rotor_gticca_sg *s = &gt->sg[i];
            extra += s->extra_idle_bytes;
            rotor_graph ig;
            bool ok;
            cr_assert_eq(rotor_gticca_instance(&g, s->first, s->last, s->instances, &ig, &ok, &err), ROTOR_OK);
            cr_assert(ok);
            rotor_chip gc = rotor_segment_group_chip(&chip, s->group_cores);
            rotor_compile_result ri;
            rotor_compile_options io = {.threads = 1};
            cr_assert_eq(rotor_compile(&ig, &gc, &io, &ri, &err), ROTOR_OK, "%s", err.msg);
            int64_t t10_idle = 0;
            for (int op = s->first; op <= s->last; op++) t10_idle += r.ops[op].idle_bytes, in_sg[op] = true;
            cr_assert_eq(s->extra_idle_bytes, ri.idle_bytes - t10_idle);
            cr_assert_gt(s->extra_idle_bytes, 0);
            rotor_compile_result_free(&ri);
            rotor_graph_free(&ig);
        }
        for (int i = 0; i < gt->nsg; i++) cr_assert_leq(gt->sg[i].peak_bytes, sramb);
        for (int op = 0; op < 6; op++)
            if (!in_sg[op])
                cr_assert_leq(r.idle_bytes - r.ops[op].idle_bytes + r.ops[op].live_bytes + r.ops[op].active_bytes + extra,
                              sramb, "fc%d", op);
        rotor_compile_result_free(&r);
        rotor_graph_free(&g);
    }
}

Test(gticca, one_image_does_not_split) {
    rotor_chip chip = small_ipu();
    rotor_error err = {{0}};
    rotor_compile_result r;
    cr_assert_eq(compile_chain(1, &chip, true, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert(r.gticca.done);
    cr_assert_eq(r.gticca.nsg, 0);
    cr_assert_eq(r.gticca.compiles, 0); /* no instance count divides a batch of 1 */
    cr_assert_eq(r.gticca.candidates, 4); /* the one range, n = 2, 4, 8, 16 */
    cr_assert_eq(r.gticca.total_s, r.total_s);
    /* two threads: the ranges that cannot split are done before the walk
     * (gticca.c, compile_gticca_begin), which then runs as without
     * instances; the same schedule, no compile */
    rotor_graph g;
    chain(&g, 1);
    rotor_compile_options o2 = {.graphturbo = true, .threads = 2};
    rotor_compile_result r2;
    cr_assert_eq(rotor_compile(&g, &chip, &o2, &r2, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(r2.gticca.compiles, 0);
    cr_assert_eq(r2.gticca.candidates, 4);
    cr_assert_eq(r2.total_s, r.total_s);
    cr_assert_eq(r2.gticca.total_s, r.total_s);
    rotor_compile_result_free(&r2);
    rotor_graph_free(&g);
    rotor_compile_result_free(&r);
}

/* x[rows x 32] -> MatMul -> Add v -> MatMul, grouped: the Add fuses into
 * the first MatMul, v an input of it outside its expression.  v is an
 * activation of rows x 32 (the rows: aligned) or of 32 (a vector
 * broadcast along the rows, its one dimension the columns'). */
static void epilogue_chain(rotor_graph *grouped, int64_t rows, bool aligned, int *v) {
    rotor_graph g;
    rotor_graph_init(&g, "epilogue");
    int x = mlp_value(&g, "x", rows, 32, false);
    int w1 = mlp_value(&g, "w1", 32, 32, true);
    int w2 = mlp_value(&g, "w2", 32, 32, true);
    int b = mlp_value(&g, "v", aligned ? rows : 0, 32, false);
    int m1 = mlp_value(&g, "mm1", rows, 32, false);
    int a1 = mlp_value(&g, "add1", rows, 32, false);
    int m2 = mlp_value(&g, "mm2", rows, 32, false);
    char dims[32];
    snprintf(dims, sizeof dims, "m=%lld,n=32", (long long)rows);
    add_matmul(&g, "mm1", x, w1, m1, rows, 32, 32);
    mlp_op(&g, "add1", "Add", aligned ? "Y[m,n] = A[m,n] + B[m,n]" : "Y[m,n] = A[m,n] + B[n]", dims, a1, m1, b);
    add_matmul(&g, "mm2", a1, w2, m2, rows, 32, 32);
    rotor_error err = {{0}};
    cr_assert_eq(rotor_graph_set_output(&g, m2, &err), ROTOR_OK, "%s", err.msg);
    rotor_group_stats st;
    cr_assert_eq(rotor_group(&g, grouped, &st, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(st.fused, 1);
    cr_assert_eq(grouped->nops, 2);
    cr_assert_eq(grouped->ops[0].ninputs, 3); /* x, w1 and v, v no tensor of its expression */
    *v = -1;
    for (int i = 0; i < grouped->nvalues; i++)
        if (!strcmp(grouped->values[i].name, "v")) *v = i;
    cr_assert_geq(*v, 0);
    rotor_graph_free(&g);
}

/* An instance slices an activation's first dimension: a fused epilogue's
 * input of the output's rows is sliced with them; a vector broadcast along
 * the rows is not the rows (its one dimension is the columns', 32, which 2
 * divides: slicing it would give each instance half a bias), so the range
 * is no candidate, at 64 rows (its length is not the rows') and at 32
 * (it is, but its rank is not the output's). */
Test(gticca, an_epilogue_input_is_sliced_only_when_it_holds_the_rows) {
    rotor_error err = {{0}};
    for (int k = 0; k < 3; k++) {
        int64_t rows = k == 2 ? 32 : 64;
        bool aligned = k == 0;
        rotor_graph g, ig;
        int v;
        epilogue_chain(&g, rows, aligned, &v);
        bool ok = true;
        cr_assert_eq(rotor_gticca_instance(&g, 0, 1, 2, &ig, &ok, &err), ROTOR_OK, "%s", err.msg);
        cr_assert_eq(ok, aligned, "case %d", k);
        if (aligned) {
            int iv = -1;
            for (int i = 0; i < ig.nvalues; i++)
                if (!strcmp(ig.values[i].name, "v")) iv = i;
            cr_assert_geq(iv, 0);
            cr_assert_eq(ig.values[iv].rank, 2);
            cr_assert_eq(ig.values[iv].shape[0], rows / 2);
            cr_assert_eq(ig.values[iv].shape[1], 32);
        }
        rotor_graph_free(&ig);
        /* the compile agrees: the vector's range is no candidate */
        rotor_chip chip = small_ipu();
        rotor_compile_options o = {.graphturbo = true, .threads = 1};
        rotor_compile_result r;
        cr_assert_eq(rotor_compile(&g, &chip, &o, &r, &err), ROTOR_OK, "%s", err.msg);
        cr_assert(r.gticca.done);
        cr_assert_eq(r.gticca.compiles, aligned ? 4 : 0, "case %d: %d compiles", k, r.gticca.compiles);
        rotor_compile_result_free(&r);
        rotor_graph_free(&g);
    }
}

Test(gticca, a_chip_with_a_global_buffer_or_several_chips_is_refused) {
    const char *names[] = {"stcp920", "ipu-pod4"};
    for (int i = 0; i < 2; i++) {
        rotor_chip chip;
        rotor_error err = {{0}};
        cr_assert_eq(rotor_chip_preset(names[i], &chip, &err), ROTOR_OK, "%s", err.msg);
        rotor_compile_result r;
        cr_assert_eq(compile_chain(8, &chip, true, &r, &err), ROTOR_ERR_INPUT);
        cr_assert(strstr(err.msg, "is not one all-to-all chip without a global buffer") != NULL, "%s", err.msg);
        cr_assert(strstr(err.msg, names[i]) != NULL, "%s", err.msg);
    }
}

/* The instance compiles run side by side (gticca.c, instances_precompile)
 * when the compile has two threads or more, one after another with one:
 * the schedule must not depend on it (a compile's cost kept under another
 * candidate would change the choice or its figures). */
static void same_as_one_thread(rotor_pipeline_options po, const rotor_chip *chip, const rotor_gticca_result *b) {
    rotor_error err = {{0}};
    rotor_pipeline p1;
    po.compile.threads = 1;
    cr_assert_eq(rotor_pipeline_run(&po, chip, &p1, &err), ROTOR_OK, "%s", err.msg);
    const rotor_gticca_result *a = &p1.t10.gticca;
    cr_assert_eq(a->nsg, b->nsg);
    cr_assert_eq(a->candidates, b->candidates);
    cr_assert_eq(a->compiles, b->compiles);
    /* the side-by-side compiles search no shape the loop would have read
     * from the plan store: compiles that share a shape on a group run in
     * one chain, in the loop's order (gticca.c, job_chains) */
    cr_assert_eq(a->searches, b->searches);
    cr_assert_eq(a->searches_run, b->searches_run, "one thread %d searches run, two %d", a->searches_run,
                 b->searches_run);
    cr_assert_eq(a->total_s, b->total_s);
    for (int s = 0; s < a->nsg; s++) {
        cr_assert_eq(a->sg[s].first, b->sg[s].first);
        cr_assert_eq(a->sg[s].instances, b->sg[s].instances);
        cr_assert_eq(a->sg[s].grouped_s, b->sg[s].grouped_s);
        cr_assert_eq(a->sg[s].peak_bytes, b->sg[s].peak_bytes);
    }
    for (int o = 0; o < a->nops; o++) cr_assert_eq(a->lost_bytes[o], b->lost_bytes[o]);
    rotor_pipeline_free(&p1);
}

/* ResNet-18 at batch 2 on ipu-mk2 (batch 8 is docs/graphturbo.md's table,
 * cli_gticca.sh): stage 2's first block runs as 2 instances of one image
 * on 736 cores each, its operators planned as T10 plans them on a 736-core
 * chip at batch 1. */
Test(gticca, resnet18_at_batch_2_runs_a_stage_2_block_as_two_one_image_instances) {
    rotor_chip chip = mk2();
    rotor_error err = {{0}};
    rotor_pipeline p;
    rotor_pipeline_options po = {.model = "resnet-18", .zoo = {.batch = 2}, .t10 = true, .simplify = true};
    po.compile.graphturbo = true;
    po.compile.threads = 2;
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &p, &err), ROTOR_OK, "%s", err.msg);
    const rotor_gticca_result *gt = &p.t10.gticca;
    cr_assert_eq(gt->nsg, 1);
    cr_assert_eq(gt->candidates, 72);
    cr_assert_eq(gt->compiles, 17);
    same_as_one_thread(po, &chip, gt);
    cr_assert_float_eq(gt->t10_s * 1e6, 55.606, 5e-4);
    cr_assert_float_eq(gt->total_s * 1e6, 55.281, 5e-4);
    const rotor_gticca_sg *s = &gt->sg[0];
    cr_assert_str_eq(p.graph.ops[s->first].name, "s2.b0.conv1");
    cr_assert_str_eq(p.graph.ops[s->last].name, "s2.b0.downsample");
    cr_assert_eq(s->instances, 2);
    cr_assert_eq(s->group_cores, 736);
    cr_assert_leq(s->peak_bytes, rotor_chip_sram(&chip));
    cr_assert_lt(s->grouped_s + s->penalty_s, s->t10_s);
    /* the final schedule, every lost hand-off priced at once, is no dearer
     * than the choice's sum */
    cr_assert_leq(gt->total_s, gt->t10_s - (s->t10_s - s->grouped_s - s->penalty_s) + 1e-15);
    /* the instance is T10's compile of the block at batch 1 on a 736-core
     * group; its entry pays at least T10's hand-offs into it */
    rotor_graph ig;
    bool ok;
    cr_assert_eq(rotor_gticca_instance(&p.graph, s->first, s->last, 2, &ig, &ok, &err), ROTOR_OK, "%s", err.msg);
    cr_assert(ok);
    cr_assert_eq(ig.nops, 3);
    cr_assert_eq(ig.ops[0].expr.extent[0], 1); /* b: one image */
    rotor_chip group = rotor_segment_group_chip(&chip, 736);
    rotor_compile_options o = {0};
    rotor_compile_result one;
    cr_assert_eq(rotor_compile(&ig, &group, &o, &one, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(s->compute_s, one.compute_s);
    cr_assert_geq(s->grouped_s, one.total_s);
    cr_assert_float_eq(s->grouped_s * 1e6, 6.166, 5e-4);
    /* a batch of 2 does not split 4 ways */
    rotor_graph none;
    cr_assert_eq(rotor_gticca_instance(&p.graph, s->first, s->last, 4, &none, &ok, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_not(ok);
    rotor_graph_free(&none);
    rotor_graph_free(&ig);
    rotor_compile_result_free(&one);
    rotor_pipeline_free(&p);
}


/* Instances split an operator's first axis, which is the batch of a CNN
 * but the rows of BERT's projections (batch x tokens, a row a token): at
 * batch 1 the zoo's BERT-Base (one layer here) runs its FFN as 8 instances
 * of 16 tokens on 184 cores, where a CNN at batch 1 never groups
 * (one_image_does_not_split); the attention (its first axis the batch, 1)
 * does not split. */
Test(gticca, bert_at_batch_1_splits_its_ffn_by_tokens) {
    rotor_chip chip = mk2();
    rotor_error err = {{0}};
    rotor_pipeline p;
    rotor_pipeline_options po = {.model = "bert-base", .zoo = {.batch = 1, .layers = 1}, .t10 = true,
                                 .simplify = true};
    po.compile.graphturbo = true;
    po.compile.threads = 1;
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &p, &err), ROTOR_OK, "%s", err.msg);
    const rotor_gticca_result *gt = &p.t10.gticca;
    cr_assert_eq(gt->candidates, 8); /* qkv..attn_out's ranges cannot split; the FFN's ranges */
    cr_assert_eq(gt->compiles, 4);   /* ffn_up..ffn_down at n = 2, 4, 8, 16 */
    cr_assert_eq(gt->nsg, 1);
    const rotor_gticca_sg *s = &gt->sg[0];
    cr_assert_str_eq(p.graph.ops[s->first].name, "l0.ffn_up");
    cr_assert_str_eq(p.graph.ops[s->last].name, "l0.ffn_down");
    cr_assert_eq(s->instances, 8);
    cr_assert_eq(s->group_cores, 184);
    cr_assert_float_eq(s->t10_s * 1e6, 10.147, 5e-4);
    cr_assert_float_eq(s->grouped_s * 1e6, 8.198, 5e-4);
    cr_assert_float_eq(gt->t10_s * 1e6, 18.480, 5e-4);
    cr_assert_float_eq(gt->total_s * 1e6, 16.531, 5e-4);
    /* the instance: 16 of the 128 token rows, the residual read by the
     * fused Add sliced with them */
    rotor_graph ig;
    bool ok;
    cr_assert_eq(rotor_gticca_instance(&p.graph, s->first, s->last, 8, &ig, &ok, &err), ROTOR_OK, "%s", err.msg);
    cr_assert(ok);
    cr_assert_eq(ig.nops, 2);
    cr_assert_eq(ig.ops[1].ninputs, 4); /* l0.act, the weight, the bias, l0.residual1 */
    int acts = 0;
    for (int i = 0; i < ig.nvalues; i++) acts += ig.values[i].role == ROTOR_ROLE_ACTIVATION;
    cr_assert_eq(acts, 4); /* l0.norm2, l0.act, l0.residual1, l0.residual2 */
    for (int i = 0; i < ig.nvalues; i++)
        if (ig.values[i].role == ROTOR_ROLE_ACTIVATION) cr_assert_eq(ig.values[i].shape[0], 16, "%s", ig.values[i].name);
    rotor_graph_free(&ig);
    rotor_pipeline_free(&p);
}

/* T10's schedule of p and q, operator for operator. */
static void same_t10(const rotor_compile_result *a, const rotor_compile_result *b) {
    cr_assert_eq(a->nops, b->nops);
    cr_assert_eq(a->searches, b->searches);
    cr_assert_eq(a->ncurve, b->ncurve);
    cr_assert_eq(a->total_s, b->total_s);
    for (int o = 0; o < a->nops; o++) {
        cr_assert_eq(a->ops[o].active, b->ops[o].active, "op %d", o);
        cr_assert_eq(a->ops[o].idle_base, b->ops[o].idle_base, "op %d", o);
        cr_assert_eq(a->ops[o].idle_split, b->ops[o].idle_split, "op %d", o);
        cr_assert_eq(a->ops[o].setup_s, b->ops[o].setup_s, "op %d", o);
        cr_assert_eq(a->ops[o].exec_s, b->ops[o].exec_s, "op %d", o);
    }
}

/* With two threads or more the instance compiles run beside T10's walk, in
 * its team (compile.c, walk_beside; gticca.c, compile_gticca_spawn), the
 * walk's batches of searches as tasks: T10's schedule is the one the walk
 * finds alone (without --group graphturbo, one thread or two), and the
 * instances' choice, compiles and searches run are those of one thread, at
 * two threads and at three (more workers than the walk leaves idle). */
Test(gticca, the_instance_compiles_beside_the_walk_change_neither_plan, .timeout = 120) {
    rotor_chip chip = mk2();
    rotor_error err = {{0}};
    rotor_pipeline_options po = {.model = "resnet-18", .zoo = {.batch = 2}, .t10 = true, .simplify = true};
    rotor_pipeline alone1, alone2;
    po.compile.threads = 1;
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &alone1, &err), ROTOR_OK, "%s", err.msg);
    po.compile.threads = 2;
    cr_assert_eq(rotor_pipeline_run(&po, &chip, &alone2, &err), ROTOR_OK, "%s", err.msg);
    same_t10(&alone1.t10, &alone2.t10);
    po.compile.graphturbo = true;
    for (int threads = 2; threads <= 3; threads++) {
        rotor_pipeline p;
        po.compile.threads = threads;
        cr_assert_eq(rotor_pipeline_run(&po, &chip, &p, &err), ROTOR_OK, "%s", err.msg);
        same_t10(&alone1.t10, &p.t10);
        cr_assert_eq(p.t10.gticca.compiles, 17);
        same_as_one_thread(po, &chip, &p.t10.gticca);
        rotor_pipeline_free(&p);
    }
    rotor_pipeline_free(&alone1);
    rotor_pipeline_free(&alone2);
}

/* The bytes of d's cache entries (.rpc, .rho, .ren: what the size limit
 * counts, compile/plancache.c). */
static int64_t cache_bytes(const char *d) {
    DIR *dir = opendir(d);
    cr_assert(dir, "%s", d);
    int64_t n = 0;
    struct dirent *de;
    while ((de = readdir(dir))) {
        size_t len = strlen(de->d_name);
        if (len < 5 || (strcmp(de->d_name + len - 4, ".rpc") && strcmp(de->d_name + len - 4, ".rho") &&
                        strcmp(de->d_name + len - 4, ".ren")))
            continue;
        char p[512];
        struct stat sb;
        snprintf(p, sizeof p, "%s/%s", d, de->d_name);
        cr_assert_eq(stat(p, &sb), 0, "%s", p);
        n += (int64_t)sb.st_size;
    }
    closedir(dir);
    return n;
}

/* The chain at batch 8 compiled into the cache directory d. */
static double compile_cached(const char *d, bool gt, int64_t limit, bool later) {
    rotor_chip chip = small_ipu();
    rotor_graph g;
    chain(&g, 8);
    rotor_compile_options o = {.graphturbo = gt, .threads = 1, .cache_dir = d, .cache_limit = limit,
                               .cache_evict_later = later};
    rotor_compile_result r;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_compile(&g, &chip, &o, &r, &err), ROTOR_OK, "%s", err.msg);
    double s = gt ? r.gticca.total_s : r.total_s;
    if (gt) cr_assert_eq(r.gticca.compiles, 3); /* n = 2, 4, 8 */
    rotor_compile_result_free(&r);
    rotor_graph_free(&g);
    return s;
}

/* Every instance compile writes the disk cache, and each scanned the whole
 * directory to keep its size limit (hundreds of scans on DenseNet-121):
 * they leave it to the compile that runs them, which evicts once at its end
 * (compile.c, cache_store).  Here T10 alone fills the directory first, so
 * the compile with instances finds its own entries there and writes nothing
 * itself: only the instances' entries push the directory over the limit,
 * and only that one eviction brings it back. */
Test(gticca, the_instance_compiles_leave_the_cache_size_to_one_eviction) {
    char *all = fixture_tmp_dir("gticca"), *d = fixture_tmp_dir("gticca"), *later = fixture_tmp_dir("gticca");
    double s = compile_cached(all, true, 0, false);
    int64_t with_instances = cache_bytes(all);
    cr_assert_eq(compile_cached(d, false, 0, false), compile_cached(later, false, 0, false));
    int64_t t10 = cache_bytes(d);
    cr_assert_gt(with_instances, t10 + 1000, "the instance compiles wrote entries of their own");
    int64_t limit = t10 + (with_instances - t10) / 2;
    /* the same choice, the directory within its limit after the call */
    cr_assert_eq(compile_cached(d, true, limit, false), s);
    cr_assert_leq(cache_bytes(d), limit);
    /* a caller that evicts later: nothing evicted, every entry written */
    cr_assert_eq(compile_cached(later, true, limit, true), s);
    cr_assert_eq(cache_bytes(later), with_instances);
    fixture_rm_dir(all);
    fixture_rm_dir(d);
    fixture_rm_dir(later);
}

/* A group of N/n cores takes its share of every rate the chip gives: of
 * int8_tops too, or an 8-bit contraction on the group would run n times
 * too fast. */
Test(gticca, a_group_takes_its_share_of_every_rate) {
    rotor_chip c = mk2();
    c.int8_tops = 500;
    rotor_chip gc = rotor_segment_group_chip(&c, 368);
    cr_assert_eq(gc.cores_per_chip, 368);
    cr_assert_float_eq(gc.matrix_tflops, 62.5, 1e-12);
    cr_assert_float_eq(gc.vector_tflops, 15.625, 1e-12);
    cr_assert_float_eq(gc.int8_tops, 125, 1e-12);
}

/* x (float32 [512,256]) -> [MatMul -> MatMul ->] QuantizeLinear ->
 * QLinearMatMul -> QLinearMatMul -> DequantizeLinear -> y: with the float
 * MatMuls, a float and an 8-bit range of one shape. */
static void float_then_quant(rotor_graph *g, bool with_float) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(512, 256));
    mb_output(&b, "y");
    uint64_t seed = 3;
    mb_init_random(&b, "f1", DIMS(256, 256), -0.05, 0.1, &seed);
    mb_init_random(&b, "f2", DIMS(256, 256), -0.05, 0.1, &seed);
    ints(&b, "w1", 3, 65536, DIMS(256, 256), 5, -60, 121);
    ints(&b, "w2", 3, 65536, DIMS(256, 256), 9, -60, 121);
    ints(&b, "wz", 3, 1, 0, NULL, 0, 0, 1);
    quant_scalars(&b);
    floats(&b, "hs", 0, NULL, 1, (const float[]){0.5f});
    floats(&b, "ws", 0, NULL, 1, (const float[]){0.004f});
    if (with_float) {
        mb_node(&b, "MatMul", "fm1", "x f1", "a1");
        mb_node(&b, "MatMul", "fm2", "a1 f2", "a2");
    }
    mb_node(&b, "QuantizeLinear", "quant", with_float ? "a2 xs xz" : "x xs xz", "xq");
    mb_node(&b, "QLinearMatMul", "mm1", "xq xs xz w1 ws wz hs hz", "h");
    mb_node(&b, "QLinearMatMul", "mm2", "h hs hz w2 ws wz ys yz", "yq");
    mb_node(&b, "DequantizeLinear", "dq", "yq ys yz", "y");
    rotor_error err = {{0}};
    cr_assert_eq(mb_load(&b, NULL, g, NULL, &err), ROTOR_OK, "%s", err.msg);
    mb_free(&b);
}

static const rotor_gticca_sg *sg_from(const rotor_graph *g, const rotor_gticca_result *gt, const char *first) {
    for (int k = 0; k < gt->nsg; k++)
        if (!strcmp(g->ops[gt->sg[k].first].name, first)) return &gt->sg[k];
    return NULL;
}

/* The instance compiles are memoised by what they read of a range: the
 * 8-bit QLinearMatMuls (element size 1) and the float MatMuls of the same
 * shape are two entries, so the quantized range is priced as when it is
 * alone and runs as instances beside the float one.  Their memo shared one
 * key until 2026-12-02: the quantized range took the float range's price
 * (1.616 us against its own 1.316) and lost to T10.  With an int8 rate
 * (int8_tops 500 on ipu-mk2) its instances compute no faster than the
 * chip's peak: the group chip's int8 rate is its share. */
Test(gticca, a_float_and_a_quantized_range_of_one_shape_are_priced_apart) {
    rotor_chip chip = mk2();
    rotor_graph both, alone;
    float_then_quant(&both, true);
    float_then_quant(&alone, false);
    for (int rate = 0; rate <= 1; rate++) {
        chip.int8_tops = rate ? 500 : 0;
        rotor_compile_options o = {.graphturbo = true};
        rotor_compile_result rb, ra;
        rotor_error err = {{0}};
        cr_assert_eq(rotor_compile(&both, &chip, &o, &rb, &err), ROTOR_OK, "%s", err.msg);
        cr_assert_eq(rotor_compile(&alone, &chip, &o, &ra, &err), ROTOR_OK, "%s", err.msg);
        cr_assert_eq(rb.gticca.compiles, rb.gticca.candidates, "no two ranges share an instance compile");
        const rotor_gticca_sg *qb = sg_from(&both, &rb.gticca, "mm1"), *qa = sg_from(&alone, &ra.gticca, "mm1"),
                              *fb = sg_from(&both, &rb.gticca, "fm1");
        cr_assert(qa && qb && fb, "int8_tops %d: both ranges run as instances", rate ? 500 : 0);
        cr_assert_eq(qb->instances, qa->instances);
        cr_assert_eq(qb->grouped_s, qa->grouped_s);
        cr_assert_eq(qb->compute_s, qa->compute_s);
        cr_assert_neq(qb->grouped_s, fb->grouped_s);
        /* no faster than the chip's peak: two 512 x 256 x 256 contractions
         * at 250 TFLOP/s, or at the int8 rate (0.537 or 0.268 us); a group
         * with the whole chip's int8 rate computed 0.096 us */
        double floor = 2.0 * 2 * 512 * 256 * 256 / ((rate ? 500 : 250) * 1e12);
        cr_assert_geq(qb->compute_s, floor * (1 - 1e-9), "%.6g us below the peak's %.6g", qb->compute_s * 1e6,
                      floor * 1e6);
        rotor_compile_result_free(&rb);
        rotor_compile_result_free(&ra);
    }
    rotor_graph_free(&both);
    rotor_graph_free(&alone);
}
