/* fixtures.h — the chips, operators and graph pieces many test files build
 * (after nn_dataflow's *_fixture.py).  Each fails the calling test with the
 * library's message when the library refuses it.
 *
 * Static functions only: the Makefile links every tests/test_*.c into one
 * binary, so this header is included where needed, and a file may use any
 * subset of it. */
#ifndef ROTOR_TESTS_FIXTURES_H
#define ROTOR_TESTS_FIXTURES_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/compile/compile.h"
#include "rotor/compile/dsa.h"
#include "rotor/compile/program.h"
#include "rotor/model/graph.h"
#include "rotor/op/expr.h"
#include "rotor/op/handoff.h"
#include "rotor/op/place.h"
#include "rotor/op/plan.h"
#include "rotor/op/sample.h"
#include "rotor/op/search.h"

#define FIXTURE static __attribute__((unused))

/* A plan of one operator with its expression, derived information and
 * placement (the hand-off tests place producers and consumers). */
typedef struct placed_plan {
    rotor_expr e;
    rotor_plan p;
    rotor_plan_info info;
    rotor_place *pl;
} placed_plan;

/* The hand-off of a placed producer's output (its placement's). */
FIXTURE rotor_handoff *handoff_of(const placed_plan *x) {
    rotor_handoff *h;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_handoff_make(x->pl, &h, &err), ROTOR_OK, "%s", err.msg);
    return h;
}

/* The preset chips: the IPU Mk2 (T10's chip) and the four-chip IPU-POD4
 * with HBM (Elk's). */
FIXTURE rotor_chip mk2(void) {
    rotor_chip c;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &c, &err), ROTOR_OK, "%s", err.msg);
    return c;
}

FIXTURE rotor_chip pod4(void) {
    rotor_chip c;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_preset("ipu-pod4", &c, &err), ROTOR_OK, "%s", err.msg);
    return c;
}

/* The small cluster the hand-built GraphTurbo chains run on: 8 cores, LB
 * and GB of 1 MiB, the GB at 1 GB/s and DDR at 0.1 GB/s holding
 * ddr_capacity bytes, 1 GFLOP/s of each unit kind, not at once, one
 * cluster. */
FIXTURE rotor_dsa_cluster small_cluster(int64_t ddr_capacity) {
    return (rotor_dsa_cluster){.cores = 8, .lb_bytes = 1 << 20, .gb_bytes = 1 << 20, .gb_bw = 1e9, .ddr_bw = 1e8,
                               .mm_rate = 1e9, .vec_rate = 1e9, .units_overlap = false,
                               .ddr_capacity = ddr_capacity, .clusters = 1};
}

/* The IPU Mk2's rates on a one-chip mesh of `cores` cores with `sram` bytes
 * of SRAM and `buf` bytes of shift buffer each: the small chips the search's
 * brute-force property tests can enumerate. */
FIXTURE rotor_chip mk2_small(int64_t cores, int64_t sram, int64_t buf) {
    rotor_chip c = mk2();
    c.cores_per_chip = cores;
    c.chips = 1;
    c.sram_bytes = sram;
    c.shift_buffer_bytes = buf;
    return c;
}

/* The operator `text` with the extents `dims` ("m=32,k=64"), parsed and bound. */
FIXTURE rotor_expr make_expr(const char *text, const char *dims) {
    rotor_expr e;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_expr_make(text, dims, &e, &err), ROTOR_OK, "%s [%s]: %s", text, dims, err.msg);
    return e;
}

/* The MatMul C[m,n] += A[m,k] * B[k,n] with the extents `dims` into e, and
 * in p its plan with F_op = [fm, fk, fn] and every other factor 1. */
FIXTURE void matmul_plan(const char *dims, int64_t fm, int64_t fk, int64_t fn, rotor_expr *e, rotor_plan *p) {
    *e = make_expr("C[m,n] += A[m,k] * B[k,n]", dims);
    rotor_plan_init(e, p);
    p->fop[0] = fm, p->fop[1] = fk, p->fop[2] = fn;
}

/* The first operator kinds the property tests over random operators draw
 * from (test_emu.c, test_place.c), in their order: a MatMul, a batched one,
 * a 2-D and a strided 1-D convolution, and an element-wise affine map. */
#define PROPERTY_OPS                                                                             \
    "C[m,n] += A[m,k] * B[k,n]", "C[b,m,n] += A[b,m,k] * B[b,k,n]",                              \
        "O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]", "O[f,h] += I[c,2*h+kh] * W[f,c,kh]", \
        "Y[s,d] = X[s,d] * G[d] + Bb[d]"

/* Binds the parsed e to random extents, written into dims: 1 .. 3 for a
 * window axis (named k + more letters: kh, kw), 1 .. max otherwise; the
 * library's status. */
FIXTURE rotor_status bind_random(rotor_rng *rng, rotor_expr *e, int64_t max, char *dims, size_t cap) {
    int n = 0;
    for (int a = 0; a < e->naxes; a++) {
        bool window = e->axis_name[a][0] == 'k' && e->axis_name[a][1] != '\0';
        int64_t ext = window ? 1 + rotor_rng_below(rng, 3) : 1 + rotor_rng_below(rng, max);
        n += snprintf(dims + n, cap - (size_t)n, "%s%s=%lld", a ? "," : "", e->axis_name[a], (long long)ext);
    }
    return rotor_expr_bind(e, dims, NULL);
}

/* splitmix64, for property tests' random models: a fixed seed draws the
 * same cases everywhere, and the seed printed on failure replays one. */
FIXTURE uint64_t next_rand(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* One expression operator of g reading in0 (and in1), writing out: the
 * expression's tensors 0, 1, 2 are out, in0, in1 (the library reads no
 * tensor_value past the expression's own tensors). */
FIXTURE void mlp_op(rotor_graph *g, const char *name, const char *type, const char *expr, const char *dims, int out,
                   int in0, int in1) {
    rotor_error err = {{0}};
    int ins[2] = {in0, in1};
    rotor_op_desc d = {.name = name, .type = type, .expr = expr, .dims = dims, .tensor_value = {out, in0, in1},
                       .inputs = ins, .ninputs = in1 >= 0 ? 2 : 1, .outputs = &out, .noutputs = 1};
    cr_assert_eq(rotor_graph_add_op(g, &d, NULL, &err), ROTOR_OK, "%s", err.msg);
}

/* Adds the MatMul y[m,n] = x[m,k] * w[k,n] named `name` to g, reading values
 * x and w and writing y. */
FIXTURE void add_matmul(rotor_graph *g, const char *name, int x, int w, int y, int64_t m, int64_t k, int64_t n) {
    char dims[96];
    snprintf(dims, sizeof dims, "m=%lld,k=%lld,n=%lld", (long long)m, (long long)k, (long long)n);
    mlp_op(g, name, "MatMul", "C[m,n] += A[m,k] * B[k,n]", dims, y, x, w);
}

/* Adds the f16 value `name` of `rank` dimensions `shape` with role `role`
 * to g; its index. */
FIXTURE int add_value_f16(rotor_graph *g, const char *name, int rank, const int64_t *shape, rotor_role role) {
    int v;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_graph_add_value(g, name, ROTOR_DTYPE_F16, rank, shape, role, &v, &err), ROTOR_OK, "%s",
                 err.msg);
    return v;
}

/* Adds the 2-D f16 value `name` (r x c) with role `role` to g; its index. */
FIXTURE int add_value2d(rotor_graph *g, const char *name, int64_t r, int64_t c, rotor_role role) {
    int64_t shape[2] = {r, c};
    return add_value_f16(g, name, 2, shape, role);
}

/* The FFN with a vendor op between its MatMuls (test_program.c,
 * test_replay.c): x (128 x 1024) -> up (1024 x 4096) -> gelu (vendor, no
 * expression) -> down (4096 x 1024) -> y, the output. */
FIXTURE void ffn_gelu(rotor_graph *g) {
    rotor_graph_init(g, "ffn");
    int x = add_value2d(g, "x", 128, 1024, ROTOR_ROLE_ACTIVATION);
    int wu = add_value2d(g, "w_up", 1024, 4096, ROTOR_ROLE_WEIGHT);
    int h = add_value2d(g, "h", 128, 4096, ROTOR_ROLE_ACTIVATION);
    int a = add_value2d(g, "a", 128, 4096, ROTOR_ROLE_ACTIVATION);
    int wd = add_value2d(g, "w_down", 4096, 1024, ROTOR_ROLE_WEIGHT);
    int y = add_value2d(g, "y", 128, 1024, ROTOR_ROLE_ACTIVATION);
    add_matmul(g, "up", x, wu, h, 128, 1024, 4096);
    mlp_op(g, "gelu", "Gelu", NULL, NULL, a, h, -1);
    add_matmul(g, "down", a, wd, y, 128, 4096, 1024);
    g->values[y].is_output = true;
}

/* A stack of `layers` FFNs on x (tokens x hidden): up to (hidden x ffn),
 * down to (ffn x hidden); the last activation is the graph's output. */
FIXTURE void ffn_stack(rotor_graph *g, int layers, int64_t tokens, int64_t hidden, int64_t ffn) {
    rotor_graph_init(g, "ffn-stack");
    int x = add_value2d(g, "x0", tokens, hidden, ROTOR_ROLE_ACTIVATION);
    for (int l = 0; l < layers; l++) {
        char n[64];
        snprintf(n, sizeof n, "w_up%d", l);
        int wu = add_value2d(g, n, hidden, ffn, ROTOR_ROLE_WEIGHT);
        snprintf(n, sizeof n, "w_down%d", l);
        int wd = add_value2d(g, n, ffn, hidden, ROTOR_ROLE_WEIGHT);
        snprintf(n, sizeof n, "h%d", l);
        int h = add_value2d(g, n, tokens, ffn, ROTOR_ROLE_ACTIVATION);
        snprintf(n, sizeof n, "x%d", l + 1);
        int y = add_value2d(g, n, tokens, hidden, ROTOR_ROLE_ACTIVATION);
        snprintf(n, sizeof n, "up%d", l);
        add_matmul(g, n, x, wu, h, tokens, hidden, ffn);
        snprintf(n, sizeof n, "down%d", l);
        add_matmul(g, n, h, wd, y, tokens, ffn, hidden);
        x = y;
    }
    g->values[x].is_output = true;
}

/* Every value of g made uint8: each operator is then costed at 1-byte
 * elements and, a contraction on a chip with int8_tops, at the int8 rate
 * (docs/cost-model.md, "Element types"). */
FIXTURE void all_uint8(rotor_graph *g) {
    for (int v = 0; v < g->nvalues; v++) {
        g->values[v].dtype = ROTOR_DTYPE_U8;
        g->values[v].bytes = g->values[v].elements;
    }
}

/* The chip a float model is costed on as an all_uint8 model is on chip:
 * 1-byte elements, the matrix rate chip's int8_tops when it gives one. */
FIXTURE rotor_chip costed_as_uint8(const rotor_chip *chip) {
    rotor_chip c = *chip;
    c.element_bytes = 1;
    if (chip->int8_tops > 0) c.matrix_tflops = chip->int8_tops;
    return c;
}

/* An FFN stack (2 layers, 256 tokens, 512 x 1024) twice: *q all uint8 on
 * *chip, ipu-mk2 with int8_tops 500, and *f in float on *same, the chip it
 * is costed on as q is on chip (costed_as_uint8): every cost of q on chip
 * is f's on same. */
FIXTURE void ffn_uint8_pair(rotor_graph *q, rotor_graph *f, rotor_chip *chip, rotor_chip *same) {
    ffn_stack(q, 2, 256, 512, 1024);
    ffn_stack(f, 2, 256, 512, 1024);
    all_uint8(q);
    *chip = mk2();
    chip->int8_tops = 500;
    *same = costed_as_uint8(chip);
}

/* ---- a small MLP with weights (issue 25: pipelined segments) ---------------- */

/* A value named name of rows x cols; with data when w (weights, sin-spread). */
FIXTURE int mlp_value(rotor_graph *g, const char *name, int64_t rows, int64_t cols, bool w) {
    rotor_error err = {{0}};
    int v;
    int64_t shape[2] = {rows, cols};
    cr_assert_eq(rotor_graph_add_value(g, name, ROTOR_DTYPE_F32, rows ? 2 : 1, rows ? shape : shape + 1,
                                       w ? ROTOR_ROLE_WEIGHT : ROTOR_ROLE_ACTIVATION, &v, &err), ROTOR_OK, "%s",
                 err.msg);
    if (w) {
        int64_t n = (rows ? rows : 1) * cols;
        double *d = malloc(sizeof *d * (size_t)n);
        /* about unit variance out for unit variance in: +-sqrt(3 / fan_in) */
        double scale = rows ? sqrt(3.0 / (double)rows) : 0.1;
        for (int64_t k = 0; k < n; k++) d[k] = scale * sin((double)(k + 17 * v) * 0.731);
        cr_assert_eq(rotor_graph_set_data(g, v, d, &err), ROTOR_OK);
        free(d);
    }
    return v;
}

/* A chain of `layers` MatMul + bias Add (+ Relu, but after the last layer
 * only with relu_last) layers of widths[] on X[rows x in], named x, w1, b1,
 * mm1, add1, relu1, ..., weights included (mlp_value); *x its input. */
FIXTURE void mlp_chain(rotor_graph *g, int64_t rows, int64_t in, const int64_t *widths, int layers, bool relu_last,
                       int *x) {
    rotor_error err = {{0}};
    rotor_graph_init(g, "mlp");
    *x = mlp_value(g, "x", rows, in, false);
    int h = *x;
    for (int l = 1; l <= layers; l++) {
        int64_t n = widths[l - 1];
        char name[32], dims[96];
        snprintf(name, sizeof name, "w%d", l);
        int w = mlp_value(g, name, in, n, true);
        snprintf(name, sizeof name, "b%d", l);
        int b = mlp_value(g, name, 0, n, true);
        snprintf(name, sizeof name, "mm%d", l);
        int m = mlp_value(g, name, rows, n, false);
        snprintf(dims, sizeof dims, "m=%lld,k=%lld,n=%lld", (long long)rows, (long long)in, (long long)n);
        mlp_op(g, name, "MatMul", "Y[m,n] += A[m,k] * B[k,n]", dims, m, h, w);
        snprintf(name, sizeof name, "add%d", l);
        int a = mlp_value(g, name, rows, n, false);
        snprintf(dims, sizeof dims, "m=%lld,n=%lld", (long long)rows, (long long)n);
        mlp_op(g, name, "Add", "Y[m,n] = A[m,n] + B[n]", dims, a, m, b);
        h = a;
        if (l < layers || relu_last) {
            snprintf(name, sizeof name, "relu%d", l);
            int r = mlp_value(g, name, rows, n, false);
            mlp_op(g, name, "Relu", "Y[m,n] = relu(X[m,n])", dims, r, a, -1);
            h = r;
        }
        in = n;
    }
    cr_assert_eq(rotor_graph_set_output(g, h, &err), ROTOR_OK);
}

/* A NeRF-like MLP as rotor run imports one (tools/onnxgen mlp, ungrouped),
 * weights included: on a 256-core IPU its pipelined compile streams
 * mm2 .. add2 over the columns in 8 micro-batches (tests/test_run.c,
 * test_replay.c, test_energy.c):
 * X[512 x 64] -> (MatMul, Add bias, Relu) 256 wide, twice -> MatMul, Add to
 * 4 outputs Y. */
FIXTURE void mlp_graph(rotor_graph *g, int *x) { mlp_chain(g, 512, 64, (const int64_t[]){256, 256, 4}, 3, false, x); }


/* A stack of FFNs (ffn_stack: layers, tokens, hidden, ffn) in g, compiled on
 * the IPU Mk2 with options o (NULL: defaults) into r; the library's status,
 * with its message in err. */
FIXTURE rotor_status compile_ffn(rotor_graph *g, int layers, int64_t tokens, int64_t hidden, int64_t ffn,
                                 const rotor_compile_options *o, rotor_compile_result *r, rotor_error *err) {
    ffn_stack(g, layers, tokens, hidden, ffn);
    rotor_chip chip = mk2();
    return rotor_compile(g, &chip, o, r, err);
}

/* The index of the operator called `name` among ops[0 .. n): a graph's, a
 * program's or a schedule's operators, each with a `name` that is a char
 * pointer or a char array.  It must exist. */
#define OP_NAMED(ops, n, name)                                                                     \
    op_index_named((const char *)&(ops)[0].name, sizeof *(ops), (n), (name),                      \
                   _Generic(&(ops)[0].name, char **: true, char *const *: true, default: false))
FIXTURE int op_index_named(const char *first, size_t stride, int n, const char *name, bool pointer) {
    for (int i = 0; i < n; i++) {
        const char *at = first + (size_t)i * stride;
        if (!strcmp(pointer ? *(char *const *)(const void *)at : at, name)) return i;
    }
    cr_assert_fail("no operator %s", name);
    return -1;
}

/* Leaves a time of ASSERT_TIMES unchecked. */
#define ANY_PS INT64_MIN

/* Operator result o (ops[i] of a preload result or of a schedule replay)
 * preloads over [pre_start, pre_end] and executes over [exe_start,
 * exe_end], in ps; ANY_PS leaves a time unchecked. */
#define ASSERT_TIMES(o, pre_start, pre_end, exe_start, exe_end)                                     \
    assert_times((const int64_t[]){(o).pre_start_ps, (o).pre_end_ps, (o).exe_start_ps, (o).exe_end_ps}, \
                 (const int64_t[]){pre_start, pre_end, exe_start, exe_end}, #o)
FIXTURE void assert_times(const int64_t *got, const int64_t *want, const char *what) {
    static const char *const names[4] = {"pre_start_ps", "pre_end_ps", "exe_start_ps", "exe_end_ps"};
    for (int i = 0; i < 4; i++)
        if (want[i] != ANY_PS)
            cr_assert_eq(got[i], want[i], "%s.%s: %lld, expected %lld", what, names[i], (long long)got[i],
                         (long long)want[i]);
}

/* g compiled for chip with options o (NULL: defaults), written as a program
 * file and read back into p; the compile result goes to keep, or is freed
 * when keep is NULL. */
FIXTURE void compiled_program(const rotor_graph *g, const rotor_chip *chip, const rotor_compile_options *o,
                              rotor_compile_result *keep, rotor_program *p) {
    rotor_error err = {{0}};
    rotor_compile_result r;
    cr_assert_eq(rotor_compile(g, chip, o, &r, &err), ROTOR_OK, "%s", err.msg);
    char *text = NULL;
    cr_assert_eq(rotor_program_write(g, chip, &r, &text, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_program_parse(text, g->name, chip, p, &err), ROTOR_OK, "%s", err.msg);
    free(text);
    if (keep) *keep = r;
    else rotor_compile_result_free(&r);
}

/* The pipelining the MLP is compiled with in tests: segments of two stages
 * and up to 8 micro-batches, which choose the defaults' segment (mm2 ..
 * add2 in 8) in 0.2 s instead of 4-8 s. */
#define MLP_PIPELINE {.pipeline = true, .max_stages = 2, .max_micro = 8}

/* The MLP (mlp_graph) on a 256-core IPU (into *chip), compiled with
 * pipelining (MLP_PIPELINE): its program in p, its compile result in keep (NULL: freed). */
FIXTURE void mlp_pipelined(rotor_chip *chip, rotor_graph *g, rotor_compile_result *keep, rotor_program *p) {
    rotor_error err = {{0}};
    cr_assert_eq(rotor_chip_preset("ipu-mk2", chip, &err), ROTOR_OK);
    cr_assert_eq(rotor_chip_set(chip, "cores_per_chip=256", &err), ROTOR_OK, "%s", err.msg);
    int x;
    mlp_graph(g, &x);
    rotor_compile_options o = MLP_PIPELINE;
    compiled_program(g, chip, &o, keep, p);
}

/* Three 3x3 convolutions of 16 channels on a 30 x 30 image, chained
 * (test_compile, test_plancache): on a small chip with little SRAM the
 * compile's walk grows their cut frontiers point by point. */
FIXTURE void conv3_chain(rotor_graph *g) {
    rotor_graph_init(g, "convs");
    rotor_error err;
    int64_t ishape[4] = {1, 16, 30, 30}, wshape[4] = {16, 16, 3, 3};
    int x;
    cr_assert_eq(rotor_graph_add_value(g, "x0", ROTOR_DTYPE_F16, 4, ishape, ROTOR_ROLE_ACTIVATION, &x, &err),
                 ROTOR_OK, "%s", err.msg);
    for (int l = 0; l < 3; l++) {
        char n[32];
        int w, y;
        int64_t oshape[4] = {1, 16, 28 - 2 * l, 28 - 2 * l};
        snprintf(n, sizeof n, "w%d", l);
        cr_assert_eq(rotor_graph_add_value(g, n, ROTOR_DTYPE_F16, 4, wshape, ROTOR_ROLE_WEIGHT, &w, &err),
                     ROTOR_OK, "%s", err.msg);
        snprintf(n, sizeof n, "x%d", l + 1);
        cr_assert_eq(rotor_graph_add_value(g, n, ROTOR_DTYPE_F16, 4, oshape, ROTOR_ROLE_ACTIVATION, &y, &err),
                     ROTOR_OK, "%s", err.msg);
        char dims[96];
        snprintf(dims, sizeof dims, "b=1,c=16,h=%d,kh=3,w=%d,kw=3,f=16", 28 - 2 * l, 28 - 2 * l);
        snprintf(n, sizeof n, "conv%d", l);
        mlp_op(g, n, "Conv", "O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]", dims, y, x, w);
        x = y;
    }
    g->values[x].is_output = true;
}

/* The exact Pareto frontier of e on chip, one thread, asserted to hold
 * several plans (temporal factors, rings and reductions on a GEMM or a
 * convolution of the mk2): what the hand-off and cache tests price. */
FIXTURE rotor_search_result pareto_frontier(const rotor_expr *e, const rotor_chip *chip) {
    rotor_search_options opt = {.pareto = true, .threads = 1};
    rotor_search_result r;
    rotor_error err;
    cr_assert_eq(rotor_search(e, chip, &opt, &r, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_geq(r.npareto, 3, "a frontier of several plans");
    return r;
}

/* A fresh directory /tmp/rotor-NAME-XXXXXX (malloc'd), removed with
 * everything in it by fixture_rm_dir: the plan cache's and its stores'
 * tests each write into their own. */
FIXTURE char *fixture_tmp_dir(const char *name) {
    char *d = NULL;
    cr_assert(asprintf(&d, "/tmp/rotor-%s-XXXXXX", name) > 0 && mkdtemp(d), "a temporary directory");
    return d;
}

FIXTURE void fixture_rm_dir(char *d) {
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
    cr_assert_eq(system(cmd), 0);
    free(d);
}

/* Every F_op vector of e under `room` cores (each F_a at most E_a, their
 * product at most the cores) in fop[a..], from axis a on, lexicographic
 * with the last axis fastest, as the search's walk orders them: visit(arg)
 * on each; fop[a..] are left 1.  The tests that check a bound or a cache
 * against every F_op of a small operator share it. */
FIXTURE void fixture_each_fop(const rotor_expr *e, int64_t *fop, int a, int64_t room, void (*visit)(void *),
                              void *arg) {
    if (a == e->naxes) {
        visit(arg);
        return;
    }
    int64_t hi = e->extent[a] < room ? e->extent[a] : room;
    for (int64_t f = 1; f <= hi; f++) {
        fop[a] = f;
        fixture_each_fop(e, fop, a + 1, room / f, visit, arg);
    }
    fop[a] = 1;
}

/* Whether s cores are a step the search offers axis a under F_op fop: some
 * tensor with axis a is replicated over a multiple of s cores (the product
 * of F_op over the axes it lacks). */
static inline bool fixture_step_offered(const rotor_expr *e, const int64_t *fop, int a, int64_t s) {
    for (int t = 0; t < e->ntensors; t++) {
        if (!e->tensors[t].has_axis[a]) continue;
        int64_t share = 1;
        for (int b = 0; b < e->naxes; b++)
            if (!e->tensors[t].has_axis[b]) share *= fop[b];
        if (share % s == 0) return true;
    }
    return false;
}

/* Every step vector the search offers under F_op fop (S_a up to the cores,
 * fixture_step_offered) in steps[a..], from axis a on: visit(arg) on each;
 * steps[a..] are left 1. */
FIXTURE void fixture_each_steps(const rotor_expr *e, const int64_t *fop, int64_t *steps, int64_t cores, int a,
                                void (*visit)(void *), void *arg) {
    if (a == e->naxes) {
        visit(arg);
        return;
    }
    for (int64_t s = 1; s <= cores; s++) {
        if (!fixture_step_offered(e, fop, a, s)) continue;
        steps[a] = s;
        fixture_each_steps(e, fop, steps, cores, a + 1, visit, arg);
    }
    steps[a] = 1;
}

#endif
