/* vgmoracle.c — the VGM oracle (`--baseline vgm-oracle`): every operator's
 * split searched exhaustively against a balanced transfer model.  No VGM
 * compiler searches like this; it bounds what one could reach (docs/vgm.md,
 * "The oracle").
 *
 * Decisions:
 *  - An operator runs as prod F_op sub-operators, one per core, each in
 *    T = prod S_a rounds over tiles of extent s_a (the cost model's padding
 *    and sub-task compute, so both sides compute alike).  The tile of every
 *    tensor, inputs and output, must fit in the local memory.  Per F_op the
 *    rounds grow greedily, halving the largest tile extent, until the tile
 *    fits; the fastest F_op over every vector with prod F_op <= N wins.
 *  - Every round loads every input tile from VGM (no reuse between rounds:
 *    load-compute-store), computes, and the output tile is stored once it is
 *    complete, T_Y = prod over the output's axes of S_a times.
 *  - Transfers: a core receives its whole tile (a remote owner holds it);
 *    the `distinct` bytes read in one round lie on
 *    owners = ceil(distinct / slice) cores, each sending distinct / owners
 *    (the exchange multicasts a byte read by several cores, as in
 *    vgmroller.c).  A load takes the larger of the two over beta.  Owners
 *    are assumed perfectly balanced and the link latency is not charged:
 *    both favour the oracle.
 *  - Stores of output partial sums (F_op splitting a reduction axis) go to
 *    the same owners, which accumulate them.
 *  - A contraction needs room for one systolic tile (r x c elements) of each
 *    of its tensors; with less the baseline does not fit.
 *  - On a 2D mesh (docs/vgm.md, "On a 2D mesh") a transfer also takes no
 *    less than its share of the bisection: with readers and owners spread
 *    evenly over the mesh, a byte lies on the other side of the middle cut
 *    from a reader with probability 1/2, so of the bytes moved (a load's
 *    distinct bytes, multicast; a store's partial sums, writers x tile) at
 *    least a quarter cross the cut each way, over the min(W, H) links that
 *    cross it one way (the cut across the longer side: the bisection).  A
 *    load or store takes the larger of the port term above and
 *    bytes / 4 / (min(W, H) beta).  The port term stays, as the T10 mesh
 *    model keeps v1's terms and only adds (a mesh never prices below
 *    all-to-all); spreading evenly, a quarter (the least, when every byte
 *    has one reader) and no latency all favour the oracle, a bound a mesh
 *    can approach but a VGM compiler cannot pass. */
#include <math.h>
#include <string.h>

#include "rotor/op/cost.h"
#include "rotor/op/plan.h"
#include "vgmint.h"

typedef struct oracle_search {
    const vgm_target *t;
    double beta;
    double cut; /* on a mesh, beta x the links crossing the bisection one way; 0 on all-to-all */
    int64_t fop[ROTOR_MAX_AXES];
    bool have;
    rotor_vgm_op best;
} oracle_search;

/* Time of one load of tensor t: every reader receives its `tile`; the
 * region read, `distinct` bytes, lies evenly on its owners, each of which
 * sends its part once (the exchange multicasts, as in vgmroller.c). */
static double load_time(const oracle_search *os, int t, int64_t tile, int64_t distinct) {
    int64_t owners = vgm_ceil_div(distinct, os->t->slice[t]);
    if (owners < 1) owners = 1;
    if (owners > os->t->cores) owners = os->t->cores;
    double port = fmax((double)tile, (double)distinct / (double)owners) / os->beta;
    return os->cut > 0 ? fmax(port, (double)distinct / 4 / os->cut) : port;
}

/* Time of one store: `writers` cores each send `tile` bytes to the owners
 * of a region of `distinct` bytes, which receive every partial sum. */
static double store_time(const oracle_search *os, int64_t tile, int64_t writers, int64_t distinct) {
    int64_t owners = vgm_ceil_div(distinct, os->t->slice[0]);
    if (owners < 1) owners = 1;
    if (owners > os->t->cores) owners = os->t->cores;
    double port = fmax((double)tile, (double)writers * (double)tile / (double)owners) / os->beta;
    return os->cut > 0 ? fmax(port, (double)writers * (double)tile / 4 / os->cut) : port;
}

static void try_fop(oracle_search *os) {
    const rotor_expr *e = os->t->e;
    int64_t elem = os->t->elem;
    int64_t used = 1, steps[ROTOR_MAX_AXES], sub[ROTOR_MAX_AXES];
    for (int a = 0; a < e->naxes; a++) {
        used *= os->fop[a];
        steps[a] = 1;
        sub[a] = vgm_ceil_div(e->extent[a], os->fop[a]);
    }
    /* grow the rounds until the tiles fit: halve the largest tile extent */
    int64_t bytes;
    for (;;) {
        bytes = 0;
        for (int t = 0; t < e->ntensors; t++) bytes += vgm_tile_bytes(e, t, sub, elem);
        if (bytes <= os->t->local) break;
        int big = -1;
        for (int a = 0; a < e->naxes; a++)
            if (sub[a] > 1 && (big < 0 || sub[a] > sub[big])) big = a;
        if (big < 0) return; /* even 1-element tiles do not fit */
        steps[big] *= 2;
        int64_t unit = os->fop[big] * steps[big];
        sub[big] = vgm_ceil_div(e->extent[big], unit);
    }
    int64_t rounds = 1, out_rounds = 1;
    for (int a = 0; a < e->naxes; a++) {
        rounds *= steps[a];
        if (e->tensors[0].has_axis[a]) out_rounds *= steps[a];
    }
    double compute = (double)rounds * rotor_cost_v1_subtask(e, os->t->chip, sub);
    double load = 0;
    for (int t = 1; t < e->ntensors; t++) {
        int64_t tile = vgm_tile_bytes(e, t, sub, elem), share = 1;
        for (int a = 0; a < e->naxes; a++)
            if (!e->tensors[t].has_axis[a]) share *= os->fop[a];
        load += (double)rounds * load_time(os, t, tile, used / share * tile);
    }
    int64_t ytile = vgm_tile_bytes(e, 0, sub, elem), yshare = 1;
    for (int a = 0; a < e->naxes; a++)
        if (!e->tensors[0].has_axis[a]) yshare *= os->fop[a];
    double store = (double)out_rounds * store_time(os, ytile, used, used / yshare * ytile);
    double total = compute + load + store;
    if (os->have && total >= os->best.total_s) return;
    os->have = true;
    rotor_vgm_op *b = &os->best;
    memset(b, 0, sizeof *b);
    memcpy(b->fop, os->fop, sizeof b->fop);
    memcpy(b->steps, steps, sizeof b->steps);
    memcpy(b->tile, sub, sizeof b->tile);
    b->tasks = used;
    b->waves = 1;
    b->rounds = rounds;
    b->tile_bytes = bytes;
    b->compute_s = compute;
    b->load_s = load;
    b->store_s = store;
    b->total_s = total;
}

static void walk(oracle_search *os, int a, int64_t room) {
    const rotor_expr *e = os->t->e;
    if (a == e->naxes) {
        try_fop(os);
        return;
    }
    int64_t hi = e->extent[a] < room ? e->extent[a] : room;
    for (int64_t f = 1; f <= hi; f++) {
        os->fop[a] = f;
        walk(os, a + 1, room / f);
    }
    os->fop[a] = 1;
}

rotor_status vgm_oracle_op(const vgm_target *t, const char *name, rotor_vgm_op *r, rotor_error *err) {
    const rotor_expr *e = t->e;
    /* A contraction's sub-operator must hold one systolic tile of each of its
     * tensors (r x c elements of each 2-D slice): the array computes no
     * less, and smaller tiles are padded to it. */
    int64_t need = 0;
    if (e->op_class == ROTOR_OP_CONTRACTION)
        need = (int64_t)e->ntensors * t->chip->systolic_rows * t->chip->systolic_cols * t->elem;
    if (need > t->local)
        return rotor_fail(err, ROTOR_ERR_NOFIT,
                          "vgm: op %s needs %lld bytes per core for one systolic tile of each tensor; "
                          "the VGM leaves %lld",
                          name, (long long)need, (long long)t->local);
    oracle_search os = {.t = t, .beta = rotor_chip_link_bw(t->chip)};
    if (t->chip->topology == ROTOR_TOPO_MESH)
        os.cut = os.beta * (double)(t->chip->mesh_width < t->chip->mesh_height ? t->chip->mesh_width
                                                                                  : t->chip->mesh_height);
    for (int a = 0; a < ROTOR_MAX_AXES; a++) os.fop[a] = 1;
    walk(&os, 0, t->cores);
    if (!os.have)
        return rotor_fail(err, ROTOR_ERR_NOFIT, "vgm: op %s has no tile that fits in the %lld bytes per core the VGM leaves",
                          name, (long long)t->local);
    *r = os.best;
    return ROTOR_OK;
}
