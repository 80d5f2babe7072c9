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

typedef struct rotor_cost {
    double compute;    /* s: T * t_sub */
    double comm;       /* s: shifts between sub-tasks */
    double reduction;  /* s: reducing partial sums across rings */
    double total;      /* s: compute + comm + reduction */
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

/* The alpha-beta time of moving `bytes` over the links in `rounds`
 * latencies: bytes / beta + rounds * alpha (cost-model-v1.md "Time",
 * beta the link bandwidth, alpha its latency).  The one statement of the
 * shift formula: the model's communication term, the emulator's exchange
 * time, the compiler's setup and its stages' moves all call it. */
double rotor_cost_shift_s(const rotor_chip *chip, int64_t bytes, int64_t rounds);

/* The ring reduce-scatter of `bytes` over R = rings copies:
 * (R - 1) / R * bytes / beta + (R - 1) * alpha; 0 when R <= 1
 * (cost-model-v1.md "Reduction"). */
double rotor_cost_reduction_s(const rotor_chip *chip, int64_t bytes, int64_t rings);

#endif
