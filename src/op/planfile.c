/* planfile.c — writing and reading "rotor-plan" JSON (docs/plan-format.md). */
#include "rotor/op/planfile.h"

#include "planjson.h"
#include "base/jsontext.h"
#include "rotor/base/readfile.h"
#include "rotor/op/cost.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLANFILE_FORMAT "rotor-plan"
#define PLANFILE_VERSION 1
#define PLAN_INT_MAX ((int64_t)1 << 53)

/* Doubles are written with 17 significant digits so they read back exactly. */
cJSON *rotor_json_num(double d) {
    char buf[40];
    snprintf(buf, sizeof buf, "%.17g", d);
    return cJSON_CreateRaw(buf);
}
/* "%lld" by hand: a program holds hundreds of thousands of integers (every
 * placement's chains and rings), and snprintf's format parsing cost several
 * times the digits (issue 45). */
cJSON *rotor_json_int(int64_t v) {
    char buf[24], *p = buf + sizeof buf;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v; /* INT64_MIN too */
    *--p = '\0';
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) *--p = '-';
    return cJSON_CreateRaw(p);
}

/* {axis: value} over the operator's axes, in axis order. */
cJSON *rotor_json_per_axis(const rotor_expr *e, const int64_t *v) {
    cJSON *o = cJSON_CreateObject();
    for (int a = 0; a < e->naxes; a++) cJSON_AddItemToObject(o, e->axis_name[a], rotor_json_int(v[a]));
    return o;
}

cJSON *rotor_json_plan(const rotor_expr *e, const rotor_plan *p) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "F_op", rotor_json_per_axis(e, p->fop));
    cJSON *ft = cJSON_AddObjectToObject(o, "f_t");
    for (int t = 0; t < e->ntensors; t++) {
        cJSON *x = cJSON_AddObjectToObject(ft, e->tensors[t].name);
        for (int a = 0; a < e->naxes; a++)
            if (e->tensors[t].has_axis[a]) cJSON_AddItemToObject(x, e->axis_name[a], rotor_json_int(p->ft[t][a]));
    }
    cJSON *order = cJSON_AddArrayToObject(o, "loop_order");
    for (int l = 0; l < e->naxes; l++)
        cJSON_AddItemToArray(order, cJSON_CreateString(e->axis_name[p->order[l]]));
    /* written only when set: plans without it read and print as before */
    if (p->overlap) cJSON_AddBoolToObject(o, "overlap", true);
    return o;
}

cJSON *rotor_json_time(const rotor_cost *c) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "compute_s", rotor_json_num(c->compute));
    cJSON_AddItemToObject(o, "communication_s", rotor_json_num(c->comm));
    cJSON_AddItemToObject(o, "reduction_s", rotor_json_num(c->reduction));
    cJSON_AddItemToObject(o, "total_s", rotor_json_num(c->total));
    if (c->hidden != 0) cJSON_AddItemToObject(o, "hidden_s", rotor_json_num(c->hidden));
    return o;
}

static cJSON *derived_object(const rotor_expr *e, const rotor_plan_info *in) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "cores", rotor_json_int(in->cores));
    cJSON_AddItemToObject(o, "steps", rotor_json_per_axis(e, in->steps));
    cJSON_AddItemToObject(o, "total_steps", rotor_json_int(in->total_steps));
    cJSON_AddItemToObject(o, "padded", rotor_json_per_axis(e, in->padded));
    cJSON_AddItemToObject(o, "sub_operator", rotor_json_per_axis(e, in->sub_op));
    cJSON_AddItemToObject(o, "sub_task", rotor_json_per_axis(e, in->sub_task));
    cJSON_AddItemToObject(o, "padding_ratio", rotor_json_num(in->padding_ratio));
    cJSON_AddItemToObject(o, "memory_bytes", rotor_json_int(in->memory));
    cJSON_AddBoolToObject(o, "shift_buffer_reserved", in->rotates);
    cJSON *ts = cJSON_AddObjectToObject(o, "tensors");
    for (int t = 0; t < e->ntensors; t++) {
        cJSON *x = cJSON_AddObjectToObject(ts, e->tensors[t].name);
        cJSON_AddItemToObject(x, "sharing", rotor_json_int(in->sharing[t]));
        cJSON_AddItemToObject(x, "ring_size", rotor_json_int(in->ring_size[t]));
        cJSON_AddItemToObject(x, "rings", rotor_json_int(in->rings[t]));
        cJSON *part = cJSON_AddArrayToObject(x, "partition");
        for (int d = 0; d < e->tensors[t].ndims; d++) cJSON_AddItemToArray(part, rotor_json_int(in->part[t][d]));
        cJSON_AddItemToObject(x, "bytes", rotor_json_int(in->bytes[t]));
        cJSON_AddItemToObject(x, "shifts", rotor_json_int(in->shifts[t]));
    }
    return o;
}

char *rotor_planfile_write(const rotor_expr *e, const rotor_chip *chip, const char *cost_model,
                           const rotor_search_result *r) {
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    cJSON_AddStringToObject(root, "format", PLANFILE_FORMAT);
    cJSON_AddItemToObject(root, "version", rotor_json_int(PLANFILE_VERSION));
    cJSON_AddStringToObject(root, "expr", e->text);
    cJSON_AddItemToObject(root, "dims", rotor_json_per_axis(e, e->extent));
    cJSON_AddStringToObject(root, "chip", chip->name);
    rotor_error cerr;
    if (rotor_json_add_chip_file(root, chip, &cerr)) { /* the whole chip: a --set is part of it */
        cJSON_Delete(root);
        return NULL;
    }
    cJSON_AddItemToObject(root, "cores", rotor_json_int(rotor_chip_cores(chip)));
    cJSON_AddStringToObject(root, "cost_model", cost_model);
    cJSON_AddItemToObject(root, "plan", rotor_json_plan(e, &r->best.plan));
    cJSON_AddItemToObject(root, "time", rotor_json_time(&r->best.cost));
    cJSON_AddItemToObject(root, "derived", derived_object(e, &r->best.info));
    if (r->npareto > 0) {
        cJSON *pa = cJSON_AddArrayToObject(root, "pareto");
        for (int i = 0; i < r->npareto; i++) {
            const rotor_candidate *c = &r->pareto[i];
            cJSON *x = cJSON_CreateObject();
            cJSON_AddItemToObject(x, "total_s", rotor_json_num(c->cost.total));
            cJSON_AddItemToObject(x, "memory_bytes", rotor_json_int(c->info.memory));
            cJSON_AddItemToObject(x, "plan", rotor_json_plan(e, &c->plan));
            cJSON_AddItemToObject(x, "time", rotor_json_time(&c->cost));
            cJSON_AddItemToArray(pa, x);
        }
    }
    const rotor_search_stats *s = &r->stats;
    cJSON *st = cJSON_AddObjectToObject(root, "search");
    cJSON_AddItemToObject(st, "fop_vectors", rotor_json_int(s->fops));
    cJSON_AddItemToObject(st, "fop_vectors_searched", rotor_json_int(s->fops_searched));
    cJSON_AddItemToObject(st, "step_vectors", rotor_json_int(s->step_vectors));
    cJSON_AddItemToObject(st, "step_vectors_pruned", rotor_json_int(s->steps_pruned));
    cJSON_AddItemToObject(st, "plans_costed", rotor_json_int(s->plans));
    cJSON_AddItemToObject(st, "partial_plans_pruned", rotor_json_int(s->nodes_pruned));
    cJSON_AddItemToObject(st, "threads", rotor_json_int(s->threads));
    cJSON_AddItemToObject(st, "wall_s", rotor_json_num(s->wall_seconds));
    char *text = rotor_json_stamp(root) ? cJSON_Print(root) : NULL; /* with rotor's version (base/jsontext.h) */
    cJSON_Delete(root);
    return text;
}

/* 64 MiB: a program takes about 1.3 KB per operator (resnet-50's 158
 * operators, 203 KB), so this holds some 50,000 operators; a plan file is
 * a few KB. */
#define JSON_FILE_MAX ((int64_t)64 << 20)

rotor_status rotor_json_read_text(const char *path, char **out, rotor_error *err) {
    size_t len;
    rotor_status st = rotor_read_file(path, JSON_FILE_MAX, out, &len, err);
    if (!st && (st = rotor_json_no_nul(*out, len, path, err))) {
        free(*out);
        *out = NULL;
    }
    return st;
}

/* A positive integer of at most hi, why naming where hi comes from:
 * "PATH: KEY: expected a positive integer at most 64 (E_m, the extent of
 * axis m), got 1e+300".  The range is checked on the double first: casting
 * one beyond int64_t (1e300, NaN) to an integer is undefined behaviour. */
static rotor_status read_int(const char *path, const char *key, const cJSON *v, int64_t hi, const char *why,
                             int64_t *out, rotor_error *err) {
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 1 && v->valuedouble <= (double)hi) ||
        v->valuedouble != floor(v->valuedouble)) {
        char got[96];
        if (v) rotor_json_describe(v, got, sizeof got);
        else snprintf(got, sizeof got, "nothing");
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s: expected a positive integer at most %lld (%s), got %s", path,
                          key, (long long)hi, why, got);
    }
    *out = (int64_t)v->valuedouble;
    return ROTOR_OK;
}

rotor_status rotor_json_read_plan(const cJSON *plan, const rotor_expr *e, const char *path,
                                  const char *where, rotor_plan *out, rotor_error *err) {
    rotor_status st = ROTOR_OK;
    char key[160];
    rotor_plan_init(e, out);
    if (!cJSON_IsObject(plan)) return rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s: expected an object", path, where);
    const cJSON *fop = cJSON_GetObjectItemCaseSensitive(plan, "F_op");
    const cJSON *ft = cJSON_GetObjectItemCaseSensitive(plan, "f_t");
    const cJSON *order = cJSON_GetObjectItemCaseSensitive(plan, "loop_order");
    if (!cJSON_IsObject(fop) || !cJSON_IsObject(ft) || !cJSON_IsArray(order))
        st = rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s: expected F_op, f_t objects and a loop_order array",
                        path, where);
    /* no key the plan does not have: a misspelt one (F_op.z, f_t.Z, an
     * axis A lacks) was read past without a word until 2026-12-04 (found
     * by an audit helper) */
    const cJSON *k, *pl = st ? NULL : plan, *fo = NULL, *fts = NULL;
    cJSON_ArrayForEach(k, pl)
        if (strcmp(k->string, "F_op") && strcmp(k->string, "f_t") && strcmp(k->string, "loop_order") &&
            strcmp(k->string, "overlap")) {
            st = rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s.%.60s: not a key of a plan (F_op, f_t, loop_order, overlap)",
                            path, where, k->string);
            break;
        }
    if (!st) fo = fop;
    cJSON_ArrayForEach(k, fo)
        if (rotor_expr_axis(e, k->string) < 0) {
            st = rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s.F_op.%.60s: not an axis of %s", path, where, k->string,
                            e->text);
            break;
        }
    if (!st) fts = ft;
    cJSON_ArrayForEach(k, fts) {
        int t = -1;
        for (int i = 0; i < e->ntensors && t < 0; i++)
            if (!strcmp(e->tensors[i].name, k->string)) t = i;
        if (t < 0) {
            st = rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s.f_t.%.60s: not a tensor of %s", path, where, k->string,
                            e->text);
            break;
        }
        const cJSON *ax;
        cJSON_ArrayForEach(ax, k) {
            int a = rotor_expr_axis(e, ax->string);
            if (a < 0 || !e->tensors[t].has_axis[a]) {
                st = rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s.f_t.%s.%.60s: not an axis of %s", path, where,
                                k->string, ax->string, k->string);
                break;
            }
        }
        if (st) break;
    }
    /* F_op splits an axis among cores: at most its extent (T10 §4.2) */
    for (int a = 0; !st && a < e->naxes; a++) {
        char why[64];
        snprintf(key, sizeof key, "%s.F_op.%s", where, e->axis_name[a]);
        snprintf(why, sizeof why, "E_%s, the extent of axis %s", e->axis_name[a], e->axis_name[a]);
        st = read_int(path, key, cJSON_GetObjectItemCaseSensitive(fop, e->axis_name[a]), e->extent[a], why,
                      &out->fop[a], err);
    }
    /* f_t of tensor X rotates X among the P_X cores that share one of its
     * partitions, P_X the product of F_op over the axes X lacks: prod f_t
     * divides P_X (plan.c, derive_rings), so each f_t is at most P_X */
    for (int t = 0; !st && t < e->ntensors; t++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(ft, e->tensors[t].name);
        int64_t share = 1; /* capped at 2^53, the largest integer a JSON number holds exactly */
        for (int a = 0; a < e->naxes; a++)
            if (!e->tensors[t].has_axis[a] && (!rotor_mul_i64(share, out->fop[a], &share) || share > PLAN_INT_MAX))
                share = PLAN_INT_MAX;
        char why[96];
        snprintf(why, sizeof why, "P_%s, the cores sharing one partition of %s", e->tensors[t].name,
                 e->tensors[t].name);
        for (int a = 0; !st && a < e->naxes; a++) {
            if (!e->tensors[t].has_axis[a]) continue;
            snprintf(key, sizeof key, "%s.f_t.%s.%s", where, e->tensors[t].name, e->axis_name[a]);
            st = read_int(path, key, cJSON_GetObjectItemCaseSensitive(x, e->axis_name[a]), share, why,
                          &out->ft[t][a], err);
        }
    }
    if (!st && cJSON_GetArraySize(order) != e->naxes)
        st = rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s.loop_order: expected %d axes", path, where, e->naxes);
    for (int l = 0; !st && l < e->naxes; l++) {
        const cJSON *v = cJSON_GetArrayItem(order, l);
        int a = cJSON_IsString(v) ? rotor_expr_axis(e, v->valuestring) : -1;
        if (a < 0) st = rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s.loop_order[%d]: expected an axis name", path, where, l);
        else out->order[l] = a;
    }
    const cJSON *ov = cJSON_GetObjectItemCaseSensitive(plan, "overlap");
    if (!st && ov && !cJSON_IsBool(ov))
        st = rotor_fail(err, ROTOR_ERR_INPUT, "%s: %s.overlap: expected true or false", path, where);
    if (!st) out->overlap = cJSON_IsTrue(ov);
    return st;
}

/* "format" and "version" of a plan file's root. */
static rotor_status check_header(const cJSON *root, const char *path, rotor_error *err) {
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "version");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, PLANFILE_FORMAT) != 0)
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: format: expected \"%s\"", path, PLANFILE_FORMAT);
    if (!cJSON_IsNumber(ver) || ver->valuedouble != PLANFILE_VERSION)
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s: version: expected %d", path, PLANFILE_VERSION);
    return ROTOR_OK;
}

rotor_status rotor_planfile_parse(const char *text, const char *path, const rotor_expr *e, rotor_plan *out,
                                  rotor_error *err) {
    rotor_plan_init(e, out);
    cJSON *root;
    rotor_status st = rotor_json_parse(text, strlen(text), path, &root, err);
    if (st) return st;
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(root, "expr");
    const cJSON *plan = cJSON_GetObjectItemCaseSensitive(root, "plan");
    if ((st = check_header(root, path, err))) {
    } else if (!cJSON_IsString(ex) || strcmp(ex->valuestring, e->text) != 0) {
        st = rotor_fail(err, ROTOR_ERR_INPUT, "%s: expr: the plan is for another expression", path);
    } else if (!cJSON_IsObject(plan)) {
        st = rotor_fail(err, ROTOR_ERR_INPUT, "%s: plan: expected an object", path);
    }
    if (!st) st = rotor_json_read_plan(plan, e, path, "plan", out, err);
    cJSON_Delete(root);
    return st;
}

rotor_status rotor_planfile_read(const char *path, const rotor_expr *e, rotor_plan *out,
                                 rotor_error *err) {
    char *text = NULL;
    rotor_status st = rotor_json_read_text(path, &text, err);
    if (st) return st;
    st = rotor_planfile_parse(text, path, e, out, err);
    free(text);
    return st;
}

/* The file at path as one JSON value (cJSON_Delete it). */
static rotor_status read_root(const char *path, cJSON **root, rotor_error *err) {
    char *text = NULL;
    rotor_status st = rotor_json_read_text(path, &text, err);
    if (st) return st;
    st = rotor_json_parse(text, strlen(text), path, root, err);
    free(text);
    return st;
}

rotor_status rotor_planfile_operator(const char *path, char *expr, size_t esize, char *dims, size_t dsize, char *chip,
                                     size_t csize, rotor_error *err) {
    expr[0] = dims[0] = chip[0] = '\0';
    cJSON *root;
    rotor_status st = read_root(path, &root, err);
    if (st) return st;
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(root, "expr");
    const cJSON *dm = cJSON_GetObjectItemCaseSensitive(root, "dims");
    const cJSON *ch = cJSON_GetObjectItemCaseSensitive(root, "chip");
    st = check_header(root, path, err);
    if (!st && (!cJSON_IsString(ex) || strlen(ex->valuestring) >= esize))
        st = rotor_fail(err, ROTOR_ERR_INPUT, "%s: expr: expected an expression of under %zu characters", path, esize);
    if (!st && !cJSON_IsObject(dm)) st = rotor_fail(err, ROTOR_ERR_INPUT, "%s: dims: expected an object", path);
    /* the cost model the times were priced by: one rotor knows (a "v9"
     * passed without a word until 2026-12-04) */
    const cJSON *cm = cJSON_GetObjectItemCaseSensitive(root, "cost_model");
    if (!st && cm && !(cJSON_IsString(cm) && rotor_cost_model_find(cm->valuestring))) {
        char got[96];
        rotor_json_describe(cm, got, sizeof got);
        st = rotor_fail(err, ROTOR_ERR_INPUT, "%s: cost_model: expected a cost model rotor has (v1), got %s", path, got);
    }
    if (!st && (!cJSON_IsString(ch) || !*ch->valuestring || strlen(ch->valuestring) >= csize))
        st = rotor_fail(err, ROTOR_ERR_INPUT, "%s: chip: expected a chip name of under %zu characters", path, csize);
    size_t n = 0;
    const cJSON *d;
    const cJSON *items = st ? NULL : dm;
    cJSON_ArrayForEach(d, items) {
        int64_t v = 0;
        char key[160];
        snprintf(key, sizeof key, "dims.%.100s", d->string);
        if ((st = read_int(path, key, d, ROTOR_EXTENT_MAX, "ROTOR_EXTENT_MAX, the largest extent --dim takes", &v,
                           err)))
            break;
        int w = snprintf(dims + n, dsize - n, "%s%s=%lld", n ? "," : "", d->string, (long long)v);
        if (w < 0 || (size_t)w >= dsize - n) {
            st = rotor_fail(err, ROTOR_ERR_INPUT, "%s: dims: longer than %zu characters", path, dsize);
            break;
        }
        n += (size_t)w;
    }
    if (!st) {
        snprintf(expr, esize, "%s", ex->valuestring);
        snprintf(chip, csize, "%s", ch->valuestring);
    } else {
        expr[0] = dims[0] = chip[0] = '\0';
    }
    cJSON_Delete(root);
    return st;
}

rotor_status rotor_planfile_chip(const char *path, rotor_chip *out, bool *found, rotor_error *err) {
    *found = false;
    cJSON *root;
    rotor_status st = read_root(path, &root, err);
    if (st) return st;
    st = rotor_json_chip_file(root, path, out, found, err);
    cJSON_Delete(root);
    return st;
}
