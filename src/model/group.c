/* group.c — fusing element-wise epilogues and folding layout-only operators
 * (GraphTurbo §3.2; T10 plans the fused operator's main expression and runs
 * its epilogues on the output partitions it already holds, so they add FLOPs
 * but no operator).  docs/group.md has the rules and decisions. */
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

/* "m=32,k=64,n=16" from a bound expression. */
static void dims_text(const rotor_expr *e, char *buf, size_t cap) {
    size_t n = 0;
    buf[0] = '\0';
    for (int a = 0; a < e->naxes && n < cap; a++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s=%lld", a ? "," : "", e->axis_name[a],
                              (long long)e->extent[a]);
}

rotor_status rotor_group(const rotor_graph *g, rotor_graph *out, rotor_group_stats *stats,
                         rotor_error *err) {
    rotor_graph_init(out, g->name);
    rotor_group_stats st = {.ops_before = g->nops};
    int nv = g->nvalues, no = g->nops;
    int *alias = malloc(sizeof(int) * (size_t)(nv ? nv : 1));     /* value -> the value it stands for */
    int *root = malloc(sizeof(int) * (size_t)(no ? no : 1));      /* op -> op it fuses into, or itself */
    int *tail = malloc(sizeof(int) * (size_t)(no ? no : 1));      /* root op -> its current output value */
    int *newv = malloc(sizeof(int) * (size_t)(nv ? nv : 1));      /* value -> index in out, -1 */
    int *ins = malloc(sizeof(int) * (size_t)(nv + 1));
    bool *moved = calloc((size_t)(nv ? nv : 1), sizeof *moved);   /* value -> a folded Transpose stands between */
    if (!alias || !root || !tail || !newv || !ins || !moved) {
        free(alias), free(root), free(tail), free(newv), free(ins), free(moved);
        return rotor_nomem(err);
    }
    for (int v = 0; v < nv; v++) alias[v] = v, newv[v] = -1;

    /* pass 1: layout-only operators fold; their output stands for the input */
    for (int o = 0; o < no; o++) {
        const rotor_op *op = &g->ops[o];
        root[o] = o;
        tail[o] = op->noutputs == 1 ? op->outputs[0] : -1;
        if (is_layout(op->type) && op->noutputs == 1 && op->ninputs >= 1 &&
            g->values[op->inputs[0]].role == ROTOR_ROLE_ACTIVATION) {
            alias[op->outputs[0]] = alias[op->inputs[0]];
            moved[op->outputs[0]] = moved[op->inputs[0]] || strcmp(op->type, "Transpose") == 0;
            root[o] = -1;
            st.folded++;
        }
    }
    /* pass 2: epilogues fuse into the root that produced their input */
    for (int o = 0; o < no; o++) {
        const rotor_op *op = &g->ops[o];
        if (root[o] < 0 || !is_epilogue(op) || op->noutputs != 1) continue;
        for (int i = 0; i < op->ninputs; i++) {
            int x = alias[op->inputs[i]];
            const rotor_value *xv = &g->values[x];
            if (xv->role != ROTOR_ROLE_ACTIVATION || xv->producer < 0 || xv->is_output) continue;
            /* an epilogue keeps the shape (a GLU halving its input does not) */
            if (g->values[op->outputs[0]].elements != xv->elements) continue;
            int p = root[xv->producer];
            if (p < 0 || g->ops[p].vendor || tail[p] != x) continue;
            /* x may have no other reader (layout ops read through) */
            int readers = 0;
            for (int q = 0; q < no; q++)
                if (root[q] >= 0 || q == o)
                    for (int j = 0; j < g->ops[q].ninputs; j++)
                        if (alias[g->ops[q].inputs[j]] == x) readers++;
            bool output_alias = false;
            for (int v = 0; v < nv && !output_alias; v++)
                output_alias = alias[v] == x && g->values[v].is_output;
            if (readers != 1 || output_alias) continue;
            /* the epilogue's other inputs exist before the root runs */
            bool ready = true;
            for (int j = 0; j < op->ninputs && ready; j++) {
                if (j == i) continue;
                const rotor_value *y = &g->values[alias[op->inputs[j]]];
                ready = y->producer < p;
            }
            if (!ready) continue;
            root[o] = p;
            tail[p] = op->outputs[0];
            st.fused++;
            break;
        }
    }

    /* pass 3: emit the values that survive, then the operators in order */
    rotor_status rc = ROTOR_OK;
    for (int v = 0; v < nv && !rc; v++) {
        if (alias[v] != v) continue; /* a layout op's output */
        const rotor_value *x = &g->values[v];
        bool inner = false; /* an intermediate of a fused chain */
        if (x->producer >= 0 && root[x->producer] >= 0 && tail[root[x->producer]] >= 0)
            inner = tail[root[x->producer]] != v;
        if (inner) continue;
        rc = rotor_graph_add_value(out, x->name, x->dtype, x->rank, x->shape, x->role, &newv[v], err);
    }
    for (int v = 0; v < nv && !rc; v++) /* outputs read through a layout op stay outputs */
        if (g->values[v].is_output && newv[alias[v]] >= 0) out->values[newv[alias[v]]].is_output = true;
    for (int o = 0; o < no && !rc; o++) {
        if (root[o] != o) continue;
        const rotor_op *op = &g->ops[o];
        int nin = 0;
        double flops = op->flops;
        char fused[ROTOR_FUSED_MAX] = "";
        int nf = 0;
        for (int q = o; q < no; q++) {
            if (root[q] != o) continue;
            const rotor_op *e = &g->ops[q];
            if (q != o) {
                flops += e->flops;
                size_t len = strlen(fused);
                snprintf(fused + len, sizeof fused - len, "%s%s", nf ? "+" : "", e->type);
                nf++;
            }
            for (int i = 0; i < e->ninputs; i++) {
                int x = newv[alias[e->inputs[i]]];
                if (x < 0) continue; /* the chain's own intermediate */
                bool dup = false;
                for (int j = 0; j < nin && !dup; j++) dup = ins[j] == x;
                if (!dup) ins[nin++] = x;
            }
        }
        int outv = tail[o] >= 0 ? newv[tail[o]] : -1; /* -1: several outputs, set below */
        rotor_view view[ROTOR_MAX_TENSORS];
        memset(view, 0, sizeof view);
        rotor_op_desc d = {.name = op->name, .type = op->type, .inputs = ins, .ninputs = nin,
                           .outputs = &outv, .noutputs = 1, .view = view};
        char dims[512];
        for (int t = 0; t < ROTOR_MAX_TENSORS; t++) d.tensor_value[t] = -1;
        if (!op->vendor) {
            d.expr = op->expr.text;
            dims_text(&op->expr, dims, sizeof dims);
            d.dims = dims;
            for (int t = 0; t < op->expr.ntensors; t++) {
                int v = op->tensor_value[t];
                d.tensor_value[t] = v < 0 ? -1 : newv[alias[v]];
                /* Views: a tensor keeps its own where it reads its value as
                 * the op did.  Through folded reshapes a tensor without a
                 * view still reads row-major; through a Transpose, or with
                 * a view into a value folded away, or an output an
                 * epilogue now writes, its order is no longer recorded. */
                bool same = v >= 0 && (t == 0 ? outv < 0 || outv == newv[v] : alias[v] == v);
                if (v < 0 || same) view[t] = op->view[t];
                else view[t].unknown = op->view[t].set || op->view[t].unknown || (t > 0 && moved[v]);
            }
            if (outv >= 0) d.tensor_value[0] = outv;
        }
        int *outs = NULL;
        if (op->noutputs != 1) {
            /* several outputs (Split, TopK): never fused, copied as they are */
            outs = malloc(sizeof(int) * (size_t)op->noutputs);
            if (!outs) {
                rc = rotor_nomem(err);
                break;
            }
            for (int k = 0; k < op->noutputs; k++) outs[k] = newv[op->outputs[k]];
            d.outputs = outs;
            d.noutputs = op->noutputs;
        }
        int idx;
        rc = rotor_graph_add_op(out, &d, &idx, err);
        free(outs);
        if (!rc) {
            out->ops[idx].flops = flops;
            snprintf(out->ops[idx].fused, sizeof out->ops[idx].fused, "%s", fused);
            out->ops[idx].nfused = nf;
        }
    }
    st.ops_after = out->nops;
    if (stats) *stats = st;
    free(alias), free(root), free(tail), free(newv), free(ins), free(moved);
    return rc;
}
