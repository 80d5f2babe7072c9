/* setuppieces.c — the pieces of an operator's setup exchange, shared by the
 * replay (src/sim/replay.c) and the energy model (src/compile/energy.c);
 * include/rotor/compile/program.h states what they are. */
#include <stdlib.h>
#include <string.h>

#include "rotor/compile/program.h"
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

/* rotor_handoff_sources' callback: a piece into dst from every other holder. */
typedef struct collect {
    rotor_setup_pieces *s;
    int64_t dst, elem;
} collect;

static rotor_status collect_piece(void *ctx, int64_t src, int64_t elems) {
    collect *c = ctx;
    return src == c->dst ? ROTOR_OK : add_piece(c->s, c->dst, src, elems * c->elem);
}

void rotor_setup_pieces_free(rotor_setup_pieces *s) {
    free(s->v);
    memset(s, 0, sizeof *s);
}

rotor_status rotor_setup_pieces_of(const rotor_program *p, int op, const rotor_chip *chip, int64_t n,
                                   rotor_setup_pieces *out, rotor_error *err) {
    memset(out, 0, sizeof *out);
    const rotor_program_op *po = &p->ops[op];
    int64_t cores = po->active_info.cores;
    rotor_place *lc = NULL;
    collect cl = {.s = out, .elem = rotor_chip_for_op(chip, po->elem).element_bytes}; /* the consumer's (opelem.h) */
    /* the chip cores of the plans' cores: the identity but on a mesh (op/meshmap.h) */
    rotor_chip cchip = rotor_chip_for_op(chip, po->elem);
    int64_t *cphys = malloc((size_t)cores * sizeof *cphys), *pphys = NULL;
    rotor_status st = cphys ? rotor_mesh_map_cores(&po->expr, &cchip, &po->active, &po->active_info, cphys, err)
                            : rotor_nomem(err);
    for (int t = 1; t < po->expr.ntensors && !st; t++) {
        int from = po->handoff[t] - 1;
        if (from < 0 || from >= op) continue; /* none (the reader admits only earlier operators) */
        out->handed = true;
        const rotor_program_op *src = &p->ops[from];
        rotor_place *lp = NULL;
        rotor_handoff *h = NULL;
        if (!lc) st = rotor_place_make(&po->expr, &po->active, &po->active_info, &lc, err);
        if (!st) st = rotor_place_make(&src->expr, &src->active, &src->active_info, &lp, err);
        if (!st) st = rotor_handoff_make(lp, &h, err);
        int64_t first = out->n;
        for (int64_t c = 0; c < cores && !st; c++) {
            int64_t lo[ROTOR_MAX_DIMS], hi[ROTOR_MAX_DIMS];
            if (!rotor_handoff_need(lc, t, c, lo, hi)) continue;
            cl.dst = c;
            rotor_handoff_set set;
            rotor_handoff_map(h, &po->handoff_view[t], po->expr.tensors[t].ndims, lo, hi, &set);
            if (rotor_handoff_sources(h, &set, collect_piece, &cl)) st = rotor_nomem(err);
        }
        if (!st && chip->topology == ROTOR_TOPO_MESH) { /* plan cores to chip cores */
            rotor_chip pchip = rotor_chip_for_op(chip, src->elem);
            free(pphys);
            pphys = malloc((size_t)src->active_info.cores * sizeof *pphys);
            st = pphys ? rotor_mesh_map_cores(&src->expr, &pchip, &src->active, &src->active_info, pphys, err)
                       : rotor_nomem(err);
            int64_t kept = first; /* a piece whose holder is its receiver's core stays put */
            for (int64_t k = first; !st && k < out->n; k++) {
                int64_t d = cphys[out->v[k][0]], s = pphys[out->v[k][1]];
                if (d == s) continue;
                out->v[kept][0] = d;
                out->v[kept][1] = s;
                out->v[kept++][2] = out->v[k][2];
            }
            if (!st) out->n = kept;
        }
        rotor_handoff_free(h);
        rotor_place_free(lp);
    }
    rotor_place_free(lc);
    free(pphys);
    if (!st && out->handed) {
        /* the hand-off's busiest port, in or out */
        int64_t *in = calloc((size_t)n, sizeof *in), *outb = calloc((size_t)n, sizeof *outb);
        if (!in || !outb) st = rotor_nomem(err);
        for (int64_t k = 0; !st && k < out->n; k++) {
            in[out->v[k][0]] += out->v[k][2];
            outb[out->v[k][1]] += out->v[k][2];
        }
        for (int64_t c = 0; !st && c < n; c++) {
            if (in[c] > out->most) out->most = in[c];
            if (outb[c] > out->most) out->most = outb[c];
        }
        free(in);
        free(outb);
        /* the rest of the setup joins the same exchange: round k into c from
         * (c + k) mod n, as a gather without a hand-off sends it */
        int64_t uniform = po->setup_bytes - out->most, rounds = po->setup_rounds;
        if (rounds > 0 && n > 1)
            for (int64_t c = 0; !st && uniform > 0 && c < cores; c++)
                for (int64_t k = 1; !st && k <= rounds; k++) {
                    int64_t piece = uniform / rounds + (k <= uniform % rounds ? 1 : 0), d = cphys[c];
                    int64_t s = chip->topology == ROTOR_TOPO_MESH ? rotor_mesh_near(chip, d, k) : (c + k) % n;
                    if (piece > 0 && s != d && add_piece(out, d, s, piece)) st = rotor_nomem(err);
                }
    }
    free(cphys);
    if (st) rotor_setup_pieces_free(out);
    return st;
}
