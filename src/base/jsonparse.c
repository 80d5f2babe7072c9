/* jsonparse.c — a JSON file's text as one value, or one line saying where
 * it is not (jsontext.h).  Every file rotor reads as JSON goes through it:
 * the chip and GPU files, plan files, programs.  cJSON_Parse alone stops
 * at the end of the first value and at a NUL byte, so a plan file with a
 * second object after it, or with bytes after a NUL, read as the first
 * object without a word (found 2026-12-01). */
#include "base/jsontext.h"

#include <string.h>

/* Line and column (from 1) of byte pos of text. */
static void line_col(const char *text, size_t pos, size_t *line, size_t *col) {
    *line = *col = 1;
    for (size_t i = 0; i < pos; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

rotor_status rotor_json_no_nul(const char *text, size_t len, const char *label, rotor_error *err) {
    const char *nul = memchr(text, '\0', len);
    return nul ? rotor_fail(err, ROTOR_ERR_INPUT, "%s: not valid JSON: NUL byte at offset %zu", label,
                            (size_t)(nul - text))
               : ROTOR_OK;
}

rotor_status rotor_json_parse(const char *text, size_t len, const char *label, cJSON **root, rotor_error *err) {
    *root = NULL;
    rotor_status st = rotor_json_no_nul(text, len, label, err);
    if (st) return st;
    /* require_null_terminated: only white space after the value */
    const char *end = NULL;
    *root = cJSON_ParseWithOpts(text, &end, 1);
    if (*root) return ROTOR_OK;
    size_t pos = end && end >= text && end <= text + len ? (size_t)(end - text) : 0, line, col;
    line_col(text, pos, &line, &col);
    return rotor_fail(err, ROTOR_ERR_INPUT, "%s: not valid JSON near line %zu, column %zu", label, line, col);
}
