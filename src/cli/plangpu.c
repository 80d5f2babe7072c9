/* plangpu.c — `rotor plan --chip GPU`: one operator's kernel on a GPU, its
 * tiling, traffic and time (docs/gpu.md), as a table or JSON (format
 * rotor-gpu-plan, version 1). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "gpucli.h"
#include "rotor/op/gpu.h"

rotor_status cli_gpu_resolve(const cli_shared_args *sa, rotor_gpu *gpu, rotor_error *err) {
    rotor_status st = rotor_gpu_resolve(sa->chip, gpu, err);
    for (int i = 0; !st && i < sa->nsets; i++) st = rotor_gpu_set(gpu, sa->sets[i], err);
    return st;
}

void cli_gpu_chip_line(const rotor_gpu *g) {
    printf("chip          %s: GPU, %lld SMs at %.0f MHz, %s %.1f TFLOP/s, HBM %.0f GB/s, L2 %.0f MiB, "
           "launch %.1f us\n", g->name, (long long)g->sms, g->clock_mhz, rotor_gpu_dtype_name(g->dtype),
           rotor_gpu_matrix_rate(g, g->dtype) / 1e12, g->hbm_gbps, (double)g->l2_bytes / 1048576.0, g->launch_us);
}

static void print_terms(const rotor_gpu_estimate *o) {
    printf("\npredicted time\n");
    printf("  compute      %12.3f us\n", o->compute_s * 1e6);
    printf("  HBM          %12.3f us   (%.0f bytes)\n", o->hbm_s * 1e6, o->hbm_bytes);
    printf("  L2           %12.3f us   (%.0f bytes to the SMs)\n", o->l2_s * 1e6, o->l2_bytes);
    printf("  launch       %12.3f us   (%d kernel%s)\n", o->launch_s * 1e6, o->kernels, o->kernels == 1 ? "" : "s");
    printf("  total        %12.3f us   bound: %s\n", o->seconds * 1e6, rotor_gpu_bound_name(o->bound));
}

static int print_json(const rotor_expr *e, const rotor_gpu *g, const rotor_gpu_estimate *o) {
    cJSON *root = cJSON_CreateObject();
    if (!root) return cli_nomem("plan");
    char dims[256];
    rotor_expr_dims_string(e, dims, sizeof dims);
    cJSON_AddStringToObject(root, "format", "rotor-gpu-plan");
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON_AddStringToObject(root, "chip", g->name);
    cJSON_AddStringToObject(root, "dtype", rotor_gpu_dtype_name(g->dtype));
    cJSON_AddStringToObject(root, "expr", e->text);
    cJSON_AddStringToObject(root, "dims", dims);
    cJSON_AddStringToObject(root, "kernel", o->tile_m ? "gemm" : "memory");
    if (o->tile_m) {
        cJSON *k = cJSON_AddObjectToObject(root, "gemm");
        cJSON_AddNumberToObject(k, "batch", (double)o->gemm.batch);
        cJSON_AddNumberToObject(k, "m", (double)o->gemm.m);
        cJSON_AddNumberToObject(k, "n", (double)o->gemm.n);
        cJSON_AddNumberToObject(k, "k", (double)o->gemm.k);
        cJSON_AddNumberToObject(k, "tile_m", (double)o->tile_m);
        cJSON_AddNumberToObject(k, "tile_n", (double)o->tile_n);
        cJSON_AddNumberToObject(k, "tile_k", (double)o->tile_k);
        cJSON_AddNumberToObject(k, "split_k", (double)o->split_k);
        cJSON_AddNumberToObject(k, "tiles", (double)o->tiles);
        cJSON_AddNumberToObject(k, "ctas_per_sm", (double)o->ctas_per_sm);
        cJSON_AddNumberToObject(k, "waves", (double)o->waves);
    }
    cJSON_AddNumberToObject(root, "flops", o->flops);
    cJSON_AddNumberToObject(root, "hbm_bytes", o->hbm_bytes);
    cJSON_AddNumberToObject(root, "l2_bytes", o->l2_bytes);
    cJSON_AddNumberToObject(root, "compute_s", o->compute_s);
    cJSON_AddNumberToObject(root, "hbm_s", o->hbm_s);
    cJSON_AddNumberToObject(root, "l2_s", o->l2_s);
    cJSON_AddNumberToObject(root, "launch_s", o->launch_s);
    cJSON_AddNumberToObject(root, "seconds", o->seconds);
    cJSON_AddStringToObject(root, "bound", rotor_gpu_bound_name(o->bound));
    return cli_print_json("plan", root);
}

int cli_plan_gpu(const cli_shared_args *sa, const char *expr, const char *dims, bool json, const char *other) {
    const char *cmd = "plan";
    if (other)
        return cli_usage_error(cmd, "%s has no meaning on a GPU chip (a GPU operator is one kernel, docs/gpu.md)", other);
    rotor_error err = {{0}};
    rotor_gpu g;
    rotor_status st = cli_gpu_resolve(sa, &g, &err);
    if (st) return cli_fail(cmd, st, &err);
    rotor_expr e;
    int rc = cli_expr(cmd, expr, dims, false, &e);
    if (rc) return rc;
    rotor_gpu_estimate o;
    if ((st = rotor_gpu_op(&e, &g, NULL, &o, &err))) return cli_fail(cmd, st, &err);
    if (json) return print_json(&e, &g, &o);
    char d[256];
    rotor_expr_dims_string(&e, d, sizeof d);
    printf("operator      %s   (%s)\n", e.text, d);
    cli_gpu_chip_line(&g);
    if (o.tile_m) {
        printf("kernel        GEMM: batch %lld, M %lld, N %lld, K %lld (%.6g GFLOP)\n", (long long)o.gemm.batch,
               (long long)o.gemm.m, (long long)o.gemm.n, (long long)o.gemm.k, o.flops / 1e9);
        printf("tile          %lldx%lld, k-slice %lld, split-K %lld: %lld tiles, %lld CTA%s per SM, %lld wave%s\n",
               (long long)o.tile_m, (long long)o.tile_n, (long long)o.tile_k, (long long)o.split_k,
               (long long)o.tiles, (long long)o.ctas_per_sm, o.ctas_per_sm == 1 ? "" : "s", (long long)o.waves,
               o.waves == 1 ? "" : "s");
    } else {
        printf("kernel        memory-bound (element-wise or reduction): %.6g MFLOP on the CUDA cores\n", o.flops / 1e6);
    }
    print_terms(&o);
    return 0;
}
