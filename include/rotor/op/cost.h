/* rotor — cost models for compute-shift plans.
 *
 * A cost model is a table of function pointers with a name (house style:
 * "interfaces as tables").  Models register in one table in cost.c and are
 * picked by name (--cost-model NAME).  "v1" implements
 * docs/cost-model-v1.md to the letter and is the default.
 *
 * Besides evaluating a plan, a model gives the search two lower bounds that
 * must hold for every valid plan (the search is exact only if they do):
 *   total >= step_bound(F_op, S) + sum_X tensor_bound(X, f_t^X)
 *   step_bound(F_op, S) >= op_bound(F_op)          for every S. */
#ifndef ROTOR_COST_H
#define ROTOR_COST_H

#include "rotor/base/chip.h"
#include "rotor/op/expr.h"
#include "rotor/op/plan.h"

/* The cost model's version: raise it with any change to what a plan costs
 * or which plans are valid (cost.c, plan.c, meshmap.c, the chip fields they
 * read), so that a persistent plan cache (compile/plancache.h) keyed by it
 * no longer answers from plans costed the old way. */
#define ROTOR_COST_MODEL_VERSION 1

typedef struct rotor_cost {
    double compute;    /* s: T * t_sub */
    double comm;       /* s: shifts between sub-tasks */
    double reduction;  /* s: reducing partial sums across rings */
    double total;      /* s: compute + comm + reduction - hidden */
    double hidden;     /* s: shift time hidden under compute (a plan with overlap; else 0) */
} rotor_cost;

typedef struct rotor_cost_model rotor_cost_model;
struct rotor_cost_model {
    const char *name;
    const char *description;
    /* Time of a valid plan (info from rotor_plan_derive). */
    void (*evaluate)(const rotor_cost_model *m, const rotor_expr *e, const rotor_chip *chip,
                     const rotor_plan *p, const rotor_plan_info *info, rotor_cost *out);
    /* Lower bound on the time of any plan with this F_op and these steps S_a
     * (steps == NULL: any steps).  len[a] = L_a and sub[a] = s_a for the given
     * steps (ignored when steps is NULL). */
    double (*step_bound)(const rotor_cost_model *m, const rotor_expr *e, const rotor_chip *chip,
                         const int64_t *fop, const int64_t *steps, const int64_t *sub);
    /* Lower bound on tensor t's own share of the time beyond step_bound, given
     * its factors: bytes = bytes(X), ring = prod f_t^X, rings = R_X. */
    double (*tensor_bound)(const rotor_cost_model *m, const rotor_expr *e, const rotor_chip *chip,
                           int t, int64_t bytes, int64_t ring, int64_t rings);
    /* True when step_bound (with steps) never falls as one S_a is
     * multiplied by an integer, the other steps fixed: the step search then
     * skips the multiples of a step whose time alone is pruned (op/steps.c,
     * steps_dead).  False (a model that does not say): nothing skipped. */
    bool step_bound_multiples;
};

/* The registered models: count, by index, by name (NULL if unknown). */
int rotor_cost_model_count(void);
const rotor_cost_model *rotor_cost_model_at(int i);
const rotor_cost_model *rotor_cost_model_find(const char *name);
const rotor_cost_model *rotor_cost_model_default(void);

/* Shorthand: derive and evaluate with model m.  Invalid plans return the
 * derive error. */
rotor_status rotor_cost_plan(const rotor_cost_model *m, const rotor_expr *e, const rotor_chip *chip,
                             const rotor_plan *p, rotor_plan_info *info, rotor_cost *out,
                             rotor_error *err);

/* Compute time of one sub-task under cost-model v1 (t_sub), shared by the
 * model and its bounds.  sub[a] = s_a. */
double rotor_cost_v1_subtask(const rotor_expr *e, const rotor_chip *chip, const int64_t *sub);

/* x (>= 0) padded up to a multiple of q (> 0), as v1 pads a group to the
 * systolic array's side; a power of two (every preset's array) by a mask,
 * the same integer without the division (issue 45: the search's step
 * vectors pad three groups each). */
static inline int64_t rotor_cost_pad_to(int64_t x, int64_t q) {
    return (q & (q - 1)) == 0 ? (x + q - 1) & -q : (x + q - 1) / q * q;
}

/* The alpha-beta time of moving `bytes` over the links in `rounds`
 * latencies: bytes / beta + rounds * alpha (cost-model-v1.md "Time",
 * beta the link bandwidth, alpha its latency).  The one statement of the
 * shift formula: the model's communication term, the emulator's exchange
 * time, the compiler's setup and its stages' moves all call it. */
double rotor_cost_shift_s(const rotor_chip *chip, int64_t bytes, int64_t rounds);

/* What one step's shift costs (docs/cost-model.md, "Overlap", "On a 2D
 * mesh"): lat, and w[t] for a shift of tensor t; tensors of one dim[t]
 * share links and add up, tensors of different dims move at once (a mesh's
 * X and Y links); ROTOR_SHIFT_ALL adds to every dim.  All-to-all: every dim
 * 0. */
#define ROTOR_SHIFT_DIMS 2
#define ROTOR_SHIFT_ALL ROTOR_SHIFT_DIMS /* a dim[t] that loads every dim's links */
typedef struct rotor_shift_step {
    double lat;
    double w[ROTOR_MAX_TENSORS];
    int dim[ROTOR_MAX_TENSORS];
} rotor_shift_step;

/* The plan's steps walked level by level in closed form: *comm, every
 * step's shift time (the latency on steps where nothing moves); *exposed,
 * what a plan with overlap leaves of it with sub-tasks of sub_s each. */
void rotor_cost_shift_walk(const rotor_expr *e, const rotor_plan *p, const rotor_plan_info *info,
                           const rotor_shift_step *ss, double sub_s, double *comm, double *exposed);

/* The ring reduce-scatter of `bytes` over R = rings copies:
 * (R - 1) / R * bytes / beta + (R - 1) * alpha; 0 when R <= 1
 * (cost-model-v1.md "Reduction"). */
double rotor_cost_reduction_s(const rotor_chip *chip, int64_t bytes, int64_t rings);

/* The bytes round k (1 .. rounds) of a gather carries when it splits
 * `bytes` over `rounds` rounds: the even share, the first bytes % rounds
 * rounds one more.  The compile's setup pieces, the replays and the energy
 * counts all split a gather so (docs/cost-model.md, "Setup"). */
static inline int64_t rotor_gather_piece(int64_t bytes, int64_t rounds, int64_t k) {
    return bytes / rounds + (k <= bytes % rounds ? 1 : 0);
}

#endif
