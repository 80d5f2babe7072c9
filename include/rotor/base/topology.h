/* rotor — a topology's geometry: how far apart two cores of one chip are,
 * and how far a core is from the chip's edge (Elk §2.1: the IPU's
 * all-to-all exchange; §5: a 2D mesh with HBM along the grid's edges).
 *
 * The geometry belongs with the topology, in the stage below its users: the
 * energy model (compile/energy.c), the simulator's network (sim/simnet.c),
 * its replay (sim/replay.c) and the schedule's energy (hbm/schedenergy.c)
 * all read it here.  What is simulation (ports, links and routes as
 * resources) stays in sim/simnet.c.  One table row per topology
 * (topology.c's TOPOLOGIES[]), as op/cost.c's models[] and sim/simnet.c's
 * own table. */
#ifndef ROTOR_TOPOLOGY_H
#define ROTOR_TOPOLOGY_H

#include <stddef.h>
#include <stdint.h>

#include "rotor/base/chip.h"

/* All-to-all: any two cores are one exchange apart (Elk §2.1). */
#define ROTOR_TOPO_A2A_HOPS 1

typedef struct rotor_topo {
    rotor_topology id;
    const char *name; /* as chip files write it */
    /* Hops between any two cores of one chip when every pair is the same
     * distance apart (all-to-all: ROTOR_TOPO_A2A_HOPS); 0 when the distance
     * depends on the pair. */
    int pair_hops;
    /* Hops between cores a and b of one chip, by their index within it. */
    int64_t (*core_hops)(const rotor_chip *c, int64_t a, int64_t b);
    /* Hops from core `core` (index within its chip) to the nearest edge of
     * the chip's grid, where the HBM ports are; 0 where every core is on the
     * exchange. */
    int64_t (*edge_hops)(const rotor_chip *c, int64_t core);
    /* Ports on the chip's edge a controller can use (mesh: every edge
     * router's off-grid link, 2 (W + H)); 0 where controllers sit on the
     * exchange. */
    int64_t (*edge_ports)(const rotor_chip *c);
} rotor_topo;

/* The row of topology id, NULL for an unknown id. */
const rotor_topo *rotor_topo_find(rotor_topology id);

/* The row whose name is the len bytes at s (a chip file's "topology"),
 * NULL for none: chip files read and write the names of this table. */
const rotor_topo *rotor_topo_named(const char *s, size_t len);

/* On-chip hops between cores a and b (global indices: the position within
 * each one's chip; a transfer across chips pays the inter-chip hop besides,
 * which the callers count their own way). */
int64_t rotor_topo_hops(const rotor_chip *c, int64_t a, int64_t b);

/* ---- the 2D mesh's geometry, inline for the simulator's hot paths ---- */

/* Dimension-order (XY) hops between local cores a and b of a mesh w wide:
 * |dx| + |dy|. */
static inline int64_t rotor_topo_mesh_hops(int64_t w, int64_t a, int64_t b) {
    int64_t dx = a % w - b % w, dy = a / w - b / w;
    return (dx < 0 ? -dx : dx) + (dy < 0 ? -dy : dy);
}

/* Hops from local core c of a w x h mesh to the nearest edge of the grid. */
static inline int64_t rotor_topo_mesh_edge_hops(int64_t w, int64_t h, int64_t c) {
    int64_t x = c % w, y = c / w, d = x < w - 1 - x ? x : w - 1 - x;
    if (y < d) d = y;
    return h - 1 - y < d ? h - 1 - y : d;
}

#endif
