/* onnxload.c — rotor_onnx_load: an ONNX file to a rotor_graph in two steps
 * run in sequence (docs/onnx.md): the import (onnx.c: decode, bind, sort,
 * infer shapes, fold) and then the lowering (lower.c: the nodes left become
 * operators).  Neither step calls the other; this file is the only one that
 * calls both. */
#include "onnxir.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rotor_status rotor_onnx_load_buffer(const uint8_t *data, size_t len, const char *label,
                                    const rotor_onnx_options *opt, rotor_graph *out,
                                    rotor_onnx_stats *stats, rotor_error *err) {
    const char *lb = label ? label : "<buffer>";
    const char *base = strrchr(lb, '/');
    base = base ? base + 1 : lb;
    char gname[64];
    snprintf(gname, sizeof gname, "%s", base);
    char *dot = strrchr(gname, '.');
    if (dot && !strcmp(dot, ".onnx")) *dot = '\0';
    rotor_graph_init(out, gname);
    if (stats) memset(stats, 0, sizeof *stats);
    ox_model m;
    rotor_status st = ox_import(&m, data, len, label, opt, err);
    if (!st) st = ox_lower(&m, out, err);
    if (stats) *stats = m.stats;
    ox_model_free(&m);
    return st;
}

rotor_status rotor_onnx_load(const char *path, const rotor_onnx_options *opt, rotor_graph *out,
                             rotor_onnx_stats *stats, rotor_error *err) {
    rotor_graph_init(out, "onnx");
    if (stats) memset(stats, 0, sizeof *stats);
    uint8_t *buf;
    size_t len;
    int64_t max = opt && opt->max_bytes > 0 ? opt->max_bytes : ROTOR_ONNX_MAX_BYTES_DEFAULT;
    rotor_status rs = ox_read_file(path, (size_t)max, &buf, &len, err);
    if (rs == ROTOR_ERR_INPUT && err) { /* over the limit, or a device: name the option that sets it */
        size_t n = strlen(err->msg);
        snprintf(err->msg + n, sizeof err->msg - n, " (--max-model-bytes)");
    }
    if (rs) return rs;
    rotor_graph_free(out);
    rotor_status st = rotor_onnx_load_buffer(buf, len, path, opt, out, stats, err);
    free(buf);
    return st;
}
