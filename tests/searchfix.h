/* searchfix.h — a bare search context for the tests that check the
 * search's bounds, caches and step walks against brute force (searchcap,
 * searchcut, searchfast2, searchjoint, searchwindow).  Static functions
 * only, as fixtures.h. */
#ifndef ROTOR_TESTS_SEARCHFIX_H
#define ROTOR_TESTS_SEARCHFIX_H

#include <stdbool.h>
#include <string.h>

#include "op/searchint.h"
#include "rotor/op/cost.h"

/* c zeroed, then over e on chip with `cores` cores under cost model v1 (the
 * default); the caller sets the cap, the time cap and the rest it needs. */
static inline void searchfix_ctx(ctx *c, const rotor_expr *e, const rotor_chip *chip, int64_t cores) {
    memset(c, 0, sizeof *c);
    c->e = e;
    c->chip = chip;
    c->m = rotor_cost_model_default();
    c->cores = cores;
    /* the memo's tensor classes as a search without a pool sets them
     * (search.c, ctx_classes) */
    for (int t = 0; t < e->ntensors; t++) c->tclass[t] = (int16_t)(t + 1);
}

/* The plan costed under c's model, when it is valid and its steps are
 * exactly steps[] (a plan whose cost reports other steps is counted under
 * its own, by the walks over every step vector). */
static inline bool searchfix_cost_at(const ctx *c, const rotor_plan *plan, const int64_t *steps,
                                     rotor_plan_info *info, rotor_cost *cost) {
    rotor_error err;
    if (rotor_cost_plan(c->m, c->e, c->chip, plan, info, cost, &err)) return false;
    for (int a = 0; a < c->e->naxes; a++)
        if (info->steps[a] != steps[a]) return false;
    return true;
}

#endif
