/* The largest run of an LLM's decoder layers that one chip holds (T10 §6.7:
 * "Since the IPU chip we can access has insufficient on-chip memory to fit
 * the parameters of an entire LLM, we only run a subset of layers for each
 * LLM").  The paper does not say how many; rotor takes, per model, phase
 * and batch, the most consecutive layers that compile on the chip (the zoo's
 * layers_only graph: no embedding, no head), and says which.  Issue 43. */
#ifndef ROTOR_PIPELINE_LLMFIT_H
#define ROTOR_PIPELINE_LLMFIT_H

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/compile/compile.h"
#include "rotor/model/zoo.h"

typedef struct rotor_llm_fit {
    int64_t layers;          /* the most layers that fit (0: not even one) */
    int64_t model_layers;    /* the model's own count */
    rotor_compile_result t10; /* the compile of `layers` layers (empty when 0) */
    rotor_error why;         /* with layers < model_layers: why one more does not fit */
    int compiles;            /* the compiles the search ran */
} rotor_llm_fit;

/* Finds the most consecutive decoder layers of the zoo LLM `model` (batch,
 * seq and phase from zo; zo->layers and layers_only are set here) that
 * compile on chip.  Whether L layers fit is monotone in L (each layer adds
 * its weights and nothing leaves), so a binary search over [1, the model's
 * layers] finds it in about log2 of them compiles.  A failure other than
 * not fitting (ROTOR_ERR_NOFIT) is returned as it is. */
rotor_status rotor_llm_fit_run(const char *model, const rotor_zoo_options *zo, const rotor_chip *chip,
                               const rotor_compile_options *copt, rotor_llm_fit *out, rotor_error *err);
void rotor_llm_fit_free(rotor_llm_fit *f);

#endif
