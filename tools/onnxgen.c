/* onnxgen — writes ONNX models for rotor's own tests, benchmarks and
 * examples, with deterministic pseudo-random weights stored in the file.
 *
 *   build/onnxgen resnet-18 FILE.onnx [--batch N]
 *   build/onnxgen tiny-cnn FILE.onnx
 *   build/onnxgen mlp FILE.onnx [--batch N]
 *
 * resnet-18 is torchvision's ResNet-18 (He et al. 2016, Table 1) as an
 * inference export writes it: batch normalisation folded into each
 * convolution's weights and bias, 11.7 M parameters, a 1 x 3 x 224 x 224
 * input "input" and 1,000 logits "logits" (opset 13).  tiny-cnn is a
 * four-operator network small enough to ship in the repository.  mlp is
 * a NeRF-like MLP (Mildenhall et al. 2020, Fig. 7, narrowed to four layers):
 * an N x 64 input "x" (N = --batch rows, default 512), three MatMul + Add +
 * Relu layers 256 wide and a MatMul + Add to 4 outputs "y": small enough to
 * emulate in seconds, and a chain rotor compile --pipeline streams in
 * micro-batches of rows (docs/run.md, "Pipelined segments").
 *
 * Why a generator and not a file: the project's models are its own work,
 * the ResNet-18 weights are 47 MB, and no Debian package ships an exported
 * ResNet-18 or BERT-Base with reference outputs.  The weights are uniform in
 * +-sqrt(3 / fan_in) (unit variance in, about unit variance out) from a
 * fixed xorshift stream, so every run writes the same bytes.
 *
 * The file is written under a temporary name and renamed into place. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

/* ---- an arena of protobuf-c structs ------------------------------------- */

typedef struct gen {
    void **arena;
    size_t narena, cap;
    Onnx__ModelProto model;
    Onnx__GraphProto graph;
    Onnx__OperatorSetIdProto opset;
    Onnx__OperatorSetIdProto *opsets[1];
    size_t nodes_cap, inits_cap;
    uint64_t rng;
    int counter;
    int oom;
} gen;

static void *gen_alloc(gen *g, size_t n) {
    if (g->oom) return NULL;
    if (g->narena == g->cap) {
        size_t c = g->cap ? 2 * g->cap : 256;
        void **a = realloc(g->arena, c * sizeof *a);
        if (!a) {
            g->oom = 1;
            return NULL;
        }
        g->arena = a;
        g->cap = c;
    }
    void *p = calloc(1, n ? n : 1);
    if (!p) {
        g->oom = 1;
        return NULL;
    }
    g->arena[g->narena++] = p;
    return p;
}

static char *gen_str(gen *g, const char *s) {
    char *p = gen_alloc(g, strlen(s) + 1);
    if (p) strcpy(p, s);
    return p;
}

static void gen_free(gen *g) {
    for (size_t i = 0; i < g->narena; i++) free(g->arena[i]);
    free(g->arena);
    free(g->graph.node);
    free(g->graph.initializer);
}

static int gen_init(gen *g, const char *name) {
    memset(g, 0, sizeof *g);
    onnx__model_proto__init(&g->model);
    onnx__graph_proto__init(&g->graph);
    onnx__operator_set_id_proto__init(&g->opset);
    g->opset.has_version = 1;
    g->opset.version = 13;
    g->opset.domain = gen_str(g, "");
    g->opsets[0] = &g->opset;
    g->model.has_ir_version = 1;
    g->model.ir_version = 8;
    g->model.n_opset_import = 1;
    g->model.opset_import = g->opsets;
    g->model.producer_name = gen_str(g, "rotor onnxgen");
    g->model.graph = &g->graph;
    g->graph.name = gen_str(g, name);
    g->rng = 0x9e3779b97f4a7c15ull;
    return g->oom;
}

/* xorshift64*: a fixed stream, the same on every machine */
static double gen_uniform(gen *g) {
    g->rng ^= g->rng >> 12;
    g->rng ^= g->rng << 25;
    g->rng ^= g->rng >> 27;
    uint64_t x = g->rng * 0x2545f4914f6cdd1dull;
    return (double)(x >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0;
}

static Onnx__ValueInfoProto *gen_value_info(gen *g, const char *name, int rank, const int64_t *dims) {
    Onnx__ValueInfoProto *v = gen_alloc(g, sizeof *v);
    Onnx__TypeProto *t = gen_alloc(g, sizeof *t);
    Onnx__TypeProto__Tensor *tt = gen_alloc(g, sizeof *tt);
    Onnx__TensorShapeProto *sh = gen_alloc(g, sizeof *sh);
    Onnx__TensorShapeProto__Dimension **dv = gen_alloc(g, sizeof *dv * (size_t)(rank ? rank : 1));
    if (!v || !t || !tt || !sh || !dv) return NULL;
    onnx__value_info_proto__init(v);
    onnx__type_proto__init(t);
    onnx__type_proto__tensor__init(tt);
    onnx__tensor_shape_proto__init(sh);
    v->name = gen_str(g, name);
    tt->has_elem_type = 1;
    tt->elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    sh->n_dim = (size_t)rank;
    sh->dim = dv;
    for (int d = 0; d < rank; d++) {
        Onnx__TensorShapeProto__Dimension *dm = gen_alloc(g, sizeof *dm);
        if (!dm) return NULL;
        onnx__tensor_shape_proto__dimension__init(dm);
        dm->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        dm->dim_value = dims[d];
        dv[d] = dm;
    }
    tt->shape = sh;
    t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    t->tensor_type = tt;
    v->type = t;
    return v;
}

static int gen_io(gen *g, bool input, const char *name, int rank, const int64_t *dims) {
    Onnx__ValueInfoProto *v = gen_value_info(g, name, rank, dims);
    Onnx__ValueInfoProto **a = gen_alloc(g, sizeof *a * 1);
    if (!v || !a) return 1;
    a[0] = v;
    if (input) {
        g->graph.input = a;
        g->graph.n_input = 1;
    } else {
        g->graph.output = a;
        g->graph.n_output = 1;
    }
    return 0;
}

static int grow(void ***arr, size_t n, size_t *cap) {
    if (n < *cap) return 0;
    size_t c = *cap ? 2 * *cap : 64;
    void **a = realloc(*arr, c * sizeof *a);
    if (!a) return 1;
    *arr = a;
    *cap = c;
    return 0;
}

/* A float initializer of the given shape, uniform in +-scale. */
static const char *gen_weight(gen *g, const char *name, int rank, const int64_t *dims, double scale) {
    Onnx__TensorProto *t = gen_alloc(g, sizeof *t);
    int64_t *dv = gen_alloc(g, sizeof *dv * (size_t)rank);
    if (!t || !dv) return NULL;
    onnx__tensor_proto__init(t);
    t->name = gen_str(g, name);
    t->has_data_type = 1;
    t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    int64_t n = 1;
    for (int d = 0; d < rank; d++) dv[d] = dims[d], n *= dims[d];
    t->n_dims = (size_t)rank;
    t->dims = dv;
    float *f = gen_alloc(g, sizeof *f * (size_t)n);
    if (!f) return NULL;
    for (int64_t i = 0; i < n; i++) f[i] = (float)(scale * gen_uniform(g));
    t->n_float_data = (size_t)n;
    t->float_data = f;
    if (grow((void ***)&g->graph.initializer, g->graph.n_initializer, &g->inits_cap)) return NULL;
    g->graph.initializer[g->graph.n_initializer++] = t;
    return t->name;
}

static Onnx__NodeProto *gen_node(gen *g, const char *op, const char *name, int nin, const char *const *in,
                                 const char *out) {
    Onnx__NodeProto *n = gen_alloc(g, sizeof *n);
    char **iv = gen_alloc(g, sizeof *iv * (size_t)nin), **ov = gen_alloc(g, sizeof *ov);
    Onnx__AttributeProto **av = gen_alloc(g, sizeof *av * 8);
    if (!n || !iv || !ov || !av) return NULL;
    onnx__node_proto__init(n);
    n->op_type = gen_str(g, op);
    n->name = gen_str(g, name);
    for (int i = 0; i < nin; i++) iv[i] = gen_str(g, in[i]);
    n->n_input = (size_t)nin;
    n->input = iv;
    ov[0] = gen_str(g, out);
    n->n_output = 1;
    n->output = ov;
    n->attribute = av;
    if (grow((void ***)&g->graph.node, g->graph.n_node, &g->nodes_cap)) return NULL;
    g->graph.node[g->graph.n_node++] = n;
    return n;
}

static int gen_ints(gen *g, Onnx__NodeProto *n, const char *name, int cnt, const int64_t *v) {
    Onnx__AttributeProto *a = gen_alloc(g, sizeof *a);
    int64_t *iv = gen_alloc(g, sizeof *iv * (size_t)cnt);
    if (!n || !a || !iv) return 1;
    onnx__attribute_proto__init(a);
    a->name = gen_str(g, name);
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    memcpy(iv, v, sizeof *iv * (size_t)cnt);
    a->n_ints = (size_t)cnt;
    a->ints = iv;
    n->attribute[n->n_attribute++] = a;
    return 0;
}

static int gen_int(gen *g, Onnx__NodeProto *n, const char *name, int64_t v) {
    Onnx__AttributeProto *a = gen_alloc(g, sizeof *a);
    if (!n || !a) return 1;
    onnx__attribute_proto__init(a);
    a->name = gen_str(g, name);
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    a->has_i = 1;
    a->i = v;
    n->attribute[n->n_attribute++] = a;
    return 0;
}

/* ---- layers ---------------------------------------------------------------- */

/* A fresh value name "<prefix>_<k>" (static buffer per call is not enough:
 * the arena keeps it). */
static const char *fresh(gen *g, const char *prefix) {
    char s[96];
    int len = snprintf(s, sizeof s, "%s_%d", prefix, g->counter++);
    return len > 0 && (size_t)len < sizeof s ? gen_str(g, s) : NULL; /* every prefix here is short */
}

/* Conv k x k, stride s, padding p, with a bias (a folded batch norm). */
static const char *conv(gen *g, const char *name, const char *x, int64_t cin, int64_t cout, int64_t k, int64_t s,
                        int64_t p) {
    char wn[96], bn[96];
    snprintf(wn, sizeof wn, "%s.weight", name);
    snprintf(bn, sizeof bn, "%s.bias", name);
    const char *w = gen_weight(g, wn, 4, (const int64_t[]){cout, cin, k, k}, sqrt(3.0 / (double)(cin * k * k)));
    const char *b = gen_weight(g, bn, 1, (const int64_t[]){cout}, 0.1);
    const char *y = fresh(g, name);
    if (!w || !b || !y) return NULL;
    Onnx__NodeProto *n = gen_node(g, "Conv", name, 3, (const char *const[]){x, w, b}, y);
    if (gen_ints(g, n, "kernel_shape", 2, (const int64_t[]){k, k}) ||
        gen_ints(g, n, "strides", 2, (const int64_t[]){s, s}) ||
        gen_ints(g, n, "pads", 4, (const int64_t[]){p, p, p, p}))
        return NULL;
    return y;
}

static const char *unary(gen *g, const char *op, const char *name, const char *x) {
    const char *y = fresh(g, name);
    if (!y || !gen_node(g, op, name, 1, &x, y)) return NULL;
    return y;
}

static const char *add(gen *g, const char *name, const char *a, const char *b) {
    const char *y = fresh(g, name);
    if (!y || !gen_node(g, "Add", name, 2, (const char *const[]){a, b}, y)) return NULL;
    return y;
}

/* torchvision's BasicBlock: conv3x3-relu-conv3x3, plus the shortcut (a 1x1
 * strided conv when the shape changes), then relu. */
static const char *basic_block(gen *g, const char *name, const char *x, int64_t cin, int64_t cout, int64_t s) {
    char n1[64], n2[64], nd[64], na[64], nr1[64], nr2[64];
    snprintf(n1, sizeof n1, "%s.conv1", name);
    snprintf(n2, sizeof n2, "%s.conv2", name);
    snprintf(nd, sizeof nd, "%s.downsample", name);
    snprintf(na, sizeof na, "%s.add", name);
    snprintf(nr1, sizeof nr1, "%s.relu1", name);
    snprintf(nr2, sizeof nr2, "%s.relu2", name);
    const char *h = conv(g, n1, x, cin, cout, 3, s, 1);
    if (!h || !(h = unary(g, "Relu", nr1, h)) || !(h = conv(g, n2, h, cout, cout, 3, 1, 1))) return NULL;
    const char *sc = x;
    if (s != 1 || cin != cout)
        if (!(sc = conv(g, nd, x, cin, cout, 1, s, 0))) return NULL;
    const char *y = add(g, na, h, sc);
    return y ? unary(g, "Relu", nr2, y) : NULL;
}

/* The classifier head both CNNs end with: Flatten x (in features), then a
 * Gemm to `classes` logits (weight uniform in +-sqrt(3 / in), transB), the
 * graph's output [batch, classes]. */
static int classifier(gen *g, const char *x, int64_t in, int64_t classes, int64_t batch) {
    const char *f = fresh(g, "flatten");
    Onnx__NodeProto *n = gen_node(g, "Flatten", "flatten", 1, &x, f);
    if (!f || gen_int(g, n, "axis", 1)) return 1;
    const char *w = gen_weight(g, "fc.weight", 2, (const int64_t[]){classes, in}, sqrt(3.0 / (double)in));
    const char *bias = gen_weight(g, "fc.bias", 1, (const int64_t[]){classes}, 0.1);
    n = gen_node(g, "Gemm", "fc", 3, (const char *const[]){f, w, bias}, "logits");
    if (!w || !bias || gen_int(g, n, "transB", 1)) return 1;
    return gen_io(g, false, "logits", 2, (const int64_t[]){batch, classes});
}

static int build_resnet18(gen *g, int64_t batch) {
    if (gen_io(g, true, "input", 4, (const int64_t[]){batch, 3, 224, 224})) return 1;
    const char *x = conv(g, "conv1", "input", 3, 64, 7, 2, 3);
    if (!x || !(x = unary(g, "Relu", "relu", x))) return 1;
    const char *mp = fresh(g, "maxpool");
    Onnx__NodeProto *n = gen_node(g, "MaxPool", "maxpool", 1, &x, mp);
    if (!mp || gen_ints(g, n, "kernel_shape", 2, (const int64_t[]){3, 3}) ||
        gen_ints(g, n, "strides", 2, (const int64_t[]){2, 2}) ||
        gen_ints(g, n, "pads", 4, (const int64_t[]){1, 1, 1, 1}))
        return 1;
    x = mp;
    static const int64_t width[4] = {64, 128, 256, 512};
    int64_t cin = 64;
    for (int l = 0; l < 4; l++)
        for (int b = 0; b < 2; b++) {
            char name[32];
            snprintf(name, sizeof name, "layer%d.%d", l + 1, b);
            int64_t s = l > 0 && b == 0 ? 2 : 1;
            if (!(x = basic_block(g, name, x, cin, width[l], s))) return 1;
            cin = width[l];
        }
    if (!(x = unary(g, "GlobalAveragePool", "avgpool", x))) return 1;
    return classifier(g, x, 512, 1000, batch);
}

/* Conv 3x3 (1 -> 4 channels) on an 8 x 8 image, Relu, MaxPool 2x2, Gemm to
 * 10 classes: four operators, a few hundred parameters. */
static int build_tiny_cnn(gen *g) {
    if (gen_io(g, true, "image", 4, (const int64_t[]){1, 1, 8, 8})) return 1;
    const char *x = conv(g, "conv", "image", 1, 4, 3, 1, 1);
    if (!x || !(x = unary(g, "Relu", "relu", x))) return 1;
    const char *mp = fresh(g, "pool");
    Onnx__NodeProto *n = gen_node(g, "MaxPool", "pool", 1, &x, mp);
    if (!mp || gen_ints(g, n, "kernel_shape", 2, (const int64_t[]){2, 2}) ||
        gen_ints(g, n, "strides", 2, (const int64_t[]){2, 2}))
        return 1;
    return classifier(g, mp, 64, 10, 1);
}

/* x W + b, W uniform in +-sqrt(3 / in): one dense layer as an exporter
 * writes it (MatMul, then Add of the bias). */
static const char *dense(gen *g, const char *name, const char *x, int64_t in, int64_t out) {
    char wn[96], bn[96], mn[96];
    snprintf(wn, sizeof wn, "%s.weight", name);
    snprintf(bn, sizeof bn, "%s.bias", name);
    snprintf(mn, sizeof mn, "%s.matmul", name);
    const char *w = gen_weight(g, wn, 2, (const int64_t[]){in, out}, sqrt(3.0 / (double)in));
    const char *b = gen_weight(g, bn, 1, (const int64_t[]){out}, 0.1);
    const char *h = fresh(g, mn);
    if (!w || !b || !h || !gen_node(g, "MatMul", mn, 2, (const char *const[]){x, w}, h)) return NULL;
    return add(g, name, h, b);
}

static int build_mlp(gen *g, int64_t rows) {
    if (gen_io(g, true, "x", 2, (const int64_t[]){rows, 64})) return 1;
    const char *x = "x";
    int64_t in = 64;
    for (int l = 0; l < 3; l++) {
        char name[32], rn[32];
        snprintf(name, sizeof name, "fc%d", l + 1);
        snprintf(rn, sizeof rn, "relu%d", l + 1);
        if (!(x = dense(g, name, x, in, 256)) || !(x = unary(g, "Relu", rn, x))) return 1;
        in = 256;
    }
    const char *w = gen_weight(g, "out.weight", 2, (const int64_t[]){256, 4}, sqrt(3.0 / 256.0));
    const char *b = gen_weight(g, "out.bias", 1, (const int64_t[]){4}, 0.1);
    const char *h = fresh(g, "out.matmul");
    if (!w || !b || !h || !gen_node(g, "MatMul", "out.matmul", 2, (const char *const[]){x, w}, h) ||
        !gen_node(g, "Add", "out", 2, (const char *const[]){h, b}, "y"))
        return 1;
    return gen_io(g, false, "y", 2, (const int64_t[]){rows, 4});
}

/* ---- main --------------------------------------------------------------------- */

static int usage(void) {
    fprintf(stderr, "usage: onnxgen resnet-18|tiny-cnn|mlp FILE.onnx [--batch N]\n");
    return 2;
}

int main(int argc, char **argv) {
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: onnxgen resnet-18|tiny-cnn|mlp FILE.onnx [--batch N]\n"
               "Writes an ONNX model with deterministic pseudo-random weights (tools/onnxgen.c).\n");
        return 0;
    }
    if (argc != 3 && argc != 5) return usage();
    const char *what = argv[1], *path = argv[2];
    bool resnet = !strcmp(what, "resnet-18"), mlp = !strcmp(what, "mlp");
    int64_t batch = mlp ? 512 : 1;
    if (argc == 5) {
        char *end;
        errno = 0;
        long long b = strtoll(argv[4], &end, 10);
        if (strcmp(argv[3], "--batch") || *end || errno || b < 1 || b > 4096) {
            fprintf(stderr, "onnxgen: --batch: expected an integer from 1 to 4096, got '%s'\n", argv[4]);
            return 2;
        }
        batch = b;
    }
    if (!resnet && !mlp && strcmp(what, "tiny-cnn")) {
        fprintf(stderr, "onnxgen: unknown model '%s' (known: resnet-18, tiny-cnn, mlp)\n", what);
        return 2;
    }
    if (!resnet && !mlp && batch != 1) {
        fprintf(stderr, "onnxgen: --batch: tiny-cnn has batch 1\n");
        return 2;
    }
    gen g;
    int bad = gen_init(&g, what) || (resnet ? build_resnet18(&g, batch) : mlp ? build_mlp(&g, batch) : build_tiny_cnn(&g)) || g.oom;
    if (bad) {
        gen_free(&g);
        fprintf(stderr, "onnxgen: out of memory\n");
        return 1;
    }
    size_t len = onnx__model_proto__get_packed_size(&g.model);
    uint8_t *buf = malloc(len ? len : 1);
    char tmp[4096];
    int n = snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if (!buf || n < 0 || (size_t)n >= sizeof tmp) {
        free(buf);
        gen_free(&g);
        fprintf(stderr, "onnxgen: %s: path too long or out of memory\n", path);
        return 1;
    }
    onnx__model_proto__pack(&g.model, buf);
    gen_free(&g);
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        fprintf(stderr, "onnxgen: %s: cannot write (%s)\n", path, strerror(errno));
        free(buf);
        return 1;
    }
    size_t w = fwrite(buf, 1, len, f);
    int closed = fclose(f);
    free(buf);
    if (w != len || closed != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, "onnxgen: %s: cannot write (%s)\n", path, strerror(errno));
        remove(tmp);
        return 1;
    }
    return 0;
}
