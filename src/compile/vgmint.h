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

/* The exchange rounds of the VGM on a 2D mesh (vgmmesh.c; docs/vgm.md, "On
 * a 2D mesh"): the loads of one round's transfers on every directed link,
 * priced as the busiest link's bytes / beta + the longest route's hops x
 * alpha.  Owners are ranges o0..o1 of consecutive cores holding first (o0),
 * mid (each core between) and last (o1) bytes. */
typedef struct vgm_mesh vgm_mesh;

/* ROTOR_ERR_INPUT unless chip is one chip's mesh. */
rotor_status vgm_mesh_new(const rotor_chip *chip, vgm_mesh **out, rotor_error *err);
void vgm_mesh_free(vgm_mesh *m);
/* The readers of the next multicasts (a group reading one box). */
void vgm_mesh_readers(vgm_mesh *m, const int64_t *readers, int64_t n);
/* Owners o0..o1 send their bytes to every reader of the group once, over
 * the union of their XY routes. */
void vgm_mesh_multicast(vgm_mesh *m, int64_t o0, int64_t o1, double first, double mid, double last);
/* Core src sends each owner o0..o1 its bytes, along its XY route. */
void vgm_mesh_unicast(vgm_mesh *m, int64_t src, int64_t o0, int64_t o1, double first, double mid, double last);
/* The round's time; its busiest link's bytes and longest route in
 * *link_bytes and *hops (either may be NULL); the loads start again. */
double vgm_mesh_round(vgm_mesh *m, double *link_bytes, int64_t *hops);

#endif
