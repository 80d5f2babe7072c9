/* rotor — the built-in model zoo: graphs of the models the papers evaluate,
 * built directly as tensor expressions (docs/zoo.md), parameterised by batch,
 * sequence length and layer count, with prefill and decode variants for the
 * LLMs.  Weight counts match the published parameter counts within 1%
 * (tests/test_zoo.c). */
#ifndef ROTOR_ZOO_H
#define ROTOR_ZOO_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/error.h"
#include "rotor/model/graph.h"

typedef enum rotor_phase {
    ROTOR_PHASE_PREFILL = 0,   /* the whole sequence at once (encoders always) */
    ROTOR_PHASE_DECODE         /* one new token per sequence, reading a KV cache of seq */
} rotor_phase;

typedef struct rotor_zoo_options {
    int64_t batch;     /* 0: 1 */
    int64_t seq;       /* 0: the model's default (128 for BERT, 2048 for LLMs, ...) */
    int64_t layers;    /* 0: the model's own */
    rotor_phase phase;
    /* The decoder layers alone (the LLMs): their input is the hidden state
     * [batch x seq, d] and their output the last layer's, without the
     * embedding, the final norm and the head.  T10 §6.7 runs such runs of
     * layers on one chip (pipeline/llmfit.h). */
    bool layers_only;
} rotor_zoo_options;

typedef struct rotor_zoo_entry {
    const char *name;          /* "bert-large" */
    const char *description;   /* one line */
    double published_params;   /* the count the model card gives */
    bool llm;                  /* has a decode variant */
} rotor_zoo_entry;

int rotor_zoo_count(void);
const rotor_zoo_entry *rotor_zoo_at(int i);
const rotor_zoo_entry *rotor_zoo_find(const char *name);
/* How many layers (or stages, blocks: what --layers counts) the named model
 * has; 0 for an unknown name. */
int64_t rotor_zoo_layers(const char *name);

/* Builds the named model into out (initialised here; free it with
 * rotor_graph_free, also after an error).  Unknown names, decode for a
 * model without one, and absurd sizes are ROTOR_ERR_INPUT. */
rotor_status rotor_zoo_build(const char *name, const rotor_zoo_options *opt, rotor_graph *out,
                             rotor_error *err);

#endif
