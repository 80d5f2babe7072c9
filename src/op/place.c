/* place.c — where every partition sits and what every core computes at every
 * step (T10 §4.4 "Sub-tensor placement", Figure 10; the nested shift rings of
 * §3 and cost-model-v1.md "Shifts"; docs/placement-sketch.md).
 *
 * The idea, in one paragraph (docs/placement.md has the long form): along each
 * axis the temporal factors of the tensors form a divisibility chain
 * 1 = t_0 | t_1 | ... | t_q = S_a.  A loop index i_a is read as mixed-radix
 * digits with radices t_u / t_{u-1}, coarse first; a tensor with factor t_r
 * sees digits 1..r, which are exactly its block index.  Every core adds a
 * fixed offset to every digit (mod its radix) and computes sub-task
 * j = digits(i) + offset.  The offsets come from the cores' positions in the
 * rings of the tensors that use the digit, so the members of one ring hold
 * distinct partitions (T10's "ascending order" of §4.4 made exact), and a
 * block changes on every core at the same transition, by the same digit
 * increment: each shift is a permutation inside each ring, one send and one
 * receive per core, and every core shifts exactly as often as the spec counts.
 *
 * Rings are not cut blindly: once the offsets are fixed, rotor_place_make
 * checks that within each group of cores sharing a sub-tensor every block
 * occurs exactly R_X times, and deals the cores of each block out to the R_X
 * rings.  A plan whose offsets cannot be balanced is refused with the tensor
 * named, never silently mis-placed. */
#include "rotor/op/place.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DIGITS (ROTOR_MAX_TENSORS + 1)

struct rotor_place {
    rotor_expr e;
    rotor_plan p;
    rotor_plan_info info;
    int na, nt;
    int64_t cores;
    int64_t cstride[ROTOR_MAX_AXES];                 /* core id = sum c_a * cstride[a] */
    int nd[ROTOR_MAX_AXES];                          /* digits of axis a */
    int64_t radix[ROTOR_MAX_AXES][MAX_DIGITS];       /* rho_u, u = 0..nd-1 (coarse first) */
    int64_t pv[ROTOR_MAX_AXES][MAX_DIGITS];          /* place value S_a / t_u */
    int tdig[ROTOR_MAX_TENSORS][ROTOR_MAX_AXES];     /* digits tensor t sees on axis a */
    int64_t bstride[ROTOR_MAX_TENSORS][ROTOR_MAX_AXES]; /* block linearisation */
    int64_t nrings[ROTOR_MAX_TENSORS];
    int64_t loop_suffix[ROTOR_MAX_AXES + 1];         /* prod_{l' >= l} S_{order[l']} */
    int32_t *off;                                    /* cores x na: offset digits, encoded */
    int32_t *ring[ROTOR_MAX_TENSORS];                /* core -> ring */
    int32_t *pos[ROTOR_MAX_TENSORS];                 /* core -> position */
    int32_t *member[ROTOR_MAX_TENSORS];              /* ring * Q + position -> core */
};

const rotor_expr *rotor_place_expr(const rotor_place *pl) { return &pl->e; }
const rotor_plan *rotor_place_plan(const rotor_place *pl) { return &pl->p; }
const rotor_plan_info *rotor_place_info(const rotor_place *pl) { return &pl->info; }

void rotor_place_coords(const rotor_place *pl, int64_t core, int64_t *coord) {
    for (int a = 0; a < pl->na; a++) coord[a] = core / pl->cstride[a] % pl->p.fop[a];
}

int64_t rotor_place_core_at(const rotor_place *pl, const int64_t *coord) {
    int64_t c = 0;
    for (int a = 0; a < pl->na; a++) c += coord[a] * pl->cstride[a];
    return c;
}

void rotor_place_loop(const rotor_place *pl, int64_t step, int64_t *i) {
    /* Reflected mixed-radix counting (cost-model-v1.md "Shifts"): level l is
     * on pass floor(s / prod_{l' >= l} S) and runs backward on odd passes. */
    for (int l = 0; l < pl->na; l++) {
        int a = pl->p.order[l];
        int64_t sa = pl->info.steps[a];
        int64_t pass = step / pl->loop_suffix[l];
        int64_t q = step / pl->loop_suffix[l + 1] % sa;
        i[a] = (pass & 1) ? sa - 1 - q : q;
    }
}

static inline int64_t digit_of(const rotor_place *pl, int a, int u, int64_t x) {
    return x / pl->pv[a][u] % pl->radix[a][u];
}

void rotor_place_subtask(const rotor_place *pl, int64_t core, const int64_t *i, int64_t *j) {
    const int32_t *o = pl->off + core * pl->na;
    for (int a = 0; a < pl->na; a++) {
        int64_t v = 0;
        for (int u = 0; u < pl->nd[a]; u++) {
            int64_t r = pl->radix[a][u];
            v += (digit_of(pl, a, u, i[a]) + digit_of(pl, a, u, o[a])) % r * pl->pv[a][u];
        }
        j[a] = v;
    }
}

void rotor_place_block(const rotor_place *pl, int t, const int64_t *j, int64_t *block) {
    for (int a = 0; a < pl->na; a++)
        block[a] = pl->e.tensors[t].has_axis[a] ? j[a] / (pl->info.steps[a] / pl->p.ft[t][a]) : 0;
}

int64_t rotor_place_block_id(const rotor_place *pl, int t, const int64_t *block) {
    int64_t id = 0;
    for (int a = 0; a < pl->na; a++) id += block[a] * pl->bstride[t][a];
    return id;
}

/* The sub-task core computes at step 0.  The loop counter is then 0, so
 * every digit is the core's offset digit, which is below its radix (both
 * build_offsets and atom_offsets write digits mod the radix): the sub-task
 * is the encoded offset itself.  The hand-off asks this of every core of
 * every pair of plans it prices, and placement of every core of every
 * tensor, so it skips rotor_place_subtask's divisions. */
static void subtask_at_0(const rotor_place *pl, int64_t core, int64_t *j) {
    const int32_t *o = pl->off + core * pl->na;
    for (int a = 0; a < pl->na; a++) j[a] = o[a];
}

void rotor_place_partition(const rotor_place *pl, int t, int64_t core, int64_t step, int64_t *origin) {
    int64_t i[ROTOR_MAX_AXES], j[ROTOR_MAX_AXES] = {0}, blk[ROTOR_MAX_AXES], coord[ROTOR_MAX_AXES], org[ROTOR_MAX_AXES];
    rotor_place_coords(pl, core, coord);
    if (step == 0) subtask_at_0(pl, core, j);
    else {
        rotor_place_loop(pl, step, i);
        rotor_place_subtask(pl, core, i, j);
    }
    rotor_place_block(pl, t, j, blk);
    for (int a = 0; a < pl->na; a++) {
        int64_t L = pl->info.sub_op[a];
        org[a] = coord[a] * L + blk[a] * (L / pl->p.ft[t][a]);
    }
    const rotor_tensor *x = &pl->e.tensors[t];
    for (int d = 0; d < x->ndims; d++) {
        origin[d] = 0;
        for (int k = 0; k < x->dims[d].nterms; k++) origin[d] += x->dims[d].coef[k] * org[x->dims[d].axis[k]];
    }
}

void rotor_place_partitions_at_0(const rotor_place *pl, int t, int64_t *origin) {
    const rotor_tensor *x = &pl->e.tensors[t];
    int64_t coord[ROTOR_MAX_AXES] = {0}, width[ROTOR_MAX_AXES], part[ROTOR_MAX_AXES];
    for (int a = 0; a < pl->na; a++) {
        width[a] = x->has_axis[a] ? pl->info.steps[a] / pl->p.ft[t][a] : 1;
        part[a] = x->has_axis[a] ? pl->info.sub_op[a] / pl->p.ft[t][a] : 0;
    }
    for (int64_t c = 0; c < pl->cores; c++, origin += x->ndims) {
        const int32_t *o = pl->off + c * pl->na; /* the sub-task at step 0 (subtask_at_0) */
        int64_t org[ROTOR_MAX_AXES];
        for (int a = 0; a < pl->na; a++)
            org[a] = coord[a] * pl->info.sub_op[a] + (x->has_axis[a] ? o[a] / width[a] * part[a] : 0);
        for (int d = 0; d < x->ndims; d++) {
            origin[d] = 0;
            for (int k = 0; k < x->dims[d].nterms; k++) origin[d] += x->dims[d].coef[k] * org[x->dims[d].axis[k]];
        }
        for (int a = pl->na - 1; a >= 0; a--) { /* the next core's coordinates */
            if (++coord[a] < pl->p.fop[a]) break;
            coord[a] = 0;
        }
    }
}

bool rotor_place_changes(const rotor_place *pl, int t, const int64_t *i_old, const int64_t *i_new) {
    for (int a = 0; a < pl->na; a++) {
        if (!pl->e.tensors[t].has_axis[a] || pl->p.ft[t][a] == 1) continue;
        int64_t w = pl->info.steps[a] / pl->p.ft[t][a];
        if (i_old[a] / w != i_new[a] / w) return true;
    }
    return false;
}

int64_t rotor_place_ring_count(const rotor_place *pl, int t) { return pl->nrings[t]; }

int64_t rotor_place_ring_of(const rotor_place *pl, int t, int64_t core, int64_t *position) {
    if (position) *position = pl->pos[t][core];
    return pl->ring[t][core];
}

int64_t rotor_place_ring_member(const rotor_place *pl, int t, int64_t ring, int64_t position) {
    return pl->member[t][ring * pl->info.ring_size[t] + position];
}

int64_t rotor_place_sender(const rotor_place *pl, int t, int64_t core, const int64_t *i_old,
                           const int64_t *i_new, bool reverse) {
    if (!rotor_place_changes(pl, t, i_old, i_new)) return core;
    /* The sender held, before the transition, the block this core needs
     * after it: its offset digits are ours plus (new - old) loop digits. */
    const int32_t *o = pl->off + core * pl->na;
    int64_t id = 0;
    for (int a = 0; a < pl->na; a++) {
        int r = pl->tdig[t][a];
        if (r == 0) continue;
        int64_t blk = 0;
        for (int u = 0; u < r; u++) {
            int64_t rad = pl->radix[a][u];
            int64_t delta = digit_of(pl, a, u, i_new[a]) - digit_of(pl, a, u, i_old[a]);
            if (reverse) delta = -delta;
            int64_t d = ((digit_of(pl, a, u, o[a]) + delta) % rad + rad) % rad;
            blk += d * (pl->pv[a][u] / pl->pv[a][r - 1]);
        }
        id += blk * pl->bstride[t][a];
    }
    return rotor_place_ring_member(pl, t, pl->ring[t][core], id);
}

int rotor_place_digits(const rotor_place *pl, int a, int64_t *radix) {
    for (int u = 0; u < pl->nd[a]; u++) radix[u] = pl->radix[a][u];
    return pl->nd[a];
}

int rotor_place_tensor_digits(const rotor_place *pl, int t, int a) { return pl->tdig[t][a]; }

void rotor_place_free(rotor_place *pl) {
    if (!pl) return;
    free(pl->off);
    for (int t = 0; t < ROTOR_MAX_TENSORS; t++) {
        free(pl->ring[t]);
        free(pl->pos[t]);
        free(pl->member[t]);
    }
    free(pl);
}

/* ---- construction ------------------------------------------------------- */

/* The digit chain of every axis: the distinct f_t of the tensors carrying it,
 * sorted; alignment (plan.c) guarantees they divide one another. */
static void build_digits(rotor_place *pl) {
    for (int a = 0; a < pl->na; a++) {
        int64_t chain[MAX_DIGITS];
        int n = 0;
        for (int t = 0; t < pl->nt; t++) {
            if (!pl->e.tensors[t].has_axis[a] || pl->p.ft[t][a] == 1) continue;
            int64_t f = pl->p.ft[t][a];
            bool dup = false;
            for (int k = 0; k < n; k++) dup |= chain[k] == f;
            if (!dup) chain[n++] = f;
        }
        for (int x = 1; x < n; x++) /* insertion sort: n <= 5 */
            for (int y = x; y > 0 && chain[y - 1] > chain[y]; y--) {
                int64_t tmp = chain[y];
                chain[y] = chain[y - 1];
                chain[y - 1] = tmp;
            }
        pl->nd[a] = n;
        int64_t prev = 1;
        for (int u = 0; u < n; u++) {
            pl->radix[a][u] = chain[u] / prev;
            pl->pv[a][u] = pl->info.steps[a] / chain[u];
            prev = chain[u];
        }
        for (int t = 0; t < pl->nt; t++) {
            pl->tdig[t][a] = 0;
            if (!pl->e.tensors[t].has_axis[a]) continue;
            for (int u = 0; u < n; u++)
                if (chain[u] == pl->p.ft[t][a]) pl->tdig[t][a] = u + 1;
        }
    }
}

/* Axes a tensor lacks and that are actually split (F_op > 1): the coordinates
 * along which its sharing group extends. */
static unsigned lacked_mask(const rotor_place *pl, int t) {
    unsigned m = 0;
    for (int a = 0; a < pl->na; a++)
        if (!pl->e.tensors[t].has_axis[a] && pl->p.fop[a] > 1) m |= 1u << a;
    return m;
}

/* A source of offsets: the joint ring position, over the digits r[a], of the
 * cores' coordinates along mask.  The first lo[a] digits of each axis are
 * read first (least significant); a source whose lo digits another source of
 * the same mask already adds leaves them out (skip_lo), so that a coordinate
 * shared by two tensors is not counted twice. */
/* Digit u of axis a's offset, and whether a source adds to it. */
typedef struct digit_ref {
    int a, u;
    bool add;
} digit_ref;

typedef struct source {
    unsigned mask;
    int r[ROTOR_MAX_AXES];
    int lo[ROTOR_MAX_AXES];
    bool skip_lo;
    /* the same for every core, so set once (order_source): the axes of
     * mask, least significant first, Q, and the digits p is read into, in
     * add_position's order (each with whether it is added) */
    int ax[ROTOR_MAX_AXES], nax;
    int64_t q;
    int ndig;
    digit_ref dig[ROTOR_MAX_AXES * MAX_DIGITS];
} source;

/* Adds to the core's offset digits the digits of p = g mod Q, where g is the
 * core's index inside its group along the axes in mask and Q the product of
 * the radices of the digit set r[a] (digits 0..r[a]-1 of axis a).  Axes that
 * more rotating tensors lack are the most significant in g, so a tensor's
 * position is drawn from its private axes first and clashes with other
 * tensors' positions only when it must. */
static void add_position(const rotor_place *pl, const int64_t *coord, const source *sc,
                         int64_t digits[][MAX_DIGITS]) {
    int64_t g = 0, w = 1;
    for (int k = 0; k < sc->nax; k++) {
        g += coord[sc->ax[k]] * w;
        w *= pl->p.fop[sc->ax[k]];
    }
    int64_t p = g % sc->q;
    /* once p is 0 the remaining digits add 0 */
    for (int i = 0; i < sc->ndig && p > 0; i++) {
        int a = sc->dig[i].a, u = sc->dig[i].u;
        int64_t rad = pl->radix[a][u], d = p % rad;
        p /= rad;
        if (sc->dig[i].add) digits[a][u] = (digits[a][u] + d) % rad;
    }
}

/* The per-core constants of add_position: mask's axes ordered least
 * significant first (fewest sharers, then the last axis) and Q. */
static void order_source(const rotor_place *pl, const int *share, source *sc) {
    int *ax = sc->ax, n = 0;
    for (int a = 0; a < pl->na; a++)
        if (sc->mask & (1u << a)) ax[n++] = a;
    for (int x = 1; x < n; x++)
        for (int y = x; y > 0; y--) {
            int p0 = ax[y - 1], p1 = ax[y];
            bool swap = share[p1] < share[p0] || (share[p1] == share[p0] && p1 > p0);
            if (!swap) break;
            ax[y - 1] = p1;
            ax[y] = p0;
        }
    sc->nax = n;
    sc->q = 1;
    for (int a = 0; a < pl->na; a++)
        for (int u = 0; u < sc->r[a]; u++) sc->q *= pl->radix[a][u];
    /* p's digits, least significant first: the digits below lo (shared by
     * the sources of one joint position, added by the first only), then
     * the rest, each pass from the last axis and the finest digit */
    sc->ndig = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int a = pl->na - 1; a >= 0; a--)
            for (int u = (pass ? sc->r[a] : sc->lo[a]) - 1; u >= (pass ? sc->lo[a] : 0); u--)
                sc->dig[sc->ndig++] = (digit_ref){a, u, !(pass == 0 && sc->skip_lo)};
}

static int list_sources(const rotor_place *pl, int *share, source *src) {
    const int na = pl->na, nt = pl->nt;
    unsigned mask[ROTOR_MAX_TENSORS];
    for (int t = 0; t < nt; t++) {
        mask[t] = lacked_mask(pl, t);
        if (pl->info.ring_size[t] > 1)
            for (int a = 0; a < na; a++)
                if (mask[t] & (1u << a)) share[a]++;
    }
    /* Tensors lacking the same axes share the same groups of cores: they
     * draw their ring positions from one joint position over the union of
     * their digits when it fits (so `Y = X * G + B` with G and B both
     * rotating stays balanced), and separately otherwise (sketch step 4). */
    int nsrc = 0;
    bool done[ROTOR_MAX_TENSORS] = {false};
    for (int t = 0; t < nt; t++) {
        if (done[t] || pl->info.ring_size[t] == 1) continue;
        int ru[ROTOR_MAX_AXES] = {0};
        int members[ROTOR_MAX_TENSORS], nm = 0;
        for (int u = t; u < nt; u++) {
            if (done[u] || pl->info.ring_size[u] == 1 || mask[u] != mask[t]) continue;
            members[nm++] = u;
            done[u] = true;
            for (int a = 0; a < na; a++)
                if (pl->tdig[u][a] > ru[a]) ru[a] = pl->tdig[u][a];
        }
        int64_t q = 1;
        for (int a = 0; a < na; a++)
            for (int u = 0; u < ru[a]; u++) q *= pl->radix[a][u];
        memset(&src[nsrc], 0, (size_t)nm * sizeof *src);
        if (pl->info.sharing[t] % q == 0) {
            src[nsrc].mask = mask[t];
            memcpy(src[nsrc].r, ru, sizeof ru);
            nsrc++;
        } else {
            /* separate positions; the digits common to all of them are
             * drawn from the same low coordinates and added once */
            int lo[ROTOR_MAX_AXES];
            for (int a = 0; a < na; a++) {
                lo[a] = ru[a];
                for (int k = 0; k < nm; k++)
                    if (pl->tdig[members[k]][a] < lo[a]) lo[a] = pl->tdig[members[k]][a];
            }
            for (int k = 0; k < nm; k++) {
                src[nsrc].mask = mask[members[k]];
                memcpy(src[nsrc].r, pl->tdig[members[k]], sizeof src[nsrc].r);
                memcpy(src[nsrc].lo, lo, sizeof lo);
                src[nsrc].skip_lo = k > 0;
                nsrc++;
            }
        }
    }
    for (int k = 0; k < nsrc; k++) order_source(pl, share, &src[k]);
    return nsrc;
}

/* The coordinates of the next core (rotor_place_coords of core + 1): the
 * last axis is the least significant. */
static void next_coord(const rotor_place *pl, int64_t *coord) {
    for (int a = pl->na - 1; a >= 0; a--) {
        if (++coord[a] < pl->p.fop[a]) return;
        coord[a] = 0;
    }
}

/* Offsets = the sum (digit by digit, mod the radix) of the sources in use. */
static void build_offsets(rotor_place *pl, const source *src, int nsrc, unsigned use) {
    const int na = pl->na;
    int64_t coord[ROTOR_MAX_AXES] = {0};
    for (int64_t c = 0; c < pl->cores; c++, next_coord(pl, coord)) {
        int64_t digits[ROTOR_MAX_AXES][MAX_DIGITS];
        for (int a = 0; a < na; a++)
            for (int u = 0; u < pl->nd[a]; u++) digits[a][u] = 0;
        for (int k = 0; k < nsrc; k++)
            if (use & (1u << k)) add_position(pl, coord, &src[k], digits);
        for (int a = 0; a < na; a++) {
            int64_t v = 0;
            for (int u = 0; u < pl->nd[a]; u++) v += digits[a][u] * pl->pv[a][u];
            pl->off[c * na + a] = (int32_t)v;
        }
    }
}

/* The group of cores sharing tensor t's sub-tensor that core c (at coord)
 * belongs to, and the block c holds at step 0.  Placement asks this of
 * every core for every tensor, so the walk over cores keeps the
 * coordinates (next_coord) and the block widths (block_widths) instead of
 * dividing them out again. */
static void group_and_position(const rotor_place *pl, int t, int64_t c, const int64_t *coord, const int64_t *width,
                               int64_t *gid, int64_t *pos) {
    const int32_t *o = pl->off + c * pl->na; /* the sub-task at step 0 (subtask_at_0) */
    *gid = 0;
    *pos = 0;
    for (int a = 0; a < pl->na; a++) {
        if (!pl->e.tensors[t].has_axis[a]) continue;
        *gid = *gid * pl->p.fop[a] + coord[a];
        *pos += o[a] / width[a] * pl->bstride[t][a]; /* rotor_place_block(_id) */
    }
}

/* S_a / f_t[a]: the sub-tasks of one block of tensor t along each axis. */
static void block_widths(const rotor_place *pl, int t, int64_t *width) {
    for (int a = 0; a < pl->na; a++) width[a] = pl->e.tensors[t].has_axis[a] ? pl->info.steps[a] / pl->p.ft[t][a] : 1;
}

/* Balanced: in every group of every tensor each block occurs R_t times, so
 * the group splits into R_t rings holding one copy of every partition.
 * Returns the first tensor that is not balanced, or -1. */
static int unbalanced_tensor(const rotor_place *pl, int32_t *count) {
    for (int t = 0; t < pl->nt; t++) {
        int64_t q = pl->info.ring_size[t], r = pl->info.rings[t];
        if (q == 1) continue;
        memset(count, 0, (size_t)pl->cores * sizeof *count); /* groups * q == cores / R */
        int64_t coord[ROTOR_MAX_AXES] = {0}, width[ROTOR_MAX_AXES];
        block_widths(pl, t, width);
        for (int64_t c = 0; c < pl->cores; c++, next_coord(pl, coord)) {
            int64_t gid, pos;
            group_and_position(pl, t, c, coord, width, &gid, &pos);
            if (++count[gid * q + pos] > r) return t;
        }
    }
    return -1;
}

/* Fallback: prime "slots" and "atoms".  Factor every F_op[b] into primes:
 * c_b is then a mixed-radix number whose digits are slots.  Factor every
 * digit's radix into primes too: atoms.  An atom's value is the sum, mod its
 * prime, of the slots it reads.  For every tensor X and every atom of X's
 * digits we pick a "private" slot: of the atom's prime, on an axis X lacks,
 * and read by no other atom of X's digits.  Within a group of X the private
 * slots vary freely and independently, so X's blocks are uniform over the
 * group: each occurs R_X times.  Atoms no tensor uses together may share
 * slots.  This realises, e.g., C[m,n] += A[m,k,j] * B[k,n,i] plans where a
 * digit shared by two tensors must read a coordinate each of them lacks.  The
 * choice is found by backtracking under a node budget. */
#define MAX_SLOTS 64
#define MAX_ATOMS 48

typedef struct atoms {
    int nslots, natoms, npairs;
    int slot_axis[MAX_SLOTS];
    int64_t slot_prime[MAX_SLOTS], slot_place[MAX_SLOTS];
    int atom_axis[MAX_ATOMS], atom_digit[MAX_ATOMS];
    int64_t atom_prime[MAX_ATOMS], atom_place[MAX_ATOMS];
    int pair_t[ROTOR_MAX_TENSORS * MAX_ATOMS], pair_k[ROTOR_MAX_TENSORS * MAX_ATOMS];
    int choice[ROTOR_MAX_TENSORS * MAX_ATOMS];   /* private slot of each (tensor, atom) */
    int reads[MAX_ATOMS][MAX_SLOTS];             /* how many pairs make atom k read slot s */
    int64_t coef[MAX_ATOMS][MAX_SLOTS];          /* atom k = sum coef * slot, mod its prime */
    int64_t budget;
} atoms;

static bool atom_used_by(const rotor_place *pl, const atoms *at, int t, int k) {
    return pl->tdig[t][at->atom_axis[k]] > at->atom_digit[k];
}

/* Every chosen private slot of tensor t is read by no other atom of t. */
static bool pairs_consistent(const rotor_place *pl, const atoms *at, int upto) {
    for (int x = 0; x < upto; x++) {
        int t = at->pair_t[x], k = at->pair_k[x], s = at->choice[x];
        for (int b = 0; b < at->natoms; b++)
            if (b != k && atom_used_by(pl, at, t, b) && at->reads[b][s] > 0) return false;
    }
    return true;
}

static bool solve_pairs(const rotor_place *pl, atoms *at, int x) {
    if (x == at->npairs) return true;
    if (--at->budget < 0) return false;
    int t = at->pair_t[x], k = at->pair_k[x];
    /* slots the atom already reads first: sharing keeps slots free for others */
    for (int pass = 0; pass < 2; pass++)
        for (int s = 0; s < at->nslots; s++) {
            if (at->slot_prime[s] != at->atom_prime[k] || pl->e.tensors[t].has_axis[at->slot_axis[s]])
                continue;
            if ((at->reads[k][s] > 0) != (pass == 0)) continue;
            at->choice[x] = s;
            at->reads[k][s]++;
            if (pairs_consistent(pl, at, x + 1) && solve_pairs(pl, at, x + 1)) return true;
            at->reads[k][s]--;
            if (at->budget < 0) return false;
        }
    return false;
}

/* a^-1 mod the prime p (Fermat): the pivots of rank_ok's elimination. */
static int64_t inverse_mod(int64_t a, int64_t p) {
    int64_t r = 1, e = p - 2;
    for (a %= p; e > 0; e >>= 1, a = a * a % p)
        if (e & 1) r = r * a % p;
    return r;
}

/* Whether tensor t's atoms of prime p chosen so far (rows 0..upto) are
 * linearly independent over GF(p) on the slots of the axes t lacks.  Within
 * a group of t the slots of the axes t has are constants, and those of the
 * axes it lacks take every value equally often, so t's atoms of prime p are
 * uniform over the group exactly when these rows have full rank (slots of
 * other primes are independent of them).  A subset of independent rows stays
 * independent, so a failure here prunes the search (rank_search). */
static bool rank_ok(const rotor_place *pl, const atoms *at, int t, int64_t p, int upto) {
    int64_t m[MAX_ATOMS][MAX_SLOTS];
    int cols[MAX_SLOTS], nc = 0, nr = 0;
    for (int s = 0; s < at->nslots; s++)
        if (at->slot_prime[s] == p && !pl->e.tensors[t].has_axis[at->slot_axis[s]]) cols[nc++] = s;
    for (int k = 0; k <= upto; k++) {
        if (at->atom_prime[k] != p || !atom_used_by(pl, at, t, k)) continue;
        for (int c = 0; c < nc; c++) m[nr][c] = at->coef[k][cols[c]];
        nr++;
    }
    if (nr > nc) return false;
    for (int r = 0; r < nr; r++) { /* Gaussian elimination, row r's pivot in a free column */
        int c = 0;
        while (c < nc && m[r][c] == 0) c++;
        if (c == nc) return false; /* row r depends on the rows above */
        int64_t inv = inverse_mod(m[r][c], p);
        for (int r2 = r + 1; r2 < nr; r2++) {
            int64_t f = m[r2][c] * inv % p;
            for (int c2 = 0; c2 < nc; c2++) m[r2][c2] = ((m[r2][c2] - f * m[r][c2]) % p + p) % p;
        }
    }
    return true;
}

/* The next support of w slots out of n (lexicographic), or false. */
static bool next_support(int *idx, int w, int n) {
    int i = w - 1;
    while (i >= 0 && idx[i] == n - w + i) i--;
    if (i < 0) return false;
    idx[i]++;
    for (int x = i + 1; x < w; x++) idx[x] = idx[x - 1] + 1;
    return true;
}

/* The next coefficients 1..p-1 of a support's later slots (the first is 1:
 * scaling a row changes no rank), or false. */
static bool next_coefs(int64_t *cf, int w, int64_t p) {
    for (int i = w - 1; i >= 1; i--) {
        if (++cf[i] < p) return true;
        cf[i] = 1;
    }
    return false;
}

/* Atom k's candidate slots: of its prime, on an axis some tensor using the
 * atom lacks (a slot every such tensor has only shifts their groups). */
static int candidate_slots(const rotor_place *pl, const atoms *at, int k, int *cols) {
    int n = 0;
    for (int s = 0; s < at->nslots; s++) {
        if (at->slot_prime[s] != at->atom_prime[k]) continue;
        bool lacked = false;
        for (int t = 0; t < pl->nt; t++)
            lacked |= atom_used_by(pl, at, t, k) && !pl->e.tensors[t].has_axis[at->slot_axis[s]];
        if (lacked) cols[n++] = s;
    }
    return n;
}

/* The second fallback: each atom reads any combination of slots of its
 * prime, and every tensor needs its atoms independent over GF(p) on the
 * slots it lacks (rank_ok), not each a private slot.  Private slots are the
 * diagonal case; the triangular cases they miss include Conformer's
 * positional scores S[b,h,m,n] += (Q[b,h,m,k] + V[h,k]) * P[h,k,n] with
 * F_op b=4 n=4 and k split 4/8/4 in Q/V/P: Q's two coarse atoms need the two
 * slots of n, P's the two of b, and V's fine atom has none left, while
 * (n0 + b0, n1 + b1, b0) gives all three tensors full rank.  Atoms are tried
 * in order with their rows sparsest first, under the node budget. */
static bool rank_search(const rotor_place *pl, atoms *at, int k) {
    if (k == at->natoms) return true;
    int cols[MAX_SLOTS], n = candidate_slots(pl, at, k, cols);
    int64_t p = at->atom_prime[k];
    for (int w = 1; w <= n; w++) {
        int idx[MAX_SLOTS];
        for (int i = 0; i < w; i++) idx[i] = i;
        do {
            int64_t cf[MAX_SLOTS];
            for (int i = 0; i < w; i++) cf[i] = 1;
            do {
                if (--at->budget < 0) return false;
                memset(at->coef[k], 0, sizeof at->coef[k]);
                for (int i = 0; i < w; i++) at->coef[k][cols[idx[i]]] = cf[i];
                bool ok = true;
                for (int t = 0; ok && t < pl->nt; t++)
                    ok = !atom_used_by(pl, at, t, k) || rank_ok(pl, at, t, p, k);
                if (ok && rank_search(pl, at, k + 1)) return true;
                if (at->budget < 0) return false;
            } while (next_coefs(cf, w, p));
        } while (next_support(idx, w, n));
    }
    memset(at->coef[k], 0, sizeof at->coef[k]);
    return false;
}

/* The slots of every F_op[b] and the atoms of every digit, and the (tensor,
 * atom) pairs; false if there are more than the tables hold. */
static bool list_atoms(const rotor_place *pl, atoms *at) {
    for (int b = 0; b < pl->na; b++) {
        int64_t f = pl->p.fop[b], place = 1;
        for (int64_t q = 2; f > 1; q++)
            while (f % q == 0) {
                if (at->nslots == MAX_SLOTS) return false;
                at->slot_axis[at->nslots] = b;
                at->slot_prime[at->nslots] = q;
                at->slot_place[at->nslots++] = place;
                place *= q;
                f /= q;
            }
    }
    for (int a = 0; a < pl->na; a++)
        for (int u = 0; u < pl->nd[a]; u++) {
            int64_t r = pl->radix[a][u], place = 1;
            for (int64_t q = 2; r > 1; q++)
                while (r % q == 0) {
                    if (at->natoms == MAX_ATOMS) return false;
                    at->atom_axis[at->natoms] = a;
                    at->atom_digit[at->natoms] = u;
                    at->atom_prime[at->natoms] = q;
                    at->atom_place[at->natoms++] = place;
                    place *= q;
                    r /= q;
                }
        }
    for (int t = 0; t < pl->nt; t++)
        for (int k = 0; k < at->natoms; k++)
            if (atom_used_by(pl, at, t, k)) {
                at->pair_t[at->npairs] = t;
                at->pair_k[at->npairs++] = k;
            }
    return true;
}

/* Offsets from atoms: private slots (solve_pairs) when ranked is false,
 * else any independent combination (rank_search). */
static bool atom_offsets(rotor_place *pl, bool ranked) {
    atoms *at = calloc(1, sizeof *at);
    if (!at) return false;
    bool ok = false;
    at->budget = 200000;
    if (!list_atoms(pl, at)) goto done;
    if (!ranked) {
        if (!solve_pairs(pl, at, 0)) goto done;
        for (int k = 0; k < at->natoms; k++)
            for (int s = 0; s < at->nslots; s++) at->coef[k][s] = at->reads[k][s] > 0;
    } else if (!rank_search(pl, at, 0))
        goto done;
    for (int64_t c = 0; c < pl->cores; c++) {
        int64_t coord[ROTOR_MAX_AXES], v[ROTOR_MAX_AXES] = {0};
        rotor_place_coords(pl, c, coord);
        for (int k = 0; k < at->natoms; k++) {
            int64_t val = 0;
            for (int s = 0; s < at->nslots; s++)
                if (at->coef[k][s]) val += at->coef[k][s] * (coord[at->slot_axis[s]] / at->slot_place[s] % at->slot_prime[s]);
            int a = at->atom_axis[k], u = at->atom_digit[k];
            v[a] += val % at->atom_prime[k] * at->atom_place[k] * pl->pv[a][u];
        }
        for (int a = 0; a < pl->na; a++) pl->off[c * pl->na + a] = (int32_t)v[a];
    }
    ok = true;
done:
    free(at);
    return ok;
}

/* The sketch's offsets sum every source.  When tensors that share a digit
 * also share a lacked axis, that sum can count one coordinate twice and
 * unbalance a ring (C[m,n] += A[m,k,j] * B[k,n] with C and B both split along
 * n: both lack j).  Often some source is then redundant — another one already
 * balances its tensors — so we try the subsets of sources, largest first;
 * failing that, prime slots and atoms (atom_offsets): private slots first,
 * then any combination of slots independent for every tensor (rank_search).
 * Each method runs only when the ones before it fail, so a plan an earlier
 * one places keeps its layout.  Whatever is chosen is checked: every ring
 * gets one copy of every partition, or the plan is refused. */
static rotor_status choose_offsets(rotor_place *pl, rotor_error *err) {
    int share[ROTOR_MAX_AXES] = {0};
    source src[ROTOR_MAX_TENSORS];
    int nsrc = list_sources(pl, share, src);
    int32_t *count = malloc((size_t)pl->cores * sizeof *count);
    if (!count) return rotor_nomem(err);
    int first_bad = -1;
    for (int64_t use = ((int64_t)1 << nsrc) - 1; use >= 0; use--) {
        build_offsets(pl, src, nsrc, (unsigned)use);
        int bad = unbalanced_tensor(pl, count);
        if (bad < 0) {
            free(count);
            return ROTOR_OK;
        }
        if (first_bad < 0) first_bad = bad;
    }
    for (int ranked = 0; ranked < 2; ranked++)
        if (atom_offsets(pl, ranked) && unbalanced_tensor(pl, count) < 0) {
            free(count);
            return ROTOR_OK;
        }
    free(count);
    return rotor_fail(err, ROTOR_ERR_INPUT,
                      "placement: no nested-ring offsets give every ring of %s one copy of each "
                      "partition for this plan",
                      pl->e.tensors[first_bad].name);
}

/* Deals the cores of every sharing group out to rings: the k-th core (in
 * core order) holding block b at step 0 joins ring k of the group.  Fails if
 * some block occurs more often than there are rings, i.e. the offsets are not
 * balanced and some ring would miss a partition. */
static rotor_status build_rings(rotor_place *pl, int t, rotor_error *err) {
    const rotor_tensor *x = &pl->e.tensors[t];
    int64_t q = pl->info.ring_size[t], r = pl->info.rings[t];
    int64_t groups = pl->cores / pl->info.sharing[t]; /* pl->nrings[t] is groups * r (place_offsets) */
    int32_t *count = calloc((size_t)(groups * q), sizeof *count);
    pl->ring[t] = malloc((size_t)pl->cores * sizeof(int32_t));
    pl->pos[t] = malloc((size_t)pl->cores * sizeof(int32_t));
    pl->member[t] = malloc((size_t)pl->cores * sizeof(int32_t));
    if (!count || !pl->ring[t] || !pl->pos[t] || !pl->member[t]) {
        free(count);
        return rotor_nomem(err);
    }
    int64_t coord[ROTOR_MAX_AXES] = {0}, width[ROTOR_MAX_AXES];
    block_widths(pl, t, width);
    for (int64_t c = 0; c < pl->cores; c++, next_coord(pl, coord)) {
        int64_t gid, pos;
        group_and_position(pl, t, c, coord, width, &gid, &pos);
        int32_t k = count[gid * q + pos]++;
        if (k >= r) {
            free(count);
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "placement: %s's partition %lld would sit on %d cores of one group of %lld "
                              "(only %lld rings): the nested-ring offsets cannot be balanced for this "
                              "plan (tensors lacking the same axis share a temporal digit)",
                              x->name, (long long)pos, k + 1, (long long)pl->info.sharing[t], (long long)r);
        }
        int64_t ring = gid * r + k;
        pl->ring[t][c] = (int32_t)ring;
        pl->pos[t][c] = (int32_t)pos;
        pl->member[t][ring * q + pos] = (int32_t)c;
    }
    free(count);
    return ROTOR_OK;
}

/* Everything of a placement but its rings: the strides, the digits, the
 * ring counts and the offsets, which choose_offsets has checked balanced
 * for every tensor whose ring size is above 1 (a ring of size 1 holds its
 * group's one block on each of its members).  Dealing the cores out to
 * rings (build_rings) then cannot find a block more often than there are
 * rings, so the summary (rotor_place_summarize) stops here. */
static rotor_status place_offsets(const rotor_expr *e, const rotor_plan *p, const rotor_plan_info *info,
                                  rotor_place **out, rotor_error *err) {
    *out = NULL;
    if (info->cores > INT32_MAX)
        return rotor_fail(err, ROTOR_ERR_INPUT, "placement: %lld cores exceed the placement's 2^31 limit",
                          (long long)info->cores);
    rotor_place *pl = calloc(1, sizeof *pl);
    if (!pl) return rotor_nomem(err);
    pl->e = *e;
    pl->p = *p;
    pl->info = *info;
    pl->na = e->naxes;
    pl->nt = e->ntensors;
    pl->cores = info->cores;
    int64_t s = 1;
    for (int a = pl->na - 1; a >= 0; a--) {
        pl->cstride[a] = s;
        s *= p->fop[a];
    }
    pl->loop_suffix[pl->na] = 1;
    for (int l = pl->na - 1; l >= 0; l--)
        pl->loop_suffix[l] = pl->loop_suffix[l + 1] * info->steps[p->order[l]];
    for (int t = 0; t < pl->nt; t++) {
        int64_t w = 1;
        for (int a = pl->na - 1; a >= 0; a--) {
            bool has = e->tensors[t].has_axis[a];
            pl->bstride[t][a] = has ? w : 0;
            if (has) w *= p->ft[t][a];
        }
    }
    build_digits(pl);
    for (int t = 0; t < pl->nt; t++) pl->nrings[t] = pl->cores / info->sharing[t] * info->rings[t];
    pl->off = calloc((size_t)(pl->cores * pl->na), sizeof *pl->off);
    if (!pl->off) {
        rotor_place_free(pl);
        return rotor_nomem(err);
    }
    rotor_status st = choose_offsets(pl, err);
    if (st) {
        rotor_place_free(pl);
        return st;
    }
    *out = pl;
    return ROTOR_OK;
}

rotor_status rotor_place_make(const rotor_expr *e, const rotor_plan *p, const rotor_plan_info *info,
                              rotor_place **out, rotor_error *err) {
    rotor_place *pl;
    rotor_status st = place_offsets(e, p, info, &pl, err);
    for (int t = 0; st == ROTOR_OK && t < pl->nt; t++) st = build_rings(pl, t, err);
    if (st) {
        rotor_place_free(pl);
        return st;
    }
    *out = pl;
    return ROTOR_OK;
}

rotor_status rotor_place_make_partitions(const rotor_expr *e, const rotor_plan *p, const rotor_plan_info *info,
                                         rotor_place **out, rotor_error *err) {
    return place_offsets(e, p, info, out, err);
}

rotor_status rotor_place_summarize(const rotor_expr *e, const rotor_plan *p, const rotor_plan_info *info,
                                   rotor_place_summary *out, rotor_error *err) {
    memset(out, 0, sizeof *out);
    rotor_place *pl;
    rotor_status st = place_offsets(e, p, info, &pl, err);
    if (st) return st;
    for (int a = 0; a < pl->na; a++) {
        out->ndigits[a] = pl->nd[a];
        for (int u = 0; u < pl->nd[a]; u++) out->radix[a][u] = pl->radix[a][u];
    }
    for (int t = 0; t < pl->nt; t++) out->rings[t] = pl->nrings[t];
    rotor_place_free(pl);
    return ROTOR_OK;
}
