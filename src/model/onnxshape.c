/* onnxshape.c — shape inference for every node, in sorted order
 * (docs/onnx.md): rotor infers shapes itself rather than read value_info,
 * which exports often leave out or symbolic.  Each node is bound to its
 * row of the operator registry (onnxops.c), whose rule lives with its
 * family: onnxelem.c (element-wise, constants, reductions), onnxnn.c
 * (contractions, convolution, pooling, normalisation), onnxlayout.c
 * (reshaping, slicing, gathering and kin), onnxms.c (com.microsoft).  The
 * helpers every rule uses are in onnxval.c. */
#include "onnxops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- dispatch ------------------------------------------------------------------------ */

/* Pass 1: infer and fold, in topological order. */
rotor_status ox_infer_all(ox_model *m, rotor_error *err) {
    for (int oi = 0; oi < m->nnodes; oi++) {
        ox_node *n = &m->nodes[m->order[oi]];
        if (n->duplicate) {
            n->folded = true;
            continue;
        }
        bool ms = !strcmp(n->domain, "com.microsoft") || !strcmp(n->domain, "ai.onnx.preview.training");
        if (strcmp(n->domain, "ai.onnx") != 0 && !ms)
            return ox_node_fail(m, n, err, ROTOR_ERR_INPUT, "operators outside the default ONNX domain, "
                                "com.microsoft and ai.onnx.preview.training are not supported");
        /* control flow the flattening left: learned from, or refused (onnxflow.c) */
        bool sub = !strcmp(n->p->op_type, "If");
        for (size_t a = 0; a < n->p->n_attribute; a++) sub |= n->p->attribute[a]->g || n->p->attribute[a]->n_graphs;
        if (sub) {
            rotor_status st = ox_flow_node(m, n, err);
            if (st || m->refold) return st;
        }
        n->def = ox_op_find(n->domain, n->p->op_type, m->opset);
        if (!n->def) return ox_node_fail(m, n, err, ROTOR_ERR_INPUT, "operator is not supported by rotor's importer");
        for (int k = 0; k < n->nin; k++) {
            ox_val *x = ox_in(m, n, k);
            if (x && x->kind == OX_UNDEF)
                return ox_node_fail(m, n, err, ROTOR_ERR_INPUT, "input '%s' has no known shape", x->name);
        }
        rotor_status st = ox_schema_check(m, n, err);
        if (!st) st = n->def->infer(m, n, err);
        if (!st) st = ox_schema_check_outputs(m, n, err);
        if (st) return st;
        bool allc = true, param = false;
        for (int k = 0; k < n->nin; k++) {
            ox_val *x = ox_in(m, n, k);
            if (x && x->kind != OX_CONST) allc = false;
            param |= x && x->param && !ox_is_setting(n, k);
        }
        /* a float value computed from a parameter is computed at run time,
         * so that the parameter's gradient flows through the node (a
         * Transpose of a tied weight, an Expand, a Gather of its rows): until
         * 2026-12-03 it folded into a constant of its own, which training
         * took as a separate parameter (found by an audit helper) */
        for (int k = 0; k < n->nout && param && allc; k++) {
            ox_val *o = ox_out(m, n, k);
            if (o && ox_is_float_type(o->onnx_type)) allc = false;
        }
        /* random generators are not constants even with constant inputs */
        if (n->def->flags & OX_RANDOM) allc = false;
        bool folded = true;
        for (int k = 0; k < n->nout; k++) {
            ox_val *o = ox_out(m, n, k);
            if (!o) continue;
            if (o->kind == OX_UNDEF) o->kind = allc ? OX_CONST : OX_ACT;
            if (o->kind == OX_ACT && o->has_data) ox_free_data(o); /* computed by the rule, not folded */
            if (o->kind != OX_CONST) folded = false;
        }
        n->folded = folded;
        if (folded) m->stats.folded++;
    }
    return ROTOR_OK;
}
