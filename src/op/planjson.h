/* planjson.h — internal: the JSON pieces of a plan shared by the plan file
 * (planfile.c) and the program file (program.c).  Not public API: it exposes
 * cJSON, which the public headers do not. */
#ifndef ROTOR_PLANJSON_H
#define ROTOR_PLANJSON_H

#include <cjson/cJSON.h>

#include "rotor/op/cost.h"
#include "rotor/base/error.h"
#include "rotor/op/expr.h"
#include "rotor/op/plan.h"

/* A double written with 17 significant digits (reads back exactly), an
 * integer, and {axis: value} over e's axes. */
cJSON *rotor_json_num(double d);
cJSON *rotor_json_int(int64_t v);
cJSON *rotor_json_per_axis(const rotor_expr *e, const int64_t *v);

/* {"F_op": {...}, "f_t": {...}, "loop_order": [...]} and the four times. */
cJSON *rotor_json_plan(const rotor_expr *e, const rotor_plan *p);
cJSON *rotor_json_time(const rotor_cost *c);

/* Reads a plan object written by rotor_json_plan for e.  Errors are
 * "path: where.F_op.m: expected a positive integer". */
rotor_status rotor_json_read_plan(const cJSON *plan, const rotor_expr *e, const char *path,
                                  const char *where, rotor_plan *out, rotor_error *err);

/* Reads a whole file into a NUL-terminated malloc'd string. */
rotor_status rotor_json_read_text(const char *path, char **out, rotor_error *err);

#endif
