/* rotor — plan files: the JSON that `rotor plan --format json` writes and
 * `rotor verify --plan FILE` reads (format "rotor-plan", version 1,
 * docs/plan-format.md).  Writers are stable: the same input gives
 * byte-identical output, apart from the search's wall time. */
#ifndef ROTOR_PLANFILE_H
#define ROTOR_PLANFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "rotor/base/chip.h"
#include "rotor/base/error.h"
#include "rotor/op/expr.h"
#include "rotor/op/search.h"

/* The whole report of a search: operator, chip, best plan with derived
 * quantities and times, the frontier (when r->npareto > 0) and the statistics.
 * Returns a malloc'd string (caller frees) or NULL when out of memory. */
char *rotor_planfile_write(const rotor_expr *e, const rotor_chip *chip, const char *cost_model,
                           const rotor_search_result *r);

/* Reads the plan of a plan file for the operator e: the "plan" object's
 * F_op, f_t and loop_order, keyed by axis and tensor names.  The file's
 * "expr" must match e's text.  The plan is not validated here: pass it to
 * rotor_plan_derive, which names the broken rule. */
rotor_status rotor_planfile_read(const char *path, const rotor_expr *e, rotor_plan *out,
                                 rotor_error *err);

/* The same from a NUL-terminated text; path stands for the file in messages. */
rotor_status rotor_planfile_parse(const char *text, const char *path, const rotor_expr *e, rotor_plan *out,
                                  rotor_error *err);

/* The operator and chip a plan file is for, so that `rotor verify --plan
 * FILE` needs no other description of them: its "expr" text into expr, its
 * "dims" as "a=N,b=M,..." into dims, and its "chip" name into chip (each
 * buffer of the given size, NUL-terminated).  The format and version are
 * checked; a missing or mistyped key is named.  On an error the buffers
 * hold empty strings. */
rotor_status rotor_planfile_operator(const char *path, char *expr, size_t esize, char *dims, size_t dsize, char *chip,
                                     size_t csize, rotor_error *err);

/* The chip a plan file was searched on ("chip_file", written since
 * 2026-12-04), checked as a chip file is: *found false, out untouched, for
 * a file without it, which names its chip only.  `rotor verify --plan`
 * takes it: a plan searched with --set link_gbps=0.5 was verified on the
 * preset of its name, and its exchange called "= model" at the preset's
 * price (found by an audit helper). */
rotor_status rotor_planfile_chip(const char *path, rotor_chip *out, bool *found, rotor_error *err);

#endif
