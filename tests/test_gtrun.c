/* test_gtrun.c — GraphTurbo's instances on real data (src/run/gtrun.c;
 * docs/run.md, "GraphTurbo's instances on real data"; issue 42 item 8):
 * two 3x3 convolutions split into four instances along h, each recomputing
 * its halo rows of the intermediate, compute the ungrouped outputs; a
 * wrong halo does not. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/gtint.h"
#include "onnxbuild.h"
#include "quantbuild.h"
#include "rotor/model/graphturbo.h"
#include "rotor/run/gtrun.h"
#include "rotor/run/run.h"

/* A float32 initializer of n elements of real, unrounded-looking values:
 * sin of a per-tensor phase, scaled. */
static void weights(mb *b, const char *name, int64_t n, int rank, const int64_t *dims, double phase, double scale) {
    Onnx__TensorProto *t = mb_init_tensor(b, name, 1, rank, dims, NULL);
    t->float_data = mb_alloc(b, sizeof(float) * (size_t)n);
    for (t->n_float_data = 0; t->n_float_data < (size_t)n; t->n_float_data++)
        t->float_data[t->n_float_data] = (float)(scale * sin(phase + 1.7 * (double)t->n_float_data));
}

/* A 3x3 Conv node (pads 1) named name, reading ins, writing out. */
static Onnx__NodeProto *conv3x3(mb *b, const char *name, const char *ins, const char *out) {
    Onnx__NodeProto *n = mb_node(b, "Conv", name, ins, out);
    mb_attr_ints(b, n, "pads", 4, (const int64_t[]){1, 1, 1, 1});
    mb_attr_ints(b, n, "kernel_shape", 2, (const int64_t[]){3, 3});
    return n;
}

/* x [1,4,16,16] -> Conv 3x3 (pads 1, bias) -> h -> Conv 3x3 (pads 1, bias) -> y. */
static void two_convs(rotor_graph *g) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(1, 4, 16, 16));
    mb_output(&b, "y");
    weights(&b, "w1", 144, DIMS(4, 4, 3, 3), 0.1, 0.3);
    weights(&b, "b1", 4, DIMS(4), 0.2, 0.1);
    weights(&b, "w2", 144, DIMS(4, 4, 3, 3), 0.3, 0.3);
    weights(&b, "b2", 4, DIMS(4), 0.4, 0.1);
    conv3x3(&b, "conv1", "x w1 b1", "h");
    conv3x3(&b, "conv2", "h w2 b2", "y");
    rotor_error err = {{0}};
    rotor_onnx_options o = {.keep_data = true};
    cr_assert_eq(mb_load(&b, &o, g, NULL, &err), ROTOR_OK, "%s", err.msg);
    mb_free(&b);
}

/* STCP920's cluster shape (8 cores, 8 MB GB) with an LB of 8 x 448 bytes,
 * and no cost model (mm_rate 0): the split is Algorithm 1's alone.  The
 * pair's footprint is 8192 bytes whole; in halves an instance does not fit
 * 3584, in quarters it does. */
static const rotor_gt_limits LIMITS = {.lb_bytes = 3584, .gb_bytes = 8 << 20, .cores = 8};

typedef struct fixture {
    rotor_graph g;
    rotor_gt_schedule s;
    double **in;
    int x, h, y;
    rotor_run_result direct;
} fixture;

static void fixture_make(fixture *f) {
    rotor_error err = {{0}};
    two_convs(&f->g);
    f->x = rotor_graph_find_value(&f->g, "x");
    f->h = rotor_graph_find_value(&f->g, "h");
    f->y = rotor_graph_find_value(&f->g, "y");
    cr_assert(f->x >= 0 && f->h >= 0 && f->y >= 0);
    f->in = calloc((size_t)f->g.nvalues, sizeof *f->in);
    f->in[f->x] = malloc(sizeof(double) * 1024);
    for (int k = 0; k < 1024; k++) f->in[f->x][k] = cos(0.37 * k) * (1 + 0.001 * k);
    cr_assert_eq(rotor_gt_schedule_build(&f->g, &LIMITS, ROTOR_GT_GROUPED, &f->s, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_run(&f->g, (const double *const *)f->in, NULL, &f->direct, &err), ROTOR_OK, "%s", err.msg);
}

static void fixture_free(fixture *f) {
    rotor_run_result_free(&f->direct);
    rotor_gt_schedule_free(&f->s);
    free(f->in[f->x]);
    free(f->in);
    rotor_graph_free(&f->g);
}

Test(gtrun, two_convolutions_group_into_one_sub_graph_of_four_instances_along_h) {
    fixture f;
    fixture_make(&f);
    /* conv1, its bias, conv2, its bias: one sub-graph */
    cr_assert_eq(f.g.nops, 4);
    cr_assert_eq(f.s.nsg, 1);
    cr_assert_eq(f.s.sg[0].count, 4);
    cr_assert_eq(f.s.sg[0].output, f.y);
    const int64_t *fac = f.s.sg[0].best.factor;
    cr_assert(fac[0] == 1 && fac[1] == 1 && fac[2] == 4 && fac[3] == 1, "factor %lldx%lldx%lldx%lld",
              (long long)fac[0], (long long)fac[1], (long long)fac[2], (long long)fac[3]);
    cr_assert_eq(f.s.sg[0].best.axis, 2);
    cr_assert_eq(f.s.ninst, 4);
    /* the intermediate h each instance needs: its 4 rows and one halo row
     * each side, clipped at the edges */
    gt_prop p;
    cr_assert(rotor_gt_prop_init(&p, &f.g, f.s.members, f.s.sg[0].count, f.y));
    static const int64_t want_lo[4] = {-1, 3, 7, 11}, want_hi[4] = {5, 9, 13, 17};
    for (int i = 0; i < 4; i++) {
        int64_t lo[4] = {0, 0, 4 * i, 0}, hi[4] = {1, 4, 4 * i + 4, 16};
        rotor_gt_prop_run(&p, lo, hi);
        cr_assert_eq(p.lo[f.h][2], want_lo[i], "instance %d: h from row %lld", i, (long long)p.lo[f.h][2]);
        cr_assert_eq(p.hi[f.h][2], want_hi[i], "instance %d: h to row %lld", i, (long long)p.hi[f.h][2]);
        cr_assert_eq(rotor_gt_prop_rows(&p, f.h, 2), 6);
        /* w is whole, with the padding columns its window reads (as zeros);
         * every channel */
        cr_assert(p.lo[f.h][3] == -1 && p.hi[f.h][3] == 17, "w [%lld, %lld)", (long long)p.lo[f.h][3],
                  (long long)p.hi[f.h][3]);
        cr_assert_eq(rotor_gt_prop_rows(&p, f.h, 3), 16);
        cr_assert(p.lo[f.h][1] == 0 && p.hi[f.h][1] == 4);
        /* x: two halo rows each side */
        cr_assert_eq(p.lo[f.x][2], 4 * i - 2);
        cr_assert_eq(p.hi[f.x][2], 4 * i + 6);
    }
    rotor_gt_prop_free(&p);
    fixture_free(&f);
}

Test(gtrun, four_instances_with_their_halos_compute_the_ungrouped_outputs) {
    fixture f;
    fixture_make(&f);
    rotor_error err = {{0}};
    rotor_gtrun_result r;
    cr_assert_eq(rotor_gtrun(&f.g, &f.s, (const double *const *)f.in, NULL, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(r.instances, 4);
    cr_assert_eq(r.split, 1);
    cr_assert_eq(r.whole, 0);
    cr_assert_eq(r.halo_rows, 2, "%lld", (long long)r.halo_rows);
    /* conv1 and its bias computed over 5 + 6 + 6 + 5 = 22 rows of 16:
     * 36864 x 22/16 + 1024 x 22/16 + 36864 + 1024 points */
    cr_assert_float_eq(r.points, 89984.0, 0.5);
    cr_assert_float_eq(r.direct_points, 75776.0, 0.5);
    cr_assert_null(r.values[f.h], "the intermediate exists only in pieces");
    const double *got = r.values[f.y], *ref = f.direct.values[f.y];
    double worst = 0, size = 0;
    for (int k = 0; k < 1024; k++) {
        worst = fmax(worst, fabs(got[k] - ref[k]));
        size = fmax(size, fabs(ref[k]));
    }
    cr_assert_leq(worst, 1e-9, "largest difference %g", worst);
    cr_assert_gt(size, 0.1, "the outputs are not all ~0 (%g)", size);
    rotor_run_cmp c = rotor_run_compare(got, ref, 1024, false);
    cr_assert_eq(c.bad, 0);
    rotor_gtrun_result_free(&r);
    fixture_free(&f);
}

/* The progress callback's calls: (done, total) in turn. */
typedef struct steps_seen {
    int n, done[8], total[8];
} steps_seen;

static void count_step(void *ctx, int done, int total) {
    steps_seen *s = ctx;
    if (s->n < 8) s->done[s->n] = done, s->total[s->n] = total;
    s->n++;
}

/* The run reports each instance as it ends (rotor_gtrun_options.progress):
 * the four instances, 1/4 to 4/4, and the same values as without it. */
Test(gtrun, the_progress_counts_each_instance_as_it_ends) {
    fixture f;
    fixture_make(&f);
    rotor_error err = {{0}};
    steps_seen seen = {0};
    rotor_gtrun_options o = {.progress = count_step, .progress_ctx = &seen};
    rotor_gtrun_result r, plain;
    cr_assert_eq(rotor_gtrun(&f.g, &f.s, (const double *const *)f.in, &o, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_gtrun(&f.g, &f.s, (const double *const *)f.in, NULL, &plain, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(seen.n, 4);
    for (int k = 0; k < 4; k++) {
        cr_assert_eq(seen.done[k], k + 1);
        cr_assert_eq(seen.total[k], 4);
    }
    cr_assert_arr_eq(r.values[f.y], plain.values[f.y], sizeof(double) * 1024);
    rotor_gtrun_result_free(&r);
    rotor_gtrun_result_free(&plain);
    fixture_free(&f);
}

Test(gtrun, without_the_halo_rows_the_outputs_next_to_each_cut_are_wrong) {
    fixture f;
    fixture_make(&f);
    rotor_error err = {{0}};
    rotor_gtrun_result r;
    rotor_gtrun_options o = {.no_halo = true};
    cr_assert_eq(rotor_gtrun(&f.g, &f.s, (const double *const *)f.in, &o, &r, &err), ROTOR_OK, "%s", err.msg);
    const double *got = r.values[f.y], *ref = f.direct.values[f.y];
    rotor_run_cmp c = rotor_run_compare(got, ref, 1024, false);
    cr_assert_gt(c.bad, 0, "a wrong halo must fail the comparison");
    /* only the rows beside a cut read a missing halo row of h: 3, 4, 7, 8, 11, 12
     * (rows 0 and 15 read the padding, which is 0 either way) */
    bool wrong_row[16] = {false};
    for (int k = 0; k < 1024; k++) {
        int row = (k / 16) % 16;
        bool cut = row == 3 || row == 4 || row == 7 || row == 8 || row == 11 || row == 12;
        bool bad = !(fabs(got[k] - ref[k]) <= ROTOR_RUN_ATOL + ROTOR_RUN_RTOL * fabs(ref[k]));
        cr_assert(cut || !bad, "element %d (row %d) is wrong", k, row);
        wrong_row[row] |= bad;
    }
    for (int row = 3; row <= 12; row++)
        cr_assert_eq(wrong_row[row], row % 4 == 3 || row % 4 == 0, "row %d", row);
    int64_t w = rotor_gtrun_worst(got, ref, 1024);
    int wrow = (int)(w / 16) % 16;
    cr_assert(wrow == 3 || wrow == 4 || wrow == 7 || wrow == 8 || wrow == 11 || wrow == 12, "worst %lld", (long long)w);
    rotor_gtrun_result_free(&r);
    fixture_free(&f);
}

/* With each intermediate's piece only the instance's own rows, conv2
 * reads a halo row of h outside the range the instance computed: refused,
 * naming the instance and the element (in the fast rows as point by
 * point: a row stops at its piece's edge). */
Test(gtrun, a_read_outside_the_range_an_instance_computed_is_refused) {
    fixture f;
    fixture_make(&f);
    rotor_error err = {{0}};
    rotor_gtrun_options o = {.narrow_pieces = true};
    rotor_gtrun_result r;
    cr_assert_eq(rotor_gtrun(&f.g, &f.s, (const double *const *)f.in, &o, &r, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "op 'conv2' (Conv): instance 0 of sub-graph 0 reads element (0,0,4,0) of 'h', outside "
                     "the range it computed of it (the range propagation missed it)");
    cr_assert_null(r.values);
    fixture_free(&f);
}

Test(gtrun, an_order_that_reads_an_output_before_it_is_written_is_refused) {
    fixture f;
    fixture_make(&f);
    rotor_error err = {{0}};
    /* two sub-graphs (an LB too small for both convolutions), and the
     * consumer's first instance moved before every producer instance */
    rotor_gt_schedule_free(&f.s);
    rotor_gt_limits lim = LIMITS;
    lim.lb_bytes = 3072;
    cr_assert_eq(rotor_gt_schedule_build(&f.g, &lim, ROTOR_GT_GROUPED, &f.s, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_gt(f.s.nsg, 1, "%d sub-graphs", f.s.nsg);
    int64_t late = -1;
    for (int64_t k = 0; k < f.s.ninst && late < 0; k++)
        if (f.s.order[k].sg == f.s.nsg - 1) late = k;
    cr_assert_gt(late, 0);
    rotor_gt_instance t = f.s.order[late];
    memmove(&f.s.order[1], &f.s.order[0], sizeof t * (size_t)late);
    f.s.order[0] = t;
    rotor_gtrun_result r;
    cr_assert_eq(rotor_gtrun(&f.g, &f.s, (const double *const *)f.in, NULL, &r, &err), ROTOR_ERR_INPUT);
    cr_assert(strstr(err.msg, "which no instance before it in the order wrote"), "%s", err.msg);
    cr_assert_null(r.values);
    fixture_free(&f);
}

/* x [1,4,16,16] float and m [1,4,16,16] int64 (a mask of small integers):
 * x * Cast(m) -> the two convolutions -> y, and y cast to int32 and to
 * bool.  Casts are copies over integers (docs/run.md, "Quantized
 * operators"), which an instance computes as the direct run does. */
static void masked_convs(rotor_graph *g, double scale) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(1, 4, 16, 16));
    b.inputs[b.graph.n_input++] = mb_vi(&b, "m", 7, DIMS(1, 4, 16, 16));
    mb_output(&b, "yi");
    mb_output(&b, "yb");
    weights(&b, "w1", 144, DIMS(4, 4, 3, 3), 0.1, 0.3 * scale);
    weights(&b, "w2", 144, DIMS(4, 4, 3, 3), 0.3, 0.3);
    mb_attr_i(&b, mb_node(&b, "Cast", "mf", "m", "mf"), "to", 1);
    mb_node(&b, "Mul", "xm", "x mf", "xm");
    conv3x3(&b, "conv1", "xm w1", "h");
    conv3x3(&b, "conv2", "h w2", "y");
    mb_attr_i(&b, mb_node(&b, "Cast", "yi", "y", "yi"), "to", 6);
    mb_attr_i(&b, mb_node(&b, "Cast", "yb", "y", "yb"), "to", 9);
    rotor_error err = {{0}};
    rotor_onnx_options o = {.keep_data = true};
    cr_assert_eq(mb_load(&b, &o, g, NULL, &err), ROTOR_OK, "%s", err.msg);
    mb_free(&b);
}

/* Runs masked_convs (weights of conv1 times scale) by its schedule under
 * LIMITS into *r, the direct run into *direct (NULL: not run); in[] its
 * inputs (freed by the caller). */
static rotor_status run_masked(double scale, rotor_graph *g, rotor_gt_schedule *s, double ***in, rotor_gtrun_result *r,
                               rotor_run_result *direct, rotor_error *err) {
    masked_convs(g, scale);
    int x = rotor_graph_find_value(g, "x"), m = rotor_graph_find_value(g, "m");
    cr_assert(x >= 0 && m >= 0);
    *in = calloc((size_t)g->nvalues, sizeof **in);
    (*in)[x] = malloc(sizeof(double) * 1024);
    (*in)[m] = malloc(sizeof(double) * 1024);
    for (int k = 0; k < 1024; k++) {
        (*in)[x][k] = 3 * cos(0.37 * k);
        (*in)[m][k] = k % 7 - 2; /* -2 .. 4 */
    }
    cr_assert_eq(rotor_gt_schedule_build(g, &LIMITS, ROTOR_GT_GROUPED, s, err), ROTOR_OK, "%s", err->msg);
    if (direct) cr_assert_eq(rotor_run(g, (const double *const *)*in, NULL, direct, err), ROTOR_OK, "%s", err->msg);
    return rotor_gtrun(g, s, (const double *const *)*in, NULL, r, err);
}

static void free_masked(rotor_graph *g, rotor_gt_schedule *s, double **in) {
    for (int v = 0; v < g->nvalues; v++) free(in[v]);
    free(in);
    rotor_gt_schedule_free(s);
    rotor_graph_free(g);
}

/* The instances compute the integer copies (an int64 mask cast to float,
 * the output cast to int32 by truncation toward zero and to bool) and
 * give the direct run's values to the bit. */
Test(gtrun, integer_and_boolean_copies_run_in_the_instances) {
    rotor_graph g;
    rotor_gt_schedule s;
    double **in;
    rotor_gtrun_result r;
    rotor_run_result direct;
    rotor_error err = {{0}};
    cr_assert_eq(run_masked(1, &g, &s, &in, &r, &direct, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_geq(r.split, 1, "some sub-graph runs in several instances");
    int y = rotor_graph_find_value(&g, "y"), yi = rotor_graph_find_value(&g, "yi"), yb = rotor_graph_find_value(&g, "yb");
    cr_assert(y >= 0 && yi >= 0 && yb >= 0);
    cr_assert_arr_eq(r.values[yi], direct.values[yi], sizeof(double) * 1024);
    cr_assert_arr_eq(r.values[yb], direct.values[yb], sizeof(double) * 1024);
    /* truncation toward zero, and booleans, of the direct run's y */
    int negative = 0, zero = 0;
    for (int k = 0; k < 1024; k++) {
        cr_assert_eq(r.values[yi][k], trunc(direct.values[y][k]), "element %d", k);
        cr_assert_eq(r.values[yb][k], direct.values[y][k] != 0, "element %d", k);
        negative += direct.values[y][k] < -1 && direct.values[y][k] != floor(direct.values[y][k]);
        zero += r.values[yi][k] == 0;
    }
    cr_assert_gt(negative, 0, "some negative fractions, where truncation is not floor");
    cr_assert_gt(zero, 0);
    rotor_gtrun_result_free(&r);
    rotor_run_result_free(&direct);
    free_masked(&g, &s, in);
}

/* A value the integer type cannot hold has no cast (ONNX leaves it
 * undefined): refused, naming the operator and the element. */
Test(gtrun, a_cast_outside_the_integer_range_is_refused) {
    rotor_graph g;
    rotor_gt_schedule s;
    double **in;
    rotor_gtrun_result r;
    rotor_error err = {{0}};
    cr_assert_eq(run_masked(1e9, &g, &s, &in, &r, NULL, &err), ROTOR_ERR_INPUT);
    cr_assert(strstr(err.msg, "op 'yi' (Cast)"), "%s", err.msg);
    cr_assert(strstr(err.msg, "is -3042684672, outside i32 (ONNX does not define the cast)"), "%s", err.msg);
    cr_assert_null(r.values);
    free_masked(&g, &s, in);
}

/* Loads the model b holds (its input x of nx elements, cos-spread; its
 * output y of ny), schedules it under lim, runs it by the instances and
 * directly, and asserts some sub-graph split and y the same to the bit;
 * the points the instances ran in rows (gtrun.c, eval_run), some and not
 * all (the padding goes point by point). */
static double against_direct(mb *b, int64_t nx, const rotor_gt_limits *lim, int64_t ny) {
    rotor_graph g;
    rotor_error err = {{0}};
    rotor_onnx_options o = {.keep_data = true};
    cr_assert_eq(mb_load(b, &o, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    mb_free(b);
    int x = rotor_graph_find_value(&g, "x"), y = rotor_graph_find_value(&g, "y");
    cr_assert(x >= 0 && y >= 0);
    double **in = calloc((size_t)g.nvalues, sizeof *in);
    in[x] = malloc(sizeof(double) * (size_t)nx);
    for (int64_t k = 0; k < nx; k++) in[x][k] = cos(0.53 * (double)k) * (1 + 0.001 * (double)k);
    rotor_gt_schedule s;
    cr_assert_eq(rotor_gt_schedule_build(&g, lim, ROTOR_GT_GROUPED, &s, &err), ROTOR_OK, "%s", err.msg);
    rotor_run_result direct;
    rotor_gtrun_result r;
    cr_assert_eq(rotor_run(&g, (const double *const *)in, NULL, &direct, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_gtrun(&g, &s, (const double *const *)in, NULL, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_geq(r.split, 1, "some sub-graph runs in several instances");
    cr_assert_arr_eq(r.values[y], direct.values[y], sizeof(double) * (size_t)ny);
    double rows = r.row_points;
    cr_assert_gt(rows, 0);
    cr_assert_lt(rows, r.points);
    rotor_gtrun_result_free(&r);
    rotor_run_result_free(&direct);
    rotor_gt_schedule_free(&s);
    free(in[x]);
    free(in);
    rotor_graph_free(&g);
    return rows;
}

/* x -> conv1 (w1: stride 2, pads 1) -> h -> conv2 (w2, group groups, pads
 * 1, bias) -> y; run by GraphTurbo's instances (LB 3072 bytes: split) and
 * directly, y's 4 x 9 x 8 elements compared to the bit. */
#define ROWS_PLAIN 18288 /* the points the two convolutions run in rows (the rest: padding) */
#define ROWS_GROUPED 13888 /* 9,488 with the grouped convolution point by point */
static double strided_then(int64_t groups) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(1, 4, 17, 16));
    mb_output(&b, "y");
    weights(&b, "w1", 144, DIMS(4, 4, 3, 3), 0.5, 0.3);
    weights(&b, "w2", 144 / groups, DIMS(4, 4 / groups, 3, 3), 0.7, 0.3);
    weights(&b, "b2", 4, DIMS(4), 0.9, 0.1);
    Onnx__NodeProto *c1 = conv3x3(&b, "conv1", "x w1", "h");
    mb_attr_ints(&b, c1, "strides", 2, (const int64_t[]){2, 2});
    Onnx__NodeProto *c2 = conv3x3(&b, "conv2", "h w2 b2", "y");
    if (groups > 1) mb_attr_i(&b, c2, "group", groups);
    rotor_gt_limits lim = {.lb_bytes = 3072, .gb_bytes = 8 << 20, .cores = 8};
    return against_direct(&b, 1088, &lim, 4 * 9 * 8);
}

/* x [1,4,17,16] -> Conv 3x3 stride 2 (pads 1) -> h [1,4,9,8] -> Conv 3x3
 * (pads 1, bias) -> y: each instance's rows run at constant strides where
 * they stay inside (gtrun.c, eval_run), twice the step on the strided
 * input, and point by point at the padding; the output is the direct
 * run's to the bit. */
Test(gtrun, a_strided_window_with_padding_gives_the_direct_values_to_the_bit) {
    double rows = strided_then(1);
    cr_assert_eq(rows, ROWS_PLAIN, "%.0f points in rows", rows);
}

/* The same with the second convolution grouped (2 groups): its tensors
 * reach their values through a reshape that merges [g, c] into the
 * channels, whose coordinates are affine while each tensor coordinate
 * lies in its extent (gtrun.c, tmap_merges). */
Test(gtrun, a_grouped_convolution_gives_the_direct_values_to_the_bit) {
    double rows = strided_then(2);
    cr_assert_eq(rows, ROWS_GROUPED, "%.0f points in rows", rows);
}

/* x [1,4,16,16] -> Slice reversing w (step -1) -> xr -> Conv 3x3 (pads 1,
 * bias) -> y: the Slice reads its input through a view of step -1, so
 * along a row its coordinate falls (gtrun.c, span_keep with d < 0); the
 * output is the direct run's to the bit. */
Test(gtrun, a_reversed_slice_gives_the_direct_values_to_the_bit) {
    mb b;
    mb_init(&b, 13);
    mb_input(&b, "x", DIMS(1, 4, 16, 16));
    mb_output(&b, "y");
    mb_init_tensor(&b, "starts", 7, DIMS(1), (const int64_t[]){-1});
    mb_init_tensor(&b, "ends", 7, DIMS(1), (const int64_t[]){-17});
    mb_init_tensor(&b, "axes", 7, DIMS(1), (const int64_t[]){3});
    mb_init_tensor(&b, "steps", 7, DIMS(1), (const int64_t[]){-1});
    weights(&b, "w", 144, DIMS(4, 4, 3, 3), 0.2, 0.3);
    weights(&b, "bias", 4, DIMS(4), 0.4, 0.1);
    mb_node(&b, "Slice", "rev", "x starts ends axes steps", "xr");
    conv3x3(&b, "conv", "xr w bias", "y");
    double rows = against_direct(&b, 1024, &LIMITS, 1024);
    cr_assert_eq(rows, 36288, "%.0f points in rows", rows);
}

/* An integer beyond 2^24 in a copy: the direct run refuses it (float32,
 * the emulated cores' type, would round it: runquant.c), and so do the
 * instances, naming the element. */
Test(gtrun, an_integer_float32_cannot_hold_is_refused) {
    rotor_graph g;
    rotor_gt_schedule s;
    double **in;
    rotor_gtrun_result r;
    rotor_error err = {{0}};
    cr_assert_eq(run_masked(1, &g, &s, &in, &r, NULL, &err), ROTOR_OK, "%s", err.msg);
    rotor_gtrun_result_free(&r);
    in[rotor_graph_find_value(&g, "m")][17] = 16777217; /* 2^24 + 1 */
    cr_assert_eq(rotor_gtrun(&g, &s, (const double *const *)in, NULL, &r, &err), ROTOR_ERR_INPUT);
    cr_assert(strstr(err.msg, "op 'mf' (Cast): "), "%s", err.msg);
    cr_assert(strstr(err.msg, "reads element (0,0,1,1) of 'm', 16777217; the emulated cores copy integers in float32, "
                     "exact only up to 2^24"), "%s", err.msg);
    cr_assert_null(r.values);
    free_masked(&g, &s, in);
}

/* A quantized model run both ways: loaded from the builder, scheduled
 * with an LB of lb bytes, run by GraphTurbo's instances (r) and directly
 * (direct), with options opt (NULL: none).  Its input x holds 1024
 * integers of 0..255; a model input "two", where there is one, is 2. */
typedef struct qrun {
    rotor_graph g;
    rotor_gt_schedule s;
    double **in;
    int x, y;
    rotor_gtrun_result r;
    rotor_run_result direct;
} qrun;

static double qrun_two = 2;

static void qrun_make_with(mb *b, int64_t lb, const rotor_gtrun_options *opt, qrun *q) {
    rotor_error err = {{0}};
    rotor_onnx_options o = {.keep_data = true};
    cr_assert_eq(mb_load(b, &o, &q->g, NULL, &err), ROTOR_OK, "%s", err.msg);
    mb_free(b);
    q->x = rotor_graph_find_value(&q->g, "x");
    q->y = rotor_graph_find_value(&q->g, "y");
    cr_assert(q->x >= 0 && q->y >= 0);
    cr_assert_eq(q->g.values[q->x].elements, 1024);
    q->in = calloc((size_t)q->g.nvalues, sizeof *q->in);
    q->in[q->x] = malloc(sizeof(double) * 1024);
    for (int k = 0; k < 1024; k++) q->in[q->x][k] = (k * 53 + k / 16 * 7) % 256;
    int two = rotor_graph_find_value(&q->g, "two");
    if (two >= 0) q->in[two] = &qrun_two;
    rotor_gt_limits lim = {.lb_bytes = lb, .gb_bytes = 8 << 20, .cores = 8};
    cr_assert_eq(rotor_gt_schedule_build(&q->g, &lim, ROTOR_GT_GROUPED, &q->s, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_run(&q->g, (const double *const *)q->in, NULL, &q->direct, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_gtrun(&q->g, &q->s, (const double *const *)q->in, opt, &q->r, &err), ROTOR_OK, "%s", err.msg);
}


static void qrun_free(qrun *q) {
    rotor_gtrun_result_free(&q->r);
    rotor_run_result_free(&q->direct);
    rotor_gt_schedule_free(&q->s);
    free(q->in[q->x]);
    free(q->in);
    rotor_graph_free(&q->g);
}

/* Asserts y the direct run's to the bit, and returns how many of its
 * elements lie strictly between lo and hi. */
static int qrun_same(const qrun *q, double lo, double hi) {
    const double *y = q->r.values[q->y];
    cr_assert_arr_eq(y, q->direct.values[q->y], sizeof(double) * (size_t)q->g.values[q->y].elements);
    int n = 0;
    for (int64_t k = 0; k < q->g.values[q->y].elements; k++) n += y[k] > lo && y[k] < hi;
    return n;
}

/* quant_convs_model at batch 1, run both ways (qrun). */
static void quant_convs(bool integer, bool computed, int64_t lb, const rotor_gtrun_options *opt, qrun *q) {
    mb b;
    quant_convs_model(&b, 1, integer, computed);
    qrun_make_with(&b, lb, opt, q);
}

/* quant_matmuls_model, run both ways (qrun). */
static void quant_matmuls(bool integer, int64_t lb, const rotor_gtrun_options *opt, qrun *q) {
    mb b;
    quant_matmuls_model(&b, integer);
    qrun_make_with(&b, lb, opt, q);
}

#define ROWS_QUANT 80960 /* the points the two convolutions run in rows (the rest: padding) */

/* Two quantized 3x3 convolutions split along h, their halo rows
 * recomputed: each instance reads the inputs less their zero points (per
 * output channel for the weights), sums in double and requantizes its
 * block of each output (docs/run.md, "Quantized operators"); the uint8
 * outputs are the direct run's, and most are neither 0 nor 255. */
Test(gtrun, quantized_convolutions_run_in_instances_with_their_halos) {
    qrun q;
    quant_convs(false, false, 896, NULL, &q);
    cr_assert_eq(q.r.split, 1);
    cr_assert_eq(q.r.instances, 4, "%lld instances", (long long)q.r.instances);
    cr_assert_eq(q.r.halo_rows, 2, "%lld halo rows", (long long)q.r.halo_rows);
    int inside = qrun_same(&q, 0, 255);
    cr_assert_gt(inside, 700, "%d of 1024 outputs unsaturated", inside);
    /* in rows but at the padding (gtrun.c, eval_run_quant) */
    cr_assert_eq(q.r.row_points, ROWS_QUANT, "%.0f of %.0f points in rows", q.r.row_points, q.r.points);
    qrun_free(&q);
}

/* ConvInteger: its int32 accumulators, the inputs less their zero points
 * (the weights' per output channel), split into instances: the direct
 * run's to the bit, and of both signs. */
Test(gtrun, an_integer_convolution_runs_in_instances) {
    qrun q;
    quant_convs(true, false, 896, NULL, &q);
    cr_assert_eq(q.r.split, 1);
    cr_assert_geq(q.r.instances, 2, "%lld instances", (long long)q.r.instances);
    int neg = qrun_same(&q, -INFINITY, -255), pos = qrun_same(&q, 255, INFINITY);
    cr_assert(neg > 100 && pos > 100, "%d below -255, %d above 255", neg, pos);
    qrun_free(&q);
}

/* Two QLinearMatMuls split by rows: an instance reads its rows of h from
 * its own piece, and each element's zero point and scale are its row's in
 * the whole value, not in the piece; along a row of y (its columns, the
 * inner axis) B's zero point moves with the column. */
Test(gtrun, a_zero_point_per_row_follows_the_rows_of_an_instance) {
    qrun q;
    quant_matmuls(false, 896, NULL, &q);
    cr_assert_eq(q.r.split, 1);
    cr_assert_eq(q.r.instances, 4, "%lld instances", (long long)q.r.instances);
    cr_assert_eq(q.s.nsg, 1);
    cr_assert(q.s.sg[0].best.factor[0] == 4 && q.s.sg[0].best.factor[1] == 1, "split by rows: %lldx%lld",
              (long long)q.s.sg[0].best.factor[0], (long long)q.s.sg[0].best.factor[1]);
    cr_assert_null(q.r.values[rotor_graph_find_value(&q.g, "h")], "h exists only in the instances' pieces");
    int inside = qrun_same(&q, 0, 255);
    cr_assert_gt(inside, 700, "%d of 1024 outputs unsaturated", inside);
    cr_assert_eq(q.r.row_points, q.r.points, "every point in rows (no padding): %.0f of %.0f", q.r.row_points,
                 q.r.points);
    qrun_free(&q);
}

/* MatMulInteger (x less its zero point, w1 less its zero point per
 * column): int32 accumulators split by rows, the direct run's to the bit. */
Test(gtrun, an_integer_matmul_runs_in_instances) {
    qrun q;
    quant_matmuls(true, 1024, NULL, &q);
    cr_assert_geq(q.r.instances, 2, "%lld instances", (long long)q.r.instances);
    qrun_same(&q, 0, 0);
    cr_assert_eq(q.r.row_points, q.r.points, "every point in rows");
    qrun_free(&q);
}

/* A quantized contraction's input that is not an integer has no zero
 * point to shift by: refused, naming the instance and the element, as the
 * direct run refuses it. */
Test(gtrun, a_quantized_input_that_is_no_integer_is_refused) {
    qrun q;
    quant_convs(false, false, 896, NULL, &q);
    rotor_gtrun_result_free(&q.r);
    rotor_run_result_free(&q.direct);
    memset(q.in[q.x], 0, sizeof(double) * 1024);
    q.in[q.x][16 * 5 + 3] = 2.5;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_gtrun(&q.g, &q.s, (const double *const *)q.in, NULL, &q.r, &err), ROTOR_ERR_INPUT);
    cr_assert(strstr(err.msg, "op 'conv1' (QLinearConv): instance 0 of sub-graph 0 reads element (0,0,5,3) of 'x' (u8), "
                     "2.5, not an integer"), "%s", err.msg);
    cr_assert_eq(rotor_run(&q.g, (const double *const *)q.in, NULL, &q.direct, &err), ROTOR_ERR_INPUT);
    cr_assert(strstr(err.msg, "is 2.5, not an integer"), "%s", err.msg);
    q.r = (rotor_gtrun_result){0};
    q.direct = (rotor_run_result){0};
    qrun_free(&q);
}

/* A scale the graph computes (an operator before the convolutions) is
 * read whole by the quantized convolutions' instances, once written: the
 * direct run's outputs to the bit. */
Test(gtrun, a_computed_scale_is_read_once_written) {
    qrun q;
    quant_convs(false, true, 896, NULL, &q);
    cr_assert_geq(q.g.values[rotor_graph_find_value(&q.g, "hs")].producer, 0, "hs is computed");
    cr_assert_geq(q.r.split, 1);
    qrun_same(&q, 0, 0);
    qrun_free(&q);
}

/* Point by point (no_rows), every quantized model above gives the rows'
 * bits: each input read less its zero point at its place in the value
 * (gtrun.c, read_input), the reference the rows keep to. */
Test(gtrun, quantized_points_one_by_one_give_the_rows_bits) {
    rotor_gtrun_options opt = {.no_rows = true};
    for (int k = 0; k < 4; k++) {
        qrun q, one;
        if (k < 2) quant_convs(k == 1, false, 896, NULL, &q), quant_convs(k == 1, false, 896, &opt, &one);
        else quant_matmuls(k == 3, k == 3 ? 1024 : 896, NULL, &q), quant_matmuls(k == 3, k == 3 ? 1024 : 896, &opt, &one);
        cr_assert_eq(one.r.row_points, 0, "model %d: no rows", k);
        cr_assert_eq(one.r.points, q.r.points, "model %d: the same points", k);
        cr_assert_gt(q.r.row_points, 0, "model %d", k);
        qrun_same(&one, 0, 0);
        cr_assert_arr_eq(one.r.values[one.y], q.r.values[q.y], sizeof(double) * (size_t)q.g.values[q.y].elements,
                         "model %d", k);
        qrun_free(&one);
        qrun_free(&q);
    }
}
