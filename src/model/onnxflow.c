/* onnxflow.c — control flow known at import time, folded into a static
 * graph (issues 20 and 47; docs/onnx.md, "Control flow").
 *
 * A plan needs a static graph, so:
 *  - an If whose condition is known is replaced by the branch it takes (its
 *    nodes may read outer values by name, as ONNX scoping allows) and an
 *    Identity per output carries the branch's outputs to the If's;
 *  - a Scan (opset 9 and later) over inputs whose length along the scan
 *    axis is known is unrolled: per step, a Gather takes each scan input's
 *    slice (slice T-1-t at step t of a reversed input), the body's nodes are
 *    copied with every body-local name suffixed "#t", the state passes from
 *    step to step by Identity, and each scan output is stacked with
 *    Unsqueeze and Concat along its axis (the last step first when
 *    reversed; a negative axis counts from the back of the stacked output,
 *    which is what Unsqueeze and Concat make of it too); opset 8's Scan,
 *    whose inputs carry a batch axis first, is unrolled per batch entry
 *    and step, and stacked over the batch;
 *  - a Loop with a known trip count, whose condition is known true and
 *    which its body passes through unchanged or sets to a constant true, is
 *    unrolled the same way: the iteration number is a Constant per step,
 *    and scan outputs stack along axis 0.
 * A final state is written under the node's output name at the last step
 * (no Identity, which the lowering would fold into the body's name), so
 * that a graph output keeps its own name.
 *
 * Known is what the flattening can read: an initializer, a --value, a
 * Constant node placed before, a graph input's shape (after --input and
 * --dim), and what an earlier pass of the import learned (ox_fact).  The
 * flattening runs before folding, so a condition Equal(sr, 16000) or a trip
 * count computed from shapes is not known to it.  When shape inference
 * reaches a node the flattening left and finds that it would fold now
 * (ox_flow_node), it records the values and shapes the flattening needs and
 * the import runs again (onnx.c, at most OX_MAX_PASSES times); each pass
 * learns at least one new fact, so the passes end.
 *
 * Invalid nodes are refused naming the attribute or input, as soon as what
 * decides it is known: attribute lists of the wrong length, directions
 * other than 0 and 1, axes out of range, a body whose inputs or outputs do
 * not match the node's, scan inputs of different lengths, slices or states
 * that contradict the body's declared inputs, a branch that is missing.
 * An If nested in a branch folds in turn (to depth 16); a Loop or Scan body
 * holding control flow of its own is not unrolled.  Anything else stays as
 * it is and is refused by ox_flow_node with its reason. */
#include "onnxir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLOW_MAX_DEPTH 16
#define FLOW_MAX_STEPS 4096
#define FLOW_MAX_SCAN 64 /* scan inputs, or scan outputs, of one Scan */

void ox_flat_free(ox_model *m) {
    for (int i = 0; i < m->nowned; i++) free(m->owned[i]);
    free(m->owned);
    free(m->flat);
    m->owned = NULL;
    m->flat = NULL;
    m->nowned = m->owned_cap = m->nflat = m->flat_cap = 0;
}

/* Zeroed memory the model frees with itself; NULL when out of memory. */
static void *own(ox_model *m, size_t n) {
    if (m->nowned == m->owned_cap) {
        int cap = m->owned_cap ? 2 * m->owned_cap : 256;
        void **v = realloc(m->owned, (size_t)cap * sizeof *v);
        if (!v) return NULL;
        m->owned = v;
        m->owned_cap = cap;
    }
    void *p = calloc(1, n ? n : 1);
    if (p) m->owned[m->nowned++] = p;
    return p;
}

static char *own_str(ox_model *m, const char *s) {
    char *p = own(m, strlen(s) + 1);
    if (p) strcpy(p, s);
    return p;
}

static bool push(ox_model *m, Onnx__NodeProto *p) {
    if (m->nflat == m->flat_cap) {
        int cap = m->flat_cap ? 2 * m->flat_cap : 64;
        Onnx__NodeProto **v = realloc(m->flat, (size_t)cap * sizeof *v);
        if (!v) return false;
        m->flat = v;
        m->flat_cap = cap;
    }
    m->flat[m->nflat++] = p;
    return true;
}

/* A subgraph's initializer as a Constant node writing it under name: a
 * body or branch may hold its constants as initializers (ONNX allows it,
 * and converters write them), which the flattened graph would otherwise
 * read as names nothing defines.  The tensor is shared, not copied. */
static bool push_initializer(ox_model *m, Onnx__TensorProto *t, const char *name) {
    Onnx__NodeProto *q = own(m, sizeof *q);
    Onnx__AttributeProto *a = own(m, sizeof *a);
    Onnx__AttributeProto **av = own(m, sizeof *av);
    char **out = own(m, sizeof *out);
    if (!q || !a || !av || !out) return false;
    onnx__node_proto__init(q);
    onnx__attribute_proto__init(a);
    a->name = "value";
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    a->t = t;
    av[0] = a;
    out[0] = (char *)name;
    q->op_type = "Constant";
    q->name = "";
    q->n_output = 1;
    q->output = out;
    q->n_attribute = 1;
    q->attribute = av;
    return push(m, q);
}

/* A new node op(ins) -> outs, owned by m; NULL when out of memory. */
static Onnx__NodeProto *make_node(ox_model *m, const char *op, const char *const *ins, int nin,
                                  const char *const *outs, int nout) {
    Onnx__NodeProto *p = own(m, sizeof *p);
    if (!p) return NULL;
    onnx__node_proto__init(p);
    p->op_type = (char *)op;
    p->name = "";
    p->input = own(m, sizeof(char *) * (size_t)nin);
    p->output = own(m, sizeof(char *) * (size_t)nout);
    p->attribute = own(m, sizeof(void *) * 2);
    if (!p->input || !p->output || !p->attribute) return NULL;
    for (int k = 0; k < nin; k++) p->input[k] = (char *)ins[k];
    for (int k = 0; k < nout; k++) p->output[k] = (char *)outs[k];
    p->n_input = (size_t)nin;
    p->n_output = (size_t)nout;
    return p;
}

static bool add_int_attr(ox_model *m, Onnx__NodeProto *p, const char *name, int64_t v, bool list) {
    Onnx__AttributeProto *a = own(m, sizeof *a);
    if (!a) return false;
    onnx__attribute_proto__init(a);
    a->name = (char *)name;
    a->has_type = 1;
    if (list) {
        a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
        a->ints = own(m, sizeof(int64_t));
        if (!a->ints) return false;
        a->ints[0] = v;
        a->n_ints = 1;
    } else {
        a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
        a->has_i = 1;
        a->i = v;
    }
    p->attribute[p->n_attribute++] = a;
    return true;
}

/* out = Constant int64 scalar (rank 0) or [v] (rank 1). */
static bool const_int(ox_model *m, const char *out, int64_t v, int rank) {
    const char *outs[1] = {out};
    Onnx__NodeProto *p = make_node(m, "Constant", NULL, 0, outs, 1);
    Onnx__AttributeProto *a = own(m, sizeof *a);
    Onnx__TensorProto *t = own(m, sizeof *t);
    if (!p || !a || !t) return false;
    onnx__tensor_proto__init(t);
    t->has_data_type = 1;
    t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
    t->int64_data = own(m, sizeof(int64_t));
    t->dims = own(m, sizeof(int64_t));
    if (!t->int64_data || !t->dims) return false;
    t->int64_data[0] = v;
    t->n_int64_data = 1;
    t->n_dims = (size_t)rank;
    t->dims[0] = 1;
    onnx__attribute_proto__init(a);
    a->name = "value";
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    a->t = t;
    p->attribute[p->n_attribute++] = a;
    return push(m, p);
}

static bool identity(ox_model *m, const char *src, const char *dst) {
    const char *ins[1] = {src}, *outs[1] = {dst};
    Onnx__NodeProto *p = make_node(m, "Identity", ins, 1, outs, 1);
    return p && push(m, p);
}

static const Onnx__AttributeProto *attr(const Onnx__NodeProto *p, const char *name) {
    for (size_t a = 0; a < p->n_attribute; a++)
        if (p->attribute[a]->name && !strcmp(p->attribute[a]->name, name)) return p->attribute[a];
    return NULL;
}

/* ---- refusals ----------------------------------------------------------------------- */

/* The name build_nodes gives node p when it is pushed now: its own, else
 * "<op_type>_<index>". */
static void flat_name(const ox_model *m, const Onnx__NodeProto *p, char *buf, size_t cap) {
    if (p->name && *p->name) snprintf(buf, cap, "%s", p->name);
    else snprintf(buf, cap, "%s_%d", p->op_type, m->nflat);
}

/* Node p, called nm, as an ox_node in n (the node is not one yet while the
 * graph is flattened), for ox_node_fail's words: FLOW_FAIL. */
static const ox_node *as_node(const Onnx__NodeProto *p, const char *nm, ox_node *n) {
    n->p = (Onnx__NodeProto *)p;
    n->domain = p->domain && *p->domain ? p->domain : "ai.onnx";
    snprintf(n->name, sizeof n->name, "%s", nm);
    return n;
}

#define FLOW_FAIL(m, p, nm, err, ...) \
    ox_node_fail((m), as_node((p), (nm), &(ox_node){0}), (err), ROTOR_ERR_INPUT, __VA_ARGS__)

/* "[2x3]", "[]" for a scalar, "?" for an unknown extent. */
static const char *dims_text(int rank, const int64_t *shape, char *buf, size_t cap) {
    size_t k = (size_t)snprintf(buf, cap, "[");
    for (int d = 0; d < rank && k < cap; d++)
        k += shape[d] < 0 ? (size_t)snprintf(buf + k, cap - k, "%s?", d ? "x" : "")
                          : (size_t)snprintf(buf + k, cap - k, "%s%lld", d ? "x" : "", (long long)shape[d]);
    if (k < cap) snprintf(buf + k, cap - k, "]");
    return buf;
}

/* ---- what the import knows ------------------------------------------------------------ */

void ox_facts_free(ox_model *m) {
    for (int i = 0; i < m->nfacts; i++) free(m->facts[i].name);
    free(m->facts);
    m->facts = NULL;
    m->nfacts = m->facts_cap = 0;
}

static const ox_fact *fact_of(const ox_model *m, const char *name) {
    for (int i = 0; i < m->nfacts; i++)
        if (!strcmp(m->facts[i].name, name)) return &m->facts[i];
    return NULL;
}

/* The fact about name, created empty; NULL when out of memory. */
static ox_fact *fact_new(ox_model *m, const char *name) {
    for (int i = 0; i < m->nfacts; i++)
        if (!strcmp(m->facts[i].name, name)) return &m->facts[i];
    if (m->nfacts == m->facts_cap) {
        int cap = m->facts_cap ? 2 * m->facts_cap : 16;
        ox_fact *v = realloc(m->facts, sizeof *v * (size_t)cap);
        if (!v) return NULL;
        m->facts = v;
        m->facts_cap = cap;
    }
    ox_fact *f = &m->facts[m->nfacts];
    memset(f, 0, sizeof *f);
    f->rank = -1;
    if (!(f->name = strdup(name))) return NULL;
    m->nfacts++;
    return f;
}

/* Learns x's scalar (a constant with one element of data), or its shape;
 * *fresh set when it is new.  false when out of memory. */
static bool learn(ox_model *m, const ox_val *x, bool value, bool *fresh) {
    ox_fact *f = fact_new(m, x->name);
    if (!f) return false;
    if (value && !f->has_value) {
        f->has_value = true;
        f->value = ox_get_i(x, 0);
        *fresh = true;
    } else if (!value && f->rank < 0) {
        f->rank = x->rank;
        memcpy(f->shape, x->shape, sizeof f->shape);
        *fresh = true;
    }
    return true;
}

/* The value called name, defined (an initializer, a --value, a graph
 * input; in the shape pass, anything inferred so far), or NULL. */
static const ox_val *val_named(const ox_model *m, const char *name) {
    for (int i = 0; i < m->nvals; i++)
        if (m->vals[i].kind != OX_UNDEF && m->vals[i].name && !strcmp(m->vals[i].name, name)) return &m->vals[i];
    return NULL;
}

/* The integer scalar a Constant node p outputs, in *v. */
static bool constant_int(const ox_model *m, const Onnx__NodeProto *p, int64_t *v) {
    const Onnx__AttributeProto *a = attr(p, "value");
    if (!a || !a->t) return false;
    ox_val tmp;
    memset(&tmp, 0, sizeof tmp);
    rotor_error e2;
    if (ox_decode_tensor(m, a->t, &tmp, "constant", &e2)) return false;
    bool ok = tmp.has_data && tmp.elems == 1;
    if (ok) *v = ox_get_i(&tmp, 0);
    ox_free_data(&tmp);
    return ok;
}

/* The value of integer scalar `name` if it is known now, in *v. */
static bool known_int(ox_model *m, const char *name, int64_t *v) {
    const ox_val *x = val_named(m, name);
    if (x && x->kind == OX_CONST) { /* an initializer, a bound --value, or folded */
        if (!x->has_data || x->elems != 1) return false;
        *v = ox_get_i(x, 0);
        return true;
    }
    if (x && x->kind == OX_INPUT) return false;
    const ox_fact *f = fact_of(m, name);
    if (f && f->has_value) {
        *v = f->value;
        return true;
    }
    for (int i = 0; i < m->nflat; i++) { /* a Constant node already placed */
        const Onnx__NodeProto *p = m->flat[i];
        if (p->op_type && !strcmp(p->op_type, "Constant") && p->n_output == 1 && p->output[0] &&
            !strcmp(p->output[0], name))
            return constant_int(m, p, v);
    }
    return false;
}

/* The shape of name if it is known now. */
static bool known_shape(const ox_model *m, const char *name, int *rank, int64_t *shape) {
    const ox_val *x = val_named(m, name);
    const ox_fact *f = x ? NULL : fact_of(m, name);
    if (!x && (!f || f->rank < 0)) return false;
    *rank = x ? x->rank : f->rank;
    memcpy(shape, x ? x->shape : f->shape, sizeof(int64_t) * OX_MAX_RANK);
    return true;
}

/* The shape a body input or output declares: rank and extents, -1 where an
 * extent is symbolic or absent; false when it declares none. */
static bool declared_shape(const Onnx__ValueInfoProto *vi, int *rank, int64_t *shape) {
    const Onnx__TypeProto *tp = vi ? vi->type : NULL;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type ||
        !tp->tensor_type->shape || tp->tensor_type->shape->n_dim > OX_MAX_RANK)
        return false;
    *rank = (int)tp->tensor_type->shape->n_dim;
    for (int d = 0; d < *rank; d++) {
        const Onnx__TensorShapeProto__Dimension *dm = tp->tensor_type->shape->dim[d];
        bool fixed = dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dm->dim_value > 0;
        shape[d] = fixed ? dm->dim_value : -1;
    }
    return true;
}

/* Whether shape (rank r) agrees with a declared one (extents -1 agree with any). */
static bool agrees(int r, const int64_t *shape, int dr, const int64_t *declared) {
    if (r != dr) return false;
    for (int d = 0; d < r; d++)
        if (declared[d] >= 0 && declared[d] != shape[d]) return false;
    return true;
}

/* ---- unrolling ------------------------------------------------------------------------ */

static rotor_status add_graph(ox_model *m, const Onnx__GraphProto *g, int depth, rotor_error *err);

static bool in_list(const char *const *v, int n, const char *s) {
    for (int i = 0; i < n; i++)
        if (!strcmp(v[i], s)) return true;
    return false;
}

/* Whether a body holds control flow of its own: its subgraphs may read
 * body-local names, which the unrolling would not rename, so such a body
 * stays refused. */
static bool nested(const Onnx__GraphProto *b) {
    for (size_t i = 0; i < b->n_node; i++)
        for (size_t a = 0; a < b->node[i]->n_attribute; a++)
            if (b->node[i]->attribute[a]->g || b->node[i]->attribute[a]->n_graphs) return true;
    return false;
}

/* One unrolling: the body's local names (its inputs and every name its
 * nodes write), and the final states: at the last step, body name from[i]
 * is the node's output to[i]. */
typedef struct unroll {
    const Onnx__GraphProto *b;
    const char **loc;
    int nloc;
    int last;
    const char *from[FLOW_MAX_SCAN], *to[FLOW_MAX_SCAN];
    int nren;
} unroll;

static rotor_status unroll_begin(ox_model *m, unroll *u, const Onnx__GraphProto *b, int64_t T, rotor_error *err) {
    memset(u, 0, sizeof *u);
    u->b = b;
    u->last = (int)T - 1;
    int cap = (int)b->n_input + (int)b->n_initializer;
    for (size_t i = 0; i < b->n_node; i++) cap += (int)b->node[i]->n_output;
    u->loc = own(m, sizeof(char *) * (size_t)(cap ? cap : 1));
    if (!u->loc) return rotor_nomem(err);
    for (size_t i = 0; i < b->n_input; i++)
        if (b->input[i]->name) u->loc[u->nloc++] = b->input[i]->name;
    for (size_t i = 0; i < b->n_initializer; i++)
        if (b->initializer[i]->name && *b->initializer[i]->name) u->loc[u->nloc++] = b->initializer[i]->name;
    for (size_t i = 0; i < b->n_node; i++)
        for (size_t k = 0; k < b->node[i]->n_output; k++)
            if (b->node[i]->output[k] && *b->node[i]->output[k]) u->loc[u->nloc++] = b->node[i]->output[k];
    return ROTOR_OK;
}

/* The node's first n outputs are final states, body outputs out0 + k of the
 * last step: each body-local one is written under the node's name there. */
static void final_names(unroll *u, const Onnx__NodeProto *p, int n, int out0) {
    for (int k = 0; k < n && u->nren < FLOW_MAX_SCAN; k++) {
        const char *name = u->b->output[out0 + k]->name, *to = p->output[k];
        if (!name || !to || !*to || !in_list(u->loc, u->nloc, name) || in_list(u->from, u->nren, name)) continue;
        u->from[u->nren] = name;
        u->to[u->nren++] = to;
    }
}

/* name#t for a body-local name (the node's output name for a final state
 * at the last step), else the name itself. */
static const char *at_step(ox_model *m, const unroll *u, const char *name, int t) {
    if (!name || !*name || !in_list(u->loc, u->nloc, name)) return name;
    for (int i = 0; t == u->last && i < u->nren; i++)
        if (!strcmp(u->from[i], name)) return u->to[i];
    char buf[512];
    snprintf(buf, sizeof buf, "%s#%d", name, t);
    return own_str(m, buf);
}

/* The body's nodes at step t, body-local names suffixed. */
static rotor_status body_step(ox_model *m, const unroll *u, int t, int depth, rotor_error *err) {
    const Onnx__GraphProto *b = u->b;
    for (size_t i = 0; i < b->n_initializer; i++) {
        const char *nm = b->initializer[i]->name;
        if (!nm || !*nm) continue;
        const char *at = at_step(m, u, nm, t);
        if (!at || !push_initializer(m, b->initializer[i], at)) return rotor_nomem(err);
    }
    for (size_t i = 0; i < b->n_node; i++) {
        const Onnx__NodeProto *p = b->node[i];
        Onnx__NodeProto *q = own(m, sizeof *q);
        if (!q) return rotor_nomem(err);
        *q = *p;
        q->name = "";
        q->input = own(m, sizeof(char *) * (p->n_input ? p->n_input : 1));
        q->output = own(m, sizeof(char *) * (p->n_output ? p->n_output : 1));
        if (!q->input || !q->output) return rotor_nomem(err);
        for (size_t k = 0; k < p->n_input; k++)
            if (!(q->input[k] = (char *)at_step(m, u, p->input[k], t))) return rotor_nomem(err);
        for (size_t k = 0; k < p->n_output; k++)
            if (!(q->output[k] = (char *)at_step(m, u, p->output[k], t))) return rotor_nomem(err);
        Onnx__GraphProto one = {.n_node = 1, .node = &q};
        rotor_status st = add_graph(m, &one, depth + 1, err);
        if (st) return st;
    }
    return ROTOR_OK;
}

/* Stacks src[0..n) along axis into dst (src[n-1] first when reversed):
 * Unsqueeze each into base#(first + i)#u, then Concat. */
static rotor_status concat_unsqueezed(ox_model *m, const char *const *src, int64_t n, int64_t axis, bool reversed,
                                      const char *base, int64_t first, const char *dst, rotor_error *err) {
    const char **parts = own(m, sizeof(char *) * (size_t)n);
    if (!parts) return rotor_nomem(err);
    for (int64_t i = 0; i < n; i++) {
        char buf[512];
        snprintf(buf, sizeof buf, "%s#%lld#u", base, (long long)(first + i));
        const char *un = own_str(m, buf);
        if (!un) return rotor_nomem(err);
        Onnx__NodeProto *p;
        if (m->opset >= 13) { /* axes as an input */
            snprintf(buf, sizeof buf, "%s#%lld#ax", base, (long long)(first + i));
            const char *ax = own_str(m, buf);
            if (!ax || !const_int(m, ax, axis, 1)) return rotor_nomem(err);
            const char *ins[2] = {src[i], ax};
            p = make_node(m, "Unsqueeze", ins, 2, &un, 1);
        } else {
            p = make_node(m, "Unsqueeze", &src[i], 1, &un, 1);
            if (p && !add_int_attr(m, p, "axes", axis, true)) p = NULL;
        }
        if (!p || !push(m, p)) return rotor_nomem(err);
        parts[reversed ? n - 1 - i : i] = un;
    }
    Onnx__NodeProto *c = make_node(m, "Concat", parts, (int)n, &dst, 1);
    if (!c || !add_int_attr(m, c, "axis", axis, false) || !push(m, c)) return rotor_nomem(err);
    return ROTOR_OK;
}

/* Stacks body output out of steps first .. first+T-1 along axis into dst
 * (the last step first when reversed). */
static rotor_status stack(ox_model *m, const unroll *u, const char *out, int64_t first, int64_t T, int64_t axis,
                          bool reversed, const char *dst, rotor_error *err) {
    const char **src = own(m, sizeof(char *) * (size_t)T);
    if (!src) return rotor_nomem(err);
    for (int64_t t = 0; t < T; t++)
        if (!(src[t] = at_step(m, u, out, (int)(first + t)))) return rotor_nomem(err);
    return concat_unsqueezed(m, src, T, axis, reversed, out, first, dst, err);
}

/* The carried state at step t: body input in0 + k gets init[k] at step
 * `first`, then the body's output out0 + k of the step before. */
static rotor_status pass_state(ox_model *m, const unroll *u, int t, int first, int n, int in0, int out0,
                               const char *const *init, rotor_error *err) {
    for (int k = 0; k < n; k++) {
        const char *dst = at_step(m, u, u->b->input[in0 + k]->name, t);
        const char *src = t > first ? at_step(m, u, u->b->output[out0 + k]->name, t - 1) : init[k];
        if (!dst || !src || !identity(m, src, dst)) return rotor_nomem(err);
    }
    return ROTOR_OK;
}

/* The node's outputs after T steps: the first n are the final state (body
 * output out0 + k of the last step), the rest the body's scan outputs
 * stacked along axes[k - n] (0 without axes), reversed where rev[k - n]. */
static rotor_status finish(ox_model *m, const unroll *u, const Onnx__NodeProto *p, int64_t T, int n, int out0,
                           const int64_t *axes, const bool *rev, rotor_error *err) {
    for (int k = 0; k < (int)p->n_output; k++) {
        if (!p->output[k] || !*p->output[k]) continue;
        rotor_status st = ROTOR_OK;
        const char *body = u->b->output[out0 + k]->name;
        if (k < n) {
            const char *src = at_step(m, u, body, (int)T - 1);
            if (!src || (strcmp(src, p->output[k]) && !identity(m, src, p->output[k]))) st = rotor_nomem(err);
        } else {
            st = stack(m, u, body, 0, T, axes ? axes[k - n] : 0, rev && rev[k - n], p->output[k], err);
        }
        if (st) return st;
    }
    return ROTOR_OK;
}

/* ---- Scan ---------------------------------------------------------------------------- */

typedef struct scan_info {
    int N, M, K; /* states, scan inputs, scan outputs */
    int64_t T;
    int64_t in_axis[FLOW_MAX_SCAN], out_axis[FLOW_MAX_SCAN], in_dir[FLOW_MAX_SCAN], out_dir[FLOW_MAX_SCAN];
} scan_info;

/* Attribute `name`, a list of `count` integers (dflt each when absent),
 * into out; directions must be 0 or 1, and negative axes arrive with
 * opset 11. */
static rotor_status scan_list(ox_model *m, const Onnx__NodeProto *p, const char *nm, const char *name, int count,
                              bool direction, int64_t *out, rotor_error *err) {
    const Onnx__AttributeProto *a = attr(p, name);
    if (a && (int)a->n_ints != count)
        return FLOW_FAIL(m, p, nm, err, "%s has %zu entries; the Scan has %d scan %s%s", name, a->n_ints, count,
                         strstr(name, "output") ? "output" : "input", count == 1 ? "" : "s");
    for (int k = 0; k < count; k++) {
        out[k] = a ? a->ints[k] : 0;
        if (direction && out[k] != 0 && out[k] != 1)
            return FLOW_FAIL(m, p, nm, err, "%s[%d] is %lld (0 forward, 1 reverse)", name, k, (long long)out[k]);
        if (!direction && out[k] < 0 && m->opset < 11)
            return FLOW_FAIL(m, p, nm, err, "%s[%d] is %lld; negative axes arrive with opset 11 (this is %lld)", name,
                             k, (long long)out[k], (long long)m->opset);
    }
    return ROTOR_OK;
}

/* The node's and the body's inputs and outputs agree, and the attribute
 * lists with them (scan_read's first half: what no shape decides). */
static rotor_status scan_form(ox_model *m, const Onnx__NodeProto *p, const Onnx__GraphProto *b, const char *nm,
                              scan_info *s, char *why, size_t cap, rotor_error *err) {
    const Onnx__AttributeProto *ns = attr(p, "num_scan_inputs");
    if (!ns || ns->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
        return FLOW_FAIL(m, p, nm, err, "attribute num_scan_inputs is missing");
    if (ns->i < 1 || ns->i > (int64_t)p->n_input)
        return FLOW_FAIL(m, p, nm, err, "num_scan_inputs is %lld; the Scan has %zu inputs", (long long)ns->i,
                         p->n_input);
    s->M = (int)ns->i;
    s->N = (int)p->n_input - s->M;
    if ((int)b->n_input != s->N + s->M)
        return FLOW_FAIL(m, p, nm, err, "its body has %zu inputs; %d state%s and %d scan input%s need %d",
                         b->n_input, s->N, s->N == 1 ? "" : "s", s->M, s->M == 1 ? "" : "s", s->N + s->M);
    if (b->n_output != p->n_output || (int)b->n_output < s->N)
        return FLOW_FAIL(m, p, nm, err, "it has %zu outputs and its body %zu; both are its %d states, then its scan "
                         "outputs", p->n_output, b->n_output, s->N);
    s->K = (int)p->n_output - s->N;
    if (s->M > FLOW_MAX_SCAN || s->K > FLOW_MAX_SCAN) {
        snprintf(why, cap, "it has more than %d scan inputs or outputs", FLOW_MAX_SCAN);
        return ROTOR_OK;
    }
    rotor_status st;
    if ((st = scan_list(m, p, nm, "scan_input_axes", s->M, false, s->in_axis, err)) ||
        (st = scan_list(m, p, nm, "scan_input_directions", s->M, true, s->in_dir, err)) ||
        (st = scan_list(m, p, nm, "scan_output_axes", s->K, false, s->out_axis, err)) ||
        (st = scan_list(m, p, nm, "scan_output_directions", s->K, true, s->out_dir, err)))
        return st;
    /* a scan output has the rank of its body output plus the scan axis:
     * checked where the body declares it (else Unsqueeze checks it) */
    for (int k = 0; k < s->K; k++) {
        int r;
        int64_t shape[OX_MAX_RANK];
        int64_t a = s->out_axis[k];
        if (declared_shape(b->output[s->N + k], &r, shape) && (a < -(r + 1) || a > r))
            return FLOW_FAIL(m, p, nm, err, "scan_output_axes[%d] is %lld; scan output '%s' has rank %d (accepted "
                             "-%d to %d)", k, (long long)a, p->output[s->N + k] ? p->output[s->N + k] : "", r + 1,
                             r + 1, r);
    }
    if (nested(b)) snprintf(why, cap, "its body holds control flow of its own");
    return ROTOR_OK;
}

/* What a Scan needs to unroll, read and checked: its form (scan_form), the
 * scan inputs' axes and common length T, and the slices and states against
 * what its body declares.  *why (empty when it unrolls) says what is not
 * known yet, or not unrolled; an invalid node is an error naming what. */
static rotor_status scan_read(ox_model *m, const Onnx__NodeProto *p, const Onnx__GraphProto *b, const char *nm,
                              scan_info *s, char *why, size_t cap, rotor_error *err) {
    why[0] = '\0';
    if (m->opset < 9) {
        snprintf(why, cap, "opset 8's Scan is read by scan8_read");
        return ROTOR_OK;
    }
    rotor_status st = scan_form(m, p, b, nm, s, why, cap, err);
    if (st || why[0]) return st;
    s->T = -1;
    char t1[96], t2[96];
    for (int k = 0; k < s->M; k++) {
        const char *in = p->input[s->N + k];
        int r, dr;
        int64_t shape[OX_MAX_RANK], slice[OX_MAX_RANK], declared[OX_MAX_RANK];
        if (!in || !*in) return FLOW_FAIL(m, p, nm, err, "scan input %d has no name", k);
        if (!known_shape(m, in, &r, shape)) {
            snprintf(why, cap, "the length of scan input '%s' is not known at import", in);
            return ROTOR_OK;
        }
        int64_t a = s->in_axis[k];
        if (a < -r || a >= r)
            return FLOW_FAIL(m, p, nm, err, "scan_input_axes[%d] is %lld; scan input '%s' has rank %d", k,
                             (long long)a, in, r);
        s->in_axis[k] = a < 0 ? a + r : a;
        if (s->T >= 0 && shape[s->in_axis[k]] != s->T)
            return FLOW_FAIL(m, p, nm, err, "scan input '%s' has %lld steps along axis %lld, and '%s' %lld: scan "
                             "inputs have one length", in, (long long)shape[s->in_axis[k]], (long long)s->in_axis[k],
                             p->input[s->N], (long long)s->T);
        s->T = shape[s->in_axis[k]];
        for (int d = 0, j = 0; d < r; d++)
            if (d != s->in_axis[k]) slice[j++] = shape[d];
        if (declared_shape(b->input[s->N + k], &dr, declared) && !agrees(r - 1, slice, dr, declared))
            return FLOW_FAIL(m, p, nm, err, "scan input '%s' sliced along axis %lld is %s; the body declares '%s' %s",
                             in, (long long)s->in_axis[k], dims_text(r - 1, slice, t1, sizeof t1),
                             b->input[s->N + k]->name, dims_text(dr, declared, t2, sizeof t2));
    }
    for (int k = 0; k < s->N; k++) {
        int r, dr;
        int64_t shape[OX_MAX_RANK], declared[OX_MAX_RANK];
        if (p->input[k] && known_shape(m, p->input[k], &r, shape) && declared_shape(b->input[k], &dr, declared) &&
            !agrees(r, shape, dr, declared))
            return FLOW_FAIL(m, p, nm, err, "initial state '%s' is %s; the body declares '%s' %s", p->input[k],
                             dims_text(r, shape, t1, sizeof t1), b->input[k]->name,
                             dims_text(dr, declared, t2, sizeof t2));
    }
    if (s->T < 1 || s->T > FLOW_MAX_STEPS)
        snprintf(why, cap, "its scan inputs have %lld steps; rotor unrolls 1 to %d", (long long)s->T, FLOW_MAX_STEPS);
    return ROTOR_OK;
}

/* A Scan (opset 9+) whose scan inputs have known lengths, unrolled. */
static rotor_status unroll_scan(ox_model *m, Onnx__NodeProto *p, const Onnx__GraphProto *b, bool *done, int depth,
                                rotor_error *err) {
    scan_info s;
    char nm[128], why[256];
    flat_name(m, p, nm, sizeof nm);
    rotor_status st = scan_read(m, p, b, nm, &s, why, sizeof why, err);
    if (st || why[0]) return st;
    unroll u;
    if ((st = unroll_begin(m, &u, b, s.T, err))) return st;
    final_names(&u, p, s.N, 0);
    for (int t = 0; t < s.T; t++) {
        if ((st = pass_state(m, &u, t, 0, s.N, 0, 0, (const char *const *)p->input, err))) return st;
        for (int k = 0; k < s.M; k++) { /* the slices */
            char buf[512];
            snprintf(buf, sizeof buf, "%s#%d#i", b->input[s.N + k]->name, t);
            const char *ix = own_str(m, buf), *dst = at_step(m, &u, b->input[s.N + k]->name, t);
            if (!ix || !dst || !const_int(m, ix, s.in_dir[k] ? s.T - 1 - t : t, 0)) return rotor_nomem(err);
            const char *ins[2] = {p->input[s.N + k], ix};
            Onnx__NodeProto *g = make_node(m, "Gather", ins, 2, &dst, 1);
            if (!g || !add_int_attr(m, g, "axis", s.in_axis[k], false) || !push(m, g)) return rotor_nomem(err);
        }
        if ((st = body_step(m, &u, t, depth, err))) return st;
    }
    bool rev[FLOW_MAX_SCAN];
    for (int k = 0; k < s.K; k++) rev[k] = s.out_dir[k] != 0;
    if ((st = finish(m, &u, p, s.T, s.N, 0, s.out_axis, rev, err))) return st;
    *done = true;
    return ROTOR_OK;
}

/* Opset 8's Scan: its first input is sequence_lens (optional), and every
 * state and scan input has a batch axis first; a scan input's steps are its
 * axis 1, its directions the attribute `directions`; the scan outputs are
 * [batch, steps, ...].  Read and checked as scan_read reads opset 9's, into
 * s (in_axis 1 for every scan input) and *B; sequence_lens, when given,
 * must be known and all T (the steps of every batch entry). */
static rotor_status scan8_read(ox_model *m, const Onnx__NodeProto *p, const Onnx__GraphProto *b, const char *nm,
                               scan_info *s, int64_t *B, char *why, size_t cap, rotor_error *err) {
    why[0] = '\0';
    const Onnx__AttributeProto *ns = attr(p, "num_scan_inputs");
    if (!ns || ns->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
        return FLOW_FAIL(m, p, nm, err, "attribute num_scan_inputs is missing");
    if (ns->i < 1 || ns->i > (int64_t)p->n_input - 1)
        return FLOW_FAIL(m, p, nm, err, "num_scan_inputs is %lld; the Scan has %zu inputs after sequence_lens",
                         (long long)ns->i, p->n_input ? p->n_input - 1 : 0);
    s->M = (int)ns->i;
    s->N = (int)p->n_input - 1 - s->M;
    s->K = (int)p->n_output - s->N;
    if ((int)b->n_input != s->N + s->M || b->n_output != p->n_output || s->K < 0)
        return FLOW_FAIL(m, p, nm, err, "its body has %zu inputs and %zu outputs; %d states and %d scan inputs need "
                         "%d, and its %zu outputs as many", b->n_input, b->n_output, s->N, s->M, s->N + s->M,
                         p->n_output);
    if (s->M > FLOW_MAX_SCAN || s->K > FLOW_MAX_SCAN || s->N > FLOW_MAX_SCAN) {
        snprintf(why, cap, "it has more than %d states, scan inputs or scan outputs", FLOW_MAX_SCAN);
        return ROTOR_OK;
    }
    rotor_status st = scan_list(m, p, nm, "directions", s->M, true, s->in_dir, err);
    if (st) return st;
    *B = s->T = -1;
    for (int k = 0; k < s->N + s->M; k++) {
        const char *in = p->input[1 + k];
        int r;
        int64_t shape[OX_MAX_RANK];
        if (!in || !*in) return FLOW_FAIL(m, p, nm, err, "input %d has no name", 1 + k);
        if (!known_shape(m, in, &r, shape)) {
            snprintf(why, cap, "the shape of '%s' is not known at import", in);
            return ROTOR_OK;
        }
        if (r < (k < s->N ? 1 : 2))
            return FLOW_FAIL(m, p, nm, err, "'%s' has rank %d; opset 8's Scan reads a batch axis first%s", in, r,
                             k < s->N ? "" : ", then the steps");
        if (*B >= 0 && shape[0] != *B)
            return FLOW_FAIL(m, p, nm, err, "'%s' has a batch of %lld, '%s' %lld", in, (long long)shape[0],
                             p->input[1], (long long)*B);
        *B = shape[0];
        if (k >= s->N && s->T >= 0 && shape[1] != s->T)
            return FLOW_FAIL(m, p, nm, err, "scan input '%s' has %lld steps, and '%s' %lld: scan inputs have one "
                             "length", in, (long long)shape[1], p->input[1 + s->N], (long long)s->T);
        if (k >= s->N) s->T = shape[1];
        if (k >= s->N) s->in_axis[k - s->N] = 0; /* of the batch entry's slice */
    }
    const ox_val *len = p->input[0] && *p->input[0] ? val_named(m, p->input[0]) : NULL;
    bool all = !len || (len->kind == OX_CONST && len->has_data && len->elems == *B);
    for (int64_t i = 0; len && all && i < len->elems; i++) all = ox_get_i(len, i) == s->T;
    if (!all) snprintf(why, cap, "its sequence_lens '%s' is not known to be %lld for every batch entry", p->input[0],
                       (long long)s->T);
    else if (s->T < 1 || *B < 1 || *B * s->T > FLOW_MAX_STEPS)
        snprintf(why, cap, "a batch of %lld by %lld steps; rotor unrolls 1 to %d steps", (long long)*B,
                 (long long)s->T, FLOW_MAX_STEPS);
    else if (nested(b)) snprintf(why, cap, "its body holds control flow of its own");
    return ROTOR_OK;
}

/* x's batch entry i (a Gather along axis 0) as x#b<i>. */
static const char *batch_entry(ox_model *m, const char *x, int64_t i) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s#b%lld#i", x, (long long)i);
    const char *ix = own_str(m, buf);
    snprintf(buf, sizeof buf, "%s#b%lld", x, (long long)i);
    const char *dst = own_str(m, buf), *ins[2] = {x, ix};
    if (!ix || !dst || !const_int(m, ix, i, 0)) return NULL;
    Onnx__NodeProto *g = make_node(m, "Gather", ins, 2, &dst, 1);
    return g && add_int_attr(m, g, "axis", 0, false) && push(m, g) ? dst : NULL;
}

/* An opset 8 Scan, unrolled per batch entry and step (step i T + t of
 * batch entry i), then stacked over the batch. */
static rotor_status unroll_scan8(ox_model *m, Onnx__NodeProto *p, const Onnx__GraphProto *b, bool *done, int depth,
                                 rotor_error *err) {
    scan_info s;
    int64_t B;
    char nm[128], why[256];
    flat_name(m, p, nm, sizeof nm);
    rotor_status st = scan8_read(m, p, b, nm, &s, &B, why, sizeof why, err);
    if (st || why[0]) return st;
    unroll u;
    if ((st = unroll_begin(m, &u, b, B * s.T, err))) return st;
    u.last = -1; /* the final states are stacked over the batch: no step writes the node's names */
    int n = (int)p->n_output;
    const char **per = own(m, sizeof(char *) * (size_t)(n > 0 ? n * B : 1)); /* per[k * B + i] */
    const char **init = own(m, sizeof(char *) * (size_t)(s.N + s.M + 1));
    if (!per || !init) return rotor_nomem(err);
    for (int64_t i = 0; i < B; i++) {
        for (int k = 0; k < s.N + s.M; k++)
            if (!(init[k] = batch_entry(m, p->input[1 + k], i))) return rotor_nomem(err);
        for (int64_t t = 0; t < s.T; t++) {
            int step = (int)(i * s.T + t);
            if ((st = pass_state(m, &u, step, (int)(i * s.T), s.N, 0, 0, init, err))) return st;
            for (int k = 0; k < s.M; k++) {
                char buf[512];
                snprintf(buf, sizeof buf, "%s#%d#i", b->input[s.N + k]->name, step);
                const char *ix = own_str(m, buf), *dst = at_step(m, &u, b->input[s.N + k]->name, step);
                const char *ins[2] = {init[s.N + k], ix};
                if (!ix || !dst || !const_int(m, ix, s.in_dir[k] ? s.T - 1 - t : t, 0)) return rotor_nomem(err);
                Onnx__NodeProto *g = make_node(m, "Gather", ins, 2, &dst, 1);
                if (!g || !add_int_attr(m, g, "axis", 0, false) || !push(m, g)) return rotor_nomem(err);
            }
            if ((st = body_step(m, &u, step, depth, err))) return st;
        }
        for (int k = 0; k < n; k++) { /* this entry's final states and scan outputs */
            char buf[512];
            const char *out = b->output[k]->name;
            snprintf(buf, sizeof buf, "%s#b%lld", out, (long long)i);
            per[k * B + i] = k < s.N ? at_step(m, &u, out, (int)(i * s.T + s.T - 1)) : own_str(m, buf);
            if (!per[k * B + i]) return rotor_nomem(err);
            if (k >= s.N && (st = stack(m, &u, out, i * s.T, s.T, 0, false, per[k * B + i], err))) return st;
        }
    }
    for (int k = 0; k < n; k++)
        if (p->output[k] && *p->output[k] &&
            (st = concat_unsqueezed(m, per + k * B, B, 0, false, p->output[k], 0, p->output[k], err)))
            return st;
    *done = true;
    return ROTOR_OK;
}

/* ---- Loop ---------------------------------------------------------------------------- */

/* Whether a Loop's body keeps its condition true: its condition output is
 * its condition input (itself, or by Identity), or a Constant true. */
static bool keeps_condition(const ox_model *m, const Onnx__GraphProto *b) {
    const char *cin = b->input[1]->name, *cout = b->output[0]->name;
    if (!cin || !cout) return false;
    if (!strcmp(cin, cout)) return true;
    for (size_t i = 0; i < b->n_node; i++) {
        const Onnx__NodeProto *q = b->node[i];
        if (q->n_output != 1 || !q->output[0] || strcmp(q->output[0], cout) || !q->op_type) continue;
        int64_t v;
        if (!strcmp(q->op_type, "Constant")) return constant_int(m, q, &v) && v != 0;
        return !strcmp(q->op_type, "Identity") && q->n_input == 1 && q->input[0] && !strcmp(q->input[0], cin);
    }
    return false;
}

/* What a Loop needs to unroll: its form checked (an error when invalid),
 * its trip count in *T, and *why (empty when it unrolls) what is not known
 * or not unrolled. */
static rotor_status loop_read(ox_model *m, const Onnx__NodeProto *p, const Onnx__GraphProto *b, const char *nm,
                              int64_t *T, char *why, size_t cap, rotor_error *err) {
    why[0] = '\0';
    if (p->n_input < 2)
        return FLOW_FAIL(m, p, nm, err, "it has %zu inputs; a Loop has M and cond (either may be empty), then its "
                         "carried values", p->n_input);
    int N = (int)p->n_input - 2;
    if ((int)b->n_input != N + 2)
        return FLOW_FAIL(m, p, nm, err, "its body has %zu inputs; the iteration number, the condition and %d carried "
                         "values need %d", b->n_input, N, N + 2);
    if ((int)b->n_output < N + 1 || p->n_output + 1 != b->n_output)
        return FLOW_FAIL(m, p, nm, err, "it has %zu outputs and its body %zu; the body has its condition, then one "
                         "per output of the Loop", p->n_output, b->n_output);
    int64_t c = 1;
    const char *M = p->input[0], *cond = p->input[1];
    if (nested(b)) snprintf(why, cap, "its body holds control flow of its own");
    else if (!M || !*M)
        snprintf(why, cap, "it has no trip count: it runs while its condition holds, which rotor cannot know at "
                 "import");
    else if (!known_int(m, M, T)) snprintf(why, cap, "its trip count '%s' is not known at import", M);
    else if (*T < 1 || *T > FLOW_MAX_STEPS)
        snprintf(why, cap, "its trip count is %lld; rotor unrolls 1 to %d steps", (long long)*T, FLOW_MAX_STEPS);
    else if (cond && *cond && !known_int(m, cond, &c))
        snprintf(why, cap, "its condition '%s' is not known at import", cond);
    else if (!c) snprintf(why, cap, "its condition '%s' is false: the body never runs", cond);
    else if (!keeps_condition(m, b))
        snprintf(why, cap, "its body computes its condition '%s' at each step; rotor unrolls a Loop whose body "
                 "passes the condition through or sets it to a constant true",
                 b->output[0]->name ? b->output[0]->name : "");
    return ROTOR_OK;
}

/* A Loop with a known trip count and a condition that stays true, unrolled. */
static rotor_status unroll_loop(ox_model *m, Onnx__NodeProto *p, const Onnx__GraphProto *b, bool *done, int depth,
                                rotor_error *err) {
    int64_t T;
    char nm[128], why[256];
    flat_name(m, p, nm, sizeof nm);
    rotor_status st = loop_read(m, p, b, nm, &T, why, sizeof why, err);
    if (st || why[0]) return st;
    int N = (int)p->n_input - 2;
    const char *cin = b->input[1]->name;
    unroll u;
    if ((st = unroll_begin(m, &u, b, T, err))) return st;
    final_names(&u, p, N, 1);
    for (int t = 0; t < T; t++) {
        const char *it = at_step(m, &u, b->input[0]->name, t), *cd = at_step(m, &u, cin, t);
        if (!it || !cd || !const_int(m, it, t, 0)) return rotor_nomem(err);
        /* the condition stays what it was: true */
        if (p->input[1] && *p->input[1] ? !identity(m, p->input[1], cd) : !const_int(m, cd, 1, 0)) return rotor_nomem(err);
        if (!(st = pass_state(m, &u, t, 0, N, 2, 1, (const char *const *)p->input + 2, err)))
            st = body_step(m, &u, t, depth, err);
        if (st) return st;
    }
    if ((st = finish(m, &u, p, T, N, 1, NULL, NULL, err))) return st;
    *done = true;
    return ROTOR_OK;
}

/* ---- If ----------------------------------------------------------------------------- */

/* Why an If on condition c cannot take its branch (a missing branch, or
 * one whose outputs are not the If's), or NULL. */
static const char *if_blocker(const Onnx__NodeProto *p, int64_t c, char *why, size_t cap) {
    const char *which = c ? "then_branch" : "else_branch";
    const Onnx__AttributeProto *a = attr(p, which);
    const Onnx__GraphProto *branch = a ? a->g : NULL;
    if (!branch) snprintf(why, cap, "the condition is %s, and the If has no %s", c ? "true" : "false", which);
    else if (branch->n_output != p->n_output)
        snprintf(why, cap, "its %s has %zu outputs and the If %zu", which, branch->n_output, p->n_output);
    for (size_t k = 0; branch && !why[0] && k < branch->n_output; k++)
        if (!branch->output[k]->name || !*branch->output[k]->name)
            snprintf(why, cap, "output %zu of its %s has no name", k, which);
    return why[0] ? why : NULL;
}

static rotor_status add_node(ox_model *m, Onnx__NodeProto *p, int depth, rotor_error *err) {
    /* anything malformed goes through as it is: build() names the fault */
    bool plain = p->op_type && (!p->domain || !*p->domain || !strcmp(p->domain, "ai.onnx"));
    const Onnx__AttributeProto *body = plain ? attr(p, "body") : NULL;
    if (plain && depth < FLOW_MAX_DEPTH && body && body->g && !strcmp(p->op_type, "Scan")) {
        bool done = false;
        rotor_status st = (m->opset < 9 ? unroll_scan8 : unroll_scan)(m, p, body->g, &done, depth, err);
        if (st || done) return st;
    }
    if (plain && depth < FLOW_MAX_DEPTH && body && body->g && !strcmp(p->op_type, "Loop")) {
        bool done = false;
        rotor_status st = unroll_loop(m, p, body->g, &done, depth, err);
        if (st || done) return st;
    }
    int64_t c;
    if (!plain || depth >= FLOW_MAX_DEPTH || strcmp(p->op_type, "If") || p->n_input != 1 || !p->input[0] ||
        !known_int(m, p->input[0], &c))
        return push(m, p) ? ROTOR_OK : rotor_nomem(err);
    char why[256] = "", nm[128];
    if (if_blocker(p, c, why, sizeof why)) {
        flat_name(m, p, nm, sizeof nm);
        return FLOW_FAIL(m, p, nm, err, "the If does not fold: %s", why);
    }
    const Onnx__GraphProto *branch = attr(p, c ? "then_branch" : "else_branch")->g;
    rotor_status st = add_graph(m, branch, depth + 1, err);
    for (size_t k = 0; !st && k < p->n_output; k++)
        if (p->output[k] && *p->output[k] && !identity(m, branch->output[k]->name, p->output[k])) st = rotor_nomem(err);
    return st;
}

static rotor_status add_graph(ox_model *m, const Onnx__GraphProto *g, int depth, rotor_error *err) {
    rotor_status st = ROTOR_OK;
    /* a taken If branch's initializers (the main graph's are values already) */
    for (size_t i = 0; depth > 0 && i < g->n_initializer; i++)
        if (g->initializer[i]->name && *g->initializer[i]->name &&
            !push_initializer(m, g->initializer[i], g->initializer[i]->name))
            return rotor_nomem(err);
    for (size_t i = 0; !st && i < g->n_node; i++) st = add_node(m, g->node[i], depth, err);
    return st;
}

rotor_status ox_flatten_control(ox_model *m, rotor_error *err) {
    return add_graph(m, m->proto->graph, 0, err);
}

/* ---- what shape inference learns --------------------------------------------------------- */

/* Refuses input x of node n (the If's condition, the Loop's trip count or
 * condition) for not being a known scalar, naming the graph input to give. */
static rotor_status not_known(ox_model *m, ox_node *n, const ox_val *x, const char *what, const char *give,
                              const char *rule, rotor_error *err) {
    const char *src = x->kind != OX_CONST ? ox_source_input(m, x) : NULL;
    if (src && !strcmp(src, x->name))
        NFAIL("the %s '%s' comes from graph input '%s'; %s (give it with --value %s=%s)", what, x->name, src, rule,
              src, give);
    if (src)
        NFAIL("the %s '%s' is computed at run time from graph input '%s' (give it with --value %s=...); %s", what,
              x->name, src, src, rule);
    if (x->kind == OX_CONST && x->elems != 1)
        NFAIL("the %s '%s' has %lld elements; it is a scalar", what, x->name, (long long)x->elems);
    NFAIL("the %s '%s' is computed at run time; %s (an initializer, a Constant, a --value, or what folds from them)",
          what, x->name, rule);
}

static bool known_scalar(const ox_val *x) {
    return x->kind == OX_CONST && x->has_data && x->elems == 1;
}

static rotor_status flow_if(ox_model *m, ox_node *n, rotor_error *err) {
    ox_val *c = n->nin == 1 ? ox_in(m, n, 0) : NULL;
    if (!c) NFAIL("an If has one input, its condition; this one has %d", n->nin);
    if (!known_scalar(c))
        return not_known(m, n, c, "condition", "1 or 0", "an If folds only on a condition known at import", err);
    bool fresh = false;
    if (!learn(m, c, true, &fresh)) return rotor_nomem(err);
    if (fresh) {
        m->refold = true;
        return ROTOR_OK;
    }
    char why[256] = "";
    if (!if_blocker(n->p, ox_get_i(c, 0), why, sizeof why))
        snprintf(why, sizeof why, "it lies more than %d branches deep", FLOW_MAX_DEPTH);
    NFAIL("the If does not fold: %s", why);
}

static rotor_status flow_loop(ox_model *m, ox_node *n, const Onnx__GraphProto *b, rotor_error *err) {
    static const char *const what[2] = {"trip count", "condition"}, *const give[2] = {"N", "1"};
    for (int i = 0; i < 2 && i < n->nin; i++) {
        const ox_val *x = ox_in(m, n, i);
        if (x && !known_scalar(x))
            return not_known(m, n, x, what[i], give[i], "a Loop unrolls only when its trip count and condition are "
                             "known at import", err);
    }
    int64_t T;
    char why[256];
    rotor_status st = loop_read(m, n->p, b, n->name, &T, why, sizeof why, err);
    if (st) return st;
    if (why[0]) NFAIL("the Loop is not unrolled: %s", why);
    bool fresh = false;
    for (int i = 0; i < 2 && i < n->nin; i++)
        if (ox_in(m, n, i) && !learn(m, ox_in(m, n, i), true, &fresh)) return rotor_nomem(err);
    if (fresh) {
        m->refold = true;
        return ROTOR_OK;
    }
    NFAIL("the Loop is not unrolled: it lies more than %d branches deep", FLOW_MAX_DEPTH);
}

static rotor_status flow_scan(ox_model *m, ox_node *n, const Onnx__GraphProto *b, rotor_error *err) {
    scan_info s;
    int64_t B;
    char why[256];
    bool v8 = m->opset < 9;
    rotor_status st = v8 ? scan8_read(m, n->p, b, n->name, &s, &B, why, sizeof why, err)
                         : scan_read(m, n->p, b, n->name, &s, why, sizeof why, err);
    if (st) return st;
    if (why[0]) NFAIL("the Scan is not unrolled: %s", why);
    bool fresh = false;
    for (int k = v8 ? 0 : s.N; k < s.N + s.M; k++) /* opset 8 reads every input's batch */
        if (!learn(m, ox_in(m, n, k + v8), false, &fresh)) return rotor_nomem(err);
    if (fresh) {
        m->refold = true;
        return ROTOR_OK;
    }
    NFAIL("the Scan is not unrolled: it lies more than %d branches deep", FLOW_MAX_DEPTH);
}

rotor_status ox_flow_node(ox_model *m, ox_node *n, rotor_error *err) {
    bool plain = !strcmp(n->domain, "ai.onnx");
    const Onnx__AttributeProto *body = attr(n->p, "body");
    if (plain && !strcmp(n->p->op_type, "If")) return flow_if(m, n, err);
    if (plain && body && body->g && !strcmp(n->p->op_type, "Loop")) return flow_loop(m, n, body->g, err);
    if (plain && body && body->g && !strcmp(n->p->op_type, "Scan")) return flow_scan(m, n, body->g, err);
    for (size_t a = 0; a < n->p->n_attribute; a++)
        if (n->p->attribute[a]->g || n->p->attribute[a]->n_graphs)
            NFAIL("control flow (subgraph attribute '%s') is not supported: plans need a static graph",
                  n->p->attribute[a]->name);
    return ROTOR_OK;
}
