/* rotor — the energy model (issue 26 item 2; docs/energy.md).
 *
 * Neither T10 nor Elk reports energy; rotor prices the events a compiled
 * program causes, as Timeloop and ZigZag do: per matrix MAC, per vector
 * FLOP, per SRAM byte read and written, per link byte-hop, per HBM byte and
 * per inter-chip byte (the chip's coefficients, docs/chip-format.md), plus
 * static power * time.  rotor_energy_program counts the events of a program
 * from its plans; the simulator counts the same events from the tasks a
 * replay emits (rotor_sim_stats), and the two agree exactly on an
 * all-to-all chip and on a one-chip mesh (tests/test_energy.c).
 *
 * After an error, rotor_energy_program leaves *out zeroed. */
#ifndef ROTOR_ENERGY_H
#define ROTOR_ENERGY_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/compile/program.h"
#include "rotor/op/expr.h"

/* The events that cost energy (docs/energy.md, "Events"). */
typedef struct rotor_energy_counts {
    int64_t matrix_flops;     /* on the matrix units: 2 per MAC */
    int64_t vector_flops;     /* on the vector units */
    int64_t sram_read_bytes;  /* operands read by compute + bytes a core sends */
    int64_t sram_write_bytes; /* results written by compute + bytes landing in a core */
    int64_t byte_hops;        /* bytes moved * on-chip hops (crossing chips is not a hop) */
    int64_t hbm_bytes;        /* bytes to or from HBM */
    int64_t interchip_bytes;  /* bytes crossing from one chip to another */
} rotor_energy_counts;

/* The counts priced with a chip's coefficients, in joules. */
typedef struct rotor_energy {
    double compute_j;   /* matrix_flops / 2 * mac_pj + vector_flops * vector_flop_pj */
    double sram_j;      /* read * sram_read_pj + written * sram_write_pj */
    double link_j;      /* byte_hops * link_pj */
    double hbm_j;       /* hbm_bytes * hbm_pj */
    double interchip_j; /* interchip_bytes * interchip_pj */
    double static_j;    /* static_w * chips * seconds */
    double total_j;     /* the sum */
    double seconds;     /* the time priced */
    double edp;         /* total_j * seconds, J s */
} rotor_energy;

/* Prices counts c over `seconds` on chip. */
void rotor_energy_price(const rotor_chip *chip, const rotor_energy_counts *c, double seconds, rotor_energy *out);

/* The SRAM operand bytes of `steps` sub-tasks of extents sub (per axis) of
 * expression e: each sub-task reads every input tile and the output tile
 * (it accumulates) once, and writes the output tile once.  False when a
 * count leaves int64. */
bool rotor_energy_subtask_bytes(const rotor_expr *e, const int64_t *sub, int64_t elem, int64_t steps,
                                int64_t *read, int64_t *written);

/* The vector FLOPs one core spends on a vendor operator (no expression)
 * of exec_s seconds: it runs at the vector rate (docs/compile.md), so
 * exec_s * R_vec, rounded. */
int64_t rotor_energy_vendor_flops(const rotor_chip *chip, double exec_s);

/* The events of program p on chip (the compile chip, or one differing in
 * its network only, as rotor_replay takes): per operator, setup (hand-off
 * pieces and gathers), sub-tasks, shifts and the reduction, as
 * rotor_replay emits them.  On-chip hops: 1 on all-to-all; on a mesh
 * the XY distance between the cores' positions on their chips (an
 * approximation across chips, where the simulator's routes go through the
 * chips' edges: docs/energy.md).  Crossing chips is priced as inter-chip
 * bytes, not as a hop. */
rotor_status rotor_energy_program(const rotor_program *p, const rotor_chip *chip, rotor_energy_counts *out,
                                  rotor_error *err);

/* The same, with the plan cache's directory keeping each distinct
 * operator's counts between compiles (issue 45; docs/compile.md, "Plan
 * cache", the .ren files): a warm count reads them instead of walking the
 * hand-offs again, and gives the same counts.  cache_dir NULL: none, as
 * rotor_energy_program; cache_limit: the directory's size limit
 * (rotor_plancache_evict; 0: the default).  *damaged: 1 when the store's
 * file did not read back (ignored and rewritten; the caller warns), else
 * 0.  A store that cannot be written costs the next count its time, never
 * its result. */
rotor_status rotor_energy_program_cached(const rotor_program *p, const rotor_chip *chip, const char *cache_dir,
                                         int64_t cache_limit, int *damaged, rotor_energy_counts *out,
                                         rotor_error *err);

/* Adds to *acc the events of one plan of expression e on chip, as
 * replay_tiles emits them: its sub-tasks on info->cores cores (the FLOPs of
 * the sub-task's extents, padding included: what the cores execute, and
 * their operand bytes), its shifts (rotor_place_sender) and its
 * reduce-scatter.  Hops as rotor_energy_program's.  After an error *acc is
 * as it was. */
rotor_status rotor_energy_plan(const rotor_expr *e, const rotor_plan *p, const rotor_plan_info *info,
                               const rotor_chip *chip, rotor_energy_counts *acc, rotor_error *err);

/* Adds to *acc one transfer of `bytes` from core src to core dst of chip:
 * bytes x hops (as rotor_energy_program's), read from src's SRAM, written
 * into dst's, inter-chip bytes when the ends are on different chips.  A
 * sum that leaves int64 sets *overflow. */
void rotor_energy_transfer(const rotor_chip *chip, int64_t src, int64_t dst, int64_t bytes, rotor_energy_counts *acc,
                           bool *overflow);

#endif
