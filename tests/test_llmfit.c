/* test_llmfit.c — the most decoder layers of an LLM one chip holds
 * (pipeline/llmfit.c; T10 §6.7, issue 43). */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

#include "rotor/base/chip.h"
#include "rotor/pipeline/llmfit.h"
#include "rotor/pipeline/pipeline.h"

/* Whether `layers` decoder layers of model compile on chip. */
static rotor_status fits(const char *model, rotor_zoo_options zo, int64_t layers, const rotor_chip *chip) {
    zo.layers = layers;
    zo.layers_only = true;
    rotor_pipeline_options po = {.model = model, .zoo = zo, .t10 = true};
    rotor_pipeline p;
    rotor_error err;
    rotor_status st = rotor_pipeline_run(&po, chip, &p, &err);
    rotor_pipeline_free(&p);
    return st;
}

/* The answer L is the boundary: L layers compile and L + 1 do not, and the
 * reason names the shortfall.  OPT-13B's layers hold 12 x 5120^2 FP16
 * weights each (629 MB): one fits the IPU's 896 MB with its activations,
 * two cannot. */
Test(llmfit, the_answer_is_the_boundary_of_what_compiles) {
    rotor_chip chip;
    rotor_error err;
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &chip, &err), ROTOR_OK);
    rotor_zoo_options zo = {.batch = 1, .seq = 32};
    rotor_llm_fit f;
    cr_assert_eq(rotor_llm_fit_run("opt-13b", &zo, &chip, NULL, &f, &err), ROTOR_OK, "%s", err.msg);
    cr_assert_eq(f.model_layers, 40);
    cr_assert_eq(f.layers, 1, "%lld layers", (long long)f.layers);
    cr_assert_eq(f.t10.nops > 0, true);
    cr_assert(strstr(f.why.msg, "does not fit"), "%s", f.why.msg);
    cr_assert_eq(fits("opt-13b", zo, f.layers, &chip), ROTOR_OK);
    cr_assert_eq(fits("opt-13b", zo, f.layers + 1, &chip), ROTOR_ERR_NOFIT);
    rotor_llm_fit_free(&f);
}

Test(llmfit, only_the_llms) {
    rotor_chip chip;
    rotor_error err;
    cr_assert_eq(rotor_chip_preset("ipu-mk2", &chip, &err), ROTOR_OK);
    rotor_llm_fit f;
    cr_assert_eq(rotor_llm_fit_run("resnet-50", NULL, &chip, NULL, &f, &err), ROTOR_ERR_INPUT);
    cr_assert(strstr(err.msg, "resnet-50: not one of the zoo's LLMs"), "%s", err.msg);
}
