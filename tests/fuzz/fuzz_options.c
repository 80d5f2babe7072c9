/* Fuzzes the option strings rotor takes on its command line.  The first
 * byte picks the option, the rest is its value:
 *   0 --dims        bound to a MatMul and to a convolution
 *   1 --set         applied to ipu-mk2, then validated
 *   2 --constraints
 *   3 --topology    applied to ipu-mk2
 *   4 --hbm-bw
 *   5 --dim         binding an ONNX model's symbolic dimensions
 *   6 --input       replacing an ONNX model's input shape
 * The ONNX model is built here with protobuf-c: X[batch, seq, 8] x W[8, 8]. */
#include "fuzz.h"
#include "onnx.pb-c.h"
#include "cli/cli.h"
#include "rotor/model/onnx.h"
#include "rotor/op/search.h"

/* The packed model, built once. */
static uint8_t *model;
static size_t model_len;

static void build_model(void) {
    Onnx__OperatorSetIdProto opset = ONNX__OPERATOR_SET_ID_PROTO__INIT, *opsets[1] = {&opset};
    opset.has_version = 1;
    opset.version = 17;
    Onnx__TensorShapeProto__Dimension dx[3], dy[3];
    Onnx__TensorShapeProto__Dimension *px[3] = {&dx[0], &dx[1], &dx[2]}, *py[3] = {&dy[0], &dy[1], &dy[2]};
    const char *names[3] = {"batch", "seq", NULL};
    for (int d = 0; d < 3; d++) {
        onnx__tensor_shape_proto__dimension__init(&dx[d]);
        onnx__tensor_shape_proto__dimension__init(&dy[d]);
        if (names[d]) {
            dx[d].value_case = dy[d].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            dx[d].dim_param = dy[d].dim_param = (char *)names[d];
        } else {
            dx[d].value_case = dy[d].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            dx[d].dim_value = dy[d].dim_value = 8;
        }
    }
    Onnx__TensorShapeProto sx = ONNX__TENSOR_SHAPE_PROTO__INIT, sy = ONNX__TENSOR_SHAPE_PROTO__INIT;
    sx.n_dim = sy.n_dim = 3;
    sx.dim = px;
    sy.dim = py;
    Onnx__TypeProto__Tensor tx = ONNX__TYPE_PROTO__TENSOR__INIT, ty = ONNX__TYPE_PROTO__TENSOR__INIT;
    tx.has_elem_type = ty.has_elem_type = 1;
    tx.elem_type = ty.elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    tx.shape = &sx;
    ty.shape = &sy;
    Onnx__TypeProto kx = ONNX__TYPE_PROTO__INIT, ky = ONNX__TYPE_PROTO__INIT;
    kx.value_case = ky.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    kx.tensor_type = &tx;
    ky.tensor_type = &ty;
    Onnx__ValueInfoProto vx = ONNX__VALUE_INFO_PROTO__INIT, vy = ONNX__VALUE_INFO_PROTO__INIT;
    vx.name = "X", vx.type = &kx;
    vy.name = "Y", vy.type = &ky;
    Onnx__ValueInfoProto *ins[1] = {&vx}, *outs[1] = {&vy};
    int64_t wdims[2] = {8, 8};
    float wdata[64] = {0};
    Onnx__TensorProto w = ONNX__TENSOR_PROTO__INIT, *inits[1] = {&w};
    w.name = "W";
    w.has_data_type = 1, w.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    w.n_dims = 2, w.dims = wdims;
    w.n_float_data = 64, w.float_data = wdata;
    char *nin[2] = {"X", "W"}, *nout[1] = {"Y"};
    Onnx__NodeProto mm = ONNX__NODE_PROTO__INIT, *nodes[1] = {&mm};
    mm.op_type = "MatMul", mm.name = "mm";
    mm.n_input = 2, mm.input = nin;
    mm.n_output = 1, mm.output = nout;
    Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
    g.name = "fuzz";
    g.n_node = 1, g.node = nodes;
    g.n_initializer = 1, g.initializer = inits;
    g.n_input = 1, g.input = ins;
    g.n_output = 1, g.output = outs;
    Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
    m.has_ir_version = 1, m.ir_version = 8;
    m.n_opset_import = 1, m.opset_import = opsets;
    m.graph = &g;
    model_len = onnx__model_proto__get_packed_size(&m);
    model = malloc(model_len);
    if (!model) abort();
    onnx__model_proto__pack(&m, model);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    if (!model) build_model();
    char *v = fuzz_text(data + 1, size - 1);
    rotor_error err = {{0}};
    rotor_status st = ROTOR_OK;
    rotor_chip chip;
    if (rotor_chip_preset("ipu-mk2", &chip, &err)) abort();
    switch (data[0] % 7) {
    case 0: {
        rotor_expr e;
        if (rotor_expr_parse("C[m,n] += A[m,k] * B[k,n]", &e, &err)) abort();
        fuzz_check_error(rotor_expr_bind(&e, v, &err), &err);
        if (rotor_expr_parse("O[b,f,h,w] += I[b,c,h+kh,w+kw] * W[f,c,kh,kw]", &e, &err)) abort();
        st = rotor_expr_bind(&e, v, &err);
        break;
    }
    case 1:
        st = rotor_chip_set(&chip, v, &err);
        if (!st) st = rotor_chip_validate(&chip, &err);
        break;
    case 2: {
        rotor_constraints c;
        st = rotor_constraints_parse(v, &c, &err);
        break;
    }
    case 3: st = cli_apply_topology(&chip, v, &err); break;
    case 4: {
        double gbps = 0;
        if (cli_parse_bandwidth(v, &gbps) && !(gbps > 0 && gbps <= 1e9)) abort();
        break;
    }
    default: {
        rotor_onnx_options o = {0};
        if (data[0] % 7 == 5) o.dims = v;
        else o.dims = "batch=2,seq=4", o.input_shapes = v;
        rotor_graph g;
        st = rotor_onnx_load_buffer(model, model_len, "fuzz.onnx", &o, &g, NULL, &err);
        rotor_graph_free(&g);
        break;
    }
    }
    fuzz_check_error(st, &err);
    free(v);
    return 0;
}
