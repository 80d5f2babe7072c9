/* docint.h — internal: the pieces of the documents (pipeline/doc.h) that
 * more than one command's JSON holds.  Not public API: it exposes cJSON. */
#ifndef ROTOR_DOCINT_H
#define ROTOR_DOCINT_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/compile/energy.h"

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

/* The chip's topology as documents and tables write it: "all-to-all" or
 * "mesh WxH", into buf; returns buf. */
const char *rotor_doc_topology_text(const rotor_chip *chip, char *buf, size_t size);

#endif
