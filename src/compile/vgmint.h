/* vgmint.h — what the VGM baseline's driver (vgm.c) shares with its two
 * ways of tiling an operator: Roller's construction (vgmroller.c) and the
 * exhaustive oracle (vgmoracle.c). */
#ifndef ROTOR_VGMINT_H
#define ROTOR_VGMINT_H

#include "rotor/compile/vgm.h"
#include "rotor/op/expr.h"

/* One expression operator to tile: the bytes each core has left for
 * sub-operators (local) and each tensor's VGM slice, ceil(bytes / N). */
typedef struct vgm_target {
    const rotor_expr *e;
    const rotor_chip *chip;
    int64_t cores, local, elem;
    int64_t slice[ROTOR_MAX_TENSORS];
} vgm_target;

static inline int64_t vgm_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Bytes of tensor t's tile when every axis a spans s[a] points. */
int64_t vgm_tile_bytes(const rotor_expr *e, int t, const int64_t *s, int64_t elem);

/* Each fills r (its op field excepted) with the operator's tiling and time,
 * or fails with ROTOR_ERR_NOFIT naming `name` when no tile fits. */
rotor_status vgm_roller_op(const vgm_target *t, const char *name, rotor_vgm_op *r, rotor_error *err);
rotor_status vgm_oracle_op(const vgm_target *t, const char *name, rotor_vgm_op *r, rotor_error *err);

#endif
