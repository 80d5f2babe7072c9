/* energystore.h — the energy model's per-operator counts kept in the plan
 * cache's directory (private to the compile stage; src/compile/energy.c
 * counts them; docs/compile.md, "Plan cache", the .ren files; issue 45).
 *
 * A record is an operator's key (energy.c's op_key: the bytes that fully
 * determine its setup and tile counts on one chip) and its seven counts.
 * One file per (program's model name, chip), so that a warm compile reads
 * one small file.  After an error nothing is kept. */
#ifndef ROTOR_COMPILE_ENERGYSTORE_H
#define ROTOR_COMPILE_ENERGYSTORE_H

#include <stdbool.h>
#include <stddef.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/compile/energy.h"

typedef struct energy_store energy_store;

/* Opens (and reads) the store of model on chip under dir: *damaged 1 when
 * its file did not read back (ignored, emptied, to be rewritten), else 0.
 * A missing file is an empty store.  Fails only when out of memory. */
rotor_status compile_energy_store_open(const char *dir, const char *model, const rotor_chip *chip, energy_store **out,
                               int *damaged, rotor_error *err);

/* The counts recorded under key[0..n): true and *c when there. */
bool compile_energy_store_find(const energy_store *s, const void *key, size_t n, rotor_energy_counts *c);

/* Records key's counts (kept once); false when out of memory. */
bool compile_energy_store_add(energy_store *s, const void *key, size_t n, const rotor_energy_counts *c);

/* Writes the file when something was added or it was damaged (temporary
 * name, then rename: rotor_plancache_write); true when it wrote. */
bool compile_energy_store_save(energy_store *s);

void compile_energy_store_free(energy_store *s);

#endif
