/* group.c — fusing element-wise epilogues and folding layout-only operators
 * (GraphTurbo §3.2; T10 plans the fused operator's main expression and runs
 * its epilogues on the output partitions it already holds, so they add FLOPs
 * but no operator).  docs/group.md has the rules and decisions.
 *
 * rotor_group runs four passes over one shared state: fold the layout-only
 * operators, fuse the epilogues, keep the values that survive, copy the
 * operators that remain (each root's bound expression copied as it is). */
#include "rotor/model/group.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_layout(const char *type) {
    static const char *const names[] = {"Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten", "Identity"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(type, names[i]) == 0) return true;
    return false;
}

/* An element-wise operator: an expression of that class, or a vendor op of an
 * element-wise type (ONNX imports may leave broadcasting ones as vendor ops). */
static bool is_epilogue(const rotor_op *op) {
    if (!op->vendor) return op->expr.op_class == ROTOR_OP_ELEMENTWISE;
    static const char *const names[] = {"Add", "Sub", "Mul", "Div", "Relu", "Gelu", "Erf", "Tanh", "Sigmoid"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(op->type, names[i]) == 0) return true;
    return false;
}

/* What the passes share, one entry per value or operator of g. */
typedef struct grouping {
    const rotor_graph *g;
    int *alias;   /* value -> the value it stands for (itself, or a folded layout op's input) */
    bool *moved;  /* value -> a folded Transpose stands between it and its alias */
    int *root;    /* op -> the op it fuses into, itself, or -1 when folded */
    int *tail;    /* root op -> its chain's output value; -1 for several outputs */
    int *newv;    /* value -> its index in the grouped graph, or -1 */
    int *ins;     /* one grouped operator's inputs */
    int *outs;    /* one grouped operator's several outputs */
    rotor_group_stats st;
} grouping;

static void grouping_free(grouping *s) {
    free(s->alias), free(s->moved), free(s->root), free(s->tail), free(s->newv), free(s->ins), free(s->outs);
}

/* Every value stands for itself and every operator is its own root. */
static bool grouping_init(grouping *s, const rotor_graph *g) {
    size_t nv = (size_t)(g->nvalues ? g->nvalues : 1), no = (size_t)(g->nops ? g->nops : 1);
    *s = (grouping){.g = g, .st = {.ops_before = g->nops}};
    s->alias = malloc(sizeof(int) * nv);
    s->moved = calloc(nv, sizeof *s->moved);
    s->root = malloc(sizeof(int) * no);
    s->tail = malloc(sizeof(int) * no);
    s->newv = malloc(sizeof(int) * nv);
    s->ins = malloc(sizeof(int) * nv);
    s->outs = malloc(sizeof(int) * nv);
    if (!s->alias || !s->moved || !s->root || !s->tail || !s->newv || !s->ins || !s->outs) {
        grouping_free(s);
        return false;
    }
    for (int v = 0; v < g->nvalues; v++) s->alias[v] = v, s->newv[v] = -1;
    for (int o = 0; o < g->nops; o++) {
        s->root[o] = o;
        s->tail[o] = g->ops[o].noutputs == 1 ? g->ops[o].outputs[0] : -1;
    }
    return true;
}

/* Rule 1: a layout-only operator on an activation folds; its output stands
 * for its input, so its readers read the input. */
static void fold_layout_ops(grouping *s) {
    const rotor_graph *g = s->g;
    for (int o = 0; o < g->nops; o++) {
        const rotor_op *op = &g->ops[o];
        if (!is_layout(op->type) || op->noutputs != 1 || op->ninputs < 1 ||
            g->values[op->inputs[0]].role != ROTOR_ROLE_ACTIVATION)
            continue;
        int in = op->inputs[0], out = op->outputs[0];
        s->alias[out] = s->alias[in];
        s->moved[out] = s->moved[in] || strcmp(op->type, "Transpose") == 0;
        s->root[o] = -1;
        s->st.folded++;
    }
}

/* Whether epilogue o is the one reader of x among the operators that remain
 * (layout ops read through) and no model output stands for x. */
static bool sole_reader(const grouping *s, int x, int o) {
    const rotor_graph *g = s->g;
    int readers = 0;
    for (int q = 0; q < g->nops; q++)
        if (s->root[q] >= 0 || q == o)
            for (int j = 0; j < g->ops[q].ninputs; j++)
                if (s->alias[g->ops[q].inputs[j]] == x) readers++;
    if (readers != 1) return false;
    for (int v = 0; v < g->nvalues; v++)
        if (s->alias[v] == x && g->values[v].is_output) return false;
    return true;
}

/* The root that epilogue o fuses into through its input i, or -1 (rule 2's
 * conditions, as docs/group.md lists them). */
static int fuse_root(const grouping *s, int o, int i) {
    const rotor_graph *g = s->g;
    const rotor_op *op = &g->ops[o];
    int x = s->alias[op->inputs[i]];
    const rotor_value *xv = &g->values[x];
    if (xv->role != ROTOR_ROLE_ACTIVATION || xv->producer < 0 || xv->is_output) return -1;
    int p = s->root[xv->producer];
    if (p < 0 || g->ops[p].vendor || s->tail[p] != x) return -1;
    /* an epilogue keeps the shape (a GLU halving its input does not) */
    if (g->values[op->outputs[0]].elements != xv->elements) return -1;
    if (!sole_reader(s, x, o)) return -1;
    /* the epilogue's other inputs exist before the root runs */
    for (int j = 0; j < op->ninputs; j++)
        if (j != i && g->values[s->alias[op->inputs[j]]].producer >= p) return -1;
    return p;
}

/* Rule 2: an epilogue fuses into the root that produced its input (through
 * its first input that qualifies); the chain's output is now its own. */
static void fuse_epilogues(grouping *s) {
    const rotor_graph *g = s->g;
    for (int o = 0; o < g->nops; o++) {
        const rotor_op *op = &g->ops[o];
        if (s->root[o] < 0 || !is_epilogue(op) || op->noutputs != 1) continue;
        for (int i = 0; i < op->ninputs; i++) {
            int p = fuse_root(s, o, i);
            if (p < 0) continue;
            s->root[o] = p;
            s->tail[p] = op->outputs[0];
            s->st.fused++;
            break;
        }
    }
}

/* The values that survive (neither a folded operator's output nor the
 * inside of a fused chain), in order; an output read through a layout op
 * makes the value it stands for an output. */
static rotor_status keep_values(grouping *s, rotor_graph *out, rotor_error *err) {
    const rotor_graph *g = s->g;
    for (int v = 0; v < g->nvalues; v++) {
        if (s->alias[v] != v) continue;
        const rotor_value *x = &g->values[v];
        int r = x->producer >= 0 ? s->root[x->producer] : -1;
        if (r >= 0 && s->tail[r] >= 0 && s->tail[r] != v) continue;
        rotor_status rc = rotor_graph_add_value(out, x->name, x->dtype, x->rank, x->shape, x->role, &s->newv[v], err);
        if (rc) return rc;
    }
    for (int v = 0; v < g->nvalues; v++)
        if (g->values[v].is_output && !g->values[v].alias_only && s->newv[s->alias[v]] >= 0)
            out->values[s->newv[s->alias[v]]].is_output = true;
    for (int i = 0; i < g->naliases; i++) { /* output aliases follow their value */
        int nv = s->newv[s->alias[g->aliases[i].value]];
        rotor_status rc = nv >= 0 ? rotor_graph_add_output_alias(out, g->aliases[i].name, nv, err) : ROTOR_OK;
        if (rc) return rc;
    }
    return ROTOR_OK;
}

/* One root with its fused epilogues. */
typedef struct chain {
    int ninputs;                 /* in s->ins */
    double flops;                /* the root's and every epilogue's */
    char fused[ROTOR_FUSED_MAX]; /* the epilogues' types, "Add+Gelu" */
    int nfused;
} chain;

/* Root o's chain, in operator order: its inputs in the grouped graph (each
 * once, the chain's own intermediates left out), FLOPs and epilogues. */
static void gather_chain(grouping *s, int o, chain *c) {
    const rotor_graph *g = s->g;
    *c = (chain){.flops = g->ops[o].flops};
    for (int q = o; q < g->nops; q++) {
        if (s->root[q] != o) continue;
        const rotor_op *e = &g->ops[q];
        if (q != o) {
            c->flops += e->flops;
            size_t len = strlen(c->fused);
            snprintf(c->fused + len, sizeof c->fused - len, "%s%s", c->nfused ? "+" : "", e->type);
            c->nfused++;
        }
        for (int i = 0; i < e->ninputs; i++) {
            int x = s->newv[s->alias[e->inputs[i]]];
            if (x < 0) continue;
            bool dup = false;
            for (int j = 0; j < c->ninputs && !dup; j++) dup = s->ins[j] == x;
            if (!dup) s->ins[c->ninputs++] = x;
        }
    }
}

/* The grouped values root op's expression tensors name, and their views;
 * outv is the chain's output (-1: the op's own several outputs). */
static void map_tensors(const grouping *s, const rotor_op *op, int outv, int *tensor_value, rotor_view *view) {
    memset(view, 0, sizeof *view * ROTOR_MAX_TENSORS);
    for (int t = 0; t < ROTOR_MAX_TENSORS; t++) tensor_value[t] = -1;
    if (op->vendor) return;
    for (int t = 0; t < op->expr.ntensors; t++) {
        int v = op->tensor_value[t];
        tensor_value[t] = v < 0 ? -1 : s->newv[s->alias[v]];
        /* Views: a tensor keeps its own where it reads its value as the op
         * did.  Through folded reshapes a tensor without a view still reads
         * row-major; through a Transpose, or with a view into a value folded
         * away, or an output an epilogue now writes, its order is no longer
         * recorded. */
        bool same = v >= 0 && (t == 0 ? outv < 0 || outv == s->newv[v] : s->alias[v] == v);
        if (v < 0 || same) view[t] = op->view[t];
        else view[t].unknown = op->view[t].set || op->view[t].unknown || (t > 0 && s->moved[v]);
    }
    if (outv >= 0) tensor_value[0] = outv;
}

/* Copies root o into out with its chain's inputs, output and FLOPs: its
 * bound expression as it is (no print and re-parse). */
static rotor_status copy_root(grouping *s, int o, rotor_graph *out, rotor_error *err) {
    const rotor_op *op = &s->g->ops[o];
    chain c;
    gather_chain(s, o, &c);
    int outv = s->tail[o] >= 0 ? s->newv[s->tail[o]] : -1;
    rotor_view view[ROTOR_MAX_TENSORS];
    rotor_op_desc d = {.name = op->name, .type = op->type, .inputs = s->ins, .ninputs = c.ninputs,
                       .outputs = &outv, .noutputs = 1, .view = view};
    map_tensors(s, op, outv, d.tensor_value, view);
    if (op->noutputs != 1) { /* several outputs (Split, TopK): never fused, copied as they are */
        for (int k = 0; k < op->noutputs; k++) s->outs[k] = s->newv[op->outputs[k]];
        d.outputs = s->outs;
        d.noutputs = op->noutputs;
    }
    int idx;
    rotor_status rc = rotor_graph_add_bound_op(out, &d, op->vendor ? NULL : &op->expr, &idx, err);
    if (rc) return rc;
    out->ops[idx].flops = c.flops;
    snprintf(out->ops[idx].fused, sizeof out->ops[idx].fused, "%s", c.fused);
    out->ops[idx].nfused = c.nfused;
    return ROTOR_OK;
}

/* The operators that remain, in order: every root, folded epilogues in it. */
static rotor_status copy_roots(grouping *s, rotor_graph *out, rotor_error *err) {
    for (int o = 0; o < s->g->nops; o++) {
        if (s->root[o] != o) continue;
        rotor_status rc = copy_root(s, o, out, err);
        if (rc) return rc;
    }
    return ROTOR_OK;
}

rotor_status rotor_group(const rotor_graph *g, rotor_graph *out, rotor_group_stats *stats,
                         rotor_error *err) {
    rotor_graph_init(out, g->name);
    grouping s;
    if (!grouping_init(&s, g)) return rotor_nomem(err);
    fold_layout_ops(&s);
    fuse_epilogues(&s);
    rotor_status rc = keep_values(&s, out, err);
    if (!rc) rc = copy_roots(&s, out, err);
    s.st.ops_after = out->nops;
    if (stats) *stats = s.st;
    grouping_free(&s);
    return rc;
}
