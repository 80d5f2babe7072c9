/* jsontext.h — internal: a JSON value as the text a one-line message shows
 * after "got" (1.5, "fast", an array, null), written once in base/chip.c for
 * the chip file and shared with the plan file (op/planfile.c) and the
 * program file (compile/program.c).  Not public API: it exposes cJSON, which
 * the public headers do not. */
#ifndef ROTOR_JSONTEXT_H
#define ROTOR_JSONTEXT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

/* v into buf (size bytes, NUL-terminated): a number as the shortest %g text
 * that reads back, a string quoted and escaped (cut at 60 bytes with
 * "..."), any other value by its kind ("an array", "an object", "null"). */
void rotor_json_describe(const cJSON *v, char *buf, size_t size);

/* The one rule for the version of rotor in every JSON document it writes
 * (issue 46): the key "rotor_version" with ROTOR_VERSION, placed after the
 * document's format version ("version"), else after "format", else first,
 * so a reader sees which rotor wrote the file beside what format it is in.
 * A document already stamped is left as it is.  False when out of memory. */
#define ROTOR_JSON_VERSION_KEY "rotor_version"
bool rotor_json_stamp(cJSON *root);

#endif
