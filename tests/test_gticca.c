/* test_gticca.c — GraphTurbo's sub-graph instances on an ICCA chip's core
 * groups (src/compile/gticca.c, docs/graphturbo.md "On an ICCA chip"): a
 * two-convolution chain on a 256-core IPU, its instances compiled on groups
 * of NC / n cores, the choice the cheaper of T10 alone and the best
 * instance count, SRAM kept, and the refusals. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fixtures.h"
#include "rotor/compile/compile.h"
#include "rotor/compile/segment.h"

#define CONV "O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]"

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
    snprintf(dims, sizeof dims, "b=%lld,c=%lld,f=%lld,h=%lld,w=%lld,kh=3,kw=3", (long long)b, (long long)ch, (long long)ch, (long long)hw,
             (long long)hw);
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
#ifndef NC
#define NC 256
#endif
#ifndef CH
#define CH 16
#endif
#ifndef HW
#define HW 30
#endif
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
    fprintf(stderr, "DBG best_n %lld best %.9g t10 %.9g\n", (long long)best_n, best, plain.total_s);
    /* the choice equals the best of the two; never slower than T10 alone */
    cr_assert_eq(gt->total_s, best, "graphturbo %.9g, the best by hand %.9g", gt->total_s, best);
    cr_assert_leq(gt->total_s, gt->t10_s);
    cr_assert_eq(gt->nsg, best_n ? 1 : 0);
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
    rotor_compile_result_free(&r);
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
