/* test_t10gpu.c — T10 Figures 21 and 22 against a GPU (pipeline/t10gpu.c;
 * issue 43): the same graph on both sides, the LLM's layers fitted once. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rotor/base/chip.h"
#include "rotor/base/gpu.h"
#include "rotor/pipeline/llmfit.h"
#include "rotor/pipeline/pipeline.h"
#include "rotor/pipeline/t10gpu.h"
#include "rotor/compile/gpucompile.h"

/* OPT-1.3B's layers at seq 32 on a quarter of ipu-mk2 against an A100: the layers are
 * the fewer of llmfit's prefill and decode answers at the largest batch, every point runs them, prefill
 * then decode; a point's GPU side prices the same layers as TensorRT builds
 * them (simplified, then grouped: the graph built so prices the same), and its FLOP and HBM bounds are the FLOPs and
 * the HBM bytes at the spec's peaks. */
Test(t10gpu, llm_points_run_the_fitted_layers_on_both_chips) {
    rotor_chip chip;
    rotor_gpu gpu;
    rotor_error err;
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &chip, &err), ROTOR_OK);
    /* a quarter of the chip: a quarter of the searches' work (the sanitizer
     * build runs this test too), and fewer layers fit */
    cr_assert_eq(rotor_chip_set(&chip, "cores_per_chip=368", &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(rotor_gpu_preset("a100-80gb", &gpu, &err), ROTOR_OK);
    const int64_t batches[2] = {1, 4};
    rotor_t10gpu_llm r;
    cr_assert_eq(rotor_t10gpu_llm_run("opt-1.3b", 32, batches, 2, &chip, &gpu, NULL, &r, &err), ROTOR_OK, "%s",
                 err.msg);
    cr_assert_eq(r.fit_batch, 4);
    cr_assert(r.layers >= 1 && r.layers < 24, "%lld layers", (long long)r.layers);
    /* r.layers is the fewer of the two fits at batch 4: it fits in both
     * phases (the batch-4 points below, compiled as llmfit compiles), and
     * one more layer does not fit in one of them; as llmfit's own binary
     * search, this takes fitting to be monotone in the layers.  (Two
     * rotor_llm_fit_run calls checked it before: some ten compiles for the
     * two here; tests/test_llmfit.c checks the search itself.) */
    bool one_more_fails = false;
    for (int ph = 0; ph < 2 && !one_more_fails; ph++) {
        rotor_pipeline_options po = {.model = "opt-1.3b", .t10 = true,
                                     .zoo = {.batch = 4, .seq = 32, .layers = r.layers + 1, .layers_only = true,
                                             .phase = ph ? ROTOR_PHASE_DECODE : ROTOR_PHASE_PREFILL}};
        rotor_pipeline pl;
        rotor_status st = rotor_pipeline_run(&po, &chip, &pl, &err);
        cr_assert(st == ROTOR_OK || st == ROTOR_ERR_NOFIT, "%s", err.msg);
        one_more_fails = st == ROTOR_ERR_NOFIT;
        rotor_pipeline_free(&pl);
    }
    cr_assert(one_more_fails, "%lld layers fit in prefill and decode", (long long)r.layers + 1);
    cr_assert_eq(r.npoints, 4);
    for (int i = 0; i < 4; i++) {
        const rotor_t10gpu_point *p = &r.points[i];
        cr_assert_eq(p->batch, batches[i % 2]);
        cr_assert_eq(p->phase, i < 2 ? ROTOR_PHASE_PREFILL : ROTOR_PHASE_DECODE);
        cr_assert(p->ipu_fits, "point %d", i);
        rotor_pipeline_options po = {.model = "opt-1.3b", .simplify = true,
                                     .zoo = {.batch = p->batch, .seq = 32, .layers = r.layers, .layers_only = true,
                                             .phase = p->phase}};
        rotor_pipeline pl;
        cr_assert_eq(rotor_pipeline_run(&po, NULL, &pl, &err), ROTOR_OK, "%s", err.msg);
        rotor_t10gpu_side direct;
        cr_assert_eq(rotor_t10gpu_price(&pl.graph, &gpu, &direct, &err), ROTOR_OK, "%s", err.msg);
        cr_assert_eq(p->gpu.total_s, direct.total_s);
        cr_assert_eq(p->gpu.hbm_bytes, direct.hbm_bytes);
        rotor_pipeline_free(&pl);
        cr_assert_eq(p->gpu.flop_bound_s, p->gpu.flops / (gpu.fp16_tflops * 1e12));
        cr_assert_eq(p->gpu.hbm_bound_s, p->gpu.hbm_bytes / (gpu.hbm_gbps * 1e9));
        cr_assert(p->gpu.total_s >= fmax(p->gpu.flop_bound_s, p->gpu.hbm_bound_s));
    }
}
