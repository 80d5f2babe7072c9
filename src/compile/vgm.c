/* vgm.c — the virtual-global-memory (load-compute-store) baseline, T10 §2.2.
 *
 * Decisions (docs/vgm.md repeats them, with the reasons):
 *  - The VGM slice is reserved statically on every core at its peak: every
 *    weight and kv-cache value evenly (ceil(bytes / N)), plus the largest set
 *    of activations live at once, also evenly.  Sub-operators get the rest.
 *  - An operator runs as prod F_op sub-operators, one per core, each in
 *    T = prod S_a rounds over tiles of extent s_a (the cost model's padding
 *    and sub-task compute, so both sides compute alike).  The tile of every
 *    tensor, inputs and output, must fit in the local memory.  Per F_op the
 *    rounds grow greedily, halving the largest tile extent, until the tile
 *    fits (Roller picks the largest tile that fits); the fastest F_op wins.
 *  - Every round loads every input tile from VGM (no reuse between rounds:
 *    load-compute-store), computes, and the output tile is stored once it is
 *    complete, T_Y = prod over the output's axes of S_a times.
 *  - Transfers: a core receives its whole tile (a remote owner holds it);
 *    the owners of the region read in one round serve every reader: with
 *    `readers` cores reading `distinct` bytes spread over
 *    owners = ceil(distinct / slice) cores, an owner sends
 *    readers * tile / owners.  A transfer takes the larger of the two over
 *    beta.  This is T10's imbalanced, redundant access: small regions read by
 *    many cores pile onto few owners' links.
 *  - Stores of output partial sums (F_op splitting a reduction axis) go to
 *    the same owners, which accumulate them.
 *  - A contraction needs room for one systolic tile (r x c elements) of each
 *    of its tensors; with less the baseline does not fit (exit 1, "x" in a
 *    batch sweep) rather than run absurdly small sub-operators.
 *  - Vendor ops work in place on the even VGM layout: flops / (N R_vec), as
 *    in the T10 compilation, so they do not change the comparison. */
#include "rotor/compile/vgm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/compile/compile.h"
#include "rotor/op/cost.h"
#include "rotor/op/plan.h"

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

typedef struct vgm_search {
    const rotor_expr *e;
    const rotor_chip *chip;
    int64_t cores, local, elem;
    double beta;
    int64_t fop[ROTOR_MAX_AXES];
    int64_t slice[ROTOR_MAX_TENSORS]; /* VGM bytes per core of each tensor */
    bool have;
    rotor_vgm_op best;
} vgm_search;

/* Bytes of tensor t's tile with sub-task extents s. */
static int64_t tile_bytes(const rotor_expr *e, int t, const int64_t *s, int64_t elem) {
    const rotor_tensor *x = &e->tensors[t];
    int64_t n = elem;
    for (int d = 0; d < x->ndims; d++) {
        int64_t len[2];
        for (int k = 0; k < x->dims[d].nterms; k++) len[k] = s[x->dims[d].axis[k]];
        n *= rotor_dim_extent(&x->dims[d], len);
    }
    return n;
}

/* Time of one transfer of tensor t: `readers` cores each move `tile` bytes
 * of a region of `distinct` bytes held by its owners. */
static double transfer(const vgm_search *vs, int t, int64_t tile, int64_t readers, int64_t distinct) {
    int64_t owners = ceil_div(distinct, vs->slice[t]);
    if (owners < 1) owners = 1;
    if (owners > vs->cores) owners = vs->cores;
    double per_owner = (double)readers * (double)tile / (double)owners;
    return fmax((double)tile, per_owner) / vs->beta;
}

static void try_fop(vgm_search *vs) {
    const rotor_expr *e = vs->e;
    int64_t used = 1, steps[ROTOR_MAX_AXES], sub[ROTOR_MAX_AXES];
    for (int a = 0; a < e->naxes; a++) {
        used *= vs->fop[a];
        steps[a] = 1;
        sub[a] = ceil_div(e->extent[a], vs->fop[a]);
    }
    /* grow the rounds until the tiles fit: halve the largest tile extent */
    int64_t bytes;
    for (;;) {
        bytes = 0;
        for (int t = 0; t < e->ntensors; t++) bytes += tile_bytes(e, t, sub, vs->elem);
        if (bytes <= vs->local) break;
        int big = -1;
        for (int a = 0; a < e->naxes; a++)
            if (sub[a] > 1 && (big < 0 || sub[a] > sub[big])) big = a;
        if (big < 0) return; /* even 1-element tiles do not fit */
        steps[big] *= 2;
        int64_t unit = vs->fop[big] * steps[big];
        sub[big] = ceil_div(e->extent[big], unit);
    }
    int64_t rounds = 1, out_rounds = 1;
    for (int a = 0; a < e->naxes; a++) {
        rounds *= steps[a];
        if (e->tensors[0].has_axis[a]) out_rounds *= steps[a];
    }
    double compute = (double)rounds * rotor_cost_v1_subtask(e, vs->chip, sub);
    double load = 0;
    for (int t = 1; t < e->ntensors; t++) {
        int64_t tile = tile_bytes(e, t, sub, vs->elem), share = 1;
        for (int a = 0; a < e->naxes; a++)
            if (!e->tensors[t].has_axis[a]) share *= vs->fop[a];
        load += (double)rounds * transfer(vs, t, tile, used, used / share * tile);
    }
    int64_t ytile = tile_bytes(e, 0, sub, vs->elem), yshare = 1;
    for (int a = 0; a < e->naxes; a++)
        if (!e->tensors[0].has_axis[a]) yshare *= vs->fop[a];
    double store = (double)out_rounds * transfer(vs, 0, ytile, used, used / yshare * ytile);
    double total = compute + load + store;
    if (vs->have && total >= vs->best.total_s) return;
    vs->have = true;
    rotor_vgm_op *b = &vs->best;
    memcpy(b->fop, vs->fop, sizeof b->fop);
    memcpy(b->steps, steps, sizeof b->steps);
    b->rounds = rounds;
    b->tile_bytes = bytes;
    b->compute_s = compute;
    b->load_s = load;
    b->store_s = store;
    b->total_s = total;
}

static void walk(vgm_search *vs, int a, int64_t room) {
    if (a == vs->e->naxes) {
        try_fop(vs);
        return;
    }
    int64_t hi = vs->e->extent[a] < room ? vs->e->extent[a] : room;
    for (int64_t f = 1; f <= hi; f++) {
        vs->fop[a] = f;
        walk(vs, a + 1, room / f);
    }
    vs->fop[a] = 1;
}

rotor_status rotor_vgm_compile(const rotor_graph *g, const rotor_chip *chip, rotor_vgm_result *out,
                               rotor_error *err) {
    memset(out, 0, sizeof *out);
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
            resident += ceil_div(g->values[v].elements * elem, cores);
    free(live);
    out->vgm_bytes = resident + peak_live;
    out->local_bytes = chip->sram_bytes - out->vgm_bytes;
    if (!st && out->local_bytes <= 0)
        st = rotor_fail(err, ROTOR_ERR_NOFIT,
                        "vgm: the model does not fit: the VGM slice needs %lld bytes per core "
                        "(%lld of weights, %lld of live activations), the SRAM has %lld",
                        (long long)out->vgm_bytes, (long long)resident, (long long)peak_live,
                        (long long)chip->sram_bytes);
    for (int o = 0; !st && o < g->nops; o++) {
        const rotor_op *op = &g->ops[o];
        rotor_vgm_op *r = &out->ops[o];
        r->op = o;
        if (op->vendor) {
            r->vendor = true;
            r->compute_s = r->total_s = op->flops / ((double)cores * rotor_chip_vector_rate(chip));
            out->vendor_s += r->total_s;
            out->total_s += r->total_s;
            continue;
        }
        /* repeated layers: the same shape was costed at an earlier operator */
        int same = -1;
        for (int p = 0; p < o && same < 0; p++)
            if (!g->ops[p].vendor && strcmp(g->ops[p].expr.text, op->expr.text) == 0 &&
                memcmp(g->ops[p].expr.extent, op->expr.extent, sizeof op->expr.extent) == 0)
                same = p;
        if (same >= 0) {
            *r = out->ops[same];
            r->op = o;
        } else {
            vgm_search vs = {.e = &op->expr, .chip = chip, .cores = cores, .local = out->local_bytes,
                             .elem = elem, .beta = rotor_chip_link_bw(chip)};
            for (int t = 0; t < op->expr.ntensors; t++) {
                int64_t n = rotor_tensor_elements(&op->expr, t);
                vs.slice[t] = n > INT64_MAX / elem ? INT64_MAX / cores : ceil_div(n * elem, cores);
                if (vs.slice[t] < 1) vs.slice[t] = 1;
            }
            /* A contraction's sub-operator must hold one systolic tile of
             * each of its tensors (r x c elements of each 2-D slice): the
             * array computes no less, and smaller tiles are padded to it. */
            int64_t need = 0;
            if (op->expr.op_class == ROTOR_OP_CONTRACTION)
                need = (int64_t)op->expr.ntensors * chip->systolic_rows * chip->systolic_cols * elem;
            if (need > out->local_bytes) {
                st = rotor_fail(err, ROTOR_ERR_NOFIT,
                                "vgm: op '%s' (%s) needs %lld bytes per core for one systolic tile of "
                                "each tensor; the VGM leaves %lld",
                                op->name, op->type, (long long)need, (long long)out->local_bytes);
                break;
            }
            walk(&vs, 0, cores);
            if (!vs.have) {
                st = rotor_fail(err, ROTOR_ERR_NOFIT,
                                "vgm: op '%s' (%s) has no tile that fits in the %lld bytes per core "
                                "the VGM leaves",
                                op->name, op->type, (long long)out->local_bytes);
                break;
            }
            *r = vs.best;
            r->op = o;
        }
        out->compute_s += r->compute_s;
        out->load_s += r->load_s;
        out->store_s += r->store_s;
        out->total_s += r->total_s;
    }
    out->nops = g->nops;
    if (st) rotor_vgm_result_free(out);
    return st;
}

void rotor_vgm_result_free(rotor_vgm_result *r) {
    if (!r) return;
    free(r->ops);
    memset(r, 0, sizeof *r);
}
