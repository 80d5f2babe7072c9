/* compilegpu.c — `rotor compile MODEL --chip GPU`: each grouped operator's
 * kernel on the GPU, its predicted time and bound, and the total
 * (docs/gpu.md), as a table or JSON (format rotor-gpu-compile, version 1). */
#include <cjson/cJSON.h>
#include <stdio.h>

#include "gpucli.h"
#include "rotor/compile/gpucompile.h"
#include "rotor/pipeline/t10gpu.h"

static const char *what(const rotor_graph *g, const rotor_gpu_compile_result *r, int i, char *buf, size_t cap) {
    const rotor_gpu_op_time *t = &r->ops[i];
    const rotor_gpu_estimate *o = &t->est;
    if (t->kind == ROTOR_GPU_KERNEL_FUSED) snprintf(buf, cap, "in %s", g->ops[t->fused_into].name);
    else if (t->kind == ROTOR_GPU_KERNEL_GEMM)
        snprintf(buf, cap, "%lldx%lld s%lld, %lld wave%s", (long long)o->tile_m, (long long)o->tile_n,
                 (long long)o->split_k, (long long)o->waves, o->waves == 1 ? "" : "s");
    else snprintf(buf, cap, "%s", rotor_gpu_kernel_kind_name(t->kind));
    return buf;
}

static int print_json(const char *model, int64_t batch, const rotor_gpu *gpu, const rotor_graph *g,
                      const rotor_gpu_compile_result *r) {
    cJSON *root = cJSON_CreateObject();
    if (!root) return cli_nomem("compile");
    cJSON_AddStringToObject(root, "format", "rotor-gpu-compile");
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON_AddStringToObject(root, "model", model);
    cJSON_AddNumberToObject(root, "batch", (double)batch);
    cJSON_AddStringToObject(root, "chip", gpu->name);
    cJSON_AddStringToObject(root, "dtype", rotor_gpu_dtype_name(gpu->dtype));
    cJSON_AddBoolToObject(root, "fused_attention", gpu->fused_attention != 0);
    cJSON_AddNumberToObject(root, "int8_ops", r->int8_ops); /* timed in dtype, whatever it is */
    cJSON *ops = cJSON_AddArrayToObject(root, "operators");
    for (int i = 0; i < r->nops; i++) {
        const rotor_gpu_op_time *t = &r->ops[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(ops, o);
        cJSON_AddStringToObject(o, "name", g->ops[i].name);
        cJSON_AddStringToObject(o, "type", g->ops[i].type);
        cJSON_AddStringToObject(o, "kernel", rotor_gpu_kernel_kind_name(t->kind));
        if (t->kind == ROTOR_GPU_KERNEL_FUSED) {
            cJSON_AddStringToObject(o, "fused_into", g->ops[t->fused_into].name);
            continue;
        }
        cJSON_AddNumberToObject(o, "seconds", t->est.seconds);
        cJSON_AddStringToObject(o, "bound", rotor_gpu_bound_name(t->est.bound));
        cJSON_AddNumberToObject(o, "hbm_bytes", t->est.hbm_bytes);
        if (t->kind == ROTOR_GPU_KERNEL_GEMM) {
            cJSON_AddNumberToObject(o, "tile_m", (double)t->est.tile_m);
            cJSON_AddNumberToObject(o, "tile_n", (double)t->est.tile_n);
            cJSON_AddNumberToObject(o, "split_k", (double)t->est.split_k);
            cJSON_AddNumberToObject(o, "waves", (double)t->est.waves);
        }
    }
    cJSON *tot = cJSON_AddObjectToObject(root, "total");
    cJSON_AddNumberToObject(tot, "seconds", r->total_s);
    cJSON_AddNumberToObject(tot, "kernels", r->kernels);
    cJSON_AddNumberToObject(tot, "hbm_bytes", r->hbm_bytes);
    cJSON_AddNumberToObject(tot, "flops", r->flops);
    for (int b = 0; b < 4; b++)
        cJSON_AddNumberToObject(tot, rotor_gpu_bound_name((rotor_gpu_bound)b), r->bound_s[b]);
    return cli_print_json("compile", root);
}

static void print_table(const char *model, int64_t batch, const rotor_gpu *gpu, const rotor_graph *g,
                        const rotor_gpu_compile_result *r) {
    char bw[64];
    printf("%s, %s, on %s (GPU, %s; attention %s): %d operators, %d kernels\n", model,
           cli_batch_words(model, batch, bw, sizeof bw), gpu->name, rotor_gpu_dtype_name(gpu->dtype),
           gpu->fused_attention ? "fused, flash-style" : "unfused",
           g->nops, r->kernels);
    cli_gpu_chip_line(gpu);
    printf("\n%-28s %-20s %11s %6s %-8s %s\n", "operator", "type", "time (us)", "share", "bound", "kernel");
    for (int i = 0; i < r->nops; i++) {
        const rotor_gpu_op_time *t = &r->ops[i];
        char buf[64];
        what(g, r, i, buf, sizeof buf);
        if (t->kind == ROTOR_GPU_KERNEL_FUSED) {
            printf("%-28.28s %-20.20s %11s %6s %-8s %s\n", g->ops[i].name, g->ops[i].type, "-", "", "", buf);
            continue;
        }
        printf("%-28.28s %-20.20s %11.3f %5.1f%% %-8s %s\n", g->ops[i].name, g->ops[i].type, t->est.seconds * 1e6,
               100 * t->est.seconds / r->total_s, rotor_gpu_bound_name(t->est.bound), buf);
    }
    printf("\ntotal %.3f us: compute-bound %.3f, HBM-bound %.3f, L2-bound %.3f, launch-bound %.3f; %.3f GFLOP, "
           "%.3f MB from HBM\n", r->total_s * 1e6, r->bound_s[0] * 1e6, r->bound_s[1] * 1e6, r->bound_s[2] * 1e6,
           r->bound_s[3] * 1e6, r->flops / 1e9, r->hbm_bytes / 1e6);
    if (r->int8_ops && gpu->dtype != ROTOR_GPU_INT8)
        printf("(%d operators contract 8-bit integers, timed here in %s like every kernel: --set dtype=int8 times "
               "the model in int8; docs/gpu.md)\n", r->int8_ops, rotor_gpu_dtype_name(gpu->dtype));
}

int cli_compile_gpu(const cli_shared_args *sa, const char *model, rotor_pipeline_options *po, int nbatches,
                    bool json, const char *other) {
    const char *cmd = "compile";
    if (other)
        return cli_usage_error(cmd, "%s has no meaning on a GPU chip (docs/gpu.md)", other);
    if (nbatches > 1) return cli_usage_error(cmd, "a GPU chip takes one --batch (docs/gpu.md)");
    rotor_error err = {{0}};
    rotor_gpu gpu;
    rotor_status st = cli_gpu_resolve(sa, &gpu, &err);
    if (st) return cli_fail(cmd, st, &err);
    rotor_t10gpu_options(po); /* the model as TensorRT builds it */
    rotor_pipeline p;
    st = rotor_pipeline_run(po, NULL, &p, &err);
    rotor_gpu_compile_result r = {0};
    if (!st) st = rotor_gpu_compile(&p.graph, &gpu, &r, &err);
    int rc = st ? cli_fail(cmd, st, &err)
         : json ? print_json(model, po->zoo.batch, &gpu, &p.graph, &r)
                : (print_table(model, po->zoo.batch, &gpu, &p.graph, &r), 0);
    rotor_gpu_compile_free(&r);
    rotor_pipeline_free(&p);
    return rc;
}
