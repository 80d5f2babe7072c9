/* reproducegpu.c — `rotor reproduce t10`'s Figure 22 (T10 §6.7): LLM layers
 * on the ICCA chip under T10 against a GPU, from pipeline/t10gpu.h; this
 * file only prints and writes.  Figure 21 rides on the Figure 12 sweep
 * (reproduce.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "rotor/op/gpu.h"
#include "rotor/pipeline/t10gpu.h"

/* Decisions (docs/reproduction.md, "Figures 21 and 22"): prompts of 128
 * tokens, decode over a context of 128, batches 1, 4 and 16; the paper
 * gives none of them. */
#define FIG22_SEQ 128
static const int64_t FIG22_BATCHES[3] = {1, 4, 16};

typedef struct fig22 {
    const char *model;
    rotor_t10gpu_llm r;
} fig22;

static const char *phase_name(rotor_phase p) { return p == ROTOR_PHASE_DECODE ? "decode" : "prefill"; }

static void print_fig22(const fig22 *fs, int n, const rotor_chip *chip, const rotor_gpu *gpu) {
    printf("\nFigure 22: LLM layers on %s (T10) against %s, prefill of %d tokens and decode over %d (us)\n",
           chip->name, gpu->name, FIG22_SEQ, FIG22_SEQ);
    printf("%-12s %7s %-8s %6s %12s %12s %8s %11s %11s %11s\n", "model", "layers", "phase", "batch", "T10",
           gpu->name, "ratio", "GPU HBM MB", "FLOP bound", "HBM bound");
    double sum = 0, most = 0;
    int cnt = 0;
    for (int i = 0; i < n; i++) {
        const rotor_t10gpu_llm *r = &fs[i].r;
        for (int j = 0; j < r->npoints; j++) {
            const rotor_t10gpu_point *p = &r->points[j];
            char layers[32];
            snprintf(layers, sizeof layers, "%lld/%lld", (long long)r->layers, (long long)r->model_layers);
            printf("%-12s %7s %-8s %6lld ", fs[i].model, layers, phase_name(p->phase), (long long)p->batch);
            if (p->ipu_fits) printf("%12.3f ", p->ipu_s * 1e6);
            else printf("%12s ", "x");
            printf("%12.3f ", p->gpu.total_s * 1e6);
            if (p->ipu_fits) {
                double ratio = p->gpu.total_s / p->ipu_s;
                sum += ratio;
                most = fmax(most, ratio);
                cnt++;
                printf("%7.2fx ", ratio);
            } else {
                printf("%8s ", "");
            }
            printf("%11.1f %11.3f %11.3f\n", p->gpu.hbm_bytes / 1e6, p->gpu.flop_bound_s * 1e6,
                   p->gpu.hbm_bound_s * 1e6);
        }
    }
    printf("T10 over %s: %.2fx on average, %.2fx at most over %d points (paper: 3.10x on average, 16.38x at most)\n",
           gpu->name, cnt ? sum / cnt : NAN, most, cnt);
    for (int i = 0; i < n; i++)
        if (fs[i].r.layers < fs[i].r.model_layers)
            printf("%s: %lld of %lld layers fit at batch %lld; one more: %s\n", fs[i].model,
                   (long long)fs[i].r.layers, (long long)fs[i].r.model_layers, (long long)fs[i].r.fit_batch,
                   fs[i].r.why.msg);
}

static void csv_fig22(FILE *f, const void *data, int n) {
    const fig22 *fs = data;
    fprintf(f, "model,layers,model_layers,phase,batch,t10_us,gpu_us,ratio,gpu_hbm_bytes,gpu_flop_bound_us,"
               "gpu_hbm_bound_us,gpu_compute_us,gpu_hbm_us,gpu_l2_us,gpu_launch_us\n");
    for (int i = 0; i < n; i++)
        for (int j = 0; j < fs[i].r.npoints; j++) {
            const rotor_t10gpu_point *p = &fs[i].r.points[j];
            fprintf(f, "%s,%lld,%lld,%s,%lld,", fs[i].model, (long long)fs[i].r.layers,
                    (long long)fs[i].r.model_layers, phase_name(p->phase), (long long)p->batch);
            if (p->ipu_fits) fprintf(f, "%.6f,%.6f,%.6f,", p->ipu_s * 1e6, p->gpu.total_s * 1e6,
                                     p->gpu.total_s / p->ipu_s);
            else fprintf(f, ",%.6f,,", p->gpu.total_s * 1e6);
            fprintf(f, "%.0f,%.6f,%.6f", p->gpu.hbm_bytes, p->gpu.flop_bound_s * 1e6, p->gpu.hbm_bound_s * 1e6);
            for (int b = 0; b < 4; b++) fprintf(f, ",%.6f", p->gpu.bound_s[b] * 1e6);
            fprintf(f, "\n");
        }
}

/* The GPU's time over T10's against batch: a line per model and phase. */
static void svg_fig22(FILE *f, const void *data, int n) {
    const fig22 *fs = data;
    enum { MAXS = 2 * 16 };
    double x[MAXS][ROTOR_T10GPU_MAX_POINTS], y[MAXS][ROTOR_T10GPU_MAX_POINTS];
    char names[MAXS][64];
    cli_series s[MAXS];
    int ns = 0;
    for (int i = 0; i < n && ns + 2 <= MAXS; i++)
        for (int ph = 0; ph < 2; ph++) {
            int k = 0;
            for (int j = 0; j < fs[i].r.npoints; j++) {
                const rotor_t10gpu_point *p = &fs[i].r.points[j];
                if ((int)p->phase != ph || !p->ipu_fits) continue;
                x[ns][k] = (double)p->batch;
                y[ns][k++] = p->gpu.total_s / p->ipu_s;
            }
            snprintf(names[ns], sizeof names[ns], "%s %s", fs[i].model, ph ? "decode" : "prefill");
            s[ns] = (cli_series){names[ns], k, x[ns], y[ns], ph == 1};
            ns++;
        }
    cli_plot pl = {"T10 Figure 22: LLM layers, GPU time over T10's", "batch", "speedup of T10 (x)", true, true};
    cli_svg_lines(f, &pl, s, ns);
}

static cJSON *json_fig22(const fig22 *fs, int n) {
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; arr && i < n; i++)
        for (int j = 0; j < fs[i].r.npoints; j++) {
            const rotor_t10gpu_point *p = &fs[i].r.points[j];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "model", fs[i].model);
            cJSON_AddNumberToObject(o, "layers", (double)fs[i].r.layers);
            cJSON_AddNumberToObject(o, "model_layers", (double)fs[i].r.model_layers);
            cJSON_AddStringToObject(o, "phase", phase_name(p->phase));
            cJSON_AddNumberToObject(o, "batch", (double)p->batch);
            cJSON_AddBoolToObject(o, "t10_fits", p->ipu_fits);
            if (p->ipu_fits) {
                cJSON_AddNumberToObject(o, "t10_us", p->ipu_s * 1e6);
                cJSON_AddNumberToObject(o, "ratio", p->gpu.total_s / p->ipu_s);
            }
            cJSON_AddNumberToObject(o, "gpu_us", p->gpu.total_s * 1e6);
            cJSON_AddNumberToObject(o, "gpu_hbm_bytes", p->gpu.hbm_bytes);
            cJSON_AddNumberToObject(o, "gpu_flop_bound_us", p->gpu.flop_bound_s * 1e6);
            cJSON_AddNumberToObject(o, "gpu_hbm_bound_us", p->gpu.hbm_bound_s * 1e6);
            cJSON_AddItemToArray(arr, o);
        }
    return arr;
}

rotor_status cli_fig22_llm(const char *llm, const rotor_chip *chip, const rotor_gpu *gpu,
                           const rotor_compile_options *co, rotor_t10gpu_llm *out, rotor_error *err) {
    return rotor_t10gpu_llm_run(llm, FIG22_SEQ, FIG22_BATCHES, 3, chip, gpu, co, out, err);
}

int cli_reproduce_fig22(const char *const *llms, int nl, const rotor_t10gpu_llm *rs, const rotor_status *st,
                        const rotor_error *errs, const rotor_chip *chip, const rotor_gpu *gpu, const char *dir,
                        bool json, cJSON **fig22out) {
    if (nl <= 0) return 0;
    for (int i = 0; i < nl; i++)
        if (st[i]) return cli_fail("reproduce", st[i], &errs[i]);
    fig22 *fs = calloc((size_t)nl, sizeof *fs);
    if (!fs) return cli_nomem("reproduce");
    for (int i = 0; i < nl; i++) {
        fs[i].model = llms[i];
        fs[i].r = rs[i];
    }
    int rc = cli_reproduce_file(dir, "t10-fig22.csv", csv_fig22, fs, nl);
    if (!rc) rc = cli_reproduce_file(dir, "t10-fig22.svg", svg_fig22, fs, nl);
    if (!rc && json) {
        if (!(*fig22out = json_fig22(fs, nl))) rc = cli_nomem("reproduce");
    } else if (!rc) {
        print_fig22(fs, nl, chip, gpu);
    }
    free(fs);
    return rc;
}
