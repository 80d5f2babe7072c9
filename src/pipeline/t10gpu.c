/* T10 Figures 21 and 22 against a GPU (pipeline/t10gpu.h). */
#include "rotor/pipeline/t10gpu.h"

#include <string.h>

#include "rotor/compile/gpucompile.h"
#include "rotor/op/gpu.h"
#include "rotor/pipeline/llmfit.h"
#include "rotor/pipeline/pipeline.h"

rotor_status rotor_t10gpu_price(const rotor_graph *g, const rotor_gpu *gpu, rotor_t10gpu_side *out,
                                rotor_error *err) {
    memset(out, 0, sizeof *out);
    rotor_gpu_compile_result r;
    rotor_status st = rotor_gpu_compile(g, gpu, &r, err);
    if (st) return st;
    out->total_s = r.total_s;
    for (int b = 0; b < 4; b++) out->bound_s[b] = r.bound_s[b];
    out->hbm_bytes = r.hbm_bytes;
    out->flops = r.flops;
    out->flop_bound_s = r.flops / (rotor_gpu_matrix_rate(gpu, gpu->dtype));
    out->hbm_bound_s = r.hbm_bytes / (gpu->hbm_gbps * 1e9);
    out->kernels = r.kernels;
    rotor_gpu_compile_free(&r);
    return ROTOR_OK;
}

void rotor_t10gpu_options(rotor_pipeline_options *po) {
    po->t10 = po->program = po->vgm = po->vgm_oracle = po->graphturbo = false;
    po->schedule = NULL;
    po->simplify = true; /* TensorRT folds BatchNormalization and constants (docs/gpu.md) */
}

rotor_status rotor_t10gpu_price_model(const char *model, const rotor_zoo_options *zo, const rotor_gpu *gpu,
                                      rotor_t10gpu_side *out, rotor_error *err) {
    rotor_pipeline_options po = {.model = model};
    if (zo) po.zoo = *zo;
    rotor_t10gpu_options(&po);
    rotor_pipeline p;
    rotor_status st = rotor_pipeline_run(&po, NULL, &p, err);
    if (!st) st = rotor_t10gpu_price(&p.graph, gpu, out, err);
    rotor_pipeline_free(&p);
    return st;
}

/* One (phase, batch) point of `layers` decoder layers on both chips. */
static rotor_status llm_point(const char *model, rotor_zoo_options zo, const rotor_chip *chip,
                              const rotor_gpu *gpu, const rotor_compile_options *copt, rotor_t10gpu_point *pt,
                              rotor_error *err) {
    memset(pt, 0, sizeof *pt);
    pt->batch = zo.batch;
    pt->phase = zo.phase;
    rotor_pipeline_options po = {.model = model, .zoo = zo, .t10 = true};
    if (copt) po.compile = *copt;
    rotor_pipeline p;
    rotor_error why;
    rotor_status st = rotor_pipeline_run(&po, chip, &p, &why);
    if (st && !(st == ROTOR_ERR_NOFIT && p.loaded)) {
        rotor_pipeline_free(&p);
        if (err) *err = why;
        return st;
    }
    pt->ipu_fits = st == ROTOR_OK;
    if (pt->ipu_fits) pt->ipu_s = p.t10.total_s;
    rotor_pipeline_free(&p);
    return rotor_t10gpu_price_model(model, &zo, gpu, &pt->gpu, err);
}

rotor_status rotor_t10gpu_llm_run(const char *model, int64_t seq, const int64_t *batches, int nbatches,
                                  const rotor_chip *chip, const rotor_gpu *gpu, const rotor_compile_options *copt,
                                  rotor_t10gpu_llm *out, rotor_error *err) {
    memset(out, 0, sizeof *out);
    if (nbatches < 1 || nbatches > ROTOR_T10GPU_MAX_POINTS / 2)
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: %d batches (1 to %d)", model, nbatches,
                          ROTOR_T10GPU_MAX_POINTS / 2);
    /* the layers: the fewer of prefill's and decode's (decode keeps its
     * KV cache or state resident; prefill's activations are larger), at the
     * largest batch at which any fits */
    for (int i = nbatches - 1; i >= 0 && out->layers == 0; i--)
        for (int ph = 0; ph < 2; ph++) {
            rotor_llm_fit f;
            rotor_zoo_options zo = {.batch = batches[i], .seq = seq,
                                    .phase = ph ? ROTOR_PHASE_DECODE : ROTOR_PHASE_PREFILL};
            rotor_status st = rotor_llm_fit_run(model, &zo, chip, copt, &f, err);
            if (st) return st;
            if (ph == 0 || f.layers < out->layers) {
                out->layers = f.layers;
                out->why = f.why;
            }
            out->model_layers = f.model_layers;
            out->fit_batch = batches[i];
            rotor_llm_fit_free(&f);
            if (out->layers == 0) break;
        }
    if (out->layers == 0)
        return rotor_fail(err, ROTOR_ERR_NOFIT, "%s: not one decoder layer fits %s at batch %lld: %s", model,
                          chip->name, (long long)batches[0], out->why.msg);
    for (int ph = 0; ph < 2; ph++)
        for (int i = 0; i < nbatches; i++) {
            rotor_zoo_options zo = {.batch = batches[i], .seq = seq, .layers = out->layers, .layers_only = true,
                                    .phase = ph ? ROTOR_PHASE_DECODE : ROTOR_PHASE_PREFILL};
            rotor_status st = llm_point(model, zo, chip, gpu, copt, &out->points[out->npoints], err);
            if (st) return st;
            out->npoints++;
        }
    return ROTOR_OK;
}
