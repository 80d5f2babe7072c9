/* rotor — random valid plans, for verification beyond the optimum.
 *
 * `rotor verify --random N --seed S` and the property tests need plans that
 * exercise the whole space (padding, replication, chains of temporal factors,
 * factors on two axes of one tensor, every loop order), not only the ones the
 * search likes.  The sampler draws F_op, then each tensor's f_t, then a loop
 * order, and keeps the first draw rotor_plan_derive accepts: every plan it
 * returns is valid, and the sequence depends only on the operator, the chip
 * and the seed. */
#ifndef ROTOR_SAMPLE_H
#define ROTOR_SAMPLE_H

#include <stdint.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/op/expr.h"
#include "rotor/op/plan.h"

/* A deterministic generator (splitmix64); seed it with any value. */
typedef struct rotor_rng {
    uint64_t state;
} rotor_rng;

uint64_t rotor_rng_next(rotor_rng *r);
/* Uniform in [0, n) for n >= 1. */
int64_t rotor_rng_below(rotor_rng *r, int64_t n);

/* Draws a random valid plan of e on chip (memory within the chip's SRAM).
 * F_op is log-uniform per axis in a random axis order under the core budget
 * (max_cores, 0: the chip's cores); each tensor's ring size is a random
 * divisor of its sharing degree, split over its axes prime by prime; the loop
 * order is a uniform permutation.  ROTOR_ERR_NOFIT if 100000 draws all fail. */
rotor_status rotor_sample_plan(const rotor_expr *e, const rotor_chip *chip, int64_t max_cores,
                               rotor_rng *rng, rotor_plan *out, rotor_plan_info *info,
                               rotor_error *err);

#endif
