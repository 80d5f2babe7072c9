/* onnxif.c — If on a condition known at import time, folded into its branch
 * (issue 20; docs/onnx.md, "Control flow").
 *
 * A plan needs a static graph.  An If whose condition is an initializer, a
 * value bound with --value, or a Constant node's output takes one branch
 * whatever the data: its nodes replace the If (they may read outer values
 * by name, as the ONNX scoping rules allow), and an Identity per output
 * carries the branch's outputs to the If's.  Branches are folded in turn,
 * so nested Ifs on known conditions fold too.  Any other If, and Loop and
 * Scan, stay refused: their subgraph attribute is named. */
#include "onnxir.h"

#include <stdlib.h>
#include <string.h>

void ox_flat_free(ox_model *m) {
    for (int i = 0; i < m->nmade; i++) {
        free(m->made[i].input);
        free(m->made[i].output);
    }
    free(m->made);
    free(m->flat);
    m->made = NULL;
    m->flat = NULL;
    m->nmade = m->nflat = 0;
}

typedef struct flat {
    ox_model *m;
    const Onnx__GraphProto *main;
    Onnx__NodeProto **v;
    int n, cap;
    int made_cap;
    int depth;
} flat;

static bool push(flat *f, Onnx__NodeProto *p) {
    if (f->n == f->cap) {
        int cap = f->cap ? 2 * f->cap : 64;
        Onnx__NodeProto **v = realloc(f->v, (size_t)cap * sizeof *v);
        if (!v) return false;
        f->v = v;
        f->cap = cap;
    }
    f->v[f->n++] = p;
    return true;
}

/* The value of scalar name if it is known now: 1 true, 0 false, -1 unknown. */
static int known_condition(flat *f, const char *name) {
    ox_model *m = f->m;
    for (int v = 0; v < m->nvals; v++) /* an initializer or a bound --value */
        if (m->vals[v].name && !strcmp(m->vals[v].name, name))
            return m->vals[v].kind == OX_CONST && m->vals[v].has_data && m->vals[v].elems == 1
                       ? ox_get(&m->vals[v], 0) != 0
                       : -1;
    for (int i = 0; i < f->n; i++) { /* a Constant node already placed */
        const Onnx__NodeProto *p = f->v[i];
        if (!p->op_type || strcmp(p->op_type, "Constant") || p->n_output != 1 || !p->output[0] ||
            strcmp(p->output[0], name))
            continue;
        for (size_t a = 0; a < p->n_attribute; a++)
            if (p->attribute[a]->name && !strcmp(p->attribute[a]->name, "value") && p->attribute[a]->t) {
                ox_val tmp;
                memset(&tmp, 0, sizeof tmp);
                rotor_error e2;
                if (ox_decode_tensor(m, p->attribute[a]->t, &tmp, "condition", &e2)) return -1;
                int r = tmp.has_data && tmp.elems == 1 ? ox_get(&tmp, 0) != 0 : -1;
                ox_free_data(&tmp);
                return r;
            }
    }
    return -1;
}

/* An Identity src -> dst, owned by m. */
static Onnx__NodeProto *identity(flat *f, const char *src, const char *dst) {
    ox_model *m = f->m;
    if (m->nmade == f->made_cap) {
        /* the nodes are pointed to from f->v: grow by a fresh block only
         * before any is handed out (made_cap is fixed by a first count) */
        return NULL;
    }
    Onnx__NodeProto *p = &m->made[m->nmade++];
    onnx__node_proto__init(p);
    p->op_type = "Identity";
    p->name = "";
    p->input = malloc(sizeof(char *));
    p->output = malloc(sizeof(char *));
    if (!p->input || !p->output) return NULL;
    p->n_input = p->n_output = 1;
    p->input[0] = (char *)src;
    p->output[0] = (char *)dst;
    return p;
}

static rotor_status add_graph(flat *f, const Onnx__GraphProto *g, rotor_error *err);

static rotor_status add_node(flat *f, Onnx__NodeProto *p, rotor_error *err) {
    /* anything malformed goes through as it is: build() names the fault */
    if (!p->op_type || strcmp(p->op_type, "If") || (p->domain && *p->domain && strcmp(p->domain, "ai.onnx")) ||
        p->n_input != 1 || !p->input[0])
        return push(f, p) ? ROTOR_OK : rotor_nomem(err);
    int c = known_condition(f, p->input[0]);
    if (c < 0) return push(f, p) ? ROTOR_OK : rotor_nomem(err); /* refused later, with the reason */
    const Onnx__GraphProto *branch = NULL;
    for (size_t a = 0; a < p->n_attribute; a++)
        if (p->attribute[a]->name && !strcmp(p->attribute[a]->name, c ? "then_branch" : "else_branch"))
            branch = p->attribute[a]->g;
    bool named = branch && branch->n_output == p->n_output;
    for (size_t k = 0; named && k < branch->n_output; k++) named = branch->output[k]->name != NULL;
    if (!named || f->depth > 16) return push(f, p) ? ROTOR_OK : rotor_nomem(err);
    f->depth++;
    rotor_status st = add_graph(f, branch, err);
    f->depth--;
    for (size_t k = 0; !st && k < p->n_output; k++) {
        if (!p->output[k] || !*p->output[k]) continue;
        Onnx__NodeProto *id = identity(f, branch->output[k]->name, p->output[k]);
        if (!id || !push(f, id)) st = rotor_nomem(err);
    }
    return st;
}

static rotor_status add_graph(flat *f, const Onnx__GraphProto *g, rotor_error *err) {
    rotor_status st = ROTOR_OK;
    for (size_t i = 0; !st && i < g->n_node; i++) st = add_node(f, g->node[i], err);
    return st;
}

/* Outputs of every If in g and its subgraphs: a bound on the Identities. */
static int count_if_outputs(const Onnx__GraphProto *g, int depth) {
    int n = 0;
    for (size_t i = 0; depth < 17 && i < g->n_node; i++) {
        const Onnx__NodeProto *p = g->node[i];
        if (p->op_type && !strcmp(p->op_type, "If")) n += (int)p->n_output;
        for (size_t a = 0; a < p->n_attribute; a++)
            if (p->attribute[a]->g) n += count_if_outputs(p->attribute[a]->g, depth + 1);
    }
    return n;
}

rotor_status ox_flatten_ifs(ox_model *m, rotor_error *err) {
    const Onnx__GraphProto *g = m->proto->graph;
    flat f = {.m = m, .main = g};
    f.made_cap = count_if_outputs(g, 0);
    if (f.made_cap && !(m->made = calloc((size_t)f.made_cap, sizeof *m->made))) return rotor_nomem(err);
    rotor_status st = add_graph(&f, g, err);
    m->flat = f.v;
    m->nflat = f.n;
    return st;
}
