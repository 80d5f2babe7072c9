/* test_onnxshape.c — the importer's shape and type inference against an
 * oracle (src/model/onnxshape.c and its rule files; docs/onnx.md, "Shape
 * oracle").
 *
 * Debian's libonnx-testdata (a test dependency, scripts/deps.sh) ships, next
 * to every operator-test model, the reference outputs the ONNX backend tests
 * compare with (test_data_set_0/output_<i>.pb, TensorProtos).  For every model
 * rotor imports, each graph output's inferred shape and type must equal its
 * reference's.  Where a file's declared output shape disagrees with the
 * reference data, the reference data wins: rotor infers shapes from the
 * operators, never from the declarations. */
#include <criterion/criterion.h>

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "rotor/model/onnx.h"

#define TESTDATA "/usr/share/libonnx-testdata/data"

static uint8_t *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? 2 * cap : 1 << 16;
            uint8_t *nb = realloc(buf, cap);
            cr_assert_not_null(nb);
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (!got) break;
    }
    fclose(f);
    *len = n;
    return buf;
}

/* The ONNX test generator stores bfloat16 references as their uint16 bit
 * patterns (numpy has no bfloat16): the same type for this comparison. */
static bool same_type(int inferred, int reference) {
    return inferred == reference || (inferred == ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16 &&
                                     reference == ONNX__TENSOR_PROTO__DATA_TYPE__UINT16);
}

typedef struct oracle_count {
    int models, imported, outputs, mismatches;
} oracle_count;

#define MAX_BIND 8

/* The graph input index of name in the model at path, or -1. */
static int input_index(const char *path, const char *name) {
    size_t len;
    uint8_t *buf = slurp(path, &len);
    cr_assert_not_null(buf);
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
    free(buf);
    cr_assert_not_null(m);
    int k = -1;
    for (size_t i = 0; i < m->graph->n_input && k < 0; i++)
        if (!strcmp(m->graph->input[i]->name, name)) k = (int)i;
    onnx__model_proto__free_unpacked(m, NULL);
    return k;
}

/* Imports the model, binding with --value, from its test_data_set_0, each
 * shape-deciding input the importer asks for (its refusal names it, as it
 * would for a user), when bind is set.  The bindings go to o. */
static rotor_status import_bound(const char *model, bool bind, rotor_onnx_options *o, char (*specs)[1600],
                                 const char **ptrs, rotor_error *err) {
    memset(o, 0, sizeof *o);
    o->values = ptrs;
    for (;;) {
        rotor_graph g;
        rotor_status st = rotor_onnx_load(model, o, &g, NULL, err);
        rotor_graph_free(&g);
        const char *ask = strstr(err->msg, "(give it with --value ");
        if (!st || !bind || !ask || o->nvalues == MAX_BIND) return st;
        char name[256];
        const char *from = ask + strlen("(give it with --value "), *eq = strchr(from, '=');
        if (!eq || eq - from >= (int)sizeof name) return st;
        snprintf(name, sizeof name, "%.*s", (int)(eq - from), from);
        int k = input_index(model, name);
        if (k < 0) return st;
        char dir[1024];
        snprintf(dir, sizeof dir, "%s", model);
        *strrchr(dir, '/') = '\0';
        snprintf(specs[o->nvalues], sizeof specs[0], "%s=%s/test_data_set_0/input_%d.pb", name, dir, k);
        ptrs[o->nvalues] = specs[o->nvalues];
        o->nvalues++;
    }
}

/* Checks one model directory; prints and counts every mismatch. */
static void check_model(const char *model, bool bind, oracle_count *n) {
    n->models++;
    rotor_error err;
    rotor_onnx_options o;
    char specs[MAX_BIND][1600];
    const char *ptrs[MAX_BIND];
    if (import_bound(model, bind, &o, specs, ptrs, &err)) {
        /* refused (cli_onnx.sh counts them): one line, no prefix twice */
        const char *node = strstr(err.msg, "node '");
        cr_assert(!strchr(err.msg, '\n'), "%s", err.msg);
        cr_assert(strstr(err.msg, model) == err.msg && !strstr(err.msg + strlen(model), model), "%s", err.msg);
        cr_assert(!node || !strstr(node + 1, "node '"), "%s", err.msg);
        if (node) {
            char own[160];
            const char *q = strchr(node + 6, '\'');
            snprintf(own, sizeof own, "op '%.*s'", q ? (int)(q - node - 6) : 0, node + 6);
            cr_assert(!q || !strstr(err.msg, own), "the node is named twice: %s", err.msg);
        }
        return;
    }
    n->imported++;
    size_t len;
    uint8_t *buf = slurp(model, &len);
    cr_assert_not_null(buf, "%s: unreadable", model);
    rotor_onnx_output *out;
    int nout;
    rotor_status st = rotor_onnx_outputs(buf, len, model, &o, &out, &nout, &err);
    free(buf);
    cr_assert_eq(st, ROTOR_OK, "%s imports but its outputs do not infer: %s", model, err.msg);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", model);
    *strrchr(dir, '/') = '\0';
    for (int i = 0; i < nout; i++) {
        char ref[1200];
        snprintf(ref, sizeof ref, "%s/test_data_set_0/output_%d.pb", dir, i);
        uint8_t *tb = slurp(ref, &len);
        if (!tb) continue; /* no reference for this output */
        Onnx__TensorProto *t = onnx__tensor_proto__unpack(NULL, len, tb);
        free(tb);
        cr_assert_not_null(t, "%s does not decode", ref);
        n->outputs++;
        bool ok = (size_t)out[i].rank == t->n_dims && same_type(out[i].onnx_type, t->data_type);
        for (int d = 0; ok && d < out[i].rank; d++) ok = out[i].shape[d] == t->dims[d];
        if (!ok) {
            n->mismatches++;
            char a[160] = "", b[160] = "";
            for (int d = 0, k = 0; d < out[i].rank; d++)
                k += snprintf(a + k, sizeof a - (size_t)k, "%s%lld", d ? "x" : "", (long long)out[i].shape[d]);
            for (size_t d = 0, k = 0; d < t->n_dims && k < sizeof b; d++)
                k += (size_t)snprintf(b + k, sizeof b - k, "%s%lld", d ? "x" : "", (long long)t->dims[d]);
            cr_log_error("%s: output '%s' inferred [%s] type %d, the reference is [%s] type %d", dir,
                         out[i].name, a, out[i].onnx_type, b, t->data_type);
        }
        onnx__tensor_proto__free_unpacked(t, NULL);
    }
    rotor_onnx_outputs_free(out, nout);
}

Test(onnxshape, every_imported_testdata_output_has_its_reference_shape_and_type) {
    glob_t gl;
    cr_assert_eq(glob(TESTDATA "/*/*/model.onnx", 0, NULL, &gl), 0,
                 TESTDATA " has no models (apt-get install libonnx-testdata)");
    oracle_count n = {0};
    for (size_t i = 0; i < gl.gl_pathc; i++) check_model(gl.gl_pathv[i], false, &n);
    globfree(&gl);
    cr_log_info("libonnx-testdata: %d of %d import, %d outputs checked", n.imported, n.models, n.outputs);
    /* the counts guard against a vacuous pass (docs/onnx.md has them) */
    cr_assert_eq(n.models, 1072);
    cr_assert_geq(n.imported, 887);
    cr_assert_geq(n.outputs, 1032);
    cr_assert_eq(n.mismatches, 0, "%d of %d outputs differ from their references (listed above)",
                 n.mismatches, n.outputs);
}

/* The same with each test's shape-deciding inputs bound by --value from
 * its test_data_set_0 (issue 20: at least 950 import), and the oracle holds
 * for the newly imported ones: their references were computed with those
 * very inputs. */
Test(onnxshape, with_shape_inputs_bound_from_the_test_data_the_oracle_still_holds) {
    glob_t gl;
    cr_assert_eq(glob(TESTDATA "/*/*/model.onnx", 0, NULL, &gl), 0);
    oracle_count n = {0};
    for (size_t i = 0; i < gl.gl_pathc; i++) check_model(gl.gl_pathv[i], true, &n);
    globfree(&gl);
    cr_log_info("libonnx-testdata with --value: %d of %d import, %d outputs checked", n.imported, n.models,
                n.outputs);
    cr_assert_geq(n.imported, 988, "only %d import", n.imported);
    cr_assert_eq(n.mismatches, 0, "%d of %d outputs differ from their references (listed above)",
                 n.mismatches, n.outputs);
}

static void outputs_of(const char *test, rotor_onnx_output **out, int *n) {
    char path[512];
    snprintf(path, sizeof path, TESTDATA "/node/%s/model.onnx", test);
    size_t len;
    uint8_t *buf = slurp(path, &len);
    cr_assert_not_null(buf, "%s is absent", path);
    rotor_error err;
    cr_assert_eq(rotor_onnx_outputs(buf, len, path, NULL, out, n, &err), ROTOR_OK, "%s", err.msg);
    free(buf);
}

/* The oracle found Bernoulli typed like its input whatever its dtype. */
Test(onnxshape, bernoulli_output_has_the_dtype_attribute_type) {
    rotor_onnx_output *o;
    int n;
    outputs_of("test_bernoulli_double", &o, &n);
    cr_assert_eq(n, 1);
    cr_assert_eq(o[0].dtype, ROTOR_DTYPE_F64);
    cr_assert_eq(o[0].onnx_type, ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE);
    rotor_onnx_outputs_free(o, n);
    outputs_of("test_bernoulli", &o, &n); /* no dtype: the input's (double in this file) */
    cr_assert_eq(o[0].onnx_type, ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE);
    rotor_onnx_outputs_free(o, n);
}

/* An output an Identity forwards keeps its own name and the input's shape,
 * though the graph has no value of that name. */
Test(onnxshape, identity_output_is_reported_under_its_own_name) {
    rotor_onnx_output *o;
    int n;
    outputs_of("test_identity", &o, &n);
    cr_assert_eq(n, 1);
    cr_assert_str_eq(o[0].name, "y");
    cr_assert_eq(o[0].rank, 4);
    cr_assert_eq(o[0].shape[0] * o[0].shape[1] * o[0].shape[2] * o[0].shape[3], 4);
    rotor_onnx_outputs_free(o, n);
}

Test(onnxshape, outputs_of_a_corrupt_buffer_is_one_error_and_nothing_to_free) {
    static const uint8_t junk[] = {0xff, 0xff, 0xff, 0x07, 0x01};
    rotor_onnx_output *o = (rotor_onnx_output *)1;
    int n = 7;
    rotor_error err;
    cr_assert_eq(rotor_onnx_outputs(junk, sizeof junk, "junk.onnx", NULL, &o, &n, &err), ROTOR_ERR_INPUT);
    cr_assert_null(o);
    cr_assert_eq(n, 0);
    cr_assert(strstr(err.msg, "junk.onnx: not a valid ONNX model") == err.msg, "%s", err.msg);
}
