/* setuppieces.c — the pieces of an operator's setup exchange, shared by the
 * replay (src/sim/replay.c) and the energy model (src/compile/energy.c);
 * include/rotor/compile/program.h states what they are. */
#include <stdlib.h>
#include <string.h>

#include "rotor/compile/program.h"
#include "rotor/op/cost.h"
#include "rotor/op/handoff.h"
#include "rotor/op/meshmap.h"
#include "rotor/op/place.h"

static rotor_status add_piece(rotor_setup_pieces *s, int64_t dst, int64_t src, int64_t bytes) {
    if (s->n == s->cap) {
        int64_t cap = s->cap ? 2 * s->cap : 256;
        int64_t(*v)[3] = realloc(s->v, (size_t)cap * sizeof *v);
        if (!v) return ROTOR_ERR_NOMEM;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n][0] = dst;
    s->v[s->n][1] = src;
    s->v[s->n][2] = bytes;
    s->n++;
    return ROTOR_OK;
}

/* rotor_handoff_walk's callback: a piece into dst from every other holder,
 * counted into the ports (in, out) and handed on. */
typedef struct collect {
    rotor_setup_visit visit;
    void *ctx;
    int64_t elem;
    int64_t *in, *out;            /* bytes per chip core: the hand-off's busiest port */
    const int64_t *pphys, *cphys; /* on a mesh, the plans' layouts (op/meshmap.h); NULL: the identity */
    int64_t n;                    /* pieces handed on */
} collect;

/* On a mesh the pieces name chip cores, and a producer's core c is not the
 * consumer's core c: what stays put is what lies on the same chip core. */
static rotor_status collect_piece(void *ctx, int64_t dst, int64_t src, int64_t elems) {
    collect *c = ctx;
    int64_t s = c->pphys ? c->pphys[src] : src, d = c->cphys ? c->cphys[dst] : dst;
    if (s == d) return ROTOR_OK;
    c->in[d] += elems * c->elem;
    c->out[s] += elems * c->elem;
    c->n++;
    return c->visit(c->ctx, d, s, elems * c->elem);
}

void rotor_setup_pieces_free(rotor_setup_pieces *s) {
    free(s->v);
    memset(s, 0, sizeof *s);
}

static rotor_status keep_piece(void *ctx, int64_t dst, int64_t src, int64_t bytes) {
    return add_piece(ctx, dst, src, bytes) ? ROTOR_ERR_NOMEM : ROTOR_OK;
}

rotor_status rotor_setup_pieces_make(const rotor_setup_consumer *con, const rotor_setup_input *in, int nin,
                                     const rotor_chip *chip, int64_t n, rotor_setup_pieces *out, rotor_error *err) {
    memset(out, 0, sizeof *out);
    int64_t count = 0;
    rotor_status st = rotor_setup_pieces_visit(con, in, nin, chip, n, keep_piece, NULL, out, &out->handed,
                                               &out->most, &count, err);
    if (st) rotor_setup_pieces_free(out);
    return st;
}

/* The hand-off inputs' pieces (collect_piece), walked from each producer's
 * placement to the consumer's (made once into *lc). */
static rotor_status walk_inputs(const rotor_setup_consumer *con, const rotor_setup_input *in, int nin, bool mesh,
                                collect *cl, rotor_place **lc, rotor_error *err) {
    int64_t *pphys = NULL;
    rotor_status st = ROTOR_OK;
    const rotor_place *c = con->place;
    for (int i = 0; i < nin && !st; i++) {
        const rotor_setup_input *src = &in[i];
        rotor_place *lp = NULL;
        rotor_handoff *h = NULL;
        const rotor_handoff *hh = src->handoff;
        if (!c && !(st = rotor_place_make(con->expr, con->plan, con->info, lc, err))) c = *lc;
        if (!st && !hh && !src->place) st = rotor_place_make(src->expr, src->plan, src->info, &lp, err);
        if (!st && !hh) st = rotor_handoff_make(src->place ? src->place : lp, &h, err);
        if (!st && !hh) hh = h;
        if (!st && mesh) { /* plan cores to chip cores */
            free(pphys);
            pphys = malloc((size_t)src->info->cores * sizeof *pphys);
            st = pphys ? rotor_mesh_map_cores(src->expr, src->chip, src->plan, src->info, pphys, err)
                       : rotor_nomem(err);
            cl->pphys = pphys;
        }
        if (!st) st = rotor_handoff_walk(hh, c, src->t, src->view, collect_piece, cl, err);
        if (st == ROTOR_ERR_NOMEM) st = rotor_nomem(err); /* the visitor's */
        rotor_handoff_free(h);
        rotor_place_free(lp);
    }
    cl->pphys = NULL;
    free(pphys);
    return st;
}

/* The rounds k in 1 .. rounds of the uniform rest with a piece (some byte
 * left for round k) from another core ((c + k) mod n is c only when n
 * divides k): each is one piece into each plan core. */
static int64_t gathered_rounds(int64_t uniform, int64_t rounds, int64_t n) {
    int64_t with = uniform / rounds > 0 ? rounds : uniform % rounds;
    return with - with / n;
}

rotor_status rotor_setup_pieces_visit(const rotor_setup_consumer *con, const rotor_setup_input *in, int nin,
                                      const rotor_chip *chip, int64_t n, rotor_setup_visit visit,
                                      rotor_setup_gather gather, void *ctx, bool *handed, int64_t *most,
                                      int64_t *count, rotor_error *err) {
    *handed = nin > 0;
    *most = 0;
    *count = 0;
    int64_t cores = con->info->cores;
    bool mesh = chip->topology == ROTOR_TOPO_MESH;
    rotor_place *lc = NULL;
    /* the chip cores of the plans' cores: the identity but on a mesh (op/meshmap.h) */
    int64_t *cphys = malloc((size_t)cores * sizeof *cphys);
    collect cl = {.visit = visit, .ctx = ctx, .elem = con->chip->element_bytes}; /* the consumer's (opelem.h) */
    cl.in = nin > 0 ? calloc((size_t)n, sizeof *cl.in) : NULL;
    cl.out = nin > 0 ? calloc((size_t)n, sizeof *cl.out) : NULL;
    rotor_status st = cphys && (nin == 0 || (cl.in && cl.out))
                          ? rotor_mesh_map_cores(con->expr, con->chip, con->plan, con->info, cphys, err)
                          : rotor_nomem(err);
    if (mesh) cl.cphys = cphys;
    if (!st) st = walk_inputs(con, in, nin, mesh, &cl, &lc, err);
    rotor_place_free(lc);
    /* on a mesh every setup is one exchange of pieces, gathers included
     * (rotor_mesh_exchange schedules it over the links) */
    if (mesh && con->setup_bytes > 0) *handed = true;
    /* the hand-off's busiest port, in or out */
    for (int64_t c = 0; !st && cl.in && c < n; c++) {
        if (cl.in[c] > *most) *most = cl.in[c];
        if (cl.out[c] > *most) *most = cl.out[c];
    }
    free(cl.in);
    free(cl.out);
    if (!st && *handed) {
        /* the rest of the setup joins the same exchange: round k into c from
         * (c + k) mod n, as a gather without a hand-off sends it (on a mesh
         * from the core k hops away, rotor_mesh_near) */
        int64_t uniform = con->setup_bytes - *most, rounds = con->setup_rounds;
        if (gather && !mesh && rounds > 0 && n > 1 && uniform > 0 && cores <= n) {
            gather(ctx, cores, uniform, rounds);
            cl.n += cores * gathered_rounds(uniform, rounds, n);
        } else if (rounds > 0 && n > 1)
            for (int64_t c = 0; !st && uniform > 0 && c < cores; c++)
                for (int64_t k = 1; !st && k <= rounds; k++) {
                    int64_t piece = rotor_gather_piece(uniform, rounds, k), d = cphys[c];
                    int64_t s = mesh ? rotor_mesh_near(chip, d, k) : (c + k) % n;
                    if (piece > 0 && s != d) {
                        cl.n++;
                        st = visit(ctx, d, s, piece);
                        if (st == ROTOR_ERR_NOMEM) st = rotor_nomem(err);
                    }
                }
    }
    free(cphys);
    *count = cl.n;
    return st;
}

/* Operator op's consumer and inputs, as the program records them: the
 * chips into cchip and pchip (kept by the caller while con and in are);
 * with a placer, their placements and the inputs' hand-offs (the consumer
 * first, as walk_inputs makes them; *st the placer's error). */
static int program_setup(const rotor_program *p, int op, const rotor_chip *chip, rotor_setup_placer placer,
                         void *pctx, rotor_chip *cchip, rotor_chip *pchip, rotor_setup_consumer *con,
                         rotor_setup_input *in, rotor_status *st, rotor_error *err) {
    *st = ROTOR_OK;
    const rotor_program_op *po = &p->ops[op];
    *cchip = rotor_chip_for_op(chip, po->elem);
    *con = (rotor_setup_consumer){.expr = &po->expr, .plan = &po->active, .info = &po->active_info, .chip = cchip,
                                  .setup_bytes = po->setup_bytes, .setup_rounds = po->setup_rounds};
    int nin = 0;
    for (int t = 1; t < po->expr.ntensors; t++) {
        int from = po->handoff[t] - 1;
        if (from < 0 || from >= op) continue; /* none (the reader admits only earlier operators) */
        const rotor_program_op *src = &p->ops[from];
        pchip[nin] = rotor_chip_for_op(chip, src->elem);
        in[nin] = (rotor_setup_input){.expr = &src->expr, .plan = &src->active, .info = &src->active_info,
                                      .chip = &pchip[nin], .view = &po->handoff_view[t], .t = t};
        if (placer && !nin && (*st = placer(pctx, op, &con->place, NULL, err))) return 0;
        if (placer && (*st = placer(pctx, from, &in[nin].place, &in[nin].handoff, err))) return 0;
        nin++;
    }
    return nin;
}

rotor_status rotor_setup_pieces_of(const rotor_program *p, int op, const rotor_chip *chip, int64_t n,
                                   rotor_setup_pieces *out, rotor_error *err) {
    rotor_chip cchip, pchip[ROTOR_MAX_TENSORS];
    rotor_setup_consumer con;
    rotor_setup_input in[ROTOR_MAX_TENSORS];
    rotor_status st;
    int nin = program_setup(p, op, chip, NULL, NULL, &cchip, pchip, &con, in, &st, err);
    return rotor_setup_pieces_make(&con, in, nin, chip, n, out, err);
}

rotor_status rotor_setup_pieces_visit_of(const rotor_program *p, int op, const rotor_chip *chip, int64_t n,
                                         rotor_setup_placer placer, void *pctx, rotor_setup_visit visit,
                                         rotor_setup_gather gather, void *ctx, int64_t *count, rotor_error *err) {
    rotor_chip cchip, pchip[ROTOR_MAX_TENSORS];
    rotor_setup_consumer con;
    rotor_setup_input in[ROTOR_MAX_TENSORS];
    *count = 0;
    rotor_status st;
    int nin = program_setup(p, op, chip, placer, pctx, &cchip, pchip, &con, in, &st, err);
    if (st) return st;
    bool handed;
    int64_t most;
    st = rotor_setup_pieces_visit(&con, in, nin, chip, n, visit, gather, ctx, &handed, &most, count, err);
    if (!handed) *count = 0;
    return st;
}
