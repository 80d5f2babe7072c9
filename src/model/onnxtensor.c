/* onnxtensor.c — TensorProto files: the test data sets' input_<i>.pb and
 * output_<i>.pb, read by rotor run --check and written by rotor run -o
 * (docs/run.md).  Decoding is the importer's (ox_decode_tensor), so a
 * file's types and layouts mean what they mean in a model. */
#include "onnxir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rotor_onnx_tensor_free(rotor_onnx_tensor *t) {
    if (!t) return;
    free(t->name);
    free(t->data);
    memset(t, 0, sizeof *t);
}

rotor_status rotor_onnx_tensor_read(const char *path, rotor_onnx_tensor *out, rotor_error *err) {
    memset(out, 0, sizeof *out);
    uint8_t *buf;
    size_t len;
    rotor_status rs = ox_read_file(path, (size_t)1 << 32, &buf, &len, err);
    if (rs) return rs;
    Onnx__TensorProto *t = onnx__tensor_proto__unpack(NULL, len, buf);
    free(buf);
    if (!t) return rotor_fail(err, ROTOR_ERR_INPUT, "%s: not a serialized TensorProto", path);
    ox_model m = {.label = path, .data_max = ROTOR_ONNX_DATA_MAX, .keep_data = true};
    ox_val v = {0};
    rotor_status st = ox_decode_tensor(&m, t, &v, "the tensor", err);
    if (!st && !v.has_data && v.elems > 0)
        st = rotor_fail(err, ROTOR_ERR_INPUT, "%s: the tensor carries no elements rotor can read (%s, external or "
                        "stripped data)", path, ox_type_name(v.onnx_type));
    if (!st) {
        out->name = ox_name_copy(t->name); /* printable UTF-8, as the model's names (onnxname.c) */
        out->data = malloc(sizeof(double) * (size_t)(v.elems ? v.elems : 1));
        if (!out->name || !out->data) st = rotor_nomem(err);
    }
    if (!st) {
        out->onnx_type = v.onnx_type;
        out->dtype = v.dtype;
        out->rank = v.rank;
        memcpy(out->shape, v.shape, sizeof v.shape);
        out->elements = v.elems;
        for (int64_t k = 0; k < v.elems; k++) out->data[k] = ox_get(&v, k);
    }
    ox_free_data(&v);
    onnx__tensor_proto__free_unpacked(t, NULL);
    if (st) rotor_onnx_tensor_free(out);
    return st;
}

rotor_status rotor_onnx_tensor_write(const char *path, const rotor_onnx_tensor *t, rotor_error *err) {
    size_t esize;
    switch (t->onnx_type) {
    case T_FLOAT: case T_INT32: esize = 4; break;
    case T_DOUBLE: case T_INT64: esize = 8; break;
    case T_BOOL: esize = 1; break;
    default:
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: rotor writes float, double, int32, int64 and bool tensors, "
                          "not %s", path, ox_type_name(t->onnx_type));
    }
    Onnx__TensorProto p;
    onnx__tensor_proto__init(&p);
    int64_t dims[ROTOR_GRAPH_MAX_RANK];
    for (int d = 0; d < t->rank; d++) dims[d] = t->shape[d];
    p.n_dims = (size_t)t->rank;
    p.dims = dims;
    p.has_data_type = true;
    p.data_type = t->onnx_type;
    p.name = t->name ? t->name : (char *)"";
    uint8_t *raw = malloc(esize * (size_t)(t->elements ? t->elements : 1));
    if (!raw) return rotor_nomem(err);
    for (int64_t k = 0; k < t->elements; k++) {
        double x = t->data[k];
        uint8_t *at = raw + esize * (size_t)k;
        if (t->onnx_type == T_FLOAT) {
            float f = (float)x;
            memcpy(at, &f, 4);
        } else if (t->onnx_type == T_DOUBLE) {
            memcpy(at, &x, 8);
        } else if (t->onnx_type == T_INT32) {
            int32_t i = (int32_t)x;
            memcpy(at, &i, 4);
        } else if (t->onnx_type == T_INT64) {
            int64_t i = (int64_t)x;
            memcpy(at, &i, 8);
        } else {
            *at = x != 0;
        }
    }
    p.has_raw_data = true;
    p.raw_data.len = esize * (size_t)t->elements;
    p.raw_data.data = raw;
    size_t n = onnx__tensor_proto__get_packed_size(&p);
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf) {
        free(raw);
        return rotor_nomem(err);
    }
    onnx__tensor_proto__pack(&p, buf);
    free(raw);
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    rotor_status st = ROTOR_OK;
    if (!f) st = rotor_fail(err, ROTOR_ERR_IO, "%s: %s", tmp, strerror(errno));
    else {
        bool bad = fwrite(buf, 1, n, f) != n;
        bad |= fclose(f) != 0;
        if (bad) st = rotor_fail(err, ROTOR_ERR_IO, "%s: write error", tmp);
        else if (rename(tmp, path)) st = rotor_fail(err, ROTOR_ERR_IO, "%s: %s", path, strerror(errno));
        if (st) remove(tmp);
    }
    free(buf);
    return st;
}
