/* bench_compile — whole-model compilation time (make bench; figures recorded
 * in docs/performance.md).  Targets (issue 5): BERT-Large at any batch size
 * under 1 s on 2 cores, ResNet-50 under 2 s.
 *
 * Each row builds the zoo model, groups it and runs rotor_compile with all
 * threads; the time covers compilation only (the frontier searches and
 * Algorithm 1), best of REPEAT runs.  The T10 total and the VGM baseline's
 * are printed beside it, so the table doubles as the speedup sweep. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "rotor/compile/compile.h"
#include "rotor/model/group.h"
#include "rotor/compile/vgm.h"
#include "rotor/model/zoo.h"

#define REPEAT 2

int main(int argc, char **argv) {
    /* bench_compile [MODEL BATCH ...]: default rows below */
    /* every batch each model fits (T10 and rotor: BERT-Large up to 128,
     * ResNet-50 up to 128; 256 fits neither) */
    static const char *rows[][2] = {
        {"bert-large", "1"},  {"bert-large", "2"},  {"bert-large", "4"},  {"bert-large", "8"},
        {"bert-large", "16"}, {"bert-large", "32"}, {"bert-large", "64"}, {"bert-large", "128"},
        {"resnet-50", "1"},   {"resnet-50", "2"},   {"resnet-50", "4"},   {"resnet-50", "8"},
        {"resnet-50", "16"},  {"resnet-50", "32"},  {"resnet-50", "64"},  {"resnet-50", "128"}};
    int nrows = (int)(sizeof rows / sizeof rows[0]);
    rotor_chip chip;
    rotor_error err;
    if (rotor_chip_preset("ipu-mk2", &chip, &err)) return 1;
    printf("rotor compile benchmark on ipu-mk2, best of %d\n\n", REPEAT);
    printf("| model | batch | compile (s) | searches | T10 (us) | VGM (us) | T10 over VGM |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|\n");
    int n = argc > 1 ? (argc - 1) / 2 : nrows;
    for (int i = 0; i < n; i++) {
        const char *model = argc > 1 ? argv[1 + 2 * i] : rows[i][0];
        const char *batch = argc > 1 ? argv[2 + 2 * i] : rows[i][1];
        rotor_zoo_options zo = {.batch = atoll(batch)};
        rotor_graph raw, g;
        if (rotor_zoo_build(model, &zo, &raw, &err) || rotor_group(&raw, &g, NULL, &err)) {
            fprintf(stderr, "bench_compile: %s: %s\n", model, err.msg);
            return 1;
        }
        rotor_graph_free(&raw);
        double best = INFINITY;
        rotor_compile_result r = {0};
        rotor_status st = ROTOR_OK;
        for (int k = 0; k < REPEAT; k++) {
            rotor_compile_result_free(&r);
            double t = now_s();
            st = rotor_compile(&g, &chip, NULL, &r, &err);
            t = now_s() - t;
            if (t < best) best = t;
        }
        rotor_vgm_result v;
        rotor_error verr;
        rotor_status vs = rotor_vgm_compile(&g, &chip, ROTOR_VGM_ROLLER, &v, &verr);
        if (st) {
            printf("| %s | %s | %.3f | | x | | |\n", model, batch, best);
        } else if (vs) {
            printf("| %s | %s | %.3f | %d | %.1f | x | |\n", model, batch, best, r.searches, r.total_s * 1e6);
        } else {
            printf("| %s | %s | %.3f | %d | %.1f | %.1f | %.2fx |\n", model, batch, best, r.searches,
                   r.total_s * 1e6, v.total_s * 1e6, v.total_s / r.total_s);
            rotor_vgm_result_free(&v);
        }
        fflush(stdout);
        rotor_compile_result_free(&r);
        rotor_graph_free(&g);
    }
    printf("\ntargets (issue 5): BERT-Large under 1 s at any batch, ResNet-50 under 2 s, on 2 cores\n");
    return 0;
}
