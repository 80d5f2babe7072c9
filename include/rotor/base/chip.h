/* rotor — the chip model: an inter-core connected AI chip (ICCA).
 *
 * A chip is a value type: rotor_chip_preset(), rotor_chip_load() and
 * rotor_chip_set() validate every field, so a rotor_chip that exists is valid
 * and nothing downstream re-checks it.  Units in the struct are SI (bytes,
 * bytes/s, seconds, FLOP/s); the JSON file carries unit-suffixed keys
 * (docs/chip-format.md). */
#ifndef ROTOR_CHIP_H
#define ROTOR_CHIP_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/error.h"

typedef enum rotor_topology {
    ROTOR_TOPO_ALL_TO_ALL = 0, /* IPU exchange: any core reaches any core at link rate */
    ROTOR_TOPO_MESH = 1        /* 2D mesh, mesh_width x mesh_height cores per chip */
} rotor_topology;

/* What the off-chip memory behind DMA is (GraphTurbo §1, Fig. 1: "DDR via
 * DMA"; the IPU-PODs' and Elk's HBM).  The hbm_* fields describe it whatever
 * its kind: the names and keys stay, as files and programs use them. */
typedef enum rotor_offchip {
    ROTOR_OFFCHIP_HBM = 0,
    ROTOR_OFFCHIP_DDR = 1
} rotor_offchip;

#define ROTOR_CHIP_NAME_MAX 64

/* The least rate a chip file or --set gives (GB/s, TFLOP/s, MHz), when not
 * 0: a rate divides a size into a time (docs/chip-format.md, "Bounds"). */
#define ROTOR_RATE_MIN 1e-6

typedef struct rotor_chip {
    char name[ROTOR_CHIP_NAME_MAX];
    int64_t cores_per_chip;      /* cores on one chip */
    int64_t chips;               /* chips in the package or pod (ipu-pod4: 4) */
    int64_t sram_bytes;          /* S: private SRAM per core */
    double link_gbps;            /* beta / 1e9: per-core outbound link bandwidth, GB/s */
    double link_latency_ns;      /* alpha * 1e9: per-shift latency, ns */
    double matrix_tflops;        /* whole-chip matrix (systolic) rate, TFLOP/s, one chip */
    double int8_tops;            /* ... for 8-bit integer contractions, TOP/s (0: matrix_tflops) */
    double vector_tflops;        /* whole-chip vector rate, TFLOP/s, one chip */
    int64_t systolic_rows;       /* r of the r x c systolic array */
    int64_t systolic_cols;       /* c */
    int64_t shift_buffer_bytes;  /* B_buf */
    int64_t element_bytes;       /* e: bytes per tensor element (FP16: 2) */
    /* 1: a core's links move data while it computes (a dataflow chip: a
     * Tensix's data-movement cores, the WSE's fabric routers), so a plan
     * whose next partitions fit a second buffer shifts them during the
     * current sub-task (docs/cost-model.md, "Overlap").  0: a core computes
     * or exchanges, as the IPU's bulk-synchronous phases (T10 §2.1). */
    int64_t compute_overlap;
    rotor_topology topology;
    int64_t mesh_width;          /* mesh only; 0 for all-to-all */
    int64_t mesh_height;
    double interchip_gbps;       /* aggregate chip-to-chip bandwidth, GB/s (0 if chips == 1) */
    /* The off-chip memory behind DMA, HBM or DDR (offchip says which). */
    int64_t hbm_bytes;           /* off-chip memory capacity per chip (0: none) */
    double hbm_gbps;             /* its bandwidth per chip, GB/s (0: none) */
    int64_t hbm_controllers;     /* its controllers per chip (0: none) */
    /* Energy coefficients (docs/energy.md; presets' sources in
     * docs/chip-format.md).  All >= 0; 0 leaves that event out of the energy. */
    double mac_pj;               /* one matrix multiply-accumulate (2 FLOP) */
    double vector_flop_pj;       /* one vector FLOP */
    double sram_read_pj;         /* one byte read from a core's SRAM */
    double sram_write_pj;        /* one byte written to a core's SRAM */
    double link_pj;              /* one byte over one on-chip hop */
    double hbm_pj;               /* one byte to or from HBM */
    double interchip_pj;         /* one byte crossing from one chip to another */
    double static_w;             /* static (leakage and idle) power per chip, W */
    /* The memory hierarchy of GraphTurbo's DSA abstraction (§1, Fig. 1;
     * docs/chip-format.md, "Clusters and the global buffer"): d clusters of
     * c cores of u compute units, a local buffer per core (sram_bytes) and a
     * global buffer (GB) per cluster, shared by its cores.  Cores are
     * numbered cluster by cluster: core i of a chip is in cluster
     * i / cores_per_cluster.  A chip without the keys is one cluster of all
     * its cores, one compute unit each, without a GB (the IPU). */
    int64_t clusters;            /* d: clusters per chip */
    int64_t cores_per_cluster;   /* c: clusters * cores_per_cluster == cores_per_chip */
    int64_t compute_units;       /* u: compute units per core (STCP920: vector core, VME, MME) */
    int64_t gb_bytes;            /* one cluster's GB (0: none, as the IPU) */
    double gb_gbps;              /* one cluster's GB bandwidth over all its ports, GB/s (0 iff gb_bytes == 0) */
    rotor_offchip offchip;       /* the kind of memory hbm_bytes/hbm_gbps/hbm_controllers describe */
} rotor_chip;

/* Built-in chips, by name ("ipu-mk2", "ipu-pod4").  Unknown name: ROTOR_ERR_INPUT
 * with a message listing the known presets. */
rotor_status rotor_chip_preset(const char *name, rotor_chip *out, rotor_error *err);

/* Number of presets and their names, for --help and error messages. */
int rotor_chip_preset_count(void);
const char *rotor_chip_preset_name(int i);

/* "all-to-all" or "mesh WxH": the one spelling of a chip's network in every
 * document and line rotor writes, and in a program file; returns buf. */
const char *rotor_chip_topology_text(const rotor_chip *chip, char *buf, size_t size);

/* Reads a chip file (format "rotor-chip", version 1).  "base": PRESET starts
 * from a preset and the file overrides it; name defaults to the file's
 * basename.  Unknown keys, wrong types, non-positive or absurd values and
 * broken relations are refused with "path: key: expected ..., got ...";
 * a missing file is ROTOR_ERR_IO. */
rotor_status rotor_chip_load(const char *path, rotor_chip *out, rotor_error *err);

/* The same from len bytes in memory; label stands for the path in messages
 * (and names the chip when the text has no "name"). */
rotor_status rotor_chip_parse(const char *text, size_t len, const char *label, rotor_chip *out, rotor_error *err);

/* A preset name or a path to a chip file: a spec containing '/' or ending in
 * ".json" is a file, anything else a preset. */
rotor_status rotor_chip_resolve(const char *spec, rotor_chip *out, rotor_error *err);

/* Overrides one field from "key=value" text (the CLI's --set).  Checks that
 * field's type and range only (the file reader's rule); relations between
 * fields are not checked, so several --set can pass through intermediate
 * states: call rotor_chip_validate once all are applied.  Errors start with
 * "--set: "; on error the chip is unchanged. */
rotor_status rotor_chip_set(rotor_chip *chip, const char *assignment, rotor_error *err);

/* A bandwidth "16", "16TB/s" or "8000GB/s" (TB/s when bare; TB, T, GB, G
 * too, any case) into GB/s: positive, at most 1e6 of its unit; false
 * otherwise.  The key "hbm-bw" of rotor_chip_set reads it as the HBM of
 * all chips (issue 46: the command line's one spelling). */
bool rotor_bandwidth_parse(const char *s, double *gbps);

/* *per_chip = the HBM bandwidth of each of `chips` chips sharing a total
 * of total_gbps (the command line's hbm-bw is the total); false where that
 * is below the chip file's least rate, ROTOR_RATE_MIN. */
bool rotor_hbm_bw_per_chip(double total_gbps, int64_t chips, double *per_chip);

/* Re-checks every field and the relations between them (mesh_width *
 * mesh_height == cores_per_chip for a mesh, and so on). */
rotor_status rotor_chip_validate(const rotor_chip *chip, rotor_error *err);

/* T10's plans price one chip's exchange (cost-model-v1): over several
 * chips a shift or hand-off between cores of two chips would move at the
 * on-chip link's rate, interchip_gbps unpriced.  ROTOR_ERR_INPUT, one line
 * saying so, when chip has more than one; `what` is the command's verb
 * ("compile", "plan").  The one rule of the search (op/search.h) and the
 * compile (compile/compile.h). */
rotor_status rotor_chip_require_one(const rotor_chip *chip, const char *what, rotor_error *err);

/* Where the mesh model's pricing was not found to hold: a mesh with a
 * side of 2 cores or fewer, on which the replay measured some operators'
 * shifts up to 2.9x slower than their busiest-link bound (docs/mesh.md,
 * "Narrow meshes").  Writes one sentence saying so into buf (cap bytes,
 * no newline) and returns true; false, buf empty, elsewhere.  The one rule
 * of the compile's programs and `rotor plan`. */
bool rotor_chip_mesh_caveat(const rotor_chip *chip, char *buf, size_t cap);

/* Writes a valid chip as a version-1 chip file (stable key order, so output
 * is byte-identical for the same chip; numbers round-trip exactly).  Returns a malloc'd string the caller frees,
 * or NULL on allocation failure. */
char *rotor_chip_to_json(const rotor_chip *chip);

/* The number of fields whose values differ between a and b; the first cap
 * of their keys ("link_gbps", "static_w": the chip file's, in its order;
 * static strings) into keys.  The name is not compared (a chip file keeping
 * a preset's name is another chip all the same); nor, unless network,
 * topology, mesh_width and mesh_height, for a caller that says the network
 * apart (`rotor simulate`, docs/simulator.md "Another chip").
 * ROTOR_CHIP_FIELDS_MAX keys is room for every one. */
#define ROTOR_CHIP_FIELDS_MAX 64
int rotor_chip_differences(const rotor_chip *a, const rotor_chip *b, bool network, const char **keys, int cap);

/* Derived quantities in the cost model's units (cost-model-v1.md "Chip"). */
int64_t rotor_chip_cores(const rotor_chip *chip);          /* N = cores_per_chip * chips */
/* chip with g cores a chip at the same per-core rates: matrix_tflops,
 * int8_tops and vector_tflops are whole-chip figures, so they take g /
 * cores_per_chip of theirs; everything else (SRAM and links per core, HBM
 * and mesh shape) is the caller's to set. */
rotor_chip rotor_chip_with_cores(const rotor_chip *chip, int64_t g);
/* *out = g of the chip's cores as a chip of their own (T10 Figure 20's
 * "part of the chip"): rotor_chip_with_cores, on a mesh the squarest
 * rectangle of g cores within the chip's mesh, on a chip of clusters whole
 * clusters (or one cluster of g cores, fewer than a cluster's).  An error
 * names the part that cannot be made. */
rotor_status rotor_chip_part(const rotor_chip *chip, int64_t g, rotor_chip *out, rotor_error *err);
/* chip with its matrix rate tflops and its other compute in proportion:
 * vector_tflops and int8_tops scaled by tflops / matrix_tflops, so that
 * "more FLOPS" keeps the balance between MatMuls and the vendor operators
 * (rotor explore's flops key, Elk Figure 24's rates). */
rotor_chip rotor_chip_with_matrix_tflops(const rotor_chip *chip, double tflops);
/* S, the SRAM one core's operators may hold, in bytes (T10 §3: each core
 * holds its sub-operators' tensors in its private SRAM).  The one owner of
 * that rule: the search, the compiler, the emulator, the VGM baseline, the
 * HBM schedule and the reports read it here, not from the raw field, so a
 * hierarchy of local and cluster buffers (GraphTurbo) changes it in one
 * place.  Today it is the flat private SRAM, sram_bytes; a chip file's and
 * a program file's "sram_bytes" key is that field as written. */
static inline int64_t rotor_chip_sram(const rotor_chip *chip) { return chip->sram_bytes; }
/* The cores of one cluster (core i of a chip is in cluster i / this).  A
 * chip of one cluster is the
 * whole chip, whatever cores_per_cluster says: code that resizes a chip by
 * writing cores_per_chip alone (compile/segment.c's core groups, tests)
 * keeps a valid one-cluster chip (rotor_chip_validate; docs/chip-format.md). */
static inline int64_t rotor_chip_cluster_cores(const rotor_chip *chip) {
    return chip->clusters <= 1 ? chip->cores_per_chip : chip->cores_per_cluster;
}
/* Whether the chip has a global buffer per cluster. */
static inline int rotor_chip_has_gb(const rotor_chip *chip) { return chip->gb_bytes > 0; }
/* The model's rates (cost-model-v1.md "Chip"), inline: the search prices
 * sub-tasks and tensors with them at every step node (issue 45). */
/* beta, bytes/s */
static inline double rotor_chip_link_bw(const rotor_chip *chip) { return chip->link_gbps * 1e9; }
/* alpha, s */
static inline double rotor_chip_link_latency(const rotor_chip *chip) { return chip->link_latency_ns * 1e-9; }
/* R_mm, FLOP/s per core: matrix_tflops * 1e12 / cores_per_chip, in that
 * order (for ipu-mk2 the spec's 250e12 / 1472 to the last bit) */
static inline double rotor_chip_matrix_rate(const rotor_chip *chip) {
    return chip->matrix_tflops * 1e12 / (double)chip->cores_per_chip;
}
/* R_vec, FLOP/s per core */
static inline double rotor_chip_vector_rate(const rotor_chip *chip) {
    return chip->vector_tflops * 1e12 / (double)chip->cores_per_chip;
}

#endif
