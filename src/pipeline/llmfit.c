/* rotor_llm_fit_run (pipeline/llmfit.h): the most decoder layers of an LLM
 * one chip holds, by binary search over compiles. */
#include "rotor/pipeline/llmfit.h"

#include <string.h>

#include "rotor/pipeline/pipeline.h"

/* Compiles `layers` decoder layers: ROTOR_OK (the result in *out),
 * ROTOR_ERR_NOFIT (why in *why), or another failure. */
static rotor_status try_layers(const char *model, rotor_zoo_options zo, int64_t layers, const rotor_chip *chip,
                               const rotor_compile_options *copt, rotor_compile_result *out, rotor_error *why) {
    zo.layers = layers;
    zo.layers_only = true;
    rotor_pipeline_options po = {.model = model, .zoo = zo, .t10 = true};
    if (copt) po.compile = *copt;
    rotor_pipeline p;
    rotor_status st = rotor_pipeline_run(&po, chip, &p, why);
    if (!st) {
        *out = p.t10; /* the result moves to the caller */
        memset(&p.t10, 0, sizeof p.t10);
    }
    rotor_pipeline_free(&p);
    return st;
}

rotor_status rotor_llm_fit_run(const char *model, const rotor_zoo_options *zo, const rotor_chip *chip,
                               const rotor_compile_options *copt, rotor_llm_fit *out, rotor_error *err) {
    memset(out, 0, sizeof *out);
    const rotor_zoo_entry *e = rotor_zoo_find(model);
    if (!e || !e->llm)
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: not one of the zoo's LLMs (rotor model --list)",
                          model ? model : "");
    out->model_layers = rotor_zoo_layers(model);
    rotor_zoo_options base = zo ? *zo : (rotor_zoo_options){0};
    /* lo fits (0: trivially), hi + 1 does not (or is past the model) */
    int64_t lo = 0, hi = out->model_layers;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        rotor_compile_result r;
        rotor_error why;
        out->compiles++;
        rotor_status st = try_layers(model, base, mid, chip, copt, &r, &why);
        if (st == ROTOR_ERR_NOFIT) {
            out->why = why;
            hi = mid - 1;
            continue;
        }
        if (st) {
            if (err) *err = why;
            rotor_llm_fit_free(out);
            return st;
        }
        rotor_compile_result_free(&out->t10);
        out->t10 = r;
        lo = mid;
    }
    out->layers = lo;
    if (lo == out->model_layers) out->why = (rotor_error){0};
    return ROTOR_OK;
}

void rotor_llm_fit_free(rotor_llm_fit *f) {
    if (!f) return;
    rotor_compile_result_free(&f->t10);
    memset(&f->t10, 0, sizeof f->t10);
}
