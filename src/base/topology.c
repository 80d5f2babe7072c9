/* topology.c — the topologies' geometry (header in rotor/base/topology.h).
 * Adding a topology is one row here and one in sim/simnet.c's table. */
#include "rotor/base/topology.h"

#include <stddef.h>
#include <string.h>

/* ---- all-to-all: one exchange between any two cores ---- */

static int64_t a2a_core_hops(const rotor_chip *c, int64_t a, int64_t b) {
    (void)c, (void)a, (void)b;
    return ROTOR_TOPO_A2A_HOPS;
}

static int64_t a2a_edge_hops(const rotor_chip *c, int64_t core) {
    (void)c, (void)core;
    return 0; /* the controllers are nodes on the exchange */
}

static int64_t a2a_edge_ports(const rotor_chip *c) {
    (void)c;
    return 0;
}

/* ---- 2D mesh, mesh_width x mesh_height cores per chip ---- */

static int64_t mesh_core_hops(const rotor_chip *c, int64_t a, int64_t b) {
    return rotor_topo_mesh_hops(c->mesh_width, a, b);
}

static int64_t mesh_edge_hops(const rotor_chip *c, int64_t core) {
    return rotor_topo_mesh_edge_hops(c->mesh_width, c->mesh_height, core);
}

static int64_t mesh_edge_ports(const rotor_chip *c) { return 2 * (c->mesh_width + c->mesh_height); }

static const rotor_topo TOPOLOGIES[] = {
    {ROTOR_TOPO_ALL_TO_ALL, "all-to-all", ROTOR_TOPO_A2A_HOPS, a2a_core_hops, a2a_edge_hops, a2a_edge_ports},
    {ROTOR_TOPO_MESH, "mesh", 0, mesh_core_hops, mesh_edge_hops, mesh_edge_ports},
};

const rotor_topo *rotor_topo_find(rotor_topology id) {
    for (size_t i = 0; i < sizeof TOPOLOGIES / sizeof TOPOLOGIES[0]; i++)
        if (TOPOLOGIES[i].id == id) return &TOPOLOGIES[i];
    return NULL;
}

const rotor_topo *rotor_topo_named(const char *s, size_t len) {
    for (size_t i = 0; i < sizeof TOPOLOGIES / sizeof TOPOLOGIES[0]; i++)
        if (strlen(TOPOLOGIES[i].name) == len && memcmp(TOPOLOGIES[i].name, s, len) == 0) return &TOPOLOGIES[i];
    return NULL;
}

int64_t rotor_topo_hops(const rotor_chip *c, int64_t a, int64_t b) {
    const rotor_topo *t = rotor_topo_find(c->topology); /* a valid chip's topology has a row */
    return t->core_hops(c, a % c->cores_per_chip, b % c->cores_per_chip);
}
