/* test_gticcarun.c — GraphTurbo's sub-graph instances on an ICCA chip's
 * core groups, on real data (src/run/gticcarun.c; docs/run.md, "Instances
 * on core groups"): every instance runs its batch slice with its own
 * program on its group, and the values equal the direct execution's,
 * quantized operators' to the bit. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "onnxbuild.h"
#include "quantbuild.h"
#include "rotor/compile/compile.h"
#include "rotor/compile/program.h"
#include "rotor/model/simplify.h"
#include "rotor/run/run.h"
#include "san.h"

typedef struct mlp_run {
    rotor_chip chip;
    rotor_graph g;
    rotor_program p; /* T10's program, no grouping */
    double *xd, **in;
    rotor_run_result direct;
} mlp_run;

/* The MLP (mlp_graph, 512 rows) on an IPU of `cores` cores: T10's program
 * of it, its input and its direct run. */
static void mlp_run_make(mlp_run *m, const char *cores) {
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &m->chip, &err), ROTOR_OK);
    cr_assert_eq(rotor_chip_set(&m->chip, cores, &err), ROTOR_OK, "%s", err.msg);
    int x;
    mlp_graph(&m->g, &x);
    rotor_compile_options o = {0};
    compiled_program(&m->g, &m->chip, &o, NULL, &m->p);
    m->xd = malloc(sizeof *m->xd * 512 * 64);
    for (int k = 0; k < 512 * 64; k++) m->xd[k] = cos(k * 0.013);
    m->in = calloc((size_t)m->g.nvalues, sizeof *m->in);
    m->in[x] = m->xd;
    cr_assert_eq(rotor_run(&m->g, (const double *const *)m->in, NULL, &m->direct, &err), ROTOR_OK, "%s", err.msg);
}

static void mlp_run_free(mlp_run *m) {
    rotor_run_result_free(&m->direct);
    free(m->in);
    free(m->xd);
    rotor_program_free(&m->p);
    rotor_graph_free(&m->g);
}

/* Operators mm1, add1 as 2 instances of 128 cores and mm2, add2, relu2 as
 * 4 of 64: each instance runs its 256 or 128 rows with the program of its
 * own compile, and every value the graph computes equals the direct run's
 * (the slices land where they belong: a slice put at another offset would
 * differ there). */
Test(gticcarun, every_instance_runs_its_batch_slice_and_the_values_are_the_direct_runs) {
    mlp_run m;
    mlp_run_make(&m, "cores_per_chip=256");
    rotor_gticca_sg sg[2] = {{.first = 0, .last = 1, .instances = 2, .group_cores = 128},
                             {.first = 3, .last = 5, .instances = 4, .group_cores = 64}};
    rotor_gticca_result gt = {.done = true, .nsg = 2, .sg = sg};
    rotor_compile_options co = {0};
    rotor_run_options ro = {.program = &m.p, .chip = &m.chip, .gticca = &gt, .gticca_compile = &co};
    rotor_run_result r;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_run(&m.g, (const double *const *)m.in, &ro, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(r.subgraphs_run, 2);
    cr_assert_eq(r.instance_runs, 6);
    cr_assert_eq(r.ops_emulated, 8, "the five grouped operators and the three others");
    for (int v = 0; v < m.g.nvalues; v++)
        if (m.g.values[v].producer >= 0)
            cr_assert_eq(rotor_run_compare(r.values[v], m.direct.values[v], m.g.values[v].elements, false).bad, 0, "'%s'",
                         m.g.values[v].name);
    /* not vacuous: the grouped operators' values are not all zero */
    int y = rotor_graph_find_value(&m.g, "relu2");
    double most = 0;
    for (int64_t k = 0; k < 512 * 256; k++) most = fmax(most, fabs(r.values[y][k]));
    cr_assert_gt(most, 0.1);
    rotor_run_result_free(&r);
    mlp_run_free(&m);
}

/* The compile's own choice: rotor_compile with graphturbo on the MLP on a
 * whole IPU picks two sub-graphs (its dynamic program); the run of that
 * plan gives the direct run's output, and its instances hold the SRAM
 * gticca counted for them. */
Test(gticcarun, the_sub_graphs_the_compile_chooses_run_on_real_data) {
    mlp_run m;
    mlp_run_make(&m, "cores_per_chip=1472");
    rotor_compile_options co = {.graphturbo = true};
    rotor_compile_result cr;
    rotor_program p;
    compiled_program(&m.g, &m.chip, &co, &cr, &p);
    cr_assert(cr.gticca.done);
    /* mm1 .. add1 and mm2 .. relu2, each as 16 instances of 32 rows on 92
     * cores (the plan is deterministic) */
    cr_assert_eq(cr.gticca.nsg, 2);
    int want[2][2] = {{0, 1}, {3, 5}};
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(cr.gticca.sg[k].first, want[k][0]);
        cr_assert_eq(cr.gticca.sg[k].last, want[k][1]);
        cr_assert_eq(cr.gticca.sg[k].instances, 16);
        cr_assert_eq(cr.gticca.sg[k].group_cores, 92);
    }
    rotor_run_options ro = {.program = &p, .chip = &m.chip, .gticca = &cr.gticca, .gticca_compile = &co};
    rotor_run_result r;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_run(&m.g, (const double *const *)m.in, &ro, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(r.subgraphs_run, 2);
    /* the emulated time (T10's three other operators, one instance of each
     * sub-graph) agrees with gticca's total within 1 % (1.274 us against
     * 1.275: the model prices the gathers after the sub-graphs, the run
     * charges the program's hand-offs there), below T10 alone (1.347) */
    cr_assert_float_eq(r.emulated_s, cr.gticca.total_s, 0.01 * cr.gticca.total_s, "%.6g us", r.emulated_s * 1e6);
    cr_assert_lt(r.emulated_s, cr.gticca.t10_s);
    cr_assert_eq(r.instance_runs, 32);
    int y = rotor_graph_find_value(&m.g, "add3");
    cr_assert_eq(rotor_run_compare(r.values[y], m.direct.values[y], 512 * 4, false).bad, 0);
    /* SRAM: the emulated cores of an instance hold what gticca counted
     * (its plan beside the instance program's idle layouts and live
     * activations, the rest of T10's schedule and the first sub-graph's
     * copies of its weights, 254 bytes a core beyond T10's), byte for byte:
     * the second sub-graph's 6486 bytes per core, above T10's own peak */
    cr_assert_eq(cr.gticca.sg[0].extra_idle_bytes, 254);
    cr_assert_eq(cr.gticca.sg[1].peak_bytes, 6232 + 254);
    cr_assert_gt(cr.gticca.sg[1].peak_bytes, p.peak_bytes);
    cr_assert_eq(r.peak_bytes, cr.gticca.sg[1].peak_bytes);
    rotor_run_result_free(&r);
    /* so with SRAM for T10's peak alone the second sub-graph does not fit
     * beside the rest of T10's schedule (its instance, compiled again for
     * that chip, is the one priced: 5,608 bytes fit 5,618) */
    rotor_chip small = m.chip;
    small.sram_bytes = p.peak_bytes;
    ro.chip = &small;
    cr_assert_eq(rotor_run(&m.g, (const double *const *)m.in, &ro, &r, &err), ROTOR_ERR_NOFIT);
    cr_assert_str_eq(err.msg, "sub-graph 'mm2'..'relu2' as 16 instances: op 'mm2' (MatMul): emulator: every core "
                              "must hold 5608 bytes (partitions Y 928, A 1664, B 3016) but has 4740 bytes of SRAM");
    /* compiled again with other options (KAPLA's random sampling for a
     * solver), an instance is not the one priced, and the run says so
     * instead of running it */
    rotor_compile_options other = co;
    other.solver = ROTOR_SOLVER_RANDOM;
    ro.chip = &m.chip;
    ro.gticca_compile = &other;
    cr_assert_eq(rotor_run(&m.g, (const double *const *)m.in, &ro, &r, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "sub-graph 'mm1'..'add1' as 16 instances: compiled again, an instance computes "
                              "0.0999547 us and holds 5242 bytes per core beside T10's other operators, where the "
                              "plan priced 0.09873 us and 5302 (a plan cache or options other than the compile's)");
    rotor_program_free(&p);
    rotor_compile_result_free(&cr);
    mlp_run_free(&m);
}

/* What the run cannot run is refused in one line naming it: sub-graphs
 * that overlap, a batch of 512 rows split 3 ways, groups wider than the
 * chip, instances without T10's program or the options they were compiled
 * with. */
Test(gticcarun, a_sub_graph_the_graph_cannot_run_is_refused_naming_it) {
    mlp_run m;
    mlp_run_make(&m, "cores_per_chip=256");
    rotor_compile_options co = {0};
    rotor_gticca_sg over[2] = {{.first = 0, .last = 2, .instances = 2, .group_cores = 128},
                               {.first = 2, .last = 3, .instances = 2, .group_cores = 128}};
    rotor_gticca_result gt = {.done = true, .nsg = 2, .sg = over};
    rotor_run_options ro = {.program = &m.p, .chip = &m.chip, .gticca = &gt, .gticca_compile = &co};
    rotor_run_result r;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_run(&m.g, (const double *const *)m.in, &ro, &r, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "run: sub-graph 1 (operators 2..3, 2 instances of 128 cores) is not one the graph can "
                              "run on 256 cores");
    rotor_gticca_sg three = {.first = 0, .last = 1, .instances = 3, .group_cores = 85};
    gt = (rotor_gticca_result){.done = true, .nsg = 1, .sg = &three};
    cr_assert_eq(rotor_run(&m.g, (const double *const *)m.in, &ro, &r, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "sub-graph 'mm1'..'add1' as 3 instances: operator 'mm1': its batch no longer splits 3 "
                              "ways");
    rotor_gticca_sg wide = {.first = 0, .last = 1, .instances = 2, .group_cores = 200};
    gt = (rotor_gticca_result){.done = true, .nsg = 1, .sg = &wide};
    cr_assert_eq(rotor_run(&m.g, (const double *const *)m.in, &ro, &r, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "run: sub-graph 0 (operators 0..1, 2 instances of 200 cores) is not one the graph can "
                              "run on 256 cores");
    ro.program = NULL;
    cr_assert_eq(rotor_run(&m.g, (const double *const *)m.in, &ro, &r, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "run: sub-graph instances need T10's program of the graph");
    ro.program = &m.p;
    ro.gticca_compile = NULL;
    cr_assert_eq(rotor_run(&m.g, (const double *const *)m.in, &ro, &r, &err), ROTOR_ERR_INPUT);
    cr_assert_str_eq(err.msg, "run: sub-graph instances need the options they were compiled with");
    mlp_run_free(&m);
}

/* A chain of `layers` MatMul + bias Add + Relu layers on `rows` rows
 * (mlp_chain), the widths drawn from {16, 32, 64, 96, 128} by the LCG *r;
 * *x its input. */
static void random_chain(rotor_graph *g, int64_t rows, int layers, uint64_t *r, int *x) {
    static const int64_t choice[] = {16, 32, 64, 96, 128};
    int64_t widths[8];
    for (int l = 0; l < layers && l < 8; l++) {
        *r = *r * 6364136223846793005ull + 1442695040888963407ull;
        widths[l] = choice[(*r >> 33) % 5];
    }
    mlp_chain(g, rows, 32, widths, layers, true, x);
}

/* The property's one draw: g compiled on the IPU of `cores` cores with
 * graphturbo, the plan gticca chooses run on input xd (graph value x) and
 * g run directly; every value the graph computes must be the direct run's,
 * and the run's peak within what the compile counted (T10's peak with the
 * sub-graphs' copies of their weights beside it, each sub-graph's), and
 * the run's within the SRAM.  `what` names the draw in failures.  The sub-graphs chosen. */
static int plan_computes_the_direct_values(const rotor_graph *g, const char *cores, int x, const double *xd,
                                           const char *what) {
    rotor_error err = {{0}};
    rotor_chip chip;
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &chip, &err), ROTOR_OK);
    cr_assert_eq(rotor_chip_set(&chip, cores, &err), ROTOR_OK, "%s", err.msg);
    rotor_compile_options co = {.graphturbo = true};
    rotor_compile_result cr;
    rotor_program p;
    compiled_program(g, &chip, &co, &cr, &p);
    double **in = calloc((size_t)g->nvalues, sizeof *in);
    in[x] = (double *)xd;
    rotor_run_options ro = {.program = &p, .chip = &chip, .gticca = &cr.gticca, .gticca_compile = &co};
    rotor_run_result run, direct;
    cr_assert_eq(rotor_run(g, (const double *const *)in, &ro, &run, &err), ROTOR_OK, "%s: %s", what, err.msg);
    cr_assert_eq(rotor_run(g, (const double *const *)in, NULL, &direct, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(run.subgraphs_run, cr.gticca.nsg);
    for (int v = 0; v < g->nvalues; v++)
        if (g->values[v].producer >= 0)
            cr_assert_eq(rotor_run_compare(run.values[v], direct.values[v], g->values[v].elements, false).bad, 0,
                         "%s: '%s'", what, g->values[v].name);
    int64_t counted = p.peak_bytes; /* T10's operators, beside the sub-graphs' copies of their weights */
    for (int k = 0; k < cr.gticca.nsg; k++) counted += cr.gticca.sg[k].extra_idle_bytes;
    for (int k = 0; k < cr.gticca.nsg; k++)
        if (cr.gticca.sg[k].peak_bytes > counted) counted = cr.gticca.sg[k].peak_bytes;
    cr_assert_leq(run.peak_bytes, counted, "%s", what);
    cr_assert_leq(run.peak_bytes, rotor_chip_sram(&chip), "%s", what);
    int nsg = cr.gticca.nsg;
    rotor_run_result_free(&run);
    rotor_run_result_free(&direct);
    free(in);
    rotor_program_free(&p);
    rotor_compile_result_free(&cr);
    return nsg;
}

/* The property, over drawn chains, batches and chips: whatever sub-graphs
 * the compile chooses, the run of its plan computes every value the direct
 * run does, and holds no more SRAM than the compile counted.  Not vacuous:
 * the draws group some sub-graphs (counted). */
Test(gticcarun, every_plan_drawn_computes_the_direct_values) {
    static const int64_t rows[] = {4, 8, 16, 32, 64};
    static const char *cores[] = {"cores_per_chip=128", "cores_per_chip=512", "cores_per_chip=1472"};
    uint64_t r = 0x5eed;
    int grouped = 0;
    for (int draw = 0; draw < 8; draw++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        int64_t m = rows[(r >> 33) % 5];
        const char *c = cores[(r >> 40) % 3];
        rotor_graph g;
        int x;
        random_chain(&g, m, 3, &r, &x);
        double *xd = malloc(sizeof *xd * (size_t)(m * 32));
        for (int64_t k = 0; k < m * 32; k++) xd[k] = sin(0.37 * (double)k + draw);
        char what[96];
        snprintf(what, sizeof what, "draw %d (%lld rows, %s)", draw, (long long)m, c);
        grouped += plan_computes_the_direct_values(&g, c, x, xd, what);
        free(xd);
        rotor_graph_free(&g);
    }
    cr_assert_geq(grouped, 8, "the draws grouped %d sub-graphs", grouped); /* 21 when written */
}

/* ---- convolutions through the ONNX importer: padded windows, strides,
 * BatchNormalization folded, residual adds ---------------------------------- */

/* x [batch, c, hw, hw] through `layers` blocks of Conv 3x3 (pads 1, stride
 * 2 in block `strided`, else 1; no bias) -> BatchNormalization -> Relu, a
 * block of stride 1 adding its input back (a residual) before the Relu. */
static void conv_model(mb *b, int64_t batch, int64_t c, int64_t hw, int layers, int strided, uint64_t *r) {
    mb_init(b, 13);
    mb_input(b, "x", DIMS(batch, c, hw, hw));
    char in[24] = "x", n[8][24];
    for (int l = 0; l < layers; l++) {
        snprintf(n[0], 24, "W%d", l), snprintf(n[1], 24, "sc%d", l), snprintf(n[2], 24, "bi%d", l);
        snprintf(n[3], 24, "mn%d", l), snprintf(n[4], 24, "vr%d", l), snprintf(n[5], 24, "c%d", l);
        snprintf(n[6], 24, "n%d", l), snprintf(n[7], 24, "y%d", l);
        double fan = 1.0 / sqrt(9.0 * (double)c);
        mb_init_random(b, n[0], DIMS(c, c, 3, 3), -fan, 2 * fan, r);
        mb_init_random(b, n[1], DIMS(c), 0.5, 1, r);
        mb_init_random(b, n[2], DIMS(c), -0.5, 1, r);
        mb_init_random(b, n[3], DIMS(c), -0.5, 1, r);
        mb_init_random(b, n[4], DIMS(c), 0.5, 1, r);
        char ins[160];
        snprintf(ins, sizeof ins, "%s %s", in, n[0]);
        Onnx__NodeProto *cv = mb_node(b, "Conv", n[5], ins, n[5]);
        mb_attr_ints(b, cv, "pads", 4, (const int64_t[]){1, 1, 1, 1});
        int64_t s = l == strided ? 2 : 1;
        mb_attr_ints(b, cv, "strides", 2, (const int64_t[]){s, s});
        snprintf(ins, sizeof ins, "%s %s %s %s %s", n[5], n[1], n[2], n[3], n[4]);
        mb_node(b, "BatchNormalization", n[6], ins, n[6]);
        const char *pre = n[6];
        char sum[24];
        if (s == 1) {
            snprintf(sum, sizeof sum, "s%d", l);
            snprintf(ins, sizeof ins, "%s %s", n[6], in);
            mb_node(b, "Add", sum, ins, sum);
            pre = sum;
        }
        mb_node(b, "Relu", n[7], pre, n[7]);
        memcpy(in, n[7], sizeof in);
    }
    mb_output(b, in);
}

/* The property through the importer: drawn convolution chains (batch,
 * channels, size, which block strides, chip), simplified (BatchNormalization
 * folded) as rotor run --group graphturbo plans them: the run of the plan
 * the compile chooses gives the direct run's values and holds no more SRAM
 * than the compile counted.  Not vacuous: the draws group some
 * sub-graphs.  Under the sanitizers the first 4 draws only (tests/san.h;
 * they group 5 sub-graphs, stride in the first block, the second and none,
 * on 256 and 736 cores): 4 s of the 12 the ten take under ASan. */
Test(gticcarun, every_convolution_plan_drawn_computes_the_direct_values) {
    static const int64_t batches[] = {4, 8, 16}, chans[] = {32, 64}, sizes[] = {14, 16};
    static const char *cores[] = {"cores_per_chip=256", "cores_per_chip=736", "cores_per_chip=1472"};
    uint64_t r = 0xc0417;
    int grouped = 0;
    const int draws = ROTOR_TEST_SAN ? 4 : 10;
    for (int draw = 0; draw < draws; draw++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        int64_t batch = batches[(r >> 33) % 3], c = chans[(r >> 36) % 2], hw = sizes[(r >> 38) % 2];
        int strided = (int)((r >> 41) % 4); /* 3: none strides */
        const char *cc = cores[(r >> 44) % 3];
        mb b;
        conv_model(&b, batch, c, hw, 3, strided, &r);
        rotor_error err = {{0}};
        rotor_onnx_options o = {.keep_data = true};
        rotor_graph imported, g;
        rotor_simplify_stats sst;
        cr_assert_eq(mb_load(&b, &o, &imported, NULL, &err), ROTOR_OK, "%s", err.msg);
        cr_assert_eq(rotor_simplify(&imported, &g, &sst, &err), ROTOR_OK, "%s", err.msg);
        cr_assert_eq(sst.bn_folded, 3);
        int x = rotor_graph_find_value(&g, "x");
        int64_t nx = g.values[x].elements;
        double *xd = malloc(sizeof *xd * (size_t)nx);
        for (int64_t k = 0; k < nx; k++) xd[k] = cos(0.11 * (double)k + draw);
        char what[160];
        snprintf(what, sizeof what, "draw %d (batch %lld, %lld channels, %lld^2, stride in %d, %s)", draw,
                 (long long)batch, (long long)c, (long long)hw, strided, cc);
        grouped += plan_computes_the_direct_values(&g, cc, x, xd, what);
        free(xd);
        rotor_graph_free(&g);
        rotor_graph_free(&imported);
        mb_free(&b);
    }
    /* 9 in 10 draws when written, 5 in the first 4 (so 5 either way) */
    cr_assert_geq(grouped, 5, "the draws grouped %d sub-graphs", grouped);
}

/* A quantized model (quantbuild.h) loaded with its data, T10's program of
 * it on an IPU, its input x (integers 0..255) and its direct run. */
typedef struct qiccarun {
    rotor_chip chip;
    rotor_graph g;
    rotor_program p;
    double *xd, **in;
    rotor_run_result direct;
} qiccarun;

static void qiccarun_make(mb *b, qiccarun *q) {
    rotor_error err = {{0}};
    rotor_onnx_options o = {.keep_data = true};
    cr_assert_eq(mb_load(b, &o, &q->g, NULL, &err), ROTOR_OK, "%s", err.msg);
    mb_free(b);
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &q->chip, &err), ROTOR_OK);
    compiled_program(&q->g, &q->chip, NULL, NULL, &q->p);
    int x = rotor_graph_find_value(&q->g, "x");
    int64_t n = q->g.values[x].elements;
    q->xd = malloc(sizeof *q->xd * (size_t)n);
    for (int64_t k = 0; k < n; k++) q->xd[k] = (double)((k * 53 + k / 16 * 7) % 256);
    q->in = calloc((size_t)q->g.nvalues, sizeof *q->in);
    q->in[x] = q->xd;
    cr_assert_eq(rotor_run(&q->g, (const double *const *)q->in, NULL, &q->direct, &err), ROTOR_OK, "%s", err.msg);
}

static void qiccarun_free(qiccarun *q) {
    rotor_run_result_free(&q->direct);
    free(q->in);
    free(q->xd);
    rotor_program_free(&q->p);
    rotor_graph_free(&q->g);
}

static int op_named(const rotor_graph *g, const char *name) {
    for (int o = 0; o < g->nops; o++)
        if (!strcmp(g->ops[o].name, name)) return o;
    cr_assert_fail("no operator '%s'", name);
    return -1;
}

/* Runs operators first..last of q as n instances into *r. */
static void qiccarun_run(const qiccarun *q, const char *first, const char *last, int64_t n, rotor_run_result *r) {
    rotor_gticca_sg sg = {.first = op_named(&q->g, first), .last = op_named(&q->g, last), .instances = n,
                          .group_cores = rotor_chip_cores(&q->chip) / n};
    rotor_gticca_result gt = {.done = true, .nsg = 1, .sg = &sg};
    rotor_compile_options co = {0};
    rotor_run_options ro = {.program = &q->p, .chip = &q->chip, .gticca = &gt, .gticca_compile = &co};
    rotor_error err = {{0}};
    cr_assert_eq(rotor_run(&q->g, (const double *const *)q->in, &ro, r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(r->subgraphs_run, 1);
    cr_assert_eq(r->instance_runs, n);
}

/* Value `name` of run r is the direct run's to the bit; returns how many of
 * its elements lie strictly between lo and hi. */
static int qiccarun_bits(const qiccarun *q, const rotor_run_result *r, const char *name, double lo, double hi) {
    int v = rotor_graph_find_value(&q->g, name), inside = 0;
    cr_assert_geq(v, 0, "'%s'", name);
    cr_assert_arr_eq(r->values[v], q->direct.values[v], sizeof(double) * (size_t)q->g.values[v].elements, "'%s'",
                     name);
    for (int64_t k = 0; k < q->g.values[v].elements; k++) inside += r->values[v][k] > lo && r->values[v][k] < hi;
    return inside;
}

/* Runs operators first..last of q as n instances; asserts every value the
 * graph computes is the direct run's to the bit, and returns how many of
 * value y's elements lie strictly between lo and hi. */
static int qiccarun_same(const qiccarun *q, const char *first, const char *last, int64_t n, const char *y, double lo,
                         double hi) {
    rotor_run_result r;
    qiccarun_run(q, first, last, n, &r);
    for (int v = 0; v < q->g.nvalues; v++)
        if (q->g.values[v].producer >= 0) qiccarun_bits(q, &r, q->g.values[v].name, 0, 0);
    int inside = qiccarun_bits(q, &r, y, lo, hi);
    rotor_run_result_free(&r);
    return inside;
}

/* The instance graph of operators first..last of g split n ways: asserts
 * it splits, and returns the elements it gives value `name`. */
static int64_t instance_elements(const rotor_graph *g, const char *first, const char *last, int64_t n,
                                 const char *name) {
    rotor_graph ig;
    bool ok;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_gticca_instance(g, op_named(g, first), op_named(g, last), n, &ig, &ok, &err), ROTOR_OK, "%s",
                 err.msg);
    cr_assert(ok);
    int v = rotor_graph_find_value(&ig, name);
    cr_assert_geq(v, 0, "'%s'", name);
    int64_t e = ig.values[v].elements;
    rotor_graph_free(&ig);
    return e;
}

/* Two QLinearMatMuls as 4 instances of 16 rows: the second reads its A's
 * zero point and scale per row of its 64-row input and B's per column.
 * The instance graph keeps the operators' quantization and slices the
 * per-row parameters with the rows (instance i reads rows 16 i.. of them,
 * not rows 0..15), the per-column ones whole; the uint8 outputs are the
 * direct run's, and most are neither 0 nor 255. */
Test(gticcarun, quantized_matmuls_run_as_instances_with_their_per_row_parameters_sliced) {
    qiccarun q;
    mb b;
    quant_matmuls_model(&b, false);
    qiccarun_make(&b, &q);
    cr_assert_eq(instance_elements(&q.g, "mm1", "mm2", 4, "hrz"), 16);
    cr_assert_eq(instance_elements(&q.g, "mm1", "mm2", 4, "hrs"), 16);
    cr_assert_eq(instance_elements(&q.g, "mm1", "mm2", 4, "wcz"), 16, "per column: whole");
    cr_assert_eq(instance_elements(&q.g, "mm1", "mm2", 4, "h"), 16 * 16);
    int inside = qiccarun_same(&q, "mm1", "mm2", 4, "y", 0, 255);
    cr_assert_gt(inside, 700, "%d of 1024 outputs unsaturated", inside);
    qiccarun_free(&q);
}

/* MatMulInteger (x's zero point, w1's per column) as 8 instances: the
 * int32 accumulators are the direct run's, and few are 0. */
Test(gticcarun, an_integer_matmul_runs_as_instances) {
    qiccarun q;
    mb b;
    quant_matmuls_model(&b, true);
    qiccarun_make(&b, &q);
    int zeros = qiccarun_same(&q, "mm", "mm", 8, "y", -0.5, 0.5);
    cr_assert_lt(zeros, 100, "%d of 1024 accumulators are 0", zeros);
    qiccarun_free(&q);
}

/* Two QLinearConvs (per-channel weight scales and zero points, an int32
 * bias) at batch 4 as 2 instances of 2 images: the outputs are the direct
 * run's. */
Test(gticcarun, quantized_convolutions_run_as_instances) {
    qiccarun q;
    mb b;
    quant_convs_model(&b, 4, false, false);
    qiccarun_make(&b, &q);
    int inside = qiccarun_same(&q, "conv1", "conv2", 2, "y", 0, 255);
    cr_assert_gt(inside, 2800, "%d of 4096 outputs unsaturated", inside);
    qiccarun_free(&q);
}

/* onnxruntime's dynamic quantization: DynamicQuantizeLinear computes x's
 * scale and zero point (one element each), MatMulInteger reads the zero
 * point, Cast and a Mul by the scales' product make the float output.  A
 * value of one element is read whole by every instance, so MatMulInteger
 * and its Cast split (they did not: a computed scalar outside the
 * expression made the range no candidate), and the accumulators are the
 * direct run's to the bit. */
Test(gticcarun, a_computed_scalar_zero_point_is_read_whole_by_every_instance) {
    mb b;
    mb_init(&b, 13);
    b.inputs[b.graph.n_input++] = mb_vi(&b, "x", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, DIMS(64, 16));
    b.outputs[b.graph.n_output++] = mb_vi(&b, "y", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, 0, NULL);
    ints(&b, "w", 2, 256, DIMS(16, 16), 5, 0, 256);
    ints(&b, "wz", 2, 1, 0, NULL, 0, 128, 1);
    floats(&b, "ws", 0, NULL, 1, (const float[]){0.01f});
    mb_node(&b, "DynamicQuantizeLinear", "dq", "x", "xq xs xz");
    mb_node(&b, "MatMulInteger", "mm", "xq w xz wz", "acc");
    Onnx__NodeProto *c = mb_node(&b, "Cast", "cast", "acc", "accf");
    mb_attr_i(&b, c, "to", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
    mb_node(&b, "Mul", "smul", "xs ws", "s");
    mb_node(&b, "Mul", "scale", "accf s", "y");
    qiccarun q;
    qiccarun_make(&b, &q);
    cr_assert_eq(instance_elements(&q.g, "mm", "cast", 4, "xz"), 1);
    cr_assert_eq(instance_elements(&q.g, "mm", "cast", 4, "acc"), 16 * 16);
    rotor_run_result r;
    qiccarun_run(&q, "mm", "cast", 4, &r);
    int zeros = qiccarun_bits(&q, &r, "acc", -0.5, 0.5);
    cr_assert_lt(zeros, 100, "%d of 1024 accumulators are 0", zeros);
    qiccarun_bits(&q, &r, "accf", 0, 0);
    /* y is a float32 product on the emulated cores: within the run's
     * tolerance of the direct run's double */
    int y = rotor_graph_find_value(&q.g, "y");
    cr_assert_eq(rotor_run_compare(r.values[y], q.direct.values[y], 1024, false).bad, 0);
    rotor_run_result_free(&r);
    qiccarun_free(&q);
}

/* Weights one operator reads per row (A's zero point and scale of mm1,
 * 16 rows) and another whole (B's of mm2, per column): no instance
 * graph holds it both ways, so the two are no sub-graph (rotor run then
 * names the split), while each alone is one.  So too within one
 * operator: mm3 reads z16 and s16 as A's per row and as B's per column,
 * and splits alone no more (sliced, B's column reads ran past the rows). */
Test(gticcarun, a_parameter_read_by_rows_and_whole_splits_no_sub_graph) {
    mb b;
    mb_init(&b, 13);
    b.inputs[b.graph.n_input++] = mb_vi(&b, "x", 2, DIMS(16, 16));
    b.outputs[b.graph.n_output++] = mb_vi(&b, "y", 2, 0, NULL);
    b.outputs[b.graph.n_output++] = mb_vi(&b, "y3", 2, 0, NULL);
    ints(&b, "w1", 3, 256, DIMS(16, 16), 5, -60, 121);
    ints(&b, "w2", 2, 256, DIMS(16, 16), 9, 60, 121); /* uint8, as z16 */
    ints(&b, "z16", 2, 16, DIMS(16), 0, 100, 41);
    ints(&b, "wz", 3, 1, 0, NULL, 0, 1, 1);
    quant_scalars(&b);
    floats(&b, "hs", 0, NULL, 1, (const float[]){0.05f});
    floats(&b, "ws", 0, NULL, 1, (const float[]){0.009f});
    float s16[16];
    for (int k = 0; k < 16; k++) s16[k] = 0.006f + 0.0002f * (float)k;
    floats(&b, "s16", 1, (const int64_t[]){16}, 16, s16);
    mb_node(&b, "QLinearMatMul", "mm1", "x s16 z16 w1 ws wz hs hz", "h");
    mb_node(&b, "QLinearMatMul", "mm2", "h hs hz w2 s16 z16 ys yz", "y");
    mb_node(&b, "QLinearMatMul", "mm3", "x s16 z16 w2 s16 z16 ys yz", "y3");
    rotor_error err = {{0}};
    rotor_onnx_options o = {.keep_data = true};
    rotor_graph g, ig;
    cr_assert_eq(mb_load(&b, &o, &g, NULL, &err), ROTOR_OK, "%s", err.msg);
    mb_free(&b);
    cr_assert_eq(instance_elements(&g, "mm1", "mm1", 2, "z16"), 8);
    cr_assert_eq(instance_elements(&g, "mm1", "mm1", 2, "s16"), 8);
    cr_assert_eq(instance_elements(&g, "mm2", "mm2", 2, "z16"), 16);
    bool ok = true;
    cr_assert_eq(rotor_gticca_instance(&g, op_named(&g, "mm1"), op_named(&g, "mm2"), 2, &ig, &ok, &err), ROTOR_OK);
    cr_assert_not(ok);
    rotor_graph_free(&ig);
    ok = true;
    cr_assert_eq(rotor_gticca_instance(&g, op_named(&g, "mm3"), op_named(&g, "mm3"), 2, &ig, &ok, &err), ROTOR_OK);
    cr_assert_not(ok);
    rotor_graph_free(&ig);
    rotor_graph_free(&g);
}
