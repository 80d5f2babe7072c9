/* vgm.c — the virtual-global-memory (load-compute-store) baseline, T10 §2.2:
 * the memory both ways of tiling share, vendor operators, and the driver.
 * vgmroller.c tiles as Roller does, vgmoracle.c searches exhaustively.
 *
 * Decisions (docs/vgm.md repeats them, with the reasons):
 *  - The VGM slice is reserved statically on every core at its peak: every
 *    weight and kv-cache value evenly (ceil(bytes / N)), plus the largest set
 *    of activations live at once, also evenly.  Sub-operators get the rest.
 *  - Vendor ops work in place on the even VGM layout: flops / (N R_vec), as
 *    in the T10 compilation, so they do not change the comparison.
 *  - Operators of the same expression, extents and element type are tiled
 *    once.
 *  - An operator over quantized integers is tiled and timed at its own
 *    element size and rate (rotor_chip_for_op), as T10's compile costs it:
 *    until 2026-12-02 the baseline took it at the chip's e and FP16 rate,
 *    and T10's speedup over it counted the int8 rate as T10's own gain.
 *  - The oracle takes, per operator, the faster of its exhaustive split and
 *    Roller's tile, so that it bounds the Roller baseline. */
#include "rotor/compile/vgm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/compile/compile.h"
#include "rotor/compile/opelem.h"
#include "rotor/model/elemtype.h"
#include "rotor/op/plan.h"
#include "vgmint.h"

const char *rotor_vgm_kind_name(rotor_vgm_kind kind) {
    return kind == ROTOR_VGM_ORACLE ? "vgm-oracle" : "vgm";
}

int64_t vgm_tile_bytes(const rotor_expr *e, int t, const int64_t *s, int64_t elem) {
    const rotor_tensor *x = &e->tensors[t];
    int64_t n = elem;
    for (int d = 0; d < x->ndims; d++) {
        int64_t len[2];
        for (int k = 0; k < x->dims[d].nterms; k++) len[k] = s[x->dims[d].axis[k]];
        n *= rotor_dim_extent(&x->dims[d], len);
    }
    return n;
}

rotor_status rotor_vgm_compile(const rotor_graph *g, const rotor_chip *chip, rotor_vgm_kind kind,
                               rotor_vgm_result *out, rotor_error *err) {
    memset(out, 0, sizeof *out);
    out->kind = kind;
    if (g->nops == 0) return rotor_fail(err, ROTOR_ERR_INPUT, "vgm: the graph '%s' has no operators", g->name);
    int64_t cores = rotor_chip_cores(chip), elem = chip->element_bytes;
    int64_t *live = malloc(sizeof(int64_t) * (size_t)g->nops);
    out->ops = calloc((size_t)g->nops, sizeof *out->ops);
    if (!live || !out->ops) {
        free(live);
        rotor_vgm_result_free(out);
        return rotor_nomem(err);
    }
    rotor_status st = rotor_compile_liveness(g, elem, cores, NULL, live, err);
    int64_t peak_live = 0, resident = 0;
    for (int o = 0; !st && o < g->nops; o++)
        if (live[o] > peak_live) peak_live = live[o];
    for (int v = 0; !st && v < g->nvalues; v++)
        if (g->values[v].role != ROTOR_ROLE_ACTIVATION)
            resident += vgm_ceil_div(g->values[v].elements * rotor_value_elem_bytes(elem, &g->values[v]), cores);
    free(live);
    out->vgm_bytes = resident + peak_live;
    out->local_bytes = rotor_chip_sram(chip) - out->vgm_bytes;
    if (!st && out->local_bytes <= 0)
        st = rotor_fail(err, ROTOR_ERR_NOFIT,
                        "vgm: the model does not fit: the VGM slice needs %lld bytes per core "
                        "(%lld of weights, %lld of live activations), the SRAM has %lld",
                        (long long)out->vgm_bytes, (long long)resident, (long long)peak_live,
                        (long long)rotor_chip_sram(chip));
    for (int o = 0; !st && o < g->nops; o++) {
        const rotor_op *op = &g->ops[o];
        rotor_vgm_op *r = &out->ops[o];
        if (op->vendor) {
            r->vendor = true;
            r->compute_s = r->total_s = op->flops / ((double)cores * rotor_chip_vector_rate(chip));
            r->predicted_s = r->total_s;
            r->op = o;
            out->vendor_s += r->total_s;
            out->total_s += r->total_s;
            continue;
        }
        /* an operator over quantized integers at its own element size and
         * rate, as T10's compile costs it (opelem.h): the comparison prices
         * both sides alike */
        rotor_op_elem d = rotor_op_elem_of(g, o);
        rotor_chip oc = rotor_chip_for_op(chip, d);
        /* repeated layers: the same shape was tiled at an earlier operator */
        int same = -1;
        for (int p = 0; p < o && same < 0; p++) {
            if (g->ops[p].vendor || strcmp(g->ops[p].expr.text, op->expr.text) != 0 ||
                memcmp(g->ops[p].expr.extent, op->expr.extent, sizeof op->expr.extent) != 0)
                continue;
            rotor_op_elem dp = rotor_op_elem_of(g, p);
            if (dp.bytes == d.bytes && dp.int8 == d.int8) same = p;
        }
        if (same >= 0) {
            *r = out->ops[same];
        } else {
            vgm_target t = {.e = &op->expr, .chip = &oc, .cores = cores, .local = out->local_bytes,
                            .elem = oc.element_bytes};
            for (int x = 0; x < op->expr.ntensors; x++) {
                int64_t n = rotor_tensor_elements(&op->expr, x), bytes;
                t.slice[x] = rotor_mul_i64(n, t.elem, &bytes) ? vgm_ceil_div(bytes, cores) : INT64_MAX / cores;
                if (t.slice[x] < 1) t.slice[x] = 1;
            }
            char name[2 * ROTOR_NAME_MAX + 8];
            snprintf(name, sizeof name, "'%s' (%s)", op->name, op->type);
            st = vgm_roller_op(&t, name, r, err);
            if (kind == ROTOR_VGM_ORACLE) {
                /* the oracle is a bound: every split, or Roller's tile where
                 * that is faster (the two spaces overlap, neither holds the
                 * other: Roller runs in waves and sees owned bytes) */
                rotor_vgm_op roller = *r;
                rotor_status rst = st;
                st = vgm_oracle_op(&t, name, r, err);
                if (!rst && (st || roller.total_s < r->total_s)) {
                    *r = roller;
                    st = ROTOR_OK;
                }
            }
            if (st) break;
        }
        r->op = o;
        out->compute_s += r->compute_s;
        out->load_s += r->load_s;
        out->store_s += r->store_s;
        out->total_s += r->total_s;
    }
    out->nops = g->nops;
    if (st) {
        rotor_vgm_result_free(out);
        out->kind = kind;
    }
    return st;
}

void rotor_vgm_result_free(rotor_vgm_result *r) {
    if (!r) return;
    free(r->ops);
    memset(r, 0, sizeof *r);
}
