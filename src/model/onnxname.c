/* onnxname.c — the names of an ONNX file, decided once at import (issue 47;
 * docs/onnx.md, "Names").
 *
 * ONNX names are C strings of UTF-8 (onnx.proto: "string" fields), but the
 * protobuf wire format carries any bytes.  Two things follow:
 *  - A NUL byte inside a name: protobuf-c hands back a C string, which ends
 *    at the NUL, so "c\0x" and "c\0y" would both be 'c' and the import
 *    would report a name defined twice.  The decoded strings no longer say
 *    where the NUL was, so the file's bytes are read once more (wire_walk)
 *    for every name the importer uses, and the first name with a NUL is
 *    refused with its place in the file: "the name of graph > initializer
 *    1 ('c\x00x') contains a NUL byte at byte 1".
 *  - Bytes that are not UTF-8 (a Latin-1 or GBK export), or control
 *    characters, would reach JSON, text and .pb file names as they are.
 *    Decision: every such byte of a name is written as the four characters
 *    \xNN (two lowercase hex digits) in the decoded model, before anything
 *    reads it, so every output (model --json, messages, run -o file names)
 *    holds the same valid text, and a user gives that text to --input or
 *    --value.  A name that is valid UTF-8 without control characters is
 *    left as it is, backslashes included; an escaped name that equals a
 *    name already in the file is refused rather than merged with it.
 * The names are those the importer reads: the graph's, its nodes' (name,
 * op_type, domain, inputs, outputs), attributes', initializers' and value
 * infos', in the main graph and every subgraph. */
#include "onnxir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/base/hash.h"

#define NAME_MAX_DEPTH 64 /* subgraphs within subgraphs that are read */

/* ---- UTF-8 ---------------------------------------------------------------------------- */

/* The length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong
 * forms, no surrogates, at most U+10FFFF), not a control character; 0 when
 * the byte at s must be escaped, also when the sequence would run past the
 * avail bytes left of the name (a name in the file is not NUL-terminated). */
static int sequence(const unsigned char *s, size_t avail) {
    unsigned c = s[0];
    if (c < 0x20 || c == 0x7f) return 0;
    if (c < 0x80) return 1;
    int n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (!n || (size_t)n > avail) return 0; /* a sequence the name's end cuts off is a byte to escape */
    unsigned lo = 0x80, hi = 0xbf; /* the second byte's range */
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
    if (s[1] < lo || s[1] > hi) return 0;
    for (int k = 2; k < n; k++)
        if (s[k] < 0x80 || s[k] > 0xbf) return 0;
    return n;
}

/* s with every byte that is not part of printable UTF-8 as \xNN, into a new
 * string (malloc'd); NULL when s needs none, or when out of memory (*nomem). */
static char *escaped(const char *s, size_t len, bool *nomem) {
    size_t extra = 0;
    for (size_t k = 0; k < len;) {
        int n = sequence((const unsigned char *)s + k, len - k);
        extra += n ? 0 : 3;
        k += n ? (size_t)n : 1;
    }
    if (!extra) return NULL;
    char *out = malloc(len + extra + 1), *o = out;
    if (!out) {
        *nomem = true;
        return NULL;
    }
    for (size_t k = 0; k < len;) {
        int n = sequence((const unsigned char *)s + k, len - k);
        if (n) {
            memcpy(o, s + k, (size_t)n);
            o += n;
            k += (size_t)n;
        } else {
            o += sprintf(o, "\\x%02x", (unsigned char)s[k]);
            k++;
        }
    }
    *o = '\0';
    return out;
}

char *ox_name_copy(const char *s) {
    if (!s) s = "";
    bool nomem = false;
    char *e = escaped(s, strlen(s), &nomem);
    return e ? e : nomem ? NULL : strdup(s);
}

/* ---- NUL bytes: the file's bytes, read for its names ------------------------------------ */

enum { W_STR, W_MODEL, W_GRAPH, W_NODE, W_ATTR, W_TENSOR, W_VALUE };

/* The fields that hold names, or messages holding names (onnx.proto's
 * field numbers); `what` names it in a message ("" for the main graph),
 * `many` when it is repeated (then with its index: "node 3"). */
static const struct {
    unsigned char msg, field, kind;
    bool many;
    const char *what;
} WIRE[] = {
    {W_MODEL, 7, W_GRAPH, false, ""},
    {W_GRAPH, 1, W_NODE, true, "node"},          {W_GRAPH, 2, W_STR, false, "name"},
    {W_GRAPH, 5, W_TENSOR, true, "initializer"}, {W_GRAPH, 11, W_VALUE, true, "input"},
    {W_GRAPH, 12, W_VALUE, true, "output"},      {W_GRAPH, 13, W_VALUE, true, "value_info"},
    {W_NODE, 1, W_STR, true, "input"},           {W_NODE, 2, W_STR, true, "output"},
    {W_NODE, 3, W_STR, false, "name"},           {W_NODE, 4, W_STR, false, "op_type"},
    {W_NODE, 5, W_ATTR, true, "attribute"},      {W_NODE, 7, W_STR, false, "domain"},
    {W_ATTR, 1, W_STR, false, "name"},           {W_ATTR, 5, W_TENSOR, false, "tensor"},
    {W_ATTR, 6, W_GRAPH, false, "graph"},        {W_ATTR, 10, W_TENSOR, true, "tensor"},
    {W_ATTR, 11, W_GRAPH, true, "graph"},        {W_TENSOR, 8, W_STR, false, "name"},
    {W_VALUE, 1, W_STR, false, "name"},
};

static bool varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
    *v = 0;
    for (int shift = 0; *p < end && shift < 64; shift += 7) {
        uint8_t b = *(*p)++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return true;
    }
    return false;
}

/* Walks message msg (bytes [p, end)) for a name with a NUL; where is the
 * path to it ("graph > node 3"); fills err and returns an error at the
 * first.  A malformed field ends the walk quietly: protobuf-c decoded the
 * file, and what it refused is refused there. */
static rotor_status wire_walk(const ox_model *m, int msg, const uint8_t *p, const uint8_t *end, char *where,
                              size_t cap, int depth, rotor_error *err) {
    int count[32] = {0}; /* per field number below 32: occurrences so far */
    size_t base = strlen(where);
    while (p < end) {
        uint64_t tag, len = 0, ignored;
        if (!varint(&p, end, &tag)) return ROTOR_OK;
        int type = (int)(tag & 7);
        uint64_t field = tag >> 3;
        if (type == 0) {
            if (!varint(&p, end, &ignored)) return ROTOR_OK;
            continue;
        }
        if (type == 1 || type == 5) len = type == 1 ? 8 : 4;
        else if (type != 2 || !varint(&p, end, &len)) return ROTOR_OK; /* groups (3, 4) protobuf-c refuses */
        if (len > (uint64_t)(end - p)) return ROTOR_OK;
        const uint8_t *data = p;
        p += len;
        if (type != 2) continue;
        for (size_t i = 0; i < sizeof WIRE / sizeof WIRE[0]; i++) {
            if (WIRE[i].msg != msg || WIRE[i].field != field) continue;
            int k = field < 32 ? count[field]++ : 0;
            bool own = WIRE[i].kind == W_STR && !strcmp(WIRE[i].what, "name"); /* the name of where itself */
            if (!own && WIRE[i].what[0]) {
                size_t at = strlen(where);
                snprintf(where + at, cap - at, WIRE[i].many ? "%s%s %d" : "%s%s", at ? " > " : "", WIRE[i].what, k);
            }
            const uint8_t *nul = WIRE[i].kind == W_STR ? memchr(data, 0, len) : NULL;
            if (nul) {
                bool nomem = false;
                char *shown = escaped((const char *)data, len, &nomem);
                if (nomem) return rotor_nomem(err);
                rotor_status st = rotor_fail(err, ROTOR_ERR_INPUT, "%s: the name of %s ('%.200s') contains a NUL byte "
                                             "at byte %td; ONNX names are C strings", m->label,
                                             where[0] ? where : "the graph", shown, nul - data);
                free(shown);
                return st;
            }
            if (WIRE[i].kind != W_STR && depth < NAME_MAX_DEPTH) {
                rotor_status st = wire_walk(m, WIRE[i].kind, data, data + len, where, cap, depth + 1, err);
                if (st) return st;
            }
            where[base] = '\0';
        }
    }
    return ROTOR_OK;
}

/* ---- escaping the decoded names --------------------------------------------------------- */

/* A pass over every name of the decoded model (escape_graph's walk): first
 * the escaped forms are collected into a hash set, then the names that need
 * no escape are looked up in it (a clash), then the names are replaced. */
typedef enum { COLLECT, CHECK, REPLACE } pass_kind;

typedef struct names {
    pass_kind pass;
    char **set; /* open addressing, cap a power of two; NULL: empty */
    size_t n, cap;
    const char *clash;
    bool nomem;
} names;

/* The slot of s in the set: where it is, or the empty one it would take. */
static char **slot(const names *x, const char *s) {
    size_t mask = x->cap - 1;
    for (size_t i = rotor_fnv1a_str(s) & mask;; i = (i + 1) & mask)
        if (!x->set[i] || !strcmp(x->set[i], s)) return &x->set[i];
}

static void set_add(names *x, char *s) {
    if (2 * (x->n + 1) > x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 64;
        names bigger = {.set = calloc(cap, sizeof(char *)), .cap = cap};
        if (!bigger.set) {
            free(s);
            x->nomem = true;
            return;
        }
        for (size_t i = 0; i < x->cap; i++)
            if (x->set[i]) *slot(&bigger, x->set[i]) = x->set[i];
        free(x->set);
        x->set = bigger.set;
        x->cap = cap;
    }
    char **at = slot(x, s);
    if (*at) {
        free(s);
        return;
    }
    *at = s;
    x->n++;
}

static void one_name(names *x, char **s) {
    if (!*s || x->nomem || x->clash) return;
    char *e = escaped(*s, strlen(*s), &x->nomem);
    if (x->pass == COLLECT && e) set_add(x, e);
    else if (x->pass == CHECK && !e && x->cap && *slot(x, *s)) x->clash = *s;
    else if (x->pass == REPLACE && e) { /* the old string freed as protobuf-c frees it: malloc's allocator */
        free(*s);
        *s = e;
        e = NULL;
    }
    if (x->pass != COLLECT) free(e);
}

static void tensor_name(names *x, Onnx__TensorProto *t) {
    if (t) one_name(x, &t->name);
}

static void graph_names(names *x, Onnx__GraphProto *g, int depth) {
    if (!g || depth > NAME_MAX_DEPTH) return;
    one_name(x, &g->name);
    for (size_t i = 0; i < g->n_initializer; i++) tensor_name(x, g->initializer[i]);
    for (size_t i = 0; i < g->n_input; i++) one_name(x, &g->input[i]->name);
    for (size_t i = 0; i < g->n_output; i++) one_name(x, &g->output[i]->name);
    for (size_t i = 0; i < g->n_value_info; i++) one_name(x, &g->value_info[i]->name);
    for (size_t i = 0; i < g->n_node; i++) {
        Onnx__NodeProto *n = g->node[i];
        one_name(x, &n->name);
        one_name(x, &n->op_type);
        one_name(x, &n->domain);
        for (size_t k = 0; k < n->n_input; k++) one_name(x, &n->input[k]);
        for (size_t k = 0; k < n->n_output; k++) one_name(x, &n->output[k]);
        for (size_t a = 0; a < n->n_attribute; a++) {
            Onnx__AttributeProto *at = n->attribute[a];
            one_name(x, &at->name);
            tensor_name(x, at->t);
            for (size_t k = 0; k < at->n_tensors; k++) tensor_name(x, at->tensors[k]);
            graph_names(x, at->g, depth + 1);
            for (size_t k = 0; k < at->n_graphs; k++) graph_names(x, at->graphs[k], depth + 1);
        }
    }
}

rotor_status ox_check_names(ox_model *m, const uint8_t *data, size_t len, rotor_error *err) {
    char where[512] = "";
    rotor_status st = wire_walk(m, W_MODEL, data, data + len, where, sizeof where, 0, err);
    if (st) return st;
    names x = {.pass = COLLECT};
    graph_names(&x, m->proto->graph, 0);
    if (x.n && !x.nomem) {
        x.pass = CHECK;
        graph_names(&x, m->proto->graph, 0);
    }
    if (x.n && !x.nomem && !x.clash) {
        x.pass = REPLACE;
        graph_names(&x, m->proto->graph, 0);
    }
    if (!x.nomem && x.clash)
        st = rotor_fail(err, ROTOR_ERR_INPUT, "%s: the name '%.200s' is in the file, and is also what a name that is "
                        "not UTF-8 is written as (its bytes escaped as \\xNN)", m->label, x.clash);
    for (size_t i = 0; i < x.cap; i++) free(x.set[i]);
    free(x.set);
    return x.nomem ? rotor_nomem(err) : st;
}
