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
#include <stdint.h>
#include <stdio.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/model/graph.h"
#include "rotor/op/expr.h"

#define FIXTURE static __attribute__((unused))

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

/* The operator `text` with the extents `dims` ("m=32,k=64"), parsed and bound. */
FIXTURE rotor_expr make_expr(const char *text, const char *dims) {
    rotor_expr e;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_expr_make(text, dims, &e, &err), ROTOR_OK, "%s [%s]: %s", text, dims, err.msg);
    return e;
}

/* Adds the MatMul y[m,n] = x[m,k] * w[k,n] named `name` to g, reading values
 * x and w and writing y. */
FIXTURE void add_matmul(rotor_graph *g, const char *name, int x, int w, int y, int64_t m, int64_t k, int64_t n) {
    char dims[96];
    snprintf(dims, sizeof dims, "m=%lld,k=%lld,n=%lld", (long long)m, (long long)k, (long long)n);
    int in[2] = {x, w}, outv[1] = {y};
    rotor_op_desc d = {.name = name, .type = "MatMul", .expr = "C[m,n] += A[m,k] * B[k,n]",
                       .dims = dims, .inputs = in, .ninputs = 2, .outputs = outv, .noutputs = 1};
    for (int t = 0; t < ROTOR_MAX_TENSORS; t++) d.tensor_value[t] = -1;
    d.tensor_value[0] = y;
    d.tensor_value[1] = x;
    d.tensor_value[2] = w;
    rotor_error err = {{0}};
    cr_assert_eq(rotor_graph_add_op(g, &d, NULL, &err), ROTOR_OK, "%s", err.msg);
}

#endif
