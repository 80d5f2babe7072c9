/* jsonparse.c — JSON text as one value with no key twice in an object, or
 * one line saying where it is not (jsontext.h).  Every JSON text rotor reads
 * goes through it: the chip and GPU files, plan files, programs and
 * rotor_doc's options.  cJSON_Parse alone stops at the end of the first
 * value and at a NUL byte, and its lookups take a repeated key's first
 * value, so a plan file with a second object after it, bytes after a NUL
 * or a key given twice were read without a word (found 2026-12-01). */
#include "base/jsontext.h"

#include <stdio.h>
#include <stdlib.h>
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

/* ---- Duplicate keys ------------------------------------------------------
 *
 * JSON leaves a key given twice in one object to the reader, and cJSON's
 * lookups take the first: "F_op": {"m": 16, "m": 1} read as m = 16, the
 * second value dropped.  Which one the writer meant is not knowable, so a
 * duplicate is refused wherever it is, by its path from the root
 * ("plan.F_op.m", "operators[2].exec_s"; the chip and GPU files' checks
 * said "KEY: duplicate key" for their top level, the same line).  An
 * object's keys are sorted to find one, so a file of 100,000 keys costs
 * n log n, not n^2. */

static int key_cmp(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

#define KEYS_ON_STACK 32

/* path[0 .. at) is v's path; a duplicate found: its path into path. */
static rotor_status dup_walk(const cJSON *v, char *path, size_t cap, size_t at, const char *label, rotor_error *err) {
    if (!cJSON_IsObject(v) && !cJSON_IsArray(v)) return ROTOR_OK;
    if (cJSON_IsObject(v)) {
        size_t n = 0;
        for (const cJSON *c = v->child; c; c = c->next) n++;
        const char *stack[KEYS_ON_STACK], **keys = n <= KEYS_ON_STACK ? stack : malloc(n * sizeof *keys);
        if (!keys) return rotor_nomem(err);
        size_t k = 0;
        for (const cJSON *c = v->child; c; c = c->next) keys[k++] = c->string ? c->string : "";
        qsort(keys, n, sizeof *keys, key_cmp);
        const char *dup = NULL;
        for (size_t i = 1; i < n && !dup; i++)
            if (!strcmp(keys[i - 1], keys[i])) dup = keys[i];
        rotor_status st = ROTOR_OK;
        if (dup) {
            snprintf(path + at, cap - at, "%s%s", at ? "." : "", dup);
            st = rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s: duplicate key", label, path);
        }
        if (keys != stack) free((void *)keys);
        if (st) return st;
    }
    int i = 0;
    for (const cJSON *c = v->child; c; c = c->next, i++) {
        if (!cJSON_IsObject(c) && !cJSON_IsArray(c)) continue;
        if (cJSON_IsObject(v)) snprintf(path + at, cap - at, "%s%s", at ? "." : "", c->string ? c->string : "");
        else snprintf(path + at, cap - at, "[%d]", i);
        size_t next = strlen(path);
        rotor_status st = dup_walk(c, path, cap, next, label, err);
        if (st) return st;
        path[at] = '\0';
    }
    return ROTOR_OK;
}

rotor_status rotor_json_no_nul(const char *text, size_t len, const char *label, rotor_error *err) {
    const char *nul = memchr(text, '\0', len);
    return nul ? rotor_fail(err, ROTOR_ERR_INPUT, "%s: not valid JSON: NUL byte at offset %zu", label,
                            (size_t)(nul - text))
               : ROTOR_OK;
}

/* The offset of the first escape \u0000 inside a string of text, or -1.
 * cJSON decodes it to a NUL that ends the C string it makes, so
 * "mesh\u0000xyz" read as "mesh" and "a\u0000b" as "a", without a word
 * (found by a review helper, 2026-12-03).  Escapes are followed pair by
 * pair, so "\\u0000" (a backslash, then u0000) is not one. */
static long nul_escape(const char *text, size_t len) {
    bool in = false;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '"') in = !in;
        else if (in && text[i] == '\\' && i + 1 < len) {
            if (text[i + 1] == 'u' && i + 5 < len && !memcmp(text + i + 2, "0000", 4)) return (long)i;
            i++; /* the escaped character */
        }
    }
    return -1;
}

rotor_status rotor_json_parse(const char *text, size_t len, const char *label, cJSON **root, rotor_error *err) {
    *root = NULL;
    rotor_status st = rotor_json_no_nul(text, len, label, err);
    if (st) return st;
    long nul = nul_escape(text, len);
    if (nul >= 0) {
        size_t line, col;
        line_col(text, (size_t)nul, &line, &col);
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: line %zu, column %zu: \\u0000 in a string: rotor's strings hold "
                          "no NUL character", label, line, col);
    }
    /* require_null_terminated: only white space after the value */
    const char *end = NULL;
    *root = cJSON_ParseWithOpts(text, &end, 1);
    if (*root) {
        char path[256] = "";
        if ((st = dup_walk(*root, path, sizeof path, 0, label, err))) {
            cJSON_Delete(*root);
            *root = NULL;
        }
        return st;
    }
    size_t pos = end && end >= text && end <= text + len ? (size_t)(end - text) : 0, line, col;
    line_col(text, pos, &line, &col);
    return rotor_fail(err, ROTOR_ERR_INPUT, "%s: not valid JSON near line %zu, column %zu", label, line, col);
}

rotor_status rotor_json_parse_bytes(const char *bytes, size_t len, const char *label, cJSON **root, rotor_error *err) {
    *root = NULL;
    char *copy = malloc(len + 1); /* cJSON reads a NUL-terminated string */
    if (!copy) return rotor_nomem(err);
    memcpy(copy, bytes, len);
    copy[len] = '\0';
    rotor_status st = rotor_json_parse(copy, len, label, root, err);
    free(copy);
    return st;
}
