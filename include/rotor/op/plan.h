/* rotor — rTensor compute-shift plans (T10 §4.1–§4.2; docs/cost-model-v1.md "A plan").
 *
 * A plan is F_op (operator partition factor, one per axis), f_t (temporal
 * partition factor, one per tensor and axis; 1 where the tensor lacks the axis)
 * and a loop order (outermost first).  The spatial factor of every tensor is
 * f_s^X[a] = F_op[a].  rotor_plan_derive() checks a plan against an operator and
 * a chip and derives every quantity the spec derives, or names the first rule
 * the plan breaks. */
#ifndef ROTOR_PLAN_H
#define ROTOR_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/op/expr.h"

typedef struct rotor_plan {
    int64_t fop[ROTOR_MAX_AXES];                    /* F_op[a] */
    int64_t ft[ROTOR_MAX_TENSORS][ROTOR_MAX_AXES];  /* f_t^X[a]; 1 where X lacks a */
    int order[ROTOR_MAX_AXES];                      /* loop order, outermost first */
    /* Shifts overlap compute: every rotating tensor has a second buffer, so
     * a core receives its next partitions during the sub-tasks before
     * (docs/cost-model.md, "Overlap").  Only on a chip with compute_overlap
     * = 1, and only when some tensor rotates. */
    bool overlap;
} rotor_plan;

/* Everything cost-model-v1.md derives from a plan ("Derived quantities"). */
typedef struct rotor_plan_info {
    int64_t cores;                           /* prod F_op */
    int64_t sharing[ROTOR_MAX_TENSORS];      /* P_X: cores sharing one sub-tensor of X */
    int64_t ring_size[ROTOR_MAX_TENSORS];    /* Q_X = prod_a f_t^X[a] */
    int64_t rings[ROTOR_MAX_TENSORS];        /* R_X = P_X / Q_X */
    int64_t steps[ROTOR_MAX_AXES];           /* S_a */
    int64_t total_steps;                     /* T = prod S_a */
    int64_t padded[ROTOR_MAX_AXES];          /* P_a: padded extent */
    int64_t sub_op[ROTOR_MAX_AXES];          /* L_a = P_a / F_op[a] */
    int64_t sub_task[ROTOR_MAX_AXES];        /* s_a = L_a / S_a */
    int64_t part[ROTOR_MAX_TENSORS][ROTOR_MAX_DIMS]; /* partition extent per dimension */
    int64_t bytes[ROTOR_MAX_TENSORS];        /* bytes(X) of one partition */
    int64_t memory;                          /* M: bytes per core, shift buffer included */
    int64_t shifts[ROTOR_MAX_TENSORS];       /* shifts(X), closed form */
    bool rotates;                            /* some f_t > 1: the shift buffer is reserved */
    bool overlap;                            /* the plan's overlap: double buffers in memory */
    double padding_ratio;                    /* prod P_a / prod E_a (>= 1) */
} rotor_plan_info;

/* Checks the plan and fills info.  Invalid plans give ROTOR_ERR_INPUT and a
 * reason naming the rule, the tensor and the axis, e.g.
 * "f_t of B (4) does not divide its sharing degree P_B = 2". */
rotor_status rotor_plan_derive(const rotor_expr *e, const rotor_chip *chip, const rotor_plan *p,
                               rotor_plan_info *info, rotor_error *err);

/* Whether tensor t's ring has one digit: it rotates along at most one
 * axis, and no other tensor along that axis has a factor between 1 and its
 * own (place.c builds a ring's digits from that chain), so every shift
 * steps its ring by one. */
bool rotor_plan_one_digit(const rotor_expr *e, const rotor_plan *p, int t);

/* Whether plan p (info derived without overlap) may also run with overlap
 * on chip: the chip's cores compute while their links move data, some
 * tensor rotates, the output does not, and every input's ring has one
 * digit. */
bool rotor_plan_may_overlap(const rotor_expr *e, const rotor_chip *chip, const rotor_plan *p,
                            const rotor_plan_info *info);

/* A plan with F_op = fop, every f_t = 1 and the identity loop order. */
void rotor_plan_init(const rotor_expr *e, rotor_plan *p);

/* The closed-form shift count of the spec for one tensor under a loop order:
 * shifts(X) = sum_l (prod_{i<l} S_i) * (t_l - 1), t_l = f_t^X of level l. */
int64_t rotor_plan_shifts(const rotor_expr *e, const int64_t *steps, const int64_t *ft_x,
                          const int *order);

/* The loop order that minimises sum_X shifts(X) * bytes(X) for fixed factors:
 * axes sorted by w_a / (S_a - 1) descending, where w_a = sum_X (f_t^X[a]-1) *
 * bytes(X) (adjacent-exchange argument, docs/cost-model.md).  Axes with S_a = 1
 * go outermost in axis order; ties keep axis order, so the result is canonical. */
void rotor_plan_best_order(const rotor_expr *e, const int64_t *steps,
                           const int64_t ft[ROTOR_MAX_TENSORS][ROTOR_MAX_AXES],
                           const int64_t *bytes, int *order);

/* Total order on plans used to break ties deterministically (F_op, then f_t,
 * then loop order, lexicographically).  Negative, zero or positive. */
int rotor_plan_compare(const rotor_expr *e, const rotor_plan *a, const rotor_plan *b);

/* Fills steps[] (S_a) from f_t: the largest f_t along each axis. */
void rotor_plan_steps(const rotor_expr *e, const int64_t ft[ROTOR_MAX_TENSORS][ROTOR_MAX_AXES],
                      int64_t *steps);

/* The partition extent of one dimension given L and f_t of the tensor:
 * L_a / f_t[a] for a plain axis, c0*(x0-1) + c1*(x1-1) + 1 for a compound one
 * (with c = 1 this is the spec's L_a/f_a + L_b/f_b - 1). */
static inline int64_t rotor_dim_extent(const rotor_dim *d, const int64_t *len) {
    /* inline: the search's floors ask it per dimension of every step node
     * (issue 45) */
    if (d->nterms == 1 && d->coef[0] == 1) return len[0];
    int64_t x = 1;
    for (int k = 0; k < d->nterms; k++) x += d->coef[k] * (len[k] - 1);
    return x;
}

/* Elements of expression tensor t at full extents (a compound window spans
 * its whole window); INT64_MAX if that overflows. */
int64_t rotor_tensor_elements(const rotor_expr *e, int t);
/* The same count (the one rule for it), and dim_extent (nullable) gets the
 * extent of each of the tensor's dimensions, all of them even when the
 * count overflows. */
int64_t rotor_tensor_extents(const rotor_expr *e, int t, int64_t *dim_extent);

#endif
