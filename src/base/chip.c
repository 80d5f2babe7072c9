/* chip.c — the chip model: presets, the chip file (docs/chip-format.md), --set
 * overrides and the derived quantities of cost-model-v1.md ("Chip").
 *
 * One table (FIELDS) describes every chip field: its key, kind, place in the
 * struct, range and whether a file may leave it out.  The file reader, --set,
 * rotor_chip_validate and the writer all walk that table, so a field's rule is
 * written once, in check_field().  Relations between fields (mesh shape, HBM
 * triple, ...) live in check_relations() and are part of rotor_chip_validate
 * only: rotor_chip_set checks one field, so that a sequence of --set options can
 * pass through intermediate states (topology=mesh before mesh_width=...); the
 * caller validates the chip as a whole once all of them are applied.
 */
#include "rotor/base/chip.h"
#include "rotor/base/gpu.h"
#include "rotor/base/readfile.h"
#include "jsontext.h"
#include "rotor/base/suggest.h"
#include "rotor/base/topology.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- presets ------------------------------------------------------------ */

#define KIB 1024LL
#define GIB (1024LL * 1024 * 1024)

typedef struct chip_preset {
    const char *name;
    rotor_chip chip;
} chip_preset;

/* Per-chip constants of one IPU Mk2 (GC200).  cost-model-v1.md "Chip" fixes
 * N = 1472, S = 624 KiB = 638976, beta = 5.5e9 B/s, alpha = 0,
 * R_mm = 250e12 / 1472, r = c = 16, B_buf = 8192, e = 2 (also Elk §1: 1472
 * cores, 624 KB, 5.5 GB/s; T10 Table 3: 250 TFLOPS FP16 per chip; T10 §5:
 * 8 KB shift buffer).  The spec does not fix R_vec: rotor uses the Mk2's
 * FP32 vector peak, 62.5 TFLOP/s per chip (a rotor decision, docs/chip-format.md). */
/* A chip that is one cluster of `cores` cores of one compute unit each, without
 * a GB (GraphTurbo Fig. 1's IPU: a tile is a core and its LB). */
#define FLAT_FIELDS(cores)                                                         \
    .clusters = 1, .cores_per_cluster = (cores), .compute_units = 1, .gb_bytes = 0, \
    .gb_gbps = 0.0, .offchip = ROTOR_OFFCHIP_HBM

#define IPU_MK2_TILE_FIELDS                                                        \
    FLAT_FIELDS(1472), .cores_per_chip = 1472, .sram_bytes = 624 * KIB, .link_gbps = 5.5,             \
    .link_latency_ns = 0.0, .matrix_tflops = 250.0, .vector_tflops = 62.5,         \
    .systolic_rows = 16, .systolic_cols = 16, .shift_buffer_bytes = 8 * KIB,       \
    .element_bytes = 2, IPU_MK2_ENERGY_FIELDS

/* ... and its exchange: all-to-all. */
#define IPU_MK2_CORE_FIELDS                                                        \
    IPU_MK2_TILE_FIELDS, .topology = ROTOR_TOPO_ALL_TO_ALL, .mesh_width = 0,       \
    .mesh_height = 0

/* Energy coefficients.  Estimates, not measurements: neither T10 nor Elk
 * reports energy, and Graphcore publishes no per-operation figures.
 * docs/chip-format.md ("Energy coefficients") derives each one: Horowitz's
 * 45 nm table (ISSCC 2014, "Computing's energy problem") scaled by an
 * assumed 1/4 for 7 nm, and round estimates for links, HBM, inter-chip lanes
 * and static power.  The per-event part is shared by every preset (the doc
 * says why); HBM and static power are each chip's own. */
#define EVENT_ENERGY_FIELDS                                                        \
    .mac_pj = 0.4, .vector_flop_pj = 0.6, .sram_read_pj = 0.3,                     \
    .sram_write_pj = 0.3, .link_pj = 1.0, .interchip_pj = 40.0
#define IPU_MK2_ENERGY_FIELDS EVENT_ENERGY_FIELDS, .hbm_pj = 31.2, .static_w = 25.0

/* Tenstorrent Wormhole n150 (docs/chip-format.md, "wormhole-n150", cites
 * each figure): 72 Tensix cores on an 8 x 9 grid (80 on 8 x 10, one row of 8
 * fused off), 1464 KiB of L1 each, 1 GHz.  Matrix: MVMUL at 4 fidelity
 * phases (FP16), 1.024 TFLOP/s a core, 72 x 1.024 = 73.728 (the spec sheet's
 * 74).  Vector: the SFPU's FP32 SFPMAD, 0.064 TFLOP/s a core.  NoC: 32 B a
 * cycle per router-to-router link, 9 cycles a hop.  12 GiB GDDR6 at 288 GB/s
 * in 6 banks of 2 GiB.  Its two NoCs are opposite-flowing 2D tori; rotor
 * models a mesh (the doc says where that errs each way).  Compute overlaps
 * the NoC: two of a Tensix's five RISC-V cores move data while the other
 * three drive the matrix and vector units. */
#define WORMHOLE_N150_FIELDS                                                       \
    FLAT_FIELDS(72), .cores_per_chip = 72, .sram_bytes = 1464 * KIB, .link_gbps = 32.0,             \
    .link_latency_ns = 9.0, .matrix_tflops = 73.728, .int8_tops = 0.0,             \
    .vector_tflops = 4.608, .systolic_rows = 32, .systolic_cols = 32,              \
    .shift_buffer_bytes = 8 * KIB, .element_bytes = 2, .topology = ROTOR_TOPO_MESH,\
    .mesh_width = 8, .mesh_height = 9, .chips = 1, .interchip_gbps = 0.0,          \
    .hbm_bytes = 12 * GIB, .hbm_gbps = 288.0, .hbm_controllers = 6,                \
    .compute_overlap = 1

/* Cerebras WSE-2 (docs/chip-format.md, "wse2"): the 750 x 994 grid a program
 * may use on a CS-2 (fabric 757 x 996, less memcpy's 7 columns and 2 rows),
 * 745,500 cores of 48 KiB at 1.1 GHz; 32-bit wavelets, one a cycle per link
 * and direction (4.4 GB/s), about 1 ns a hop.  Assumed: 4 FP16 FMAC lanes a
 * core (8.8 GFLOP/s), 4 FP16 lanes of vector work (4.4 GFLOP/s).  No HBM:
 * weights stream from MemoryX, outside the wafer.  Compute overlaps the
 * fabric: each core's router forwards wavelets while its compute engine
 * runs (dataflow tasks start on arriving data). */
#define WSE2_FIELDS                                                                \
    FLAT_FIELDS(745500), .cores_per_chip = 745500, .sram_bytes = 48 * KIB, .link_gbps = 4.4,            \
    .link_latency_ns = 1.0, .matrix_tflops = 6560.4, .int8_tops = 0.0,             \
    .vector_tflops = 3280.2, .systolic_rows = 1, .systolic_cols = 4,               \
    .shift_buffer_bytes = 1 * KIB, .element_bytes = 2, .topology = ROTOR_TOPO_MESH,\
    .mesh_width = 750, .mesh_height = 994, .chips = 1, .interchip_gbps = 0.0,      \
    .hbm_bytes = 0, .hbm_gbps = 0.0, .hbm_controllers = 0, .compute_overlap = 1

/* Stream Computing's STCP920, GraphTurbo's target (§5 Eq. 2; NeuralScale,
 * CARRV 2021, the paper's [51]; docs/chip-format.md, "stcp920", gives each
 * figure's source or says it is assumed).  From the paper: d = 4 clusters of
 * c = 8 cores, u = 3 compute units a core (a vector core, the VME, the MME),
 * 64 KiB of L1 a core as its LB, 8 MiB of LLB a cluster as its GB, DDR at
 * 136 GB/s (§5.6).  From RISC-V International's NeuralScale post (July 2021):
 * 32 cores, 128 TFLOP/s FP16 and 256 TOP/s INT8 at 1.0 GHz.  Assumed: the
 * vector rate (1/8 of the matrix rate), a 32 x 64 MME, a 64 GB/s port from a
 * core to its LLB (64 B a cycle) and the LLB's 8 ports (512 GB/s), 20 ns a
 * shift, 64 GiB of DDR on 4 controllers (Table 2's DLRM holds 48 GB of
 * embedding tables there), FP16 elements.  The cores exchange
 * through their cluster's LLB: all-to-all at the port's rate, the LLB a
 * shared resource in the simulator.  A DSA's DMA engines move data while
 * its units compute (compute_overlap). */
#define STCP920_FIELDS                                                             \
    .cores_per_chip = 32, .clusters = 4, .cores_per_cluster = 8, .compute_units = 3, \
    .sram_bytes = 64 * KIB, .gb_bytes = 8 * 1024 * KIB, .gb_gbps = 512.0,          \
    .link_gbps = 64.0, .link_latency_ns = 20.0, .matrix_tflops = 128.0,            \
    .int8_tops = 256.0, .vector_tflops = 16.0, .systolic_rows = 32,                \
    .systolic_cols = 64, .shift_buffer_bytes = 8 * KIB, .element_bytes = 2,         \
    .topology = ROTOR_TOPO_ALL_TO_ALL, .mesh_width = 0, .mesh_height = 0,          \
    .chips = 1, .interchip_gbps = 0.0, .offchip = ROTOR_OFFCHIP_DDR,               \
    .hbm_bytes = 64 * GIB, .hbm_gbps = 136.0, .hbm_controllers = 4,                \
    .compute_overlap = 1

/* KAPLA's edge inference device (KAPLA §V "Hardware architectures", Fig. 10:
 * one node, a TPU-like systolic array [25] and a global buffer; its sizes
 * are lost from the paper's text).  rotor's stand-in (docs/chip-format.md,
 * "kapla-edge"; all assumed, after Google's Edge TPU: 4 TOP/s, 8 MiB of
 * on-chip SRAM): the array as 16 cores of an 8 x 16 systolic block each
 * (2,048 MACs at 1 GHz: 4.096 TFLOP/s FP16), the buffer as 512 KiB a core
 * (8 MiB), 8 GB/s and 10 ns between cores, all-to-all (a core reaches any
 * other through the buffer), FP16 (KAPLA's 16-bit MACs), no off-chip memory
 * (as ipu-mk2: a layer must fit on chip).  Energy: the shared per-event
 * estimates; static power 20 % of an assumed 2 W. */
#define KAPLA_EDGE_FIELDS                                                          \
    FLAT_FIELDS(16), .cores_per_chip = 16, .sram_bytes = 512 * KIB, .link_gbps = 8.0,            \
    .link_latency_ns = 10.0, .matrix_tflops = 4.096, .int8_tops = 0.0,             \
    .vector_tflops = 0.512, .systolic_rows = 8, .systolic_cols = 16,               \
    .shift_buffer_bytes = 8 * KIB, .element_bytes = 2, .topology = ROTOR_TOPO_ALL_TO_ALL, \
    .mesh_width = 0, .mesh_height = 0, .chips = 1, .interchip_gbps = 0.0,          \
    .hbm_bytes = 0, .hbm_gbps = 0.0, .hbm_controllers = 0

static const chip_preset PRESETS[] = {
    {"ipu-mk2",
     {.name = "ipu-mk2", IPU_MK2_CORE_FIELDS, .chips = 1, .interchip_gbps = 0.0,
      .hbm_bytes = 0, .hbm_gbps = 0.0, .hbm_controllers = 0}},
    /* IPU-POD4: 4 x IPU Mk2, 5,888 cores, 640 GB/s aggregate inter-chip
     * bandwidth (Elk §5 "Emulation framework"; T10 §6.5 exposes the 4 chips as
     * one 5,888-core V-IPU).  HBM as emulated in Elk §6.1: 4 HBM3E modules per
     * chip, 16 TB/s over 4 chips = 4000 GB/s and 4 controllers per chip.  Elk
     * states no capacity: rotor assumes 24 GiB per HBM3E stack (Micron HBM3E
     * 8-high, Elk's citation), 4 x 24 GiB = 96 GiB per chip. */
    {"ipu-pod4",
     {.name = "ipu-pod4", IPU_MK2_CORE_FIELDS, .chips = 4, .interchip_gbps = 640.0,
      .hbm_bytes = 4 * 24 * GIB, .hbm_gbps = 4000.0, .hbm_controllers = 4}},
    /* IPU-POD16: 16 x IPU Mk2 (four IPU-M2000 machines of four GC200 each,
     * joined by IPU-Link cables; Graphcore's IPU-POD16 Direct Attach and
     * IPU-M2000 datasheets), 23,552 cores.  Inter-chip: rotor's pool is the
     * aggregate bandwidth, and it keeps ipu-pod4's per chip, 640 / 4 = 160
     * GB/s, so 16 x 160 = 2560 GB/s (a rotor decision: one M2000's IPUs and
     * the machines are joined by the same IPU-Links, and Elk's figure is the
     * only one measured for this model).  HBM per chip as ipu-pod4's, Elk §6.1. */
    {"ipu-pod16",
     {.name = "ipu-pod16", IPU_MK2_CORE_FIELDS, .chips = 16, .interchip_gbps = 2560.0,
      .hbm_bytes = 4 * 24 * GIB, .hbm_gbps = 4000.0, .hbm_controllers = 4}},
    /* ipu-mk2's cores, SRAM, compute and links on a 32 x 46 2D mesh (Elk §5
     * compares the all-to-all and mesh chips), for side-by-side runs with
     * ipu-mk2: exactly ipu-mk2 with --set topology=mesh --set mesh_width=32
     * --set mesh_height=46, under its own name. */
    {"ipu-mk2-mesh",
     {.name = "ipu-mk2-mesh", IPU_MK2_TILE_FIELDS, .topology = ROTOR_TOPO_MESH,
      .mesh_width = 32, .mesh_height = 46, .chips = 1, .interchip_gbps = 0.0,
      .hbm_bytes = 0, .hbm_gbps = 0.0, .hbm_controllers = 0}},
    /* Energy: the shared per-event estimates; GDDR6 (an estimate of 7.5 pJ a
     * bit) and static power (20 % of the board's 160 W) its own. */
    {"wormhole-n150",
     {.name = "wormhole-n150", WORMHOLE_N150_FIELDS, EVENT_ENERGY_FIELDS, .hbm_pj = 60.0,
      .static_w = 32.0}},
    /* Energy: the shared per-event estimates (TSMC 7 nm, as the GC200);
     * hbm_pj kept at the Mk2's for a chip file that adds memory; static
     * power 20 % of the 15 kW the wafer draws. */
    {"wse2",
     {.name = "wse2", WSE2_FIELDS, EVENT_ENERGY_FIELDS, .hbm_pj = 31.2, .static_w = 3000.0}},
    /* Energy: the shared per-event estimates (made for 7 nm; the P920 is
     * TSMC 12 nm, so they are low); DDR at an estimated 5 pJ a bit (40 a
     * byte); static power 20 % of an assumed 75 W card. */
    {"stcp920",
     {.name = "stcp920", STCP920_FIELDS, EVENT_ENERGY_FIELDS, .hbm_pj = 40.0, .static_w = 15.0}},
    {"kapla-edge",
     {.name = "kapla-edge", KAPLA_EDGE_FIELDS, EVENT_ENERGY_FIELDS, .hbm_pj = 40.0, .static_w = 0.4}},
};

#define NPRESETS ((int)(sizeof PRESETS / sizeof PRESETS[0]))

int rotor_chip_preset_count(void) { return NPRESETS; }

const char *rotor_chip_preset_name(int i) {
    return i >= 0 && i < NPRESETS ? PRESETS[i].name : NULL;
}

/* "ipu-mk2, ipu-pod4, ipu-pod16" */
static void preset_list(char *buf, size_t size) {
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < NPRESETS && used < size; i++) {
        int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", PRESETS[i].name);
        if (n < 0) break;
        used += (size_t)n;
    }
}

static const chip_preset *find_preset(const char *name) {
    for (int i = 0; i < NPRESETS; i++)
        if (strcmp(PRESETS[i].name, name) == 0) return &PRESETS[i];
    return NULL;
}

rotor_status rotor_chip_preset(const char *name, rotor_chip *out, rotor_error *err) {
    const chip_preset *p = find_preset(name);
    if (!p && rotor_gpu_spec_is_gpu(name)) /* docs/gpu.md: a GPU is its own chip kind */
        return rotor_fail(err, ROTOR_ERR_INPUT, "chip '%s' is a GPU (kind gpu): only rotor plan and rotor compile "
                          "model a GPU (docs/gpu.md)", name);
    if (!p) {
        char list[128], hint[96];
        const char *names[NPRESETS];
        for (int i = 0; i < NPRESETS; i++) names[i] = PRESETS[i].name;
        preset_list(list, sizeof list);
        return rotor_fail(err, ROTOR_ERR_INPUT,
                          "unknown chip '%s'%s (presets: %s; or give a path to a .json chip file)", name,
                          rotor_suggest_phrase(name, names, NPRESETS, hint, sizeof hint), list);
    }
    *out = p->chip;
    return ROTOR_OK;
}

/* ---- the field table ----------------------------------------------------- */

typedef enum field_kind {
    FK_NAME,     /* char[ROTOR_CHIP_NAME_MAX] */
    FK_TOPOLOGY, /* rotor_topology, by the names of base/topology.c's table */
    FK_INT,      /* int64_t */
    FK_NUM,      /* double */
    FK_OFFCHIP   /* rotor_offchip, by the names in OFFCHIP_NAMES */
} field_kind;

/* When the writer leaves a field out: the keys added after version 1's
 * first chips are written only when they say something, so that the chip
 * files and the programs (which embed the chip) of chips without them stay
 * byte for byte as before. */
typedef enum field_default {
    D_ALWAYS = 0, /* always written */
    D_ZERO,       /* left out at 0 */
    D_ONE,        /* left out at 1 */
    D_FLAT        /* left out when clusters is 1 (cores_per_cluster: then the whole chip) */
} field_default;

/* The off-chip memory's kinds, by rotor_offchip code. */
static const char *const OFFCHIP_NAMES[] = {"hbm", "ddr"};
#define NOFFCHIP ((int)(sizeof OFFCHIP_NAMES / sizeof OFFCHIP_NAMES[0]))

typedef struct field_def {
    const char *key;     /* JSON key and --set key: the struct member's name */
    field_kind kind;
    size_t offset;       /* offsetof(rotor_chip, member) */
    double max;          /* upper bound (FK_INT, FK_NUM); all are below 2^53 */
    bool zero_ok;        /* 0 allowed (otherwise the value must be positive) */
    bool optional;       /* a file without "base" may leave it out (default 0) */
    unsigned allowed;    /* FK_INT: if non-zero, a bit mask of the allowed values */
    field_default dflt;  /* the value the writer leaves out (D_ALWAYS: none) */
    double min;          /* FK_NUM: the least value above 0 (0: any positive one) */
} field_def;

/* A rate (GB/s, TFLOP/s, TOP/s) divides a size into a time, so it has a
 * floor as well as a ceiling: ROTOR_RATE_MIN, 1e-6 (1 KB/s, 1 MFLOP/s).
 * Below it every time grows past what an output prints or a simulator
 * counts in picoseconds: `--set link_gbps=1e-300` printed ResNet-18's time
 * as a 300-digit number and its energy as 2e297 J. */
#define RATE(member, zero_ok, optional, dflt) \
    {#member, FK_NUM, offsetof(rotor_chip, member), 1e6, zero_ok, optional, 0, dflt, ROTOR_RATE_MIN}

#define F(member, kind, max, zero_ok, optional, allowed) \
    {#member, kind, offsetof(rotor_chip, member), max, zero_ok, optional, allowed, D_ALWAYS, 0}
/* an optional 0-or-1 key, written only when 1 */
#define FLAG(member) {#member, FK_INT, offsetof(rotor_chip, member), 1, true, true, 0, D_ZERO, 0}
/* an optional key added later, written only when not its default, so that
 * files and programs of chips without it stay byte for byte as before */
#define LATER(member, kind, max, zero_ok, dflt) \
    {#member, kind, offsetof(rotor_chip, member), max, zero_ok, true, 0, dflt, 0}

/* Upper bounds are sanity limits, far above any real chip, that catch a typo
 * (a size in bits) and keep what later stages form from a chip inside
 * int64_t (docs/chip-format.md, "Bounds"):
 *  - cores_per_chip <= 2^20 (Cerebras's WSE-3, the largest, has 900,000
 *    cores) and chips <= 1024, so N <= 2^30;
 *  - sram_bytes <= 1 GiB per core (IPU Mk2: 624 KiB), so N * S <= 2^60, the
 *    bound of a program's setup bytes (compile/program.c);
 *  - hbm_bytes <= 1 PiB per chip, 2^60 over 1024 chips;
 *  - the other counts (systolic array sides, HBM controllers, compute
 *    units) <= 1024;
 *  - gb_bytes <= 4 GiB per cluster (STCP920's LLB: 8 MiB), so a chip's
 *    clusters' GBs over 1024 chips stay under 2^62.
 * Every bound is below 2^53, so a JSON number holds it exactly. */
static const field_def FIELDS[] = {
    F(name, FK_NAME, 0, false, true, 0),
    F(cores_per_chip, FK_INT, 1048576, false, false, 0),      /* 2^20 */
    F(chips, FK_INT, 1024, false, false, 0),
    F(sram_bytes, FK_INT, (double)GIB, false, false, 0),
    RATE(link_gbps, false, false, D_ALWAYS),
    F(link_latency_ns, FK_NUM, 1e9, true, true, 0),           /* 1 s */
    RATE(matrix_tflops, false, false, D_ALWAYS),
    RATE(int8_tops, true, true, D_ALWAYS), /* optional: 0 costs int8 at matrix_tflops */
    RATE(vector_tflops, false, false, D_ALWAYS),
    F(systolic_rows, FK_INT, 1024, false, false, 0),
    F(systolic_cols, FK_INT, 1024, false, false, 0),
    F(shift_buffer_bytes, FK_INT, (double)GIB, false, false, 0),
    F(element_bytes, FK_INT, 8, false, false, (1u << 1) | (1u << 2) | (1u << 4) | (1u << 8)),
    FLAG(compute_overlap),
    F(topology, FK_TOPOLOGY, 0, false, false, 0),
    F(mesh_width, FK_INT, 1048576, true, true, 0),
    F(mesh_height, FK_INT, 1048576, true, true, 0),
    RATE(interchip_gbps, true, true, D_ALWAYS),
    F(hbm_bytes, FK_INT, (double)(1LL << 50), true, true, 0), /* 1 PiB */
    RATE(hbm_gbps, true, true, D_ALWAYS),
    F(hbm_controllers, FK_INT, 1024, true, true, 0),
    /* Energy (docs/energy.md): optional, so that chip files and programs
     * written before the energy model still read (as 0: no energy). */
    F(mac_pj, FK_NUM, 1e6, true, true, 0),
    F(vector_flop_pj, FK_NUM, 1e6, true, true, 0),
    F(sram_read_pj, FK_NUM, 1e6, true, true, 0),
    F(sram_write_pj, FK_NUM, 1e6, true, true, 0),
    F(link_pj, FK_NUM, 1e6, true, true, 0),
    F(hbm_pj, FK_NUM, 1e6, true, true, 0),
    F(interchip_pj, FK_NUM, 1e6, true, true, 0),
    F(static_w, FK_NUM, 1e6, true, true, 0),
    /* The memory hierarchy (GraphTurbo §1, Fig. 1; docs/chip-format.md,
     * "Clusters and the global buffer").  A file without them is one
     * cluster of all its cores (chip_from_json derives cores_per_cluster),
     * one compute unit a core, no GB, HBM. */
    LATER(clusters, FK_INT, 1048576, false, D_ONE),
    LATER(cores_per_cluster, FK_INT, 1048576, false, D_FLAT),
    LATER(compute_units, FK_INT, 1024, false, D_ONE),
    LATER(gb_bytes, FK_INT, (double)(4 * GIB), true, D_ZERO), /* 4 GiB a cluster */
    RATE(gb_gbps, true, true, D_ZERO), /* added later, as LATER */
    LATER(offchip, FK_OFFCHIP, 0, true, D_ZERO),
};

#undef F
#undef FLAG
#undef LATER
#undef RATE

#define NFIELDS ((int)(sizeof FIELDS / sizeof FIELDS[0]))

static const field_def *find_field(const char *key) {
    for (int i = 0; i < NFIELDS; i++)
        if (strcmp(FIELDS[i].key, key) == 0) return &FIELDS[i];
    return NULL;
}

static int64_t *int_at(rotor_chip *c, const field_def *f) {
    return (int64_t *)(void *)((char *)c + f->offset);
}
static double *num_at(rotor_chip *c, const field_def *f) {
    return (double *)(void *)((char *)c + f->offset);
}
static const int64_t *cint_at(const rotor_chip *c, const field_def *f) {
    return (const int64_t *)(const void *)((const char *)c + f->offset);
}
static const double *cnum_at(const rotor_chip *c, const field_def *f) {
    return (const double *)(const void *)((const char *)c + f->offset);
}

/* "cores_per_chip, chips, ..." (with the file-only keys first if asked). */
static void key_list(char *buf, size_t size, bool file_keys) {
    size_t used = 0;
    buf[0] = '\0';
    if (file_keys) used = (size_t)snprintf(buf, size, "format, version, base, ");
    for (int i = 0; i < NFIELDS && used < size; i++) {
        int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", FIELDS[i].key);
        if (n < 0) break;
        used += (size_t)n;
    }
}

/* ---- texts for messages -------------------------------------------------- */

/* Shortest "%g" text that reads back as d. */
static void fmt_num(double d, char *buf, size_t size) {
    snprintf(buf, size, "%.15g", d);
    if (strtod(buf, NULL) != d) snprintf(buf, size, "%.17g", d);
}

/* s (len bytes) as a quoted, escaped string, cut short with "..." if long. */
static void quote(const char *s, size_t len, char *buf, size_t size) {
    const size_t keep = 60;
    size_t o = 0;
    buf[o++] = '"';
    for (size_t i = 0; i < len && i < keep && o + 8 < size; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\') {
            buf[o++] = '\\';
            buf[o++] = (char)ch;
        } else if (ch < 0x20 || ch == 0x7f) {
            o += (size_t)snprintf(buf + o, size - o, "\\u%04x", ch);
        } else {
            buf[o++] = (char)ch;
        }
    }
    if (len > keep && o + 5 < size) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o++] = '"';
    buf[o] = '\0';
}

/* What a JSON value is, for "got ...". */
static void describe_json(const cJSON *v, char *buf, size_t size) {
    if (cJSON_IsString(v)) quote(v->valuestring, strlen(v->valuestring), buf, size);
    else if (cJSON_IsNumber(v)) fmt_num(v->valuedouble, buf, size);
    else if (cJSON_IsTrue(v)) snprintf(buf, size, "true");
    else if (cJSON_IsFalse(v)) snprintf(buf, size, "false");
    else if (cJSON_IsNull(v)) snprintf(buf, size, "null");
    else if (cJSON_IsArray(v)) snprintf(buf, size, "an array");
    else if (cJSON_IsObject(v)) snprintf(buf, size, "an object");
    else snprintf(buf, size, "an invalid value");
}

void rotor_json_describe(const cJSON *v, char *buf, size_t size) { describe_json(v, buf, size); }

/* A field whose value is a string (in a file and after --set KEY=). */
static bool is_text(const field_def *f) {
    return f->kind == FK_NAME || f->kind == FK_TOPOLOGY || f->kind == FK_OFFCHIP;
}

/* A 0-or-1 field (compute_overlap). */
static bool is_flag(const field_def *f) { return f->kind == FK_INT && f->max == 1; }

/* What a field expects: "a positive integer", "1, 2, 4 or 8", ... */
static const char *field_expects(const field_def *f) {
    switch (f->kind) {
    case FK_NAME: return "a string of 1 to 63 bytes without control characters";
    case FK_TOPOLOGY: return "\"all-to-all\" or \"mesh\"";
    case FK_OFFCHIP: return "\"hbm\" or \"ddr\"";
    case FK_INT:
        if (f->allowed) return "1, 2, 4 or 8"; /* element_bytes, the only such field */
        if (is_flag(f)) return "0 or 1";
        return f->zero_ok ? "a non-negative integer" : "a positive integer";
    case FK_NUM: return f->zero_ok ? "a non-negative number" : "a positive number";
    }
    return "a valid value";
}

/* "KEY: expected DESC, got GOT" */
static rotor_status bad_value(rotor_error *err, const field_def *f, const char *got) {
    return rotor_fail(err, ROTOR_ERR_INPUT, "%s: expected %s, got %s", f->key, field_expects(f), got);
}

/* "KEY: expected DESC at most MAX, got GOT" */
static rotor_status too_big(rotor_error *err, const field_def *f, const char *got) {
    char max[32];
    fmt_num(f->max, max, sizeof max);
    return rotor_fail(err, ROTOR_ERR_INPUT, "%s: expected %s at most %s, got %s", f->key,
                      field_expects(f), max, got);
}

/* "KEY: expected DESC at least MIN, got GOT" (a rate below ROTOR_RATE_MIN) */
static rotor_status too_small(rotor_error *err, const field_def *f, const char *got) {
    char min[32];
    fmt_num(f->min, min, sizeof min);
    return rotor_fail(err, ROTOR_ERR_INPUT, "%s: expected %s%s at least %s, got %s", f->key,
                      f->zero_ok ? "0 (none) or " : "", f->zero_ok ? "a number" : field_expects(f), min, got);
}

static bool valid_name_text(const char *s, size_t len) {
    if (len == 0 || len >= ROTOR_CHIP_NAME_MAX) return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch < 0x20 || ch == 0x7f) return false;
    }
    return true;
}

/* ---- the rules: one field, then the relations ---------------------------- */

/* The rule for one field, on the value in the struct. */
static rotor_status check_field(const rotor_chip *c, const field_def *f, rotor_error *err) {
    char got[96];
    switch (f->kind) {
    case FK_NAME: {
        const char *s = (const char *)c + f->offset;
        const char *nul = memchr(s, '\0', ROTOR_CHIP_NAME_MAX);
        size_t len = nul ? (size_t)(nul - s) : ROTOR_CHIP_NAME_MAX;
        if (!nul || !valid_name_text(s, len)) {
            quote(s, len, got, sizeof got);
            return bad_value(err, f, got);
        }
        return ROTOR_OK;
    }
    case FK_TOPOLOGY: {
        rotor_topology t = *(const rotor_topology *)(const void *)((const char *)c + f->offset);
        if (t != ROTOR_TOPO_ALL_TO_ALL && t != ROTOR_TOPO_MESH) {
            snprintf(got, sizeof got, "topology code %d", (int)t);
            return bad_value(err, f, got);
        }
        return ROTOR_OK;
    }
    case FK_OFFCHIP: {
        rotor_offchip k = *(const rotor_offchip *)(const void *)((const char *)c + f->offset);
        if ((int)k < 0 || (int)k >= NOFFCHIP) {
            snprintf(got, sizeof got, "off-chip memory code %d", (int)k);
            return bad_value(err, f, got);
        }
        return ROTOR_OK;
    }
    case FK_INT: {
        int64_t v = *cint_at(c, f);
        snprintf(got, sizeof got, "%" PRId64, v);
        if (v < 0 || (v == 0 && !f->zero_ok)) return bad_value(err, f, got);
        if ((double)v > f->max) return f->allowed || is_flag(f) ? bad_value(err, f, got) : too_big(err, f, got);
        if (f->allowed && !(f->allowed & (1u << v))) return bad_value(err, f, got);
        return ROTOR_OK;
    }
    case FK_NUM: {
        double v = *cnum_at(c, f);
        fmt_num(v, got, sizeof got);
        if (f->zero_ok ? !(v >= 0) : !(v > 0)) return bad_value(err, f, got);
        if (v > f->max) return too_big(err, f, got);
        if (v > 0 && v < f->min) return too_small(err, f, got);
        return ROTOR_OK;
    }
    }
    return bad_value(err, f, "an unknown field kind");
}

/* The clusters and their GB (GraphTurbo §1).  clusters * cores_per_cluster
 * == cores_per_chip, except that a one-cluster chip is the whole chip
 * whatever cores_per_cluster says (strict: false): code that resizes a chip
 * writes cores_per_chip alone (compile/segment.c's core groups; tests that
 * cut ipu-mk2 down to 16 cores or grow it to a 256 x 256 mesh), and the
 * chip is still one cluster (rotor_chip_cluster_cores).  A chip file says
 * what it means, so the reader is strict. */
static rotor_status check_hierarchy(const rotor_chip *c, bool strict, rotor_error *err) {
    int64_t cores = 0;
    bool whole = !strict && c->clusters == 1;
    if (!whole && (!rotor_mul_i64(c->clusters, c->cores_per_cluster, &cores) || cores != c->cores_per_chip))
        return rotor_fail(err, ROTOR_ERR_INPUT,
                          "clusters * cores_per_cluster (%" PRId64 " x %" PRId64 ") != cores_per_chip (%" PRId64 ")",
                          c->clusters, c->cores_per_cluster, c->cores_per_chip);
    if ((c->gb_bytes > 0) != (c->gb_gbps > 0)) {
        char got[32];
        fmt_num(c->gb_gbps, got, sizeof got);
        if (c->gb_bytes > 0)
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "gb_gbps: expected a positive number when gb_bytes > 0 (gb_bytes is %" PRId64
                              "), got %s",
                              c->gb_bytes, got);
        return rotor_fail(err, ROTOR_ERR_INPUT, "gb_gbps: expected 0 when gb_bytes is 0 (no GB), got %s", got);
    }
    return ROTOR_OK;
}

static rotor_status check_relations(const rotor_chip *c, rotor_error *err) {
    if (c->shift_buffer_bytes > c->sram_bytes)
        return rotor_fail(err, ROTOR_ERR_INPUT,
                          "shift_buffer_bytes: expected at most sram_bytes (%" PRId64 "), got %" PRId64,
                          c->sram_bytes, c->shift_buffer_bytes);
    if (c->topology == ROTOR_TOPO_MESH) {
        int64_t cells = 0;
        if (c->mesh_width <= 0 || c->mesh_height <= 0 ||
            !rotor_mul_i64(c->mesh_width, c->mesh_height, &cells) || cells != c->cores_per_chip)
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "mesh_width, mesh_height: expected mesh_width * mesh_height == "
                              "cores_per_chip (%" PRId64 ") for topology \"mesh\", got %" PRId64
                              " x %" PRId64,
                              c->cores_per_chip, c->mesh_width, c->mesh_height);
    } else {
        if (c->mesh_width != 0)
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "mesh_width: expected 0 for topology \"all-to-all\", got %" PRId64,
                              c->mesh_width);
        if (c->mesh_height != 0)
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "mesh_height: expected 0 for topology \"all-to-all\", got %" PRId64,
                              c->mesh_height);
    }
    if (c->chips > 1 && !(c->interchip_gbps > 0)) {
        char got[32];
        fmt_num(c->interchip_gbps, got, sizeof got);
        return rotor_fail(err, ROTOR_ERR_INPUT,
                          "interchip_gbps: expected a positive number when chips > 1 (chips is %" PRId64
                          "), got %s",
                          c->chips, got);
    }
    rotor_status st = check_hierarchy(c, false, err);
    if (st != ROTOR_OK) return st;
    bool b = c->hbm_bytes > 0, g = c->hbm_gbps > 0, n = c->hbm_controllers > 0;
    if (b != g || g != n) {
        char got[32];
        fmt_num(c->hbm_gbps, got, sizeof got);
        return rotor_fail(err, ROTOR_ERR_INPUT,
                          "hbm_bytes, hbm_gbps, hbm_controllers: expected all zero (no HBM) or all "
                          "positive, got %" PRId64 ", %s, %" PRId64,
                          c->hbm_bytes, got, c->hbm_controllers);
    }
    return ROTOR_OK;
}

rotor_status rotor_chip_require_one(const rotor_chip *chip, const char *what, rotor_error *err) {
    if (chip->chips <= 1) return ROTOR_OK;
    return rotor_fail(err, ROTOR_ERR_INPUT,
                      "chip '%s' is %lld chips; T10's plan prices one chip's exchange and would move data between "
                      "chips at on-chip link rates: %s one chip (--set chips=1) or split the model over the chips "
                      "with rotor schedule (docs/compile.md, \"One chip\")",
                      chip->name, (long long)chip->chips, what);
}

/* Measured 2026-12-03 (docs/mesh.md, "Narrow meshes"): on meshes of
 * wormhole-n150's and ipu-mk2's cores with both sides 3 or more (3 x 24,
 * 4 x 18, 6 x 12, 9 x 8, 8 x 184, 16 x 92, 32 x 46) the replay met the
 * model within 0.3 % on BERT-Base, ResNet-18 and GoogLeNet; on sides of 1
 * and 2 it was up to 61 % slower (BERT-Base's FFN on 1472 x 1: rings whose
 * members lie 52 cores apart, 104-hop routes queueing behind each other;
 * with overlap, shifts released core by core that meet on one line).  The
 * busiest-link bound the model prices is not what such a line delivers,
 * and rotor has no better closed form for it: it says so. */
bool rotor_chip_mesh_caveat(const rotor_chip *chip, char *buf, size_t cap) {
    if (cap) buf[0] = '\0';
    if (chip->topology != ROTOR_TOPO_MESH || (chip->mesh_width > 2 && chip->mesh_height > 2)) return false;
    snprintf(buf, cap,
             "on a %lldx%lld mesh (a side of 2 cores or fewer) the replay measured shifts up to 2.9x slower than "
             "the model prices them: `rotor simulate` times the plan (docs/mesh.md, \"Narrow meshes\")",
             (long long)chip->mesh_width, (long long)chip->mesh_height);
    return true;
}

rotor_status rotor_chip_validate(const rotor_chip *chip, rotor_error *err) {
    for (int i = 0; i < NFIELDS; i++) {
        rotor_status st = check_field(chip, &FIELDS[i], err);
        if (st != ROTOR_OK) return st;
    }
    return check_relations(chip, err);
}

/* ---- setting one field from a number or a string ------------------------- */

/* Stores number d (shown as `got` in messages) into field f of c, then checks
 * the field. */
static rotor_status put_number(rotor_chip *c, const field_def *f, double d, const char *got,
                               rotor_error *err) {
    if (f->kind == FK_NUM) {
        if (!isfinite(d)) return d > 0 ? too_big(err, f, got) : bad_value(err, f, got);
        *num_at(c, f) = d;
    } else if (f->kind == FK_INT) {
        if (!isfinite(d) || d != floor(d) || d < 0) return bad_value(err, f, got);
        if (d > f->max) return f->allowed || is_flag(f) ? bad_value(err, f, got) : too_big(err, f, got);
        *int_at(c, f) = (int64_t)d; /* exact: 0 <= d <= max < 2^53 */
    } else {
        return bad_value(err, f, got);
    }
    return check_field(c, f, err);
}

/* Stores string s (len bytes, no NUL inside) into field f of c, then checks it. */
static rotor_status put_string(rotor_chip *c, const field_def *f, const char *s, size_t len,
                               rotor_error *err) {
    char got[96];
    quote(s, len, got, sizeof got);
    if (f->kind == FK_NAME) {
        if (!valid_name_text(s, len)) return bad_value(err, f, got);
        char *dst = (char *)c + f->offset;
        memset(dst, 0, ROTOR_CHIP_NAME_MAX);
        memcpy(dst, s, len);
    } else if (f->kind == FK_TOPOLOGY) {
        rotor_topology *t = (rotor_topology *)(void *)((char *)c + f->offset);
        const rotor_topo *row = rotor_topo_named(s, len);
        if (!row) return bad_value(err, f, got);
        *t = row->id;
    } else if (f->kind == FK_OFFCHIP) {
        int k = 0;
        while (k < NOFFCHIP && !(strlen(OFFCHIP_NAMES[k]) == len && memcmp(OFFCHIP_NAMES[k], s, len) == 0)) k++;
        if (k == NOFFCHIP) return bad_value(err, f, got);
        *(rotor_offchip *)(void *)((char *)c + f->offset) = (rotor_offchip)k;
    } else {
        return bad_value(err, f, got);
    }
    return check_field(c, f, err);
}

static rotor_status put_json(rotor_chip *c, const field_def *f, const cJSON *v, rotor_error *err) {
    char got[96];
    describe_json(v, got, sizeof got);
    bool text = is_text(f);
    if (text && cJSON_IsString(v)) return put_string(c, f, v->valuestring, strlen(v->valuestring), err);
    if (!text && cJSON_IsNumber(v)) return put_number(c, f, v->valuedouble, got, err);
    return bad_value(err, f, got);
}

/* ---- --set --------------------------------------------------------------- */

/* A decimal number as JSON writes it (optionally with a leading '+'); no hex,
 * inf or nan. */
static bool parse_number_text(const char *s, double *out) {
    if (!*s) return false;
    for (const char *p = s; *p; p++)
        if (!strchr("0123456789+-.eE", *p)) return false;
    char *end;
    double d = strtod(s, &end);
    if (*end || end == s) return false;
    *out = d; /* overflow gives +-HUGE_VAL, refused as too big / not positive */
    return true;
}

bool rotor_bandwidth_parse(const char *s, double *gbps) {
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v > 0) || v > 1e6) return false;
    double scale;
    if (!*end || !strcasecmp(end, "TB/s") || !strcasecmp(end, "TB") || !strcasecmp(end, "T")) scale = 1000.0;
    else if (!strcasecmp(end, "GB/s") || !strcasecmp(end, "GB") || !strcasecmp(end, "G")) scale = 1.0;
    else return false;
    /* below the chip file's least bandwidth (1e-6 GB/s) is refused here, in
     * the user's words, not later as a per-chip hbm_gbps they never typed
     * (--hbm-bw 1e-30: "hbm_gbps: ... got 2.5e-28" until 2026-12-03) */
    if (v * scale < 1e-6) return false;
    *gbps = v * scale;
    return true;
}

/* "hbm-bw=BW": HBM bandwidth in the command line's one convention (issue
 * 46: --hbm-bw, --sweep hbm-bw= and --set hbm-bw= alike), the total of all
 * chips in TB/s or with its unit, 0 for none; stored as the chip file's
 * per-chip hbm_gbps, so it divides by the chips set so far (--set chips=N
 * first changes the count it divides by). */
static rotor_status set_hbm_bw(rotor_chip *chip, const char *value, rotor_error *err) {
    double total = 0;
    if (strcmp(value, "0") != 0 && !rotor_bandwidth_parse(value, &total)) {
        char got[96];
        quote(value, strlen(value), got, sizeof got);
        return rotor_fail(err, ROTOR_ERR_INPUT, "--set: hbm-bw: expected the bandwidth of all chips in TB/s (16, "
                          "16TB/s, 8000GB/s; 0 for none), got %s", got);
    }
    double per = 0;
    if (total > 0 && !rotor_hbm_bw_per_chip(total, chip->chips, &per)) {
        char got[96];
        quote(value, strlen(value), got, sizeof got);
        return rotor_fail(err, ROTOR_ERR_INPUT, "--set: hbm-bw: %s over %lld chips is %.3g GB/s a chip, below the "
                          "least (%g GB/s)", got, (long long)chip->chips, per, ROTOR_RATE_MIN);
    }
    char a[64];
    snprintf(a, sizeof a, "hbm_gbps=%.17g", per);
    return rotor_chip_set(chip, a, err);
}

bool rotor_hbm_bw_per_chip(double total_gbps, int64_t chips, double *per_chip) {
    /* the chip file's floor holds per chip: a total at the floor over a pod
     * was refused as a per-chip hbm_gbps nobody typed (until 2026-12-03) */
    *per_chip = total_gbps / (double)(chips > 0 ? chips : 1);
    return *per_chip >= ROTOR_RATE_MIN;
}

rotor_status rotor_chip_set(rotor_chip *chip, const char *assignment, rotor_error *err) {
    const char *eq = strchr(assignment, '=');
    char got[96];
    if (!eq || eq == assignment) {
        quote(assignment, strlen(assignment), got, sizeof got);
        return rotor_fail(err, ROTOR_ERR_INPUT, "--set: expected key=value, got %s", got);
    }
    char key[64];
    size_t klen = (size_t)(eq - assignment);
    if (klen >= sizeof key) klen = sizeof key - 1; /* too long to be a key: unknown below */
    memcpy(key, assignment, klen);
    key[klen] = '\0';
    if (!strcmp(key, "hbm-bw")) return set_hbm_bw(chip, eq + 1, err);
    const field_def *f = (size_t)(eq - assignment) < sizeof key ? find_field(key) : NULL;
    if (!f) {
        char keys[640], hint[96];
        const char *names[NFIELDS];
        for (int i = 0; i < NFIELDS; i++) names[i] = FIELDS[i].key;
        key_list(keys, sizeof keys, false);
        return rotor_fail(err, ROTOR_ERR_INPUT, "--set: %s: unknown key%s (known keys: %s)", key,
                          rotor_suggest_phrase(key, names, NFIELDS, hint, sizeof hint), keys);
    }
    const char *value = eq + 1;
    rotor_chip copy = *chip;
    rotor_status st;
    if (is_text(f)) {
        st = put_string(&copy, f, value, strlen(value), err);
    } else {
        double d;
        quote(value, strlen(value), got, sizeof got);
        if (!parse_number_text(value, &d)) st = bad_value(err, f, got);
        else st = put_number(&copy, f, d, value, err);
    }
    if (st != ROTOR_OK) {
        rotor_error_prefix(err, "--set");
        return st;
    }
    /* The clusters follow the chip's size: --set cores_per_chip=N keeps
     * clusters and makes cores_per_cluster N / clusters (a one-cluster chip
     * stays one cluster, as the chips and scripts before the hierarchy
     * expect).  When clusters does not divide N the relation is left
     * broken for rotor_chip_validate to name. */
    if (f->offset == offsetof(rotor_chip, cores_per_chip) && copy.clusters > 0 &&
        copy.cores_per_chip % copy.clusters == 0)
        copy.cores_per_cluster = copy.cores_per_chip / copy.clusters;
    /* ... --set cores_per_cluster=C on a one-cluster chip splits it into
     * clusters of C.  A C that does not divide the cores is refused here:
     * validate takes a one-cluster chip's cores_per_cluster as the whole
     * chip (check_hierarchy), so it would ignore C (a one-cluster chip, exit
     * 0, until 2026-12-03; found by a review helper). */
    if (f->offset == offsetof(rotor_chip, cores_per_cluster) && copy.clusters == 1) {
        if (copy.cores_per_chip % copy.cores_per_cluster)
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "--set: cores_per_cluster: %" PRId64 " does not divide cores_per_chip (%" PRId64 ")",
                              copy.cores_per_cluster, copy.cores_per_chip);
        copy.clusters = copy.cores_per_chip / copy.cores_per_cluster;
    }
    /* ... and --set clusters=K makes clusters of N / K cores when K divides
     * N, as a chip file giving clusters alone is read (derive_hierarchy;
     * until 2026-12-03 K clusters of the whole chip's cores were refused);
     * otherwise the relation waits for validate to name it. */
    if (f->offset == offsetof(rotor_chip, clusters) && copy.cores_per_chip % copy.clusters == 0)
        copy.cores_per_cluster = copy.cores_per_chip / copy.clusters;
    *chip = copy;
    return ROTOR_OK;
}

/* ---- the chip file ------------------------------------------------------- */

/* 1 MiB: a chip file is a few dozen keys (docs/chip-format.md). */
#define CHIP_FILE_MAX (1024 * 1024)

/* The file's basename without ".json": the default name. */
static void default_name(const char *path, char *buf, size_t size) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strlen(base);
    if (len >= 5 && strcmp(base + len - 5, ".json") == 0) len -= 5;
    if (len >= size) len = size - 1;
    memcpy(buf, base, len);
    buf[len] = '\0';
}

/* The keys of the hierarchy a file leaves out (docs/chip-format.md): without
 * "base", one compute unit a core; the one of clusters and cores_per_cluster
 * the file leaves out follows cores_per_chip (clusters stays, 1 without a
 * base, when it gives neither).  A size that does not divide is left to the
 * relation's message. */
static void derive_hierarchy(rotor_chip *c, bool base, bool seen_clusters, bool seen_cpc) {
    if (!base && c->compute_units == 0) c->compute_units = 1;
    if (!base && !seen_clusters && !seen_cpc) c->clusters = 1;
    if (seen_clusters && seen_cpc) return;
    if (seen_cpc) {
        int64_t d = c->cores_per_chip / c->cores_per_cluster;
        c->clusters = d > 0 ? d : 1;
    } else {
        int64_t d = c->cores_per_chip / c->clusters;
        c->cores_per_cluster = d > 0 ? d : 1;
    }
}

/* Builds the chip from a parsed file; messages are without the path. */
static rotor_status chip_from_json(const cJSON *root, const char *path, rotor_chip *out,
                                   rotor_error *err) {
    char got[96];
    if (!cJSON_IsObject(root)) {
        describe_json(root, got, sizeof got);
        return rotor_fail(err, ROTOR_ERR_INPUT, "expected a JSON object at the top level, got %s", got);
    }

    /* format, version and base first: they say how to read the rest. */
    const cJSON *format = cJSON_GetObjectItemCaseSensitive(root, "format");
    if (!format)
        return rotor_fail(err, ROTOR_ERR_INPUT, "format: missing key (expected \"rotor-chip\")");
    if (!cJSON_IsString(format) || strcmp(format->valuestring, "rotor-chip") != 0) {
        describe_json(format, got, sizeof got);
        return rotor_fail(err, ROTOR_ERR_INPUT, "format: expected \"rotor-chip\", got %s", got);
    }
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(root, "version");
    if (!version) return rotor_fail(err, ROTOR_ERR_INPUT, "version: missing key (expected 1)");
    if (!cJSON_IsNumber(version) || version->valuedouble != 1.0) {
        describe_json(version, got, sizeof got);
        return rotor_fail(err, ROTOR_ERR_INPUT, "version: expected 1, got %s", got);
    }

    /* "kind": "icca" (the default) or "gpu", a GPU's own file (docs/gpu.md) */
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(root, "kind");
    if (kind && (!cJSON_IsString(kind) || (strcmp(kind->valuestring, "icca") && strcmp(kind->valuestring, "gpu")))) {
        describe_json(kind, got, sizeof got);
        return rotor_fail(err, ROTOR_ERR_INPUT, "kind: expected \"icca\" or \"gpu\", got %s", got);
    }
    if (kind && !strcmp(kind->valuestring, "gpu"))
        return rotor_fail(err, ROTOR_ERR_INPUT, "kind: a GPU chip: only rotor plan and rotor compile model a GPU "
                          "(docs/gpu.md)");
    rotor_chip c;
    memset(&c, 0, sizeof c);
    const cJSON *base = cJSON_GetObjectItemCaseSensitive(root, "base");
    if (base) {
        const chip_preset *p = cJSON_IsString(base) ? find_preset(base->valuestring) : NULL;
        if (!p) {
            char list[128];
            preset_list(list, sizeof list);
            describe_json(base, got, sizeof got);
            return rotor_fail(err, ROTOR_ERR_INPUT, "base: expected a preset name (%s), got %s",
                              list, got);
        }
        c = p->chip;
    }

    /* a key given twice was refused when the text was read (rotor_json_parse) */
    bool seen[NFIELDS] = {false};
    for (const cJSON *item = root->child; item; item = item->next) {
        const char *key = item->string;
        /* rotor_version: the rotor that wrote the file (`rotor chip show`),
         * for the reader's information only */
        const char *specials[5] = {"format", "version", "base", "kind", "rotor_version"};
        bool special = false;
        for (int s = 0; s < 5; s++) {
            if (strcmp(key, specials[s]) == 0) special = true;
        }
        if (special) continue;
        const field_def *f = find_field(key);
        if (!f) {
            char keys[640];
            key_list(keys, sizeof keys, true);
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s: unknown key (known keys: %s)", key, keys);
        }
        int i = (int)(f - FIELDS);
        seen[i] = true;
        rotor_status st = put_json(&c, f, item, err);
        if (st != ROTOR_OK) return st;
    }

    if (!base) {
        for (int i = 0; i < NFIELDS; i++)
            if (!seen[i] && !FIELDS[i].optional)
                return rotor_fail(err, ROTOR_ERR_INPUT,
                                  "%s: missing key (expected %s; or start from a preset with "
                                  "\"base\": \"ipu-mk2\")",
                                  FIELDS[i].key, field_expects(&FIELDS[i]));
    }
    if (!seen[0]) { /* FIELDS[0] is name: it defaults to the file's basename */
        char name[ROTOR_CHIP_NAME_MAX + 8];
        default_name(path, name, sizeof name);
        if (!valid_name_text(name, strlen(name)))
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "name: missing key, and the file name cannot serve as one "
                              "(expected %s)",
                              field_expects(&FIELDS[0]));
        memset(c.name, 0, sizeof c.name);
        memcpy(c.name, name, strlen(name));
    }

    derive_hierarchy(&c, base != NULL, seen[find_field("clusters") - FIELDS],
                     seen[find_field("cores_per_cluster") - FIELDS]);
    rotor_status st = rotor_chip_validate(&c, err);
    if (st == ROTOR_OK) st = check_hierarchy(&c, true, err);
    if (st != ROTOR_OK) return st;
    *out = c;
    return ROTOR_OK;
}

rotor_status rotor_chip_parse(const char *text, size_t len, const char *label, rotor_chip *out, rotor_error *err) {
    cJSON *root;
    rotor_status pst = rotor_json_parse_bytes(text, len, label, &root, err);
    if (pst) return pst;
    rotor_status st = chip_from_json(root, label, out, err);
    cJSON_Delete(root);
    if (st != ROTOR_OK && st != ROTOR_ERR_NOMEM) rotor_error_prefix(err, label);
    return st;
}

rotor_status rotor_chip_from_cjson(const cJSON *o, const char *label, rotor_chip *out, rotor_error *err) {
    rotor_status st = chip_from_json(o, label, out, err);
    if (st != ROTOR_OK && st != ROTOR_ERR_NOMEM) rotor_error_prefix(err, label);
    return st;
}

rotor_status rotor_json_add_chip_file(cJSON *root, const rotor_chip *chip, rotor_error *err) {
    char *cf = rotor_chip_to_json(chip);
    if (!cf) return rotor_nomem(err);
    rotor_chip back;
    rotor_error verr;
    cJSON_Minify(cf);
    bool ok = true;
    if (rotor_chip_parse(cf, strlen(cf), "chip_file", &back, &verr) == ROTOR_OK)
        ok = cJSON_AddRawToObject(root, "chip_file", cf) != NULL;
    free(cf);
    return ok ? ROTOR_OK : rotor_nomem(err);
}

rotor_status rotor_json_chip_file(const cJSON *root, const char *label, rotor_chip *out, bool *found,
                                  rotor_error *err) {
    *found = false;
    const cJSON *cf = cJSON_GetObjectItemCaseSensitive(root, "chip_file");
    if (!cf) return ROTOR_OK;
    char where[300];
    snprintf(where, sizeof where, "%s: chip_file", label);
    rotor_status st = rotor_chip_from_cjson(cf, where, out, err);
    *found = !st;
    return st;
}

rotor_status rotor_chip_load(const char *path, rotor_chip *out, rotor_error *err) {
    char *text = NULL;
    size_t len = 0;
    rotor_status st = rotor_read_file(path, CHIP_FILE_MAX, &text, &len, err);
    if (st != ROTOR_OK) return st;
    st = rotor_chip_parse(text, len, path, out, err);
    free(text);
    return st;
}

rotor_status rotor_chip_resolve(const char *spec, rotor_chip *out, rotor_error *err) {
    size_t len = strlen(spec);
    bool is_file = strchr(spec, '/') || (len >= 5 && strcmp(spec + len - 5, ".json") == 0);
    return is_file ? rotor_chip_load(spec, out, err) : rotor_chip_preset(spec, out, err);
}

/* Whether f's value is on the network's shape (topology, mesh_width,
 * mesh_height): rotor_chip_topology_text's words say them all. */
static bool is_network(const field_def *f) {
    return f->kind == FK_TOPOLOGY || !strcmp(f->key, "mesh_width") || !strcmp(f->key, "mesh_height");
}

_Static_assert(NFIELDS <= ROTOR_CHIP_FIELDS_MAX, "ROTOR_CHIP_FIELDS_MAX holds every field's key");

int rotor_chip_differences(const rotor_chip *a, const rotor_chip *b, bool network, const char **keys, int cap) {
    int n = 0;
    for (int i = 0; i < NFIELDS; i++) {
        const field_def *f = &FIELDS[i];
        if (f->kind == FK_NAME || (!network && is_network(f))) continue;
        bool same = f->kind == FK_NUM ? *cnum_at(a, f) == *cnum_at(b, f)
                    : f->kind == FK_TOPOLOGY ? a->topology == b->topology
                    : f->kind == FK_OFFCHIP ? a->offchip == b->offchip
                                            : *cint_at(a, f) == *cint_at(b, f);
        if (same) continue;
        if (n < cap) keys[n] = f->key;
        n++;
    }
    return n;
}

/* ---- the writer ---------------------------------------------------------- */

/* Whether the writer leaves field f of chip out (field_default). */
static bool at_default(const rotor_chip *chip, const field_def *f) {
    switch (f->dflt) {
    case D_ALWAYS: return false;
    case D_ZERO:
        if (f->kind == FK_NUM) return *cnum_at(chip, f) == 0;
        if (f->kind == FK_OFFCHIP) return chip->offchip == ROTOR_OFFCHIP_HBM;
        return *cint_at(chip, f) == 0;
    case D_ONE: return *cint_at(chip, f) == 1;
    case D_FLAT: return chip->clusters == 1;
    }
    return false;
}

char *rotor_chip_to_json(const rotor_chip *chip) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    bool ok = cJSON_AddStringToObject(o, "format", "rotor-chip") &&
              cJSON_AddNumberToObject(o, "version", 1);
    for (int i = 0; ok && i < NFIELDS; i++) {
        const field_def *f = &FIELDS[i];
        if (at_default(chip, f)) continue;
        switch (f->kind) {
        case FK_NAME: {
            char name[ROTOR_CHIP_NAME_MAX];
            memcpy(name, (const char *)chip + f->offset, sizeof name);
            name[sizeof name - 1] = '\0';
            ok = cJSON_AddStringToObject(o, f->key, name) != NULL;
            break;
        }
        case FK_TOPOLOGY:
            ok = cJSON_AddStringToObject(o, f->key, rotor_topo_find(chip->topology)->name) != NULL;
            break;
        case FK_OFFCHIP:
            ok = cJSON_AddStringToObject(o, f->key, OFFCHIP_NAMES[chip->offchip]) != NULL;
            break;
        /* Numbers are formatted here, not by cJSON: its printer accepts a
         * 15-digit text that reads back only approximately, and the chip's
         * constants must round-trip to the last bit. */
        case FK_INT: {
            char num[32];
            snprintf(num, sizeof num, "%" PRId64, *cint_at(chip, f));
            ok = cJSON_AddRawToObject(o, f->key, num) != NULL;
            break;
        }
        case FK_NUM: {
            char num[32];
            double d = *cnum_at(chip, f);
            if (!isfinite(d)) d = 0; /* not a valid chip; JSON has no inf or nan */
            fmt_num(d, num, sizeof num);
            ok = cJSON_AddRawToObject(o, f->key, num) != NULL;
            break;
        }
        }
    }
    char *text = ok && rotor_json_stamp(o) ? cJSON_Print(o) : NULL; /* with rotor's version (jsontext.h) */
    cJSON_Delete(o);
    if (!text) return NULL;
    /* A file ends with a newline; hand back plain malloc'd memory. */
    size_t n = strlen(text);
    char *out = malloc(n + 2);
    if (out) {
        memcpy(out, text, n);
        out[n] = '\n';
        out[n + 1] = '\0';
    }
    cJSON_free(text);
    return out;
}

/* ---- derived quantities (cost-model-v1.md "Chip") ------------------------ */

int64_t rotor_chip_cores(const rotor_chip *chip) {
    return chip->cores_per_chip * chip->chips; /* <= 2^20 * 2^10: no overflow */
}

rotor_chip rotor_chip_with_matrix_tflops(const rotor_chip *chip, double tflops) {
    rotor_chip c = *chip;
    double k = tflops / chip->matrix_tflops;
    c.matrix_tflops = tflops;
    c.vector_tflops = chip->vector_tflops * k;
    c.int8_tops = chip->int8_tops * k;
    return c;
}

rotor_chip rotor_chip_with_cores(const rotor_chip *chip, int64_t g) {
    rotor_chip c = *chip;
    double share = (double)g / (double)chip->cores_per_chip;
    c.cores_per_chip = g;
    c.matrix_tflops = chip->matrix_tflops * share;
    c.int8_tops = chip->int8_tops * share;
    c.vector_tflops = chip->vector_tflops * share;
    return c;
}

rotor_status rotor_chip_part(const rotor_chip *chip, int64_t g, rotor_chip *out, rotor_error *err) {
    if (g < 1 || g > chip->cores_per_chip)
        return rotor_fail(err, ROTOR_ERR_INPUT, "a part of %lld cores of chip '%s' (%lld cores)", (long long)g,
                          chip->name, (long long)chip->cores_per_chip);
    rotor_chip c = rotor_chip_with_cores(chip, g);
    if (chip->topology == ROTOR_TOPO_MESH) {
        /* a rectangle of the chip's own mesh, the squarest that fits: the
         * part's shifts cross the links they would on the whole chip (a
         * quarter of 8x9 is 3x6; 2x9 would be as valid and slower) */
        int64_t w = 0;
        for (int64_t x = 1; x <= chip->mesh_width; x++)
            if (g % x == 0 && g / x <= chip->mesh_height &&
                (!w || llabs(x - g / x) < llabs(w - g / w)))
                w = x;
        if (!w)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%lld cores make no rectangle within chip '%s''s %lldx%lld mesh",
                              (long long)g, chip->name, (long long)chip->mesh_width, (long long)chip->mesh_height);
        c.mesh_width = w;
        c.mesh_height = g / w;
    }
    if (chip->clusters > 1) {
        /* whole clusters, each with its own global buffer; less than one
         * cluster is one cluster of those cores */
        int64_t per = chip->cores_per_cluster;
        if (g > per && g % per)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%lld cores are not whole clusters of chip '%s' (%lld cores each)",
                              (long long)g, chip->name, (long long)per);
        c.clusters = g > per ? g / per : 1;
        c.cores_per_cluster = g > per ? per : g;
    }
    rotor_status st = rotor_chip_validate(&c, err);
    if (!st) *out = c;
    return st;
}

const char *rotor_chip_topology_text(const rotor_chip *chip, char *buf, size_t size) {
    if (chip->topology == ROTOR_TOPO_MESH)
        snprintf(buf, size, "mesh %lldx%lld", (long long)chip->mesh_width, (long long)chip->mesh_height);
    else
        snprintf(buf, size, "all-to-all");
    return buf;
}
