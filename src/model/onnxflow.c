/* onnxflow.c — control flow known at import time, folded into a static
 * graph (issue 20; docs/onnx.md, "Control flow").
 *
 * A plan needs a static graph, so:
 *  - an If whose condition is known (an initializer, a value bound with
 *    --value, or a Constant node's output) is replaced by the branch it
 *    takes (its nodes may read outer values by name, as ONNX scoping
 *    allows) and an Identity per output carries the branch's outputs to the
 *    If's;
 *  - a Scan (opset 9 and later) over inputs whose length along the scan
 *    axis is known (a graph input's declared shape, or an initializer's) is
 *    unrolled: per step, a Gather takes each scan input's slice, the body's
 *    nodes are copied with every body-local name suffixed "#t", the state
 *    passes from step to step by Identity, and each scan output is stacked
 *    with Unsqueeze and Concat along its axis;
 *  - a Loop with a known trip count, whose condition is known true and
 *    which its body passes through unchanged (or sets to a constant true),
 *    is unrolled the same way: the iteration number is a Constant per step,
 *    and scan outputs stack along axis 0.
 * An If nested in a branch folds in turn (to depth 16); a Loop or Scan
 * body holding control flow of its own is not unrolled.  Anything else
 * stays as it is and is refused by the shape pass with its reason: an If
 * on a run-time condition names the graph input to bind; a Loop or Scan
 * names its subgraph. */
#include "onnxir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The value of integer scalar `name` if it is known now, in *v. */
static bool known_int(ox_model *m, const char *name, int64_t *v) {
    for (int i = 0; i < m->nvals; i++) /* an initializer or a bound --value */
        if (m->vals[i].name && !strcmp(m->vals[i].name, name)) {
            if (m->vals[i].kind != OX_CONST || !m->vals[i].has_data || m->vals[i].elems != 1) return false;
            *v = (int64_t)ox_get(&m->vals[i], 0);
            return true;
        }
    for (int i = 0; i < m->nflat; i++) { /* a Constant node already placed */
        const Onnx__NodeProto *p = m->flat[i];
        if (!p->op_type || strcmp(p->op_type, "Constant") || p->n_output != 1 || !p->output[0] ||
            strcmp(p->output[0], name))
            continue;
        const Onnx__AttributeProto *a = attr(p, "value");
        if (!a || !a->t) return false;
        ox_val tmp;
        memset(&tmp, 0, sizeof tmp);
        rotor_error e2;
        if (ox_decode_tensor(m, a->t, &tmp, "constant", &e2)) return false;
        bool ok = tmp.has_data && tmp.elems == 1;
        if (ok) *v = (int64_t)ox_get(&tmp, 0);
        ox_free_data(&tmp);
        return ok;
    }
    return false;
}

/* The declared shape of a graph input or an initializer called name. */
static bool known_shape(const ox_model *m, const char *name, int *rank, int64_t *shape) {
    const Onnx__GraphProto *g = m->proto->graph;
    for (size_t i = 0; i < g->n_initializer; i++)
        if (g->initializer[i]->name && !strcmp(g->initializer[i]->name, name)) {
            if (g->initializer[i]->n_dims > OX_MAX_RANK) return false;
            *rank = (int)g->initializer[i]->n_dims;
            for (int d = 0; d < *rank; d++) shape[d] = g->initializer[i]->dims[d];
            return true;
        }
    for (size_t i = 0; i < g->n_input; i++) {
        const Onnx__ValueInfoProto *vi = g->input[i];
        if (!vi->name || strcmp(vi->name, name)) continue;
        const Onnx__TypeProto *tp = vi->type;
        if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type ||
            !tp->tensor_type->shape || tp->tensor_type->shape->n_dim > OX_MAX_RANK)
            return false;
        *rank = (int)tp->tensor_type->shape->n_dim;
        for (int d = 0; d < *rank; d++) {
            const Onnx__TensorShapeProto__Dimension *dm = tp->tensor_type->shape->dim[d];
            if (dm->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) return false;
            shape[d] = dm->dim_value;
        }
        return true;
    }
    return false;
}

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

/* The names local to a body: its inputs and every name its nodes write. */
static const char **body_locals(ox_model *m, const Onnx__GraphProto *b, int *n) {
    int cap = (int)b->n_input;
    for (size_t i = 0; i < b->n_node; i++) cap += (int)b->node[i]->n_output;
    const char **v = own(m, sizeof(char *) * (size_t)(cap ? cap : 1));
    if (!v) return NULL;
    *n = 0;
    for (size_t i = 0; i < b->n_input; i++)
        if (b->input[i]->name) v[(*n)++] = b->input[i]->name;
    for (size_t i = 0; i < b->n_node; i++)
        for (size_t k = 0; k < b->node[i]->n_output; k++)
            if (b->node[i]->output[k] && *b->node[i]->output[k]) v[(*n)++] = b->node[i]->output[k];
    return v;
}

/* name#t for a body-local name, else the name itself. */
static const char *at_step(ox_model *m, const char *name, const char *const *locals, int nloc, int t) {
    if (!name || !*name || !in_list(locals, nloc, name)) return name;
    char buf[512];
    snprintf(buf, sizeof buf, "%s#%d", name, t);
    return own_str(m, buf);
}

/* The body's nodes at step t, body-local names suffixed. */
static rotor_status body_step(ox_model *m, const Onnx__GraphProto *b, const char *const *loc, int nloc, int t,
                              int depth, rotor_error *err) {
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
            if (!(q->input[k] = (char *)at_step(m, p->input[k], loc, nloc, t))) return rotor_nomem(err);
        for (size_t k = 0; k < p->n_output; k++)
            if (!(q->output[k] = (char *)at_step(m, p->output[k], loc, nloc, t))) return rotor_nomem(err);
        Onnx__GraphProto one = {.n_node = 1, .node = &q};
        rotor_status st = add_graph(m, &one, depth + 1, err);
        if (st) return st;
    }
    return ROTOR_OK;
}

/* Stacks out#0 .. out#(T-1) along axis into dst: Unsqueeze each, Concat. */
static rotor_status stack(ox_model *m, const char *out, const char *const *loc, int nloc, int64_t T, int64_t axis,
                          const char *dst, rotor_error *err) {
    const char **parts = own(m, sizeof(char *) * (size_t)T);
    if (!parts) return rotor_nomem(err);
    for (int t = 0; t < T; t++) {
        char buf[512];
        const char *src = at_step(m, out, loc, nloc, t);
        snprintf(buf, sizeof buf, "%s#%d#u", out, t);
        const char *u = own_str(m, buf);
        if (!src || !u) return rotor_nomem(err);
        Onnx__NodeProto *p;
        if (m->opset >= 13) { /* axes as an input */
            snprintf(buf, sizeof buf, "%s#%d#ax", out, t);
            const char *ax = own_str(m, buf);
            if (!ax || !const_int(m, ax, axis, 1)) return rotor_nomem(err);
            const char *ins[2] = {src, ax};
            p = make_node(m, "Unsqueeze", ins, 2, &u, 1);
        } else {
            p = make_node(m, "Unsqueeze", &src, 1, &u, 1);
            if (p && !add_int_attr(m, p, "axes", axis, true)) p = NULL;
        }
        if (!p || !push(m, p)) return rotor_nomem(err);
        parts[t] = u;
    }
    Onnx__NodeProto *c = make_node(m, "Concat", parts, (int)T, &dst, 1);
    if (!c || !add_int_attr(m, c, "axis", axis, false) || !push(m, c)) return rotor_nomem(err);
    return ROTOR_OK;
}

/* The carried state at step t: body input in0 + k gets the node's input
 * init[k] at step 0, then the body's output out0 + k of the step before. */
static rotor_status pass_state(ox_model *m, const Onnx__GraphProto *b, const char *const *loc, int nloc, int t,
                               int n, int in0, int out0, char *const *init, rotor_error *err) {
    for (int k = 0; k < n; k++) {
        const char *dst = at_step(m, b->input[in0 + k]->name, loc, nloc, t);
        const char *src = t ? at_step(m, b->output[out0 + k]->name, loc, nloc, t - 1) : init[k];
        if (!dst || !src || !identity(m, src, dst)) return rotor_nomem(err);
    }
    return ROTOR_OK;
}

/* The node's outputs after T steps: the first n are the final state (body
 * output out0 + k of the last step), the rest the body's scan outputs
 * stacked along their axis (axes[k - n], or 0 without the attribute). */
static rotor_status finish(ox_model *m, const Onnx__NodeProto *p, const Onnx__GraphProto *b, const char *const *loc,
                           int nloc, int64_t T, int n, int out0, const Onnx__AttributeProto *axes, rotor_error *err) {
    for (int k = 0; k < (int)p->n_output; k++) {
        if (!p->output[k] || !*p->output[k]) continue;
        rotor_status st = ROTOR_OK;
        if (k < n) {
            const char *src = at_step(m, b->output[out0 + k]->name, loc, nloc, (int)T - 1);
            if (!src || !identity(m, src, p->output[k])) st = rotor_nomem(err);
        } else {
            int64_t ax = axes && k - n < (int)axes->n_ints ? axes->ints[k - n] : 0;
            st = stack(m, b->output[out0 + k]->name, loc, nloc, T, ax < 0 ? 0 : ax, p->output[k], err);
        }
        if (st) return st;
    }
    return ROTOR_OK;
}

/* A Scan (opset 9+) whose scan inputs have known lengths, unrolled. */
static rotor_status unroll_scan(ox_model *m, Onnx__NodeProto *p, const Onnx__GraphProto *b, bool *done, int depth,
                                rotor_error *err) {
    const Onnx__AttributeProto *ns = attr(p, "num_scan_inputs");
    int M = ns ? (int)ns->i : 0, N = (int)p->n_input - M;
    if (m->opset < 9 || M < 1 || N < 0 || (int)b->n_input != N + M || (int)b->n_output < N ||
        (int)p->n_output != (int)b->n_output || nested(b))
        return ROTOR_OK;
    const Onnx__AttributeProto *in_ax = attr(p, "scan_input_axes"), *in_dir = attr(p, "scan_input_directions"),
                               *out_ax = attr(p, "scan_output_axes"), *out_dir = attr(p, "scan_output_directions");
    for (int k = 0; in_dir && k < (int)in_dir->n_ints; k++)
        if (in_dir->ints[k]) return ROTOR_OK; /* reversed scans stay refused */
    for (int k = 0; out_dir && k < (int)out_dir->n_ints; k++)
        if (out_dir->ints[k]) return ROTOR_OK;
    int64_t T = -1, axes[OX_MAX_RANK * 2];
    for (int k = 0; k < M; k++) {
        int rank;
        int64_t shape[OX_MAX_RANK];
        if (!p->input[N + k] || !known_shape(m, p->input[N + k], &rank, shape)) return ROTOR_OK;
        int64_t ax = in_ax && k < (int)in_ax->n_ints ? in_ax->ints[k] : 0;
        if (ax < 0) ax += rank;
        if (ax < 0 || ax >= rank || (T >= 0 && shape[ax] != T) || k >= OX_MAX_RANK * 2) return ROTOR_OK;
        T = shape[ax];
        axes[k] = ax;
    }
    if (T < 1 || T > 4096) return ROTOR_OK;
    int nloc;
    const char **loc = body_locals(m, b, &nloc);
    if (!loc) return rotor_nomem(err);
    for (int t = 0; t < T; t++) {
        rotor_status st = pass_state(m, b, loc, nloc, t, N, 0, 0, p->input, err);
        if (st) return st;
        for (int k = 0; k < M; k++) { /* the slices */
            char buf[512];
            snprintf(buf, sizeof buf, "%s#%d#i", b->input[N + k]->name, t);
            const char *ix = own_str(m, buf), *dst = at_step(m, b->input[N + k]->name, loc, nloc, t);
            if (!ix || !dst || !const_int(m, ix, t, 0)) return rotor_nomem(err);
            const char *ins[2] = {p->input[N + k], ix};
            Onnx__NodeProto *g = make_node(m, "Gather", ins, 2, &dst, 1);
            if (!g || !add_int_attr(m, g, "axis", axes[k], false) || !push(m, g)) return rotor_nomem(err);
        }
        if ((st = body_step(m, b, loc, nloc, t, depth, err))) return st;
    }
    rotor_status st = finish(m, p, b, loc, nloc, T, N, 0, out_ax, err);
    if (st) return st;
    *done = true;
    return ROTOR_OK;
}

/* A Loop with a known trip count and a condition that stays true, unrolled. */
static rotor_status unroll_loop(ox_model *m, Onnx__NodeProto *p, const Onnx__GraphProto *b, bool *done, int depth,
                                rotor_error *err) {
    int64_t T, c = 1;
    int N = (int)p->n_input - 2; /* carried values */
    if (N < 0 || !p->input[0] || !*p->input[0] || !known_int(m, p->input[0], &T) || T < 1 || T > 4096) return ROTOR_OK;
    if (p->input[1] && *p->input[1] && (!known_int(m, p->input[1], &c) || !c)) return ROTOR_OK;
    if ((int)b->n_input != N + 2 || (int)b->n_output < N + 1 || (int)p->n_output != (int)b->n_output - 1 || nested(b))
        return ROTOR_OK;
    /* the body's condition: its input passed through, or a constant true */
    const char *cin = b->input[1]->name, *cout = b->output[0]->name;
    bool keeps = cin && cout && !strcmp(cin, cout);
    for (size_t i = 0; !keeps && cin && cout && i < b->n_node; i++) {
        const Onnx__NodeProto *q = b->node[i];
        if (q->n_output != 1 || !q->output[0] || strcmp(q->output[0], cout) || !q->op_type) continue;
        keeps = !strcmp(q->op_type, "Identity") && q->n_input == 1 && q->input[0] && !strcmp(q->input[0], cin);
    }
    if (!keeps) return ROTOR_OK;
    int nloc;
    const char **loc = body_locals(m, b, &nloc);
    if (!loc) return rotor_nomem(err);
    for (int t = 0; t < T; t++) {
        const char *it = at_step(m, b->input[0]->name, loc, nloc, t), *cd = at_step(m, cin, loc, nloc, t);
        if (!it || !cd || !const_int(m, it, t, 0)) return rotor_nomem(err);
        /* the condition stays what it was: true */
        if (p->input[1] && *p->input[1] ? !identity(m, p->input[1], cd) : !const_int(m, cd, 1, 0)) return rotor_nomem(err);
        rotor_status st = pass_state(m, b, loc, nloc, t, N, 2, 1, p->input + 2, err);
        if (!st) st = body_step(m, b, loc, nloc, t, depth, err);
        if (st) return st;
    }
    rotor_status st = finish(m, p, b, loc, nloc, T, N, 1, NULL, err);
    if (st) return st;
    *done = true;
    return ROTOR_OK;
}

static rotor_status add_node(ox_model *m, Onnx__NodeProto *p, int depth, rotor_error *err) {
    /* anything malformed goes through as it is: build() names the fault */
    bool plain = p->op_type && (!p->domain || !*p->domain || !strcmp(p->domain, "ai.onnx"));
    const Onnx__AttributeProto *body = plain ? attr(p, "body") : NULL;
    if (plain && depth < 16 && body && body->g && !strcmp(p->op_type, "Scan")) {
        bool done = false;
        rotor_status st = unroll_scan(m, p, body->g, &done, depth, err);
        if (st || done) return st;
    }
    if (plain && depth < 16 && body && body->g && !strcmp(p->op_type, "Loop")) {
        bool done = false;
        rotor_status st = unroll_loop(m, p, body->g, &done, depth, err);
        if (st || done) return st;
    }
    int64_t c;
    if (!plain || depth >= 16 || strcmp(p->op_type, "If") || p->n_input != 1 || !p->input[0] ||
        !known_int(m, p->input[0], &c))
        return push(m, p) ? ROTOR_OK : rotor_nomem(err);
    const Onnx__AttributeProto *a = attr(p, c ? "then_branch" : "else_branch");
    const Onnx__GraphProto *branch = a ? a->g : NULL;
    bool named = branch && branch->n_output == p->n_output;
    for (size_t k = 0; named && k < branch->n_output; k++) named = branch->output[k]->name != NULL;
    if (!named) return push(m, p) ? ROTOR_OK : rotor_nomem(err);
    rotor_status st = add_graph(m, branch, depth + 1, err);
    for (size_t k = 0; !st && k < p->n_output; k++)
        if (p->output[k] && *p->output[k] && !identity(m, branch->output[k]->name, p->output[k])) st = rotor_nomem(err);
    return st;
}

static rotor_status add_graph(ox_model *m, const Onnx__GraphProto *g, int depth, rotor_error *err) {
    rotor_status st = ROTOR_OK;
    for (size_t i = 0; !st && i < g->n_node; i++) st = add_node(m, g->node[i], depth, err);
    return st;
}

rotor_status ox_flatten_control(ox_model *m, rotor_error *err) {
    return add_graph(m, m->proto->graph, 0, err);
}
