/* docint.h — internal: the pieces of the documents (pipeline/doc.h) that
 * more than one command's JSON holds.  Not public API: it exposes cJSON. */
#ifndef ROTOR_DOCINT_H
#define ROTOR_DOCINT_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/compile/dsa.h"
#include "rotor/compile/energy.h"
#include "rotor/compile/gticca.h"

/* What one energy figure covers (docs/energy.md, "In the CLI"): a decode
 * step makes one token for each of the batch's sequences, so "token" at
 * batch 1 only, else "step"; whole ("inference", "step") without decode.
 * (Until 2026-12-02 a decode step at batch 8 was "per token", 8 tokens'
 * energy.) */
const char *rotor_doc_energy_per(bool decode, int64_t batch, const char *whole);

/* The "energy" object (docs/energy.md, "In the CLI") added to parent: per
 * ("inference", "token", ...), the joules by component and the counts.
 * False when out of memory. */
bool rotor_doc_energy_json(cJSON *parent, const char *per, const rotor_energy_counts *c, const rotor_energy *e);

/* text (a JSON object, as cJSON_Print wrote it) with the "energy" object
 * as its last key, indented as the writer indents the root's keys; a
 * malloc'd string, NULL when out of memory. */
char *rotor_doc_energy_splice(const char *text, const char *per, const rotor_energy_counts *c, const rotor_energy *e);

/* cJSON's text of root (NULL: out of memory), stamped with rotor's version
 * (base/jsontext.h), into *out; root freed. */
rotor_status rotor_doc_print(cJSON *root, char **out, rotor_error *err);

/* GraphTurbo's values in the LB, GB and DDR, and the model's inputs (the
 * host's, in DDR too), as {"lb", "gb", "ddr", "inputs"} under key of o
 * (compile's and reproduce's documents write them alike). */
cJSON *rotor_doc_dsa_tensors_json(cJSON *o, const char *key, const int tensors[3], int inputs);

/* Step k of §5.1's loops as compile and reproduce write it: step, passes,
 * batch_per_pass, seconds (all passes), pass_seconds, speedup (over the
 * looped per-layer), tensors (of a pass), ddr_bytes (of all passes); the
 * caller adds its own (throughput, gain).  Not for a file's batch. */
cJSON *rotor_doc_dsa_loop_json(const rotor_dsa_loops *lp, rotor_dsa_step k);

/* One sub-graph of a plan with instances on core groups (compile/gticca.h)
 * as compile's and run's documents give it. */
cJSON *rotor_doc_gticca_sg_json(const rotor_graph *g, const rotor_gticca_sg *s);

#endif
