/* rotor — a plan laid on a 2D mesh, and what its data movement costs there
 * (issue 41; Elk §5: "maps each partitioned dimension to a mesh dimension";
 * WaferLLM's interleaved ring embedding, every ring step at most 2 hops).
 *
 * The placement (op/place.h) numbers a plan's cores 0 .. prod F_op - 1 by
 * their coordinates c_a.  On an all-to-all chip the number is the core.  On a
 * mesh, rotor_mesh_map_plan chooses where each coordinate sits:
 *   - every partitioned axis (F_op[a] > 1) goes whole to the mesh's X (along
 *     a row) or Y (along a column); several axes in one dimension nest, the
 *     axis that moves the most bytes innermost (stride 1), so its rings and
 *     reductions travel the shortest links;
 *   - along its dimension an axis's coordinates are folded in segments of
 *     its ring's length: 0, 2, 4, ..., 5, 3, 1, so that a ring's neighbours,
 *     wrap-around included, are at most 2 units apart and its sends in one
 *     direction use each link once;
 *   - of the 2^k ways to give the k partitioned axes a dimension, the one
 *     whose shifts and reduction cost least (ties: the first, X before Y
 *     bit by bit) is the plan's; the product of the X axes must fit the
 *     mesh's width, of the Y axes its height (one chip's mesh).
 * A plan with no such layout, a rotating tensor whose ring spans more than
 * one axis, or an output reduced over more than one axis or over rings that
 * also rotate, is not placed (ROTOR_ERR_INPUT naming the rule): the search
 * skips it, as Elk's planner skips plans its mesh mapping cannot hold.
 *
 * The costs are cost-model v1's terms with the mesh's routes counted
 * (docs/cost-model.md, "On a 2D mesh"):
 *   comm      = sum_X shifts(X) * bytes(X) * load_X / beta + (T - 1) * hops * alpha
 *   reduction = (R - 1) / R * bytes(Y) * load_R / beta + (R - 1) * hops_R * alpha
 * where load is the most transfers one link carries in one round (XY routes,
 * every core sending at once) and hops the longest route.  load >= 1 and
 * hops >= 1, so a mesh never prices a plan below v1 on all-to-all: the
 * search's v1 bounds still hold and the search stays exact. */
#ifndef ROTOR_MESHMAP_H
#define ROTOR_MESHMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/op/cost.h"
#include "rotor/op/expr.h"
#include "rotor/op/plan.h"

typedef struct rotor_mesh_map {
    int naxes;
    int64_t fop[ROTOR_MAX_AXES];
    int dim[ROTOR_MAX_AXES];       /* 0: X, 1: Y; -1 where F_op[a] = 1 */
    int64_t stride[ROTOR_MAX_AXES]; /* cores between neighbouring units of the axis */
    int64_t fold[ROTOR_MAX_AXES];   /* segment length of the interleaved fold */
    int64_t width, height;          /* the rectangle the plan occupies */
    int64_t mesh_width;             /* the chip's */
    /* the plan's mesh terms (seconds) and their geometry */
    double comm, reduction;
    int64_t hops, load;             /* over the rotating tensors */
    int64_t tload[ROTOR_MAX_TENSORS]; /* each rotating tensor's busiest link (0: it does not rotate) */
    int tdim[ROTOR_MAX_TENSORS];      /* ... and the mesh dimension its ring lies along */
    int64_t red_hops, red_load;     /* the output's reduction ring */
} rotor_mesh_map;

/* Lays plan p (info from rotor_plan_derive) on chip's mesh and prices it.
 * ROTOR_ERR_INPUT when the plan has no mesh layout (the message names the
 * rule); the chip must be a mesh. */
rotor_status rotor_mesh_map_plan(const rotor_expr *e, const rotor_chip *chip, const rotor_plan *p,
                                 const rotor_plan_info *info, rotor_mesh_map *out, rotor_error *err);

/* One step's shift terms of the laid-out plan (op/cost.h): hops x alpha,
 * each rotating tensor's bytes times its busiest link's sends over beta,
 * along its mesh dimension. */
void rotor_mesh_map_step(const rotor_mesh_map *m, const rotor_plan_info *info, const rotor_chip *chip,
                         rotor_shift_step *out);

/* Whether F_op (naxes factors) has a layout on chip's mesh: some split of
 * its partitioned axes into X and Y whose products fit the width and the
 * height (Elk §5's rule, as rotor_mesh_map_plan applies it).  The search
 * skips the F_op that have none before searching them (op/fopwalk.c). */
bool rotor_mesh_fits(const rotor_chip *chip, const int64_t *fop, int naxes);

/* The core of the chip's mesh (row-major, y * mesh_width + x) that plan core
 * `core` (placement numbering) occupies. */
int64_t rotor_mesh_map_core(const rotor_mesh_map *m, int64_t core);

/* The chip core of every plan core: phys[c] for c in 0 .. info->cores - 1.
 * The identity on a chip that is not a mesh, and for a plan with no mesh
 * layout (one chosen for another chip, replayed on a mesh: its cores in
 * row-major order, as they were before plans knew the mesh).  Fails only
 * for want of memory. */
rotor_status rotor_mesh_map_cores(const rotor_expr *e, const rotor_chip *chip, const rotor_plan *p,
                                  const rotor_plan_info *info, int64_t *phys, rotor_error *err);

/* A core k hops from `core` (global index) along its mesh row (east, else
 * west), else along its column: where a gather whose sources the program
 * does not record takes its k-th round from on a mesh (sim/replay.c,
 * compile/setuppieces.c).  On all-to-all, (core + k) mod cores. */
int64_t rotor_mesh_near(const rotor_chip *chip, int64_t core, int64_t k);

/* Adds `amount` to every link of the XY route from core src to core dst
 * (global indices on one chip's mesh) in links[4 * local + d], d = 0 east,
 * 1 west, 2 south (y + 1), 3 north, as sim/simnet.c routes a transfer, and
 * returns the route's hops.  links may be NULL (hops only). */
int64_t rotor_mesh_route(const rotor_chip *chip, int64_t src, int64_t dst, int64_t amount, int64_t *links);

/* The load of many transfers on a mesh's links, counted in O(1) a
 * transfer: an XY route is a run along a row and a run along a column, each
 * added to a difference array of its line; rotor_mesh_load_max sums them
 * up once, over the lines some route touched.  (A wafer's hand-off has a
 * million pieces of a thousand hops, and the compiler counts a hundred
 * hand-offs in one load, cleared between them.) */
typedef struct rotor_mesh_load {
    int64_t w, h;
    int64_t *row[2], *col[2]; /* per direction: h lines of w + 1, w lines of h + 1 */
    unsigned char *hit;       /* per line: rows east, west (h each), columns south, north (w each) */
} rotor_mesh_load;

rotor_status rotor_mesh_load_init(rotor_mesh_load *l, const rotor_chip *chip, rotor_error *err);
/* Adds amount along the XY route from core src to core dst (one chip);
 * returns its hops. */
int64_t rotor_mesh_load_add(rotor_mesh_load *l, int64_t src, int64_t dst, int64_t amount);
/* The same from mesh position (x, y) to (tx, ty). */
int64_t rotor_mesh_load_add_at(rotor_mesh_load *l, int64_t x, int64_t y, int64_t tx, int64_t ty, int64_t amount);
/* The most any one directed link carries. */
int64_t rotor_mesh_load_max(const rotor_mesh_load *l);
/* Back to no transfers (the lines touched since the last clear). */
void rotor_mesh_load_clear(rotor_mesh_load *l);
void rotor_mesh_load_free(rotor_mesh_load *l);

/* The setup exchange of an operator on a mesh (docs/cost-model.md, "On a 2D
 * mesh", "Setup"): link_bytes through its busiest link (the hand-off's, and
 * the gathers' from rotor_mesh_near), over the longest route of hops:
 * link_bytes / beta + rounds * hops * alpha (0 when nothing moves). */
double rotor_mesh_setup_s(const rotor_chip *chip, int64_t link_bytes, int64_t rounds, int64_t hops);

/* The busiest link's bytes and the longest route of `rounds` gathers of
 * `bytes` in equal pieces into every core, round k from rotor_mesh_near(k):
 * round k crosses k links, each link carrying the pieces of the k receivers
 * behind it. */
void rotor_mesh_gather(const rotor_chip *chip, int64_t bytes, int64_t rounds, int64_t *link_bytes, int64_t *hops);

/* One packet of a mesh's exchange: sender, receiver, bytes, and when it
 * ends after the exchange starts (ps). */
typedef struct rotor_mesh_packet {
    int64_t src, dst, bytes, end_ps;
} rotor_mesh_packet;

/* The exchange of pieces v[0..n) (receiver, sender, bytes: chip cores of one
 * chip's mesh) as the simulator runs it, and so as the compiler prices it
 * (docs/cost-model.md, "On a 2D mesh", "Setup").  Each piece is cut into
 * ceil(bytes / packet) equal packets; packets go out in rounds (round r:
 * the r-th packet of every piece, pieces by receiver then sender), all
 * ready at once; each starts at the first instant its route's i-th link is
 * free i latencies later, for every i, and holds that link for bytes / beta
 * from then (sim/simnet.c's pipelined links); it ends hops * alpha + bytes /
 * beta after its start.  In that order.  *out (NULL when n is 0;
 * free() it) gets the packets in that order; *makespan_ps the last end.
 * ROTOR_ERR_INPUT for a piece that crosses chips. */
rotor_status rotor_mesh_exchange(const rotor_chip *chip, const int64_t (*v)[3], int64_t n, int64_t packet,
                                 rotor_mesh_packet **out, int64_t *npackets, int64_t *makespan_ps, rotor_error *err);
/* The packets an exchange of v[0..n) sends: each piece cut into
 * ceil(bytes / packet). */
int64_t rotor_mesh_exchange_packets(const int64_t (*v)[3], int64_t n, int64_t packet);
/* The same, where only a makespan of at most limit_ps matters (mesh
 * refinement, compile.c): when no order ends within it, *makespan_ps is
 * above limit_ps and at most the least makespan, and *out is NULL; else
 * as rotor_mesh_exchange.  out may be NULL (the packets are not kept).
 * Each order stops at its first packet to end after the limit or after
 * the best order so far (it cannot be taken); *work grows by the packets
 * scheduled in all (the time it took, in a unit no clock changes). */
rotor_status rotor_mesh_exchange_within(const rotor_chip *chip, const int64_t (*v)[3], int64_t n, int64_t packet,
                                        int64_t limit_ps, rotor_mesh_packet **out, int64_t *npackets,
                                        int64_t *makespan_ps, int64_t *work, rotor_error *err);

#endif
