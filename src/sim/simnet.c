/* simnet.c — the simulator's network (Elk §2.1, §5): resources, topologies
 * and routes.
 *
 * Decisions (docs/simulator.md has them with the reasons):
 *  - Every resource is a FIFO server.  Ports and mesh links have one lane at
 *    the link bandwidth.  The inter-chip link and each HBM controller are
 *    pools: a total bandwidth cut into lanes of (about) the link rate, so a
 *    pool serves many transfers at once but never more than its total
 *    bandwidth (Elk §5: "track the in-flight inter-chip transfer events and
 *    cap their total bandwidth").
 *  - A transfer runs at the rate of its route's slowest resource and pays
 *    one link latency per hop.  Its resources are pipelined (virtual
 *    cut-through), over all-to-all's two ports (one hop) as over a mesh's
 *    links: the head reaches the route's i-th resource after i latencies
 *    and the bytes hold it for bytes / rate from then, so a link is busy
 *    only while the packet crosses it.  Holding every link
 *    of a 1,000-hop route for the whole transfer, as the first model did,
 *    made a wafer's setup exchange of tiny pieces ~1,000x slower than its
 *    links' bytes allow (docs/simulator.md, "Pipelined links").
 *  - All-to-all (IPU exchange, Elk §2.1): route = the sender's out port and
 *    the receiver's in port, one hop.  HBM controllers are nodes on the
 *    exchange: the controller stands in for the port on its side.
 *  - 2D mesh: dimension-order routing, X first then Y, one hop per link.
 *  - HBM on the mesh (Elk §5: "we attach HBM controllers to the edges of the
 *    mesh grid"): every edge router's unused link, the one that would lead
 *    off the grid, is an HBM port at the link bandwidth, 2 (W + H) per chip
 *    (a corner has two).  The ports, in ring order (north side west to east,
 *    east side north to south, south side east to west, west side south to
 *    north), are cut into one contiguous segment per controller.  A load
 *    enters through the port of its controller nearest the receiver (a
 *    multicast: its first receiver; ties: the first in ring order), one hop,
 *    then follows the XY route; a store leaves through the port nearest its
 *    sender.  So a controller's bandwidth reaches the chip over many links,
 *    as HBM placed along a die's edges does, and every byte still crosses
 *    the edge: the chip takes in at most 2 (W + H) link rates of HBM data
 *    (32 x 46 at 5.5 GB/s: 858 GB/s), whatever the controllers deliver.
 *  - Several chips: the route runs on the source chip (mesh: to the
 *    destination's coordinates), then crosses the inter-chip pool, one more
 *    hop, into the destination chip (all-to-all: its in port). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/base/error.h"
#include "rotor/base/topology.h"
#include "simint.h"

/* The inter-chip pool, when src and dst sit on different chips. */
static void push_interchip(const rotor_sim *s, int64_t src, int64_t dst, sim_route *r) {
    if (sim_node_chip(s, src) == sim_node_chip(s, dst)) return;
    sim_route_push(r, s->res_interchip);
    r->hops++;
}

/* ---- all-to-all ------------------------------------------------------------ */

/* Resources 2c and 2c+1: core c's out and in ports. */
static void a2a_init(rotor_sim *s) {
    for (int64_t c = 0; c < s->cores; c++) {
        s->res[sim_a2a_out(c)].kind = SIM_RES_OUT;
        s->res[sim_a2a_in(c)].kind = SIM_RES_IN;
    }
}

static void a2a_route(const rotor_sim *s, int64_t src, int64_t dst, int64_t via, sim_route *r) {
    (void)via; /* every core is one exchange away from a controller */
    /* the out port where the head leaves, the in port one latency later
     * (docs/simulator.md, "Pipelined links") */
    if (!sim_node_is_hbm(s, src)) sim_route_push(r, sim_a2a_out(src));
    r->hops += ROTOR_TOPO_A2A_HOPS; /* one exchange, whoever the endpoints are */
    push_interchip(s, src, dst, r);
    if (!sim_node_is_hbm(s, dst)) sim_route_push(r, sim_a2a_in(dst));
}

static int64_t a2a_hops(const rotor_sim *s, int64_t src, int64_t dst) {
    /* as a2a_route and push_interchip count */
    return ROTOR_TOPO_A2A_HOPS + (sim_node_chip(s, src) != sim_node_chip(s, dst));
}

/* Resource 2c + d is core c's port: out for d = 0, in for d = 1 (sim_a2a_out, sim_a2a_in). */
static void a2a_name(const rotor_sim *s, int64_t res, char *buf, size_t size) {
    int64_t core = res / 2;
    snprintf(buf, size, "%s c%lld.%lld", res % 2 ? "in" : "out", (long long)(core / s->cpc),
             (long long)(core % s->cpc));
}

/* ---- 2D mesh ----------------------------------------------------------------- */

/* Resource 4c+d: the link leaving core c in direction d. */
enum { DIR_XP = 0, DIR_XM = 1, DIR_YP = 2, DIR_YM = 3 };
static const int DX[4] = {1, -1, 0, 0}, DY[4] = {0, 0, 1, -1};

/* ---- HBM ports on the mesh edge ----
 * Port i of a chip, in ring order: north side i in [0, W) at core (i, 0);
 * east [W, W+H) at (W-1, t); south [W+H, 2W+H) at (W-1-t, H-1); west
 * [2W+H, 2W+2H) at (0, H-1-t), t the index within its side. */

/* Controller k's segment of the ports: [seg_lo(k), seg_hi(k)), never empty;
 * with more controllers than ports, neighbours share one. */
static int64_t seg_lo(const rotor_sim *s, int64_t k) { return k * s->nports / s->ctrl_per_chip; }
static int64_t seg_hi(const rotor_sim *s, int64_t k) {
    int64_t hi = (k + 1) * s->nports / s->ctrl_per_chip, lo = seg_lo(s, k);
    return hi > lo ? hi : lo + 1;
}

/* The controller port p belongs to: the last k with seg_lo(k) <= p. */
static int64_t port_ctrl(const rotor_sim *s, int64_t p) {
    int64_t n = s->ctrl_per_chip, k = ((p + 1) * n + s->nports - 1) / s->nports - 1;
    return k < 0 ? 0 : k >= n ? n - 1 : k;
}

/* Port p's core within its chip; *dir (if non-NULL) gets the off-grid
 * direction the port leads to. */
static int64_t port_core(const rotor_sim *s, int64_t p, int *dir) {
    int64_t w = s->chip.mesh_width, h = s->chip.mesh_height, core;
    int d;
    if (p < w) d = DIR_YM, core = p;
    else if (p < w + h) d = DIR_XP, core = (p - w) * w + w - 1;
    else if (p < 2 * w + h) d = DIR_YP, core = (h - 1) * w + (w - 1 - (p - w - h));
    else d = DIR_XM, core = (h - 1 - (p - 2 * w - h)) * w;
    if (dir) *dir = d;
    return core;
}

/* The port in [lo, hi) nearest local core c (hops from the port's core to c),
 * ties to the first.  On each side, hops are base + |u - t| for the port at
 * index t of the side, so the nearest of a run of t is u clamped to it. */
static int64_t port_nearest(const rotor_sim *s, int64_t lo, int64_t hi, int64_t c) {
    int64_t w = s->chip.mesh_width, h = s->chip.mesh_height, x = c % w, y = c / w;
    const int64_t start[4] = {0, w, w + h, 2 * w + h}, len[4] = {w, h, w, h};
    const int64_t u[4] = {x, y, w - 1 - x, h - 1 - y}, base[4] = {y, w - 1 - x, h - 1 - y, x};
    int64_t best = -1, best_d = INT64_MAX;
    for (int side = 0; side < 4; side++) {
        int64_t a = lo > start[side] ? lo : start[side];
        int64_t b = hi < start[side] + len[side] ? hi : start[side] + len[side];
        if (a >= b) continue;
        int64_t t = u[side], tlo = a - start[side], thi = b - 1 - start[side];
        t = t < tlo ? tlo : t > thi ? thi : t;
        int64_t d = base[side] + (u[side] > t ? u[side] - t : t - u[side]);
        if (d < best_d) {
            best_d = d;
            best = start[side] + t;
        }
    }
    return best;
}

static int64_t port_res(const rotor_sim *s, int64_t chip, int64_t p, bool out) {
    return s->res_port0 + 2 * (chip * s->nports + p) + out;
}

/* Node's core index within its chip (a core only). */
static int64_t mesh_local(const rotor_sim *s, int64_t node) { return node % s->cpc; }

static void mesh_init(rotor_sim *s) {
    int64_t w = s->chip.mesh_width, h = s->chip.mesh_height;
    for (int64_t c = 0; c < s->cores; c++) {
        int64_t x = (c % s->cpc) % w, y = (c % s->cpc) / w;
        for (int d = 0; d < 4; d++) {
            int64_t nx = x + DX[d], ny = y + DY[d];
            bool inside = nx >= 0 && nx < w && ny >= 0 && ny < h;
            s->res[4 * c + d].kind = inside ? SIM_RES_LINK : SIM_RES_NONE;
        }
    }
    for (int64_t i = 0; s->res_port0 >= 0 && i < 2 * s->nports * s->chip.chips; i++)
        s->res[s->res_port0 + i].kind = SIM_RES_PORT;
}

/* Dimension-order routing: along X to the destination's column, then along
 * Y.  A load from a controller starts at its port nearest `via`; a store
 * ends at the controller's port nearest the sender. */
static void mesh_route(const rotor_sim *s, int64_t src, int64_t dst, int64_t via, sim_route *r) {
    int64_t w = s->chip.mesh_width;
    int64_t base = sim_node_chip(s, src) * s->cpc, from, to, out_port = -1;
    if (sim_node_is_hbm(s, src)) {
        int64_t k = (src - s->cores) % s->ctrl_per_chip;
        int64_t p = port_nearest(s, seg_lo(s, k), seg_hi(s, k), mesh_local(s, via));
        sim_route_push(r, port_res(s, sim_node_chip(s, src), p, false));
        r->hops++;
        from = port_core(s, p, NULL);
    } else {
        from = mesh_local(s, src);
    }
    if (sim_node_is_hbm(s, dst)) {
        int64_t k = (dst - s->cores) % s->ctrl_per_chip;
        out_port = port_nearest(s, seg_lo(s, k), seg_hi(s, k), from);
        to = port_core(s, out_port, NULL);
    } else {
        to = mesh_local(s, dst);
    }
    int64_t x = from % w, y = from / w, tx = to % w, ty = to / w;
    while (x != tx) {
        int d = tx > x ? DIR_XP : DIR_XM;
        sim_route_push(r, 4 * (base + y * w + x) + d);
        x += DX[d];
        r->hops++;
    }
    while (y != ty) {
        int d = ty > y ? DIR_YP : DIR_YM;
        sim_route_push(r, 4 * (base + y * w + x) + d);
        y += DY[d];
        r->hops++;
    }
    push_interchip(s, src, dst, r);
    if (out_port >= 0) {
        sim_route_push(r, port_res(s, sim_node_chip(s, dst), out_port, true));
        r->hops++;
    }
}

/* The mesh's hops: between two cores, the geometry's (dimension order)
 * and the inter-chip hop, as mesh_route and push_interchip count them; with
 * a controller, the route's (its ports included). */
static int64_t mesh_hops(const rotor_sim *s, int64_t src, int64_t dst) {
    if (!sim_node_is_hbm(s, src) && !sim_node_is_hbm(s, dst))
        return rotor_topo_mesh_hops(s->chip.mesh_width, mesh_local(s, src), mesh_local(s, dst)) +
               (sim_node_chip(s, src) != sim_node_chip(s, dst));
    sim_route r;
    sim_net_route(s, src, dst, &r);
    return r.hops;
}

static void mesh_name(const rotor_sim *s, int64_t res, char *buf, size_t size) {
    if (s->res_port0 >= 0 && res >= s->res_port0) { /* "port c0.1 (-1,5)->(0,5)": chip.controller, in */
        int64_t i = (res - s->res_port0) / 2, p = i % s->nports, w = s->chip.mesh_width;
        int d;
        int64_t core = port_core(s, p, &d);
        long long x = (long long)(core % w), y = (long long)(core / w), ox = x + DX[d], oy = y + DY[d];
        bool out = (res - s->res_port0) % 2;
        snprintf(buf, size, "port c%lld.%lld (%lld,%lld)->(%lld,%lld)", (long long)(i / s->nports),
                 (long long)port_ctrl(s, p), out ? x : ox, out ? y : oy, out ? ox : x, out ? oy : y);
        return;
    }
    int64_t core = res / 4, d = res % 4, w = s->chip.mesh_width, local = core % s->cpc;
    long long x = (long long)(local % w), y = (long long)(local / w);
    snprintf(buf, size, "link c%lld (%lld,%lld)->(%lld,%lld)", (long long)(core / s->cpc), x, y,
             x + DX[d], y + DY[d]);
}

static const sim_topology TOPOLOGIES[] = {
    {ROTOR_TOPO_ALL_TO_ALL, 2, ROTOR_TOPO_A2A_HOPS, a2a_init, a2a_route, a2a_hops, a2a_name},
    {ROTOR_TOPO_MESH, 4, 0, mesh_init, mesh_route, mesh_hops, mesh_name},
};

const sim_topology *sim_topology_find(rotor_topology id) {
    for (size_t i = 0; i < sizeof TOPOLOGIES / sizeof TOPOLOGIES[0]; i++)
        if (TOPOLOGIES[i].id == id) return &TOPOLOGIES[i];
    return NULL;
}

/* ---- pools --------------------------------------------------------------- */

/* Lanes for a pool of `total` GB/s whose transfers run at most at `link` GB/s:
 * the fewest lanes no faster than the link, so that transfers at the link
 * rate can use the whole pool (181 lanes of 5.525 GB/s would cap a 1,000 GB/s
 * controller at 181 x 5.5 = 995.5 GB/s; 182 lanes of 5.4945 GB/s give it all). */
static int32_t pool_lanes(double total, double link) {
    double n = ceil(total / link * (1 - 1e-12)); /* 22 / 5.5 is 4, not 4.000...1 */
    if (n < 1) return 1;
    return n > SIM_MAX_LANES ? SIM_MAX_LANES : (int32_t)n;
}

static void pool_setup(rotor_sim *s, int64_t res, sim_res_kind kind, double total) {
    sim_res *p = &s->res[res];
    p->kind = (uint8_t)kind;
    p->nlanes = pool_lanes(total, s->chip.link_gbps);
    p->gbps = total / p->nlanes;
    p->lane0 = (int32_t)s->nlanes;
    s->nlanes += p->nlanes;
}

void sim_pool_sift(rotor_sim *s, const sim_res *p) {
    sim_lane *h = s->lanes + p->lane0, x = h[0];
    int32_t n = p->nlanes, i = 0;
    for (;;) {
        int32_t c = 4 * i + 1;
        if (c >= n) break;
        int32_t best = c, end = c + 4 < n ? c + 4 : n;
        for (int32_t j = c + 1; j < end; j++)
            if (h[j] < h[best]) best = j;
        if (h[best] >= x) break;
        h[i] = h[best];
        i = best;
    }
    h[i] = x;
}

void sim_net_reset(rotor_sim *s) {
    memset(s->res_free, 0, sizeof *s->res_free * (size_t)s->nres);
    memset(s->res_busy, 0, sizeof *s->res_busy * (size_t)s->nres);
    for (int64_t i = s->pool0; i < s->pool1; i++) {
        const sim_res *p = &s->res[i];
        for (int32_t l = 0; p->lane0 >= 0 && l < p->nlanes; l++) {
            s->lanes[p->lane0 + l] = sim_lane_make(0, l); /* equal times: sorted by lane is a heap */
        }
    }
}

/* ---- the network ------------------------------------------------------------ */

rotor_status sim_net_init(rotor_sim *s, rotor_error *err) {
    const rotor_chip *c = &s->chip;
    s->topo = sim_topology_find(c->topology);
    s->geo = rotor_topo_find(c->topology);
    if (!s->topo || !s->geo) return rotor_fail(err, ROTOR_ERR_INPUT, "sim: topology %d has no simulator", (int)c->topology);
    int64_t per_core = s->topo->res_per_core, ctrls = s->nodes - s->cores;
    s->nports = ctrls > 0 ? s->geo->edge_ports(c) : 0;
    int64_t gbs = c->gb_bytes > 0 ? 2 * c->clusters * c->chips : 0; /* a GB a cluster: write and read sides */
    s->nres = per_core * s->cores + (c->chips > 1) + ctrls + gbs + 2 * s->nports * c->chips;
    if (s->nres > INT32_MAX / 2)
        return rotor_fail(err, ROTOR_ERR_INPUT, "sim: %lld network resources do not fit int32 ids",
                          (long long)s->nres);
    s->node_chip = malloc(sizeof *s->node_chip * (size_t)s->nodes);
    if (!s->node_chip) return rotor_nomem(err);
    for (int64_t node = 0; node < s->nodes; node++)
        s->node_chip[node] = (int32_t)(node < s->cores ? node / s->cpc : (node - s->cores) / s->ctrl_per_chip);
    s->res = calloc((size_t)s->nres, sizeof *s->res);
    s->res_free = malloc(sizeof *s->res_free * (size_t)s->nres);
    s->res_busy = malloc(sizeof *s->res_busy * (size_t)s->nres);
    s->route_cap = s->geo->edge_ports(c) / 2 + 6; /* a mesh's XY route: at most W + H links; 2 GBs */
    s->scratch = malloc(sizeof *s->scratch * (size_t)s->route_cap);
    s->scratch_at = malloc(sizeof *s->scratch_at * (size_t)s->route_cap);
    if (!s->res || !s->res_free || !s->res_busy || !s->scratch || !s->scratch_at) return rotor_nomem(err);
    for (int64_t i = 0; i < s->nres; i++) {
        s->res[i].lane0 = -1;
        s->res[i].nlanes = 1;
        s->res[i].gbps = c->link_gbps;
    }
    int64_t next = per_core * s->cores;
    s->pool0 = next; /* the pools follow the cores' resources: inter-chip, the controllers, the GBs */
    s->pool1 = next + (c->chips > 1) + ctrls + gbs;
    s->res_interchip = c->chips > 1 ? next++ : -1;
    s->res_hbm0 = ctrls > 0 ? next : -1;
    s->res_gb0 = gbs > 0 ? next + ctrls : -1;
    s->gb_cluster = rotor_chip_cluster_cores(c);
    s->res_port0 = s->nports > 0 ? next + ctrls + gbs : -1;
    s->topo->init(s);
    if (s->res_interchip >= 0) pool_setup(s, s->res_interchip, SIM_RES_INTERCHIP, c->interchip_gbps);
    for (int64_t k = 0; k < ctrls; k++)
        pool_setup(s, s->res_hbm0 + k, SIM_RES_HBM, c->hbm_gbps / (double)c->hbm_controllers);
    for (int64_t k = 0; k < gbs; k++) pool_setup(s, s->res_gb0 + k, SIM_RES_GB, c->gb_gbps);
    s->lanes = calloc((size_t)s->nlanes + 1, sizeof *s->lanes);
    if (!s->lanes) return rotor_nomem(err);
    sim_net_reset(s);
    return ROTOR_OK;
}

int64_t rotor_sim_hbm_ports(const rotor_sim *s) { return s->nports; }

int64_t rotor_sim_hbm_port_nearest(const rotor_sim *s, int64_t core, int64_t *ctrl) {
    if (ctrl) *ctrl = -1;
    if (s->nports == 0 || core < 0 || core >= s->cores) return -1;
    int64_t p = port_nearest(s, 0, s->nports, core % s->cpc);
    if (ctrl) *ctrl = port_ctrl(s, p);
    return p;
}

rotor_status sim_net_check(const rotor_sim *s, int64_t src, int64_t dst, rotor_error *err) {
    if (sim_net_ok(s, src, dst)) return ROTOR_OK;
    const int64_t node[2] = {src, dst};
    const char *field[2] = {"src", "dst"};
    for (int i = 0; i < 2; i++)
        if (node[i] < 0 || node[i] >= s->nodes) {
            if (s->nodes > s->cores)
                return rotor_fail(err, ROTOR_ERR_INPUT,
                                  "%s: node %lld does not exist (cores 0..%lld, HBM controllers %lld..%lld)",
                                  field[i], (long long)node[i], (long long)s->cores - 1,
                                  (long long)s->cores, (long long)s->nodes - 1);
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "%s: node %lld does not exist (cores 0..%lld, no HBM controllers)",
                              field[i], (long long)node[i], (long long)s->cores - 1);
        }
    if (src == dst) return rotor_fail(err, ROTOR_ERR_INPUT, "src and dst are both node %lld", (long long)src);
    if (sim_node_is_hbm(s, src) && sim_node_is_hbm(s, dst))
        return rotor_fail(err, ROTOR_ERR_INPUT, "src %lld and dst %lld are both HBM controllers",
                          (long long)src, (long long)dst);
    return ROTOR_OK;
}

rotor_status sim_net_time(const rotor_sim *s, int64_t bytes, double gbps, int64_t hops, int64_t *ps,
                          rotor_error *err) {
    /* bytes / (gbps * 1e9 B/s) seconds = bytes * 1000 / gbps ps, rounded to
     * the nearest ps (exact for the round rates of the tests). */
    double stream = (double)bytes * 1000.0 / gbps;
    int64_t lat, ps_stream = stream < (double)SIM_TIME_MAX ? llround(stream) : SIM_TIME_MAX;
    if (ps_stream >= SIM_TIME_MAX || !rotor_mul_i64(hops, s->latency_ps, &lat) || lat + ps_stream >= SIM_TIME_MAX)
        return rotor_fail(err, ROTOR_ERR_INPUT, "bytes: %lld bytes take longer than 2^50 ps",
                          (long long)bytes);
    *ps = lat + ps_stream;
    return ROTOR_OK;
}

int64_t rotor_sim_resource_count(const rotor_sim *s) { return s->nres; }

void rotor_sim_resource_name(const rotor_sim *s, int64_t res, char *buf, size_t size) {
    if (res < 0 || res >= s->nres) snprintf(buf, size, "resource %lld?", (long long)res);
    else if (res == s->res_interchip) snprintf(buf, size, "inter-chip");
    else if (s->res_hbm0 >= 0 && res >= s->res_hbm0 && res < s->res_hbm0 + (s->nodes - s->cores)) {
        int64_t k = res - s->res_hbm0;
        snprintf(buf, size, "hbm c%lld.%lld", (long long)(k / s->ctrl_per_chip),
                 (long long)(k % s->ctrl_per_chip));
    } else if (s->res_gb0 >= 0 && res >= s->res_gb0 && res < s->res_gb0 + 2 * s->chip.clusters * s->chip.chips) {
        int64_t k = (res - s->res_gb0) / 2; /* "gb c0.3 write": chip 0's cluster 3 */
        snprintf(buf, size, "gb c%lld.%lld %s", (long long)(k / s->chip.clusters), (long long)(k % s->chip.clusters),
                 (res - s->res_gb0) % 2 ? "read" : "write");
    } else s->topo->name_res(s, res, buf, size);
}
