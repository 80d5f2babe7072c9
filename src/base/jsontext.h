/* jsontext.h — internal: JSON text read as one value (jsonparse.c: the chip
 * and GPU files, plan files, programs), a JSON value as the text a one-line
 * message shows after "got" (1.5, "fast", an array, null; written once in
 * base/chip.c), and the version stamp (jsonstamp.c), shared by every stage
 * that reads or writes JSON.  Not public API: it exposes cJSON, which the
 * public headers do not. */
#ifndef ROTOR_JSONTEXT_H
#define ROTOR_JSONTEXT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "rotor/base/error.h"

/* v into buf (size bytes, NUL-terminated): a number as the shortest %g text
 * that reads back, a string quoted and escaped (cut at 60 bytes with
 * "..."), any other value by its kind ("an array", "an object", "null"). */
void rotor_json_describe(const cJSON *v, char *buf, size_t size);

/* text (len bytes, text[len] == '\0') as exactly one JSON value into
 * *root (cJSON_Delete it), nothing but white space after it and no key
 * twice in one object (jsonparse.c): else an input error naming label and
 * where ("LABEL: not valid JSON near line 3, column 1", "LABEL: not valid
 * JSON: NUL byte at offset 12", "LABEL: plan.F_op.m: duplicate key") and
 * *root NULL. */
rotor_status rotor_json_parse(const char *text, size_t len, const char *label, cJSON **root, rotor_error *err);

/* rotor_json_parse of len bytes that need not end in a NUL (a chip or GPU
 * file handed over as a buffer, rotor_chip_parse, rotor_gpu_parse): a
 * terminated copy parsed. */
rotor_status rotor_json_parse_bytes(const char *bytes, size_t len, const char *label, cJSON **root,
                                    rotor_error *err);

/* The NUL test alone, for a reader that hands the text on as a C string
 * (rotor_json_read_text): a NUL would end it there for every reader. */
rotor_status rotor_json_no_nul(const char *text, size_t len, const char *label, rotor_error *err);

/* A chip file's object o, already parsed (a program keeps the chip it was
 * compiled on as one, docs/program-format.md): rotor_chip_parse's checks,
 * its errors after "LABEL: ".  Numbers are read from o as cJSON read them,
 * so the text o came from must hold them exactly (rotor_chip_to_json's). */
struct rotor_chip;
rotor_status rotor_chip_from_cjson(const cJSON *o, const char *label, struct rotor_chip *out, rotor_error *err);

/* "chip_file": the whole chip a document was made for, as its file writes
 * it (exact numbers) on one line, added to root; a reader takes it rather
 * than a preset of the same name.  Only a chip a file could hold is added
 * (one made inside the library for a part of a chip, an instance's group,
 * is not one).  Programs (docs/program-format.md) and plan files
 * (docs/plan-format.md) carry it.  Fails only when out of memory. */
rotor_status rotor_json_add_chip_file(cJSON *root, const struct rotor_chip *chip, rotor_error *err);

/* root's "chip_file", checked as a chip file is (errors after
 * "LABEL: chip_file: "): *found false, out untouched, when it has none. */
rotor_status rotor_json_chip_file(const cJSON *root, const char *label, struct rotor_chip *out, bool *found,
                                  rotor_error *err);

/* The one rule for the version of rotor in every JSON document it writes
 * (issue 46): the key "rotor_version" with ROTOR_VERSION, placed after the
 * document's format version ("version"), else after "format", else first,
 * so a reader sees which rotor wrote the file beside what format it is in.
 * A document already stamped is left as it is.  False when out of memory. */
#define ROTOR_JSON_VERSION_KEY "rotor_version"
bool rotor_json_stamp(cJSON *root);

#endif
