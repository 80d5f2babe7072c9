/* program.c — writing and reading "rotor-program" JSON
 * (docs/program-format.md).  The placement of an active plan is recorded by
 * its summary (the factor chain of every axis and the ring count of every
 * tensor): place.c derives the whole core map from the plan, and the reader
 * checks that it still does so identically. */
#include "rotor/compile/program.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsontext.h"
#include "rotor/base/hashtab.h"
#include "op/planjson.h"
#include "rotor/op/handoff.h"
#include "rotor/op/meshmap.h"
#include "rotor/op/place.h"

#define PROGRAM_FORMAT "rotor-program"
#define PLACEMENT_ALGORITHM "nested-rings-v1"

/* ---- writing ------------------------------------------------------------ */

static rotor_status placement_json(const rotor_expr *e, const rotor_plan *p,
                                   const rotor_plan_info *info, cJSON **out, rotor_error *err) {
    rotor_place_summary ps; /* the placement's chains and ring counts, its errors, not its rings */
    rotor_status st = rotor_place_summarize(e, p, info, &ps, err);
    if (st) return st;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "algorithm", PLACEMENT_ALGORITHM);
    cJSON *chains = cJSON_AddObjectToObject(o, "chains");
    for (int a = 0; a < e->naxes; a++) {
        cJSON *arr = cJSON_AddArrayToObject(chains, e->axis_name[a]);
        for (int i = 0; i < ps.ndigits[a]; i++) cJSON_AddItemToArray(arr, rotor_json_int(ps.radix[a][i]));
    }
    cJSON *rings = cJSON_AddObjectToObject(o, "rings");
    for (int t = 0; t < e->ntensors; t++)
        cJSON_AddItemToObject(rings, e->tensors[t].name, rotor_json_int(ps.rings[t]));
    *out = o;
    return ROTOR_OK;
}

/* ---- placements, once per (shape, plan) ------------------------------------
 *
 * The writer and the reader each give every active plan's placement summary
 * (placement_json: every core's offsets chosen and checked balanced), and
 * repeated layers repeat their (shape, plan): a warm Conformer-M placed 247
 * plans twice over, 18 distinct, and its program stage was a third of the
 * warm compile (issue 45).  The summary is a function of the expression (its
 * text and extents), the element size (the chip its plan is costed on, which
 * gives the plan's info) and the plan's meaningful entries, so one call's
 * memo keeps it per that key; a plan that cannot be placed fails the call
 * at once, so failures are never kept. */
typedef struct pm_entry {
    cJSON *obj;   /* placement_json's object */
    char *txt[2]; /* its "chains" and "rings", unformatted; NULL until the reader asks */
} pm_entry;

#define PM_KEY_MAX (ROTOR_EXPR_TEXT_MAX + 8 * (5 + ROTOR_MAX_AXES * (3 + ROTOR_MAX_TENSORS)))
typedef struct place_memo {
    rotor_hashtab *tab; /* key (pm_key) -> pm_entry, FNV-1a 64 of the key's bytes (base/hashtab.c) */
    unsigned char kb[PM_KEY_MAX];
    size_t kn;
} place_memo;

static void pm_i64(place_memo *m, int64_t x) {
    memcpy(m->kb + m->kn, &x, sizeof x);
    m->kn += sizeof x;
}

/* The key of (e, d, p) into m->kb: the text, then fixed-size integers. */
static void pm_key(place_memo *m, const rotor_expr *e, rotor_op_elem d, const rotor_plan *p) {
    size_t tl = strnlen(e->text, ROTOR_EXPR_TEXT_MAX - 1);
    memcpy(m->kb, e->text, tl);
    m->kb[tl] = '\0';
    m->kn = tl + 1;
    pm_i64(m, d.bytes);
    pm_i64(m, d.int8);
    pm_i64(m, e->naxes);
    pm_i64(m, e->ntensors);
    pm_i64(m, p->overlap);
    for (int a = 0; a < e->naxes; a++) {
        pm_i64(m, e->extent[a]);
        pm_i64(m, p->fop[a]);
        pm_i64(m, p->order[a]);
        for (int t = 0; t < e->ntensors; t++) pm_i64(m, p->ft[t][a]);
    }
}

/* A new empty memo (NULL when out of memory). */
static place_memo *pm_new(void) {
    place_memo *m = calloc(1, sizeof *m);
    if (m && rotor_hashtab_new(sizeof(pm_entry), 64, NULL, &m->tab, NULL)) {
        free(m);
        m = NULL;
    }
    return m;
}

static void pm_free(place_memo *m) {
    if (!m) return;
    int64_t pos = 0;
    void *v;
    while (rotor_hashtab_next(m->tab, &pos, NULL, NULL, &v)) {
        pm_entry *x = v;
        cJSON_Delete(x->obj);
        free(x->txt[0]);
        free(x->txt[1]);
    }
    rotor_hashtab_free(m->tab);
    free(m);
}

/* The placement summary of plan p of e (info derived on the chip of
 * element d), from the memo or made now (placement_json's errors).  *out
 * stays valid until the next call. */
static rotor_status pm_place(place_memo *m, const rotor_expr *e, rotor_op_elem d, const rotor_plan *p,
                             const rotor_plan_info *info, pm_entry **out, rotor_error *err) {
    pm_key(m, e, d, p);
    if ((*out = rotor_hashtab_find(m->tab, m->kb, (int64_t)m->kn))) return ROTOR_OK;
    pm_entry x = {0};
    rotor_status st = placement_json(e, p, info, &x.obj, err);
    if (st) return st;
    void *at;
    if ((st = rotor_hashtab_add(m->tab, m->kb, (int64_t)m->kn, &x, &at, NULL, err))) {
        cJSON_Delete(x.obj);
        return st;
    }
    *out = at;
    return ROTOR_OK;
}

static cJSON *num_or_null(double d) { return isfinite(d) ? rotor_json_num(d) : cJSON_CreateNull(); }

/* One pipelined segment (docs/program-format.md, "Segments"). */
static cJSON *segment_json(const rotor_graph *g, const rotor_segment *sg) {
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "first", g->ops[sg->first].name);
    cJSON_AddStringToObject(x, "last", g->ops[sg->last].name);
    cJSON_AddItemToObject(x, "dim", rotor_json_int(sg->dim));
    cJSON_AddItemToObject(x, "micro", rotor_json_int(sg->micro));
    cJSON_AddBoolToObject(x, "weights_resident", sg->weights_resident);
    cJSON_AddItemToObject(x, "setup_s", rotor_json_num(sg->setup_s));
    cJSON_AddItemToObject(x, "run_s", rotor_json_num(sg->run_s));
    cJSON_AddItemToObject(x, "total_s", rotor_json_num(sg->total_s));
    cJSON_AddItemToObject(x, "interval_s", rotor_json_num(sg->interval_s));
    cJSON_AddItemToObject(x, "peak_bytes", rotor_json_int(sg->peak_bytes));
    cJSON_AddItemToObject(x, "idle_added", rotor_json_int(sg->idle_added));
    cJSON *stages = cJSON_AddArrayToObject(x, "stages");
    for (int k = 0; k < sg->nstages; k++) {
        const rotor_stage *st = &sg->stages[k];
        const rotor_expr *e = &st->micro;
        cJSON *y = cJSON_CreateObject();
        cJSON_AddItemToArray(stages, y);
        cJSON_AddStringToObject(y, "op", g->ops[st->op].name);
        cJSON_AddItemToObject(y, "first_core", rotor_json_int(st->first_core));
        cJSON_AddItemToObject(y, "cores", rotor_json_int(st->cores));
        if (st->axis >= 0) cJSON_AddStringToObject(y, "axis", e->axis_name[st->axis]);
        else cJSON_AddNullToObject(y, "axis");
        cJSON_AddItemToObject(y, "runs", rotor_json_int(st->runs));
        cJSON_AddItemToObject(y, "plan", rotor_json_plan(e, &st->plan.plan));
        cJSON_AddItemToObject(y, "exec_s", rotor_json_num(st->exec_s));
        cJSON_AddItemToObject(y, "memory_bytes", rotor_json_int(st->plan.info.memory));
        cJSON_AddItemToObject(y, "weight_bytes", rotor_json_int(st->weight_bytes));
        cJSON_AddItemToObject(y, "setup_bytes", rotor_json_int(st->setup_bytes));
        cJSON_AddItemToObject(y, "setup_rounds", rotor_json_int(st->setup_rounds));
        cJSON_AddItemToObject(y, "setup_s", rotor_json_num(st->setup_s));
        cJSON *in = cJSON_AddObjectToObject(y, "inputs");
        for (int t = 1; t < e->ntensors; t++) {
            if (st->from[t] == -1) continue;
            cJSON *z = cJSON_AddObjectToObject(in, e->tensors[t].name);
            if (st->from[t] == ROTOR_STAGE_OUTSIDE) cJSON_AddStringToObject(z, "from", "outside");
            else cJSON_AddItemToObject(z, "from", rotor_json_int(st->from[t]));
            cJSON_AddBoolToObject(z, "streamed", st->streamed[t]);
            cJSON_AddBoolToObject(z, "per_run", st->per_run[t]);
            cJSON_AddItemToObject(z, "xfer_bytes", rotor_json_int(st->xfer_bytes[t]));
            cJSON_AddItemToObject(z, "xfer_s", rotor_json_num(st->xfer_s[t]));
        }
    }
    return x;
}

/* rotor_program_write with the placements from (and into) the memo pm. */
static rotor_status write_with(const rotor_graph *g, const rotor_chip *chip, const rotor_compile_result *r,
                               place_memo *pm, char **out, rotor_error *err) {
    *out = NULL;
    cJSON *root = cJSON_CreateObject();
    if (!root) return rotor_nomem(err);
    cJSON_AddStringToObject(root, "format", PROGRAM_FORMAT);
    cJSON_AddItemToObject(root, "version", rotor_json_int(ROTOR_PROGRAM_VERSION));
    cJSON_AddStringToObject(root, "model", g->name);
    cJSON_AddStringToObject(root, "chip", chip->name);
    /* the whole chip, as its file writes it (exact numbers), on one line:
     * a replay takes it rather than a preset of the same name.  Only a
     * chip a file could hold: one made inside the library for a part of
     * the chip (an instance's group of 16 cores with the chip's 8 KB shift
     * buffer in 5.6 KB of SRAM) is not one, and is never replayed by name. */
    if (rotor_json_add_chip_file(root, chip, err)) {
        cJSON_Delete(root);
        return ROTOR_ERR_NOMEM;
    }
    cJSON_AddItemToObject(root, "cores", rotor_json_int(rotor_chip_cores(chip)));
    char topo[32];
    cJSON_AddStringToObject(root, "topology", rotor_chip_topology_text(chip, topo, sizeof topo));
    cJSON_AddItemToObject(root, "sram_bytes", rotor_json_int(chip->sram_bytes));
    cJSON_AddStringToObject(root, "cost_model", "v1");
    cJSON_AddStringToObject(root, "solver", rotor_solver_name(r->solver));
    char caveat[320];
    if (rotor_chip_mesh_caveat(chip, caveat, sizeof caveat)) cJSON_AddStringToObject(root, "caveat", caveat);
    cJSON *tot = cJSON_AddObjectToObject(root, "totals");
    cJSON_AddItemToObject(tot, "total_s", rotor_json_num(r->total_s));
    cJSON_AddItemToObject(tot, "setup_s", rotor_json_num(r->setup_s));
    cJSON_AddItemToObject(tot, "compute_s", rotor_json_num(r->compute_s));
    cJSON_AddItemToObject(tot, "communication_s", rotor_json_num(r->comm_s));
    cJSON_AddItemToObject(tot, "reduction_s", rotor_json_num(r->reduction_s));
    cJSON_AddItemToObject(tot, "vendor_s", rotor_json_num(r->vendor_s));
    cJSON_AddItemToObject(tot, "hidden_s", rotor_json_num(r->hidden_s));
    double msetup, mbound;
    rotor_compile_mesh_setups(chip, r, &msetup, &mbound);
    if (chip->topology == ROTOR_TOPO_MESH) {
        cJSON_AddItemToObject(tot, "setup_bound_s", rotor_json_num(mbound));
        /* how the plans were chosen (compile.c, mesh_refine): informative,
         * the reader takes it as it is */
        cJSON_AddStringToObject(tot, "mesh_plans", !r->mesh_refined ? "bound"
                                                   : r->mesh_stopped ? "exchanges, stopped at the budget"
                                                                     : "exchanges");
        cJSON_AddItemToObject(tot, "mesh_moves", rotor_json_int(r->mesh_moves));
    }
    cJSON_AddItemToObject(tot, "idle_bytes", rotor_json_int(r->idle_bytes));
    cJSON_AddItemToObject(tot, "peak_bytes", rotor_json_int(r->peak_bytes));
    cJSON *curve = cJSON_AddArrayToObject(root, "curve");
    for (int i = 0; i < r->ncurve; i++) {
        cJSON *pt = cJSON_CreateArray();
        cJSON_AddItemToArray(pt, rotor_json_int(r->curve[i].idle_bytes));
        cJSON_AddItemToArray(pt, num_or_null(r->curve[i].total_s));
        cJSON_AddItemToArray(curve, pt);
    }
    cJSON *ops = cJSON_AddArrayToObject(root, "operators");
    for (int o = 0; o < r->nops; o++) {
        const rotor_op_schedule *s = &r->ops[o];
        const rotor_op *op = &g->ops[s->op];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddItemToArray(ops, x);
        cJSON_AddStringToObject(x, "name", op->name);
        cJSON_AddStringToObject(x, "type", op->type);
        cJSON_AddBoolToObject(x, "vendor", s->vendor);
        cJSON_AddItemToObject(x, "setup_s", rotor_json_num(s->setup_s));
        cJSON_AddItemToObject(x, "exec_s", rotor_json_num(s->exec_s));
        if (!s->vendor) {
            cJSON_AddItemToObject(x, "setup_bytes", rotor_json_int(s->setup_bytes));
            cJSON_AddItemToObject(x, "setup_rounds", rotor_json_int(s->setup_rounds));
            if (chip->topology == ROTOR_TOPO_MESH) { /* what setup_s reads on a mesh */
                cJSON_AddItemToObject(x, "setup_link_bytes", rotor_json_int(s->setup_link_bytes));
                cJSON_AddItemToObject(x, "setup_hops", rotor_json_int(s->setup_hops));
            }
        }
        cJSON_AddItemToObject(x, "live_bytes", rotor_json_int(s->live_bytes));
        cJSON_AddItemToObject(x, "idle_bytes", rotor_json_int(s->idle_bytes));
        cJSON_AddItemToObject(x, "active_bytes", rotor_json_int(s->active_bytes));
        if (s->vendor) continue;
        const rotor_expr *e = &op->expr;
        const rotor_frontier *f = &r->frontiers[s->frontier];
        const rotor_candidate *c = &f->v[s->active];
        cJSON_AddStringToObject(x, "expr", e->text);
        cJSON_AddItemToObject(x, "dims", rotor_json_per_axis(e, e->extent));
        rotor_op_elem oe = rotor_op_elem_of(g, s->op);
        if (oe.bytes || oe.int8) { /* an operator over quantized integers (docs/program-format.md) */
            if (oe.bytes) cJSON_AddItemToObject(x, "element_bytes", rotor_json_int(oe.bytes));
            cJSON_AddBoolToObject(x, "int8_rate", oe.int8);
        }
        cJSON *act = cJSON_AddObjectToObject(x, "active");
        cJSON_AddItemToObject(act, "plan", rotor_json_plan(e, &c->plan));
        cJSON_AddItemToObject(act, "time", rotor_json_time(&c->cost));
        cJSON_AddItemToObject(act, "memory_bytes", rotor_json_int(c->info.memory));
        pm_entry *pe = NULL;
        rotor_status st = pm_place(pm, e, oe, &c->plan, &c->info, &pe, err);
        cJSON *place = st ? NULL : cJSON_Duplicate(pe->obj, true);
        if (!st && !place) st = rotor_nomem(err);
        if (st) {
            char prefix[160];
            snprintf(prefix, sizeof prefix, "op '%s'", op->name);
            rotor_error_prefix(err, prefix);
            cJSON_Delete(root);
            return st;
        }
        cJSON_AddItemToObject(act, "placement", place);
        cJSON *hand = NULL;
        for (int t = 1; t < e->ntensors; t++) {
            if (!s->handoff[t]) continue;
            if (!hand) hand = cJSON_AddObjectToObject(x, "handoff");
            const rotor_op *from = &g->ops[r->ops[s->handoff[t] - 1].op];
            const rotor_view *w = &s->handoff_view[t];
            if (!w->set) {
                cJSON_AddStringToObject(hand, e->tensors[t].name, from->name);
                continue;
            }
            /* through a view: dim and step per tensor dimension, offset per output dimension */
            cJSON *hv = cJSON_AddObjectToObject(hand, e->tensors[t].name);
            cJSON_AddStringToObject(hv, "from", from->name);
            cJSON *dim = cJSON_AddArrayToObject(hv, "dim"), *step = cJSON_AddArrayToObject(hv, "step");
            cJSON *off = cJSON_AddArrayToObject(hv, "offset");
            for (int d = 0; d < e->tensors[t].ndims; d++) {
                cJSON_AddItemToArray(dim, rotor_json_int(w->dim[d]));
                cJSON_AddItemToArray(step, rotor_json_int(w->step[d]));
            }
            for (int j = 0; j < from->expr.tensors[0].ndims; j++) cJSON_AddItemToArray(off, rotor_json_int(w->offset[j]));
        }
        cJSON *idle = cJSON_AddObjectToObject(x, "idle");
        cJSON_AddItemToObject(idle, "plan", rotor_json_plan(e, &f->v[s->idle_base].plan));
        cJSON_AddItemToObject(idle, "split", rotor_json_int(s->idle_split));
        cJSON_AddItemToObject(idle, "bytes", rotor_json_int(s->idle_bytes));
    }
    if (r->nsegments) {
        cJSON_AddStringToObject(root, "objective", rotor_pipeline_objective_name(r->objective));
        cJSON_AddItemToObject(root, "unpipelined_s", rotor_json_num(r->unpipelined_s));
        cJSON *segs = cJSON_AddArrayToObject(root, "segments");
        for (int i = 0; i < r->nsegments; i++) cJSON_AddItemToArray(segs, segment_json(g, &r->segments[i]));
    }
    *out = rotor_json_stamp(root) ? cJSON_Print(root) : NULL; /* with rotor's version (base/jsontext.h) */
    cJSON_Delete(root);
    return *out ? ROTOR_OK : rotor_nomem(err);
}

rotor_status rotor_program_write(const rotor_graph *g, const rotor_chip *chip,
                                 const rotor_compile_result *r, char **out, rotor_error *err) {
    *out = NULL;
    place_memo *pm = pm_new();
    if (!pm) return rotor_nomem(err);
    rotor_status st = write_with(g, chip, r, pm, out, err);
    pm_free(pm);
    return st;
}

/* ---- reading ------------------------------------------------------------ */

typedef struct reader {
    const char *label;
    char where[192];
    rotor_error *err;
    place_memo *pm; /* the active plans' placements (pm_place) */
} reader;

static rotor_status bad(reader *rd, const char *field, const char *what) {
    return rotor_fail(rd->err, ROTOR_ERR_INPUT, "%s: %s%s%s: %s", rd->label, rd->where,
                      *rd->where && *field ? "." : "", field, what);
}

/* "FIELD: WHAT, got V", V the value as a message shows it (base/jsontext.h). */
static rotor_status bad_got(reader *rd, const char *field, const char *what, const cJSON *v) {
    char got[96], msg[320];
    rotor_json_describe(v, got, sizeof got);
    snprintf(msg, sizeof msg, "%s, got %s", what, got);
    return bad(rd, field, msg);
}

static rotor_status get_num(reader *rd, const cJSON *obj, const char *field, double *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, field);
    if (!v) return bad(rd, field, "missing");
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
        return bad_got(rd, field, "expected a non-negative number", v);
    *out = v->valuedouble;
    return ROTOR_OK;
}

/* "FIELD: expected an integer from LO to HI (WHY), got V": every count and
 * size the reader takes has a bound from the chip or the operator, and WHY
 * says which (docs/program-format.md, "Bounds"). */
static rotor_status out_of_range(reader *rd, const char *field, int64_t lo, int64_t hi, const char *why,
                                 const char *got) {
    char msg[400];
    if (lo == hi) snprintf(msg, sizeof msg, "expected %lld (%s), got %s", (long long)lo, why, got);
    else snprintf(msg, sizeof msg, "expected an integer from %lld to %lld (%s), got %s", (long long)lo, (long long)hi,
                  why, got);
    return bad(rd, field, msg);
}

/* Integer v (named field) in [lo, hi] into *out; why as out_of_range's.
 * The range is checked on the double, before any conversion: a double
 * beyond int64_t (1e300) cast to one is undefined behaviour.  Every hi
 * here is below 2^62, so the cast of a value within it is exact enough. */
static rotor_status int_of(reader *rd, const cJSON *v, const char *field, int64_t lo, int64_t hi, const char *why,
                           int64_t *out) {
    if (!v) return bad(rd, field, "missing");
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return bad_got(rd, field, "expected a non-negative number", v);
    double d = v->valuedouble;
    if (d != floor(d) || d < (double)lo || d > (double)hi || d >= 0x1p62 || (int64_t)d > hi) {
        char got[96];
        rotor_json_describe(v, got, sizeof got);
        return out_of_range(rd, field, lo, hi, why, got);
    }
    *out = (int64_t)d;
    return ROTOR_OK;
}

static rotor_status get_int(reader *rd, const cJSON *obj, const char *field, int64_t lo, int64_t hi, const char *why,
                            int64_t *out) {
    return int_of(rd, cJSON_GetObjectItemCaseSensitive(obj, field), field, lo, hi, why, out);
}

/* The bounds from the chip (chip.c keeps N <= 2^30 and S <= 2^30, so N * S
 * fits): its cores N, the SRAM per core S, and N * S, the most one port
 * can carry in a setup (a core receives at most its active partitions,
 * below S, and sends at most what the other N - 1 cores receive). */
typedef struct chip_bounds {
    int64_t n, s, ns;
} chip_bounds;

static chip_bounds bounds_of(const rotor_chip *chip) {
    chip_bounds b = {rotor_chip_cores(chip), rotor_chip_sram(chip), 0};
    b.ns = b.n * b.s;
    return b;
}

/* The most rings R_X of any tensor of a derived plan (at least 1): a
 * gather inside a ring group takes at most R_X - 1 rounds (compile.c,
 * compile_setup_need), and an idle layout splits by a k that divides R_X
 * (compile.c, best_move). */
static int64_t most_rings(const rotor_expr *e, const rotor_plan_info *info) {
    int64_t r = 1;
    for (int t = 0; t < e->ntensors; t++)
        if (info->rings[t] > r) r = info->rings[t];
    return r;
}

#define JSON_INT_MAX ((int64_t)1 << 53) /* the largest integer a JSON (double) number holds exactly */
#define WHY_SRAM "the chip's sram_bytes: one core holds them"

static rotor_status get_str(reader *rd, const cJSON *obj, const char *field, const char **out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, field);
    if (!v) return bad(rd, field, "missing");
    if (!cJSON_IsString(v)) return bad(rd, field, "expected a string");
    *out = v->valuestring;
    return ROTOR_OK;
}

static bool close_rel(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)) + 1e-18; }

/* An operator's name, type, times and byte counts.  setup_rounds gets the
 * chip's bound here, before setup_s is checked against it (on a chip with
 * alpha = 0, as ipu-mk2, any count passes that check), and the active
 * plan's bound once that plan is known (read_op_active). */
static rotor_status read_op_counts(reader *rd, const cJSON *x, const rotor_chip *chip, rotor_program_op *op) {
    rotor_status st;
    const char *name, *type;
    chip_bounds cb = bounds_of(chip);
    if (!cJSON_IsObject(x)) return bad(rd, "", "expected an object");
    if ((st = get_str(rd, x, "name", &name)) || (st = get_str(rd, x, "type", &type))) return st;
    if (strlen(type) >= sizeof op->type) return bad(rd, "type", "too long");
    op->name = strdup(name);
    if (!op->name) return rotor_nomem(rd->err);
    snprintf(op->type, sizeof op->type, "%s", type);
    const cJSON *vend = cJSON_GetObjectItemCaseSensitive(x, "vendor");
    if (!cJSON_IsBool(vend)) return bad(rd, "vendor", vend ? "expected true or false" : "missing");
    op->vendor = cJSON_IsTrue(vend);
    if ((st = get_num(rd, x, "setup_s", &op->setup_s)) || (st = get_num(rd, x, "exec_s", &op->exec_s)) ||
        (st = get_int(rd, x, "live_bytes", 0, cb.s, WHY_SRAM, &op->live_bytes)) ||
        (st = get_int(rd, x, "idle_bytes", 0, cb.s, WHY_SRAM, &op->idle_bytes)) ||
        (st = get_int(rd, x, "active_bytes", 0, cb.s, WHY_SRAM, &op->active_bytes)))
        return st;
    if (op->vendor) return ROTOR_OK;
    if ((st = get_int(rd, x, "setup_bytes", 0, cb.ns, "the chip's cores times sram_bytes", &op->setup_bytes)) ||
        (st = get_int(rd, x, "setup_rounds", 0, cb.n > 2 ? cb.n - 1 : 1, "one round per other core",
                      &op->setup_rounds)))
        return st;
    double want_setup = rotor_compile_setup_s(chip, op->setup_bytes, op->setup_rounds);
    if (chip->topology == ROTOR_TOPO_MESH) { /* docs/cost-model.md, "On a 2D mesh", "Setup" */
        int64_t span = chip->mesh_width + chip->mesh_height;
        if ((st = get_int(rd, x, "setup_link_bytes", 0, cb.ns, "the chip's cores times sram_bytes",
                          &op->setup_link_bytes)) ||
            (st = get_int(rd, x, "setup_hops", 0, span, "the mesh's width plus height", &op->setup_hops)))
            return st;
        /* setup_s is the exchange's schedule (rotor_mesh_exchange), never
         * below its busiest link's time nor its longest route's latency:
         * those bounds are what is checked */
        double bound = (double)op->setup_link_bytes / rotor_chip_link_bw(chip);
        double far = (double)op->setup_hops * rotor_chip_link_latency(chip);
        if (far > bound) bound = far;
        /* each packet's time is rounded to the ps, and the busiest link
         * carries at most one packet an element: half a ps each under */
        int64_t elems = op->setup_link_bytes / (chip->element_bytes > 0 ? chip->element_bytes : 1);
        if (op->setup_s < bound * (1 - 1e-9) - 0.5e-12 * (double)(elems + 1)) {
            char msg[200];
            snprintf(msg, sizeof msg, "%.6g s is below its busiest link's %.6g s (setup_link_bytes, setup_hops)",
                     op->setup_s, bound);
            return bad(rd, "setup_s", msg);
        }
        want_setup = op->setup_s;
    }
    if (!close_rel(op->setup_s, want_setup)) {
        char msg[200];
        snprintf(msg, sizeof msg, "%.6g s does not match setup_bytes and setup_rounds (%.6g s)",
                 op->setup_s, want_setup);
        return bad(rd, "setup_s", msg);
    }
    return ROTOR_OK;
}

/* The operator's expression from "expr" and "dims", each extent at most
 * ROTOR_EXTENT_MAX (what --dim and rotor_expr_make take). */
static rotor_status read_op_expr(reader *rd, const cJSON *x, rotor_program_op *op) {
    rotor_status st;
    const char *text;
    if ((st = get_str(rd, x, "expr", &text))) return st;
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(x, "dims");
    if (!cJSON_IsObject(dims)) return bad(rd, "dims", dims ? "expected an object" : "missing");
    char dtext[1024];
    size_t n = 0;
    dtext[0] = '\0';
    const cJSON *d;
    cJSON_ArrayForEach(d, dims) {
        char field[96];
        int64_t v;
        snprintf(field, sizeof field, "dims.%.80s", d->string);
        if ((st = int_of(rd, d, field, 1, ROTOR_EXTENT_MAX, "ROTOR_EXTENT_MAX, the largest extent --dim takes", &v)))
            return st;
        n += (size_t)snprintf(dtext + n, sizeof dtext - n, "%s%s=%lld", n ? "," : "", d->string, (long long)v);
        if (n >= sizeof dtext) return bad(rd, "dims", "too long");
    }
    rotor_error e2;
    if (rotor_expr_make(text, dtext, &op->expr, &e2)) return bad(rd, "expr", e2.msg);
    return ROTOR_OK;
}

/* The active plan, costed again, its memory, its placement summary, and
 * setup_rounds against the plan's rings. */
static rotor_status read_op_active(reader *rd, const cJSON *x, const rotor_chip *chip, rotor_program_op *op) {
    rotor_status st;
    rotor_error e2;
    const rotor_expr *e = &op->expr;
    const cJSON *act = cJSON_GetObjectItemCaseSensitive(x, "active");
    if (!cJSON_IsObject(act)) return bad(rd, "active", act ? "expected an object" : "missing");
    char where[256];
    snprintf(where, sizeof where, "%s.active.plan", rd->where);
    if ((st = rotor_json_read_plan(cJSON_GetObjectItemCaseSensitive(act, "plan"), e, rd->label, where,
                                   &op->active, rd->err)))
        return st;
    if (rotor_cost_plan(rotor_cost_model_default(), e, chip, &op->active, &op->active_info,
                        &op->active_cost, &e2))
        return bad(rd, "active.plan", e2.msg);
    if (!close_rel(op->exec_s, op->active_cost.total)) {
        char msg[160];
        snprintf(msg, sizeof msg, "%.6g s does not match the plan's %.6g s", op->exec_s,
                 op->active_cost.total);
        return bad(rd, "exec_s", msg);
    }
    /* a gather into the active layout takes at most R - 1 rounds, R the
     * plan's most rings of a tensor, and at least 1 when anything moves
     * (compile.c, compile_setup_need) */
    int64_t rmax = most_rings(e, &op->active_info), rounds_max = rmax > 2 ? rmax - 1 : 1;
    if (op->setup_rounds > rounds_max) {
        char got[32];
        snprintf(got, sizeof got, "%lld", (long long)op->setup_rounds);
        return out_of_range(rd, "setup_rounds", 0, rounds_max, "the active plan's most rings less one, or 1", got);
    }
    int64_t mem;
    if ((st = int_of(rd, cJSON_GetObjectItemCaseSensitive(act, "memory_bytes"), "active.memory_bytes", 1,
                     rotor_chip_sram(chip), WHY_SRAM, &mem)))
        return st;
    if (mem != op->active_info.memory) return bad(rd, "active.memory_bytes", "does not match the plan");
    if (op->active_bytes != mem) return bad(rd, "active_bytes", "does not match the plan's memory");
    /* the plan's time, part by part, as exec_s is (hidden_s only with overlap) */
    const cJSON *tj = cJSON_GetObjectItemCaseSensitive(act, "time");
    if (!cJSON_IsObject(tj)) return bad(rd, "active.time", tj ? "expected an object" : "missing");
    static const char *const part[] = {"compute_s", "communication_s", "reduction_s", "total_s", "hidden_s"};
    const double want_s[] = {op->active_cost.compute, op->active_cost.comm, op->active_cost.reduction,
                             op->active_cost.total, op->active_cost.hidden};
    for (int i = 0; i < 5; i++) {
        char field[40];
        snprintf(field, sizeof field, "active.time.%s", part[i]);
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(tj, part[i]);
        if (!v && i < 4) return bad(rd, field, "missing");
        if (v && (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0))
            return bad_got(rd, field, "expected a non-negative number", v);
        double got = v ? v->valuedouble : 0;
        if (!close_rel(got, want_s[i])) {
            char msg[160];
            snprintf(msg, sizeof msg, "%.6g s does not match the plan's %.6g s", got, want_s[i]);
            return bad(rd, field, msg);
        }
    }

    /* the placement summary must be what place.c derives from the plan */
    const cJSON *pj = cJSON_GetObjectItemCaseSensitive(act, "placement");
    if (!cJSON_IsObject(pj)) return bad(rd, "active.placement", pj ? "expected an object" : "missing");
    const cJSON *alg = cJSON_GetObjectItemCaseSensitive(pj, "algorithm");
    if (!cJSON_IsString(alg) || strcmp(alg->valuestring, PLACEMENT_ALGORITHM) != 0)
        return bad(rd, "active.placement.algorithm", "expected \"" PLACEMENT_ALGORITHM "\"");
    pm_entry *want = NULL;
    rotor_status pst = pm_place(rd->pm, e, op->elem, &op->active, &op->active_info, &want, &e2);
    if (pst) return bad(rd, "active.plan", e2.msg);
    /* compared as text: the writer's integers are raw items, parsed ones numbers */
    bool same = true;
    for (int i = 0; i < 2 && same; i++) {
        const char *key = i ? "rings" : "chains";
        char *a = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(pj, key));
        if (!want->txt[i]) want->txt[i] = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(want->obj, key));
        same = a && want->txt[i] && strcmp(a, want->txt[i]) == 0;
        free(a);
    }
    if (!same) return bad(rd, "active.placement", "does not match the placement of the plan");
    return ROTOR_OK;
}

/* The idle layout: the plan it refines and its split k, which divides the
 * most rings of that plan's resident tensors (compile.c, best_move). */
static rotor_status read_op_idle(reader *rd, const cJSON *x, const rotor_chip *chip, rotor_program_op *op) {
    rotor_status st;
    rotor_error e2;
    const rotor_expr *e = &op->expr;
    const cJSON *idle = cJSON_GetObjectItemCaseSensitive(x, "idle");
    if (!cJSON_IsObject(idle)) return bad(rd, "idle", idle ? "expected an object" : "missing");
    char where[256];
    snprintf(where, sizeof where, "%s.idle.plan", rd->where);
    if ((st = rotor_json_read_plan(cJSON_GetObjectItemCaseSensitive(idle, "plan"), e, rd->label, where,
                                   &op->idle_base, rd->err)))
        return st;
    rotor_plan_info info;
    if (rotor_plan_derive(e, chip, &op->idle_base, &info, &e2)) return bad(rd, "idle.plan", e2.msg);
    int64_t ib;
    if ((st = int_of(rd, cJSON_GetObjectItemCaseSensitive(idle, "split"), "idle.split", 1, most_rings(e, &info),
                     "the idle plan's most rings", &op->idle_split)) ||
        (st = int_of(rd, cJSON_GetObjectItemCaseSensitive(idle, "bytes"), "idle.bytes", 0, rotor_chip_sram(chip),
                     WHY_SRAM, &ib)))
        return st;
    if (ib != op->idle_bytes) return bad(rd, "idle.bytes", "differs from idle_bytes");
    return ROTOR_OK;
}

/* An operator's optional "element_bytes" (1, 2, 4 or 8) and "int8_rate"
 * (true or false; alone since 2026-12-02, an 8-bit contraction whose fused
 * epilogue writes a float): absent, the chip's. */
static rotor_status read_elem(reader *rd, const cJSON *x, rotor_op_elem *d) {
    const cJSON *i8 = cJSON_GetObjectItemCaseSensitive(x, "int8_rate");
    *d = (rotor_op_elem){0, false};
    if (i8 && !cJSON_IsBool(i8)) return bad(rd, "int8_rate", "expected true or false");
    d->int8 = cJSON_IsTrue(i8);
    if (!cJSON_GetObjectItemCaseSensitive(x, "element_bytes")) return ROTOR_OK;
    rotor_status st = get_int(rd, x, "element_bytes", 1, 8, "the widest element type", &d->bytes);
    if (st) return st;
    if (d->bytes != 1 && d->bytes != 2 && d->bytes != 4 && d->bytes != 8)
        return bad(rd, "element_bytes", "expected 1, 2, 4 or 8");
    return ROTOR_OK;
}

static rotor_status read_op(reader *rd, const cJSON *x, const rotor_chip *chip, rotor_program_op *op) {
    rotor_status st;
    if ((st = read_op_counts(rd, x, chip, op)) || op->vendor || (st = read_op_expr(rd, x, op)) ||
        (st = read_elem(rd, x, &op->elem)))
        return st;
    rotor_chip oc = rotor_chip_for_op(chip, op->elem); /* the chip its plans are costed on */
    if ((st = read_op_active(rd, x, &oc, op))) return st;
    return read_op_idle(rd, x, &oc, op);
}

/* n integers of field (an array) into out, each in [lo, hi]. */
static rotor_status read_ints(reader *rd, const cJSON *obj, const char *field, const char *name, int n, int64_t lo,
                              int64_t hi, int64_t *out) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, name);
    char f[200];
    snprintf(f, sizeof f, "%s.%s", field, name);
    if (!cJSON_IsArray(a)) return bad(rd, f, a ? "expected an array" : "missing");
    if (cJSON_GetArraySize(a) != n) {
        char msg[80];
        snprintf(msg, sizeof msg, "expected %d entries", n);
        return bad(rd, f, msg);
    }
    const cJSON *it;
    int k = 0;
    cJSON_ArrayForEach(it, a) {
        if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) || it->valuedouble < (double)lo ||
            it->valuedouble > (double)hi) {
            char what[96];
            snprintf(what, sizeof what, "expected integers in range %lld to %lld", (long long)lo, (long long)hi);
            return bad_got(rd, f, what, it);
        }
        out[k++] = (int64_t)it->valuedouble;
    }
    return ROTOR_OK;
}

/* The optional "handoff" object of operator i: tensor name -> the name of
 * an earlier expression operator whose output the tensor reads where that
 * operator's plan left it, or an object {from, dim, step, offset} when it
 * reads it through a view (docs/program-format.md).  The claim must hold:
 * the view must fit the producer's output (rotor_handoff_fits). */
static rotor_status read_handoff(reader *rd, const cJSON *x, const rotor_program *p, int i) {
    rotor_program_op *op = &p->ops[i];
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(x, "handoff");
    if (!h) return ROTOR_OK;
    if (op->vendor || !cJSON_IsObject(h)) return bad(rd, "handoff", op->vendor ? "a vendor op has none" : "expected an object");
    const cJSON *it;
    cJSON_ArrayForEach(it, h) {
        char field[160];
        snprintf(field, sizeof field, "handoff.%s", it->string);
        int t = 1;
        while (t < op->expr.ntensors && strcmp(op->expr.tensors[t].name, it->string)) t++;
        if (t == op->expr.ntensors) return bad(rd, field, "names no input tensor of the expression");
        const cJSON *name = cJSON_IsObject(it) ? cJSON_GetObjectItemCaseSensitive(it, "from") : it;
        if (!cJSON_IsString(name))
            return bad(rd, field, "expected an operator name, or an object with one in \"from\"");
        int from = -1;
        for (int k = 0; k < i && from < 0; k++)
            if (!strcmp(p->ops[k].name, name->valuestring)) from = k;
        if (from < 0) return bad(rd, field, "names no earlier operator");
        const rotor_program_op *src = &p->ops[from];
        if (src->vendor) return bad(rd, field, "names a vendor op, which leaves its output in the even layout");
        rotor_view *w = &op->handoff_view[t];
        memset(w, 0, sizeof *w);
        if (cJSON_IsObject(it)) {
            int nd = op->expr.tensors[t].ndims, ny = src->expr.tensors[0].ndims;
            int64_t dim[ROTOR_MAX_DIMS];
            rotor_status st;
            if ((st = read_ints(rd, it, field, "dim", nd, 0, ny - 1, dim)) ||
                (st = read_ints(rd, it, field, "step", nd, -ROTOR_EXTENT_MAX, ROTOR_EXTENT_MAX, w->step)) ||
                (st = read_ints(rd, it, field, "offset", ny, -ROTOR_EXTENT_MAX, ROTOR_EXTENT_MAX, w->offset)))
                return st;
            for (int d = 0; d < nd; d++) w->dim[d] = (int8_t)dim[d];
            w->set = true;
        }
        if (!rotor_handoff_fits(&src->expr, &op->expr, t, w))
            return bad(rd, field, w->set ? "the view does not fit that operator's output (its steps must nest)"
                                         : "the tensor's extents differ from that operator's output");
        op->handoff[t] = 1 + from;
    }
    return ROTOR_OK;
}

/* The operator named by field's string, or -1 (after bad()). */
static int op_named(reader *rd, const cJSON *x, const char *field, const rotor_program *p, rotor_status *st) {
    const char *name;
    if ((*st = get_str(rd, x, field, &name))) return -1;
    for (int i = 0; i < p->nops; i++)
        if (!strcmp(p->ops[i].name, name)) return i;
    *st = bad(rd, field, "names no operator");
    return -1;
}

static bool get_bool(const cJSON *x, const char *field, bool *out) {
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(x, field);
    if (!cJSON_IsBool(b)) return false;
    *out = cJSON_IsTrue(b);
    return true;
}

static rotor_status mismatch(reader *rd, const char *field, double got, double want) {
    char msg[160];
    snprintf(msg, sizeof msg, "%.6g does not match the %.6g the stages give", got, want);
    return bad(rd, field, msg);
}

/* Stage k's inputs (object `in`): where each comes from, whether it is
 * streamed or changes per run, and its move's bytes and time. */
static rotor_status read_stage_inputs(reader *rd, const cJSON *in, const rotor_chip *chip, rotor_segment *sg, int k) {
    rotor_stage *sk = &sg->stages[k];
    const rotor_expr *e = &sk->micro;
    rotor_status st;
    if (!cJSON_IsObject(in)) return bad(rd, "inputs", in ? "expected an object" : "missing");
    for (int t = 0; t < ROTOR_MAX_TENSORS; t++) sk->from[t] = -1;
    const cJSON *z;
    cJSON_ArrayForEach(z, in) {
        int t = 1;
        while (t < e->ntensors && strcmp(e->tensors[t].name, z->string)) t++;
        char f[96];
        snprintf(f, sizeof f, "inputs.%s", z->string);
        if (t == e->ntensors) return bad(rd, f, "is not an input of the operator");
        const cJSON *fr = cJSON_GetObjectItemCaseSensitive(z, "from");
        if (cJSON_IsString(fr) && !strcmp(fr->valuestring, "outside")) sk->from[t] = ROTOR_STAGE_OUTSIDE;
        else if (cJSON_IsNumber(fr) && fr->valuedouble == floor(fr->valuedouble) && fr->valuedouble >= 0 &&
                 fr->valuedouble < k)
            sk->from[t] = (int)fr->valuedouble;
        else return bad(rd, f, "from: expected an earlier stage's index or \"outside\"");
        if (!get_bool(z, "streamed", &sk->streamed[t]) || !get_bool(z, "per_run", &sk->per_run[t]))
            return bad(rd, f, "streamed and per_run: expected true or false");
        if (sk->per_run[t] && (sk->runs < 2 || !e->tensors[t].has_axis[sk->axis]))
            return bad(rd, f, "per_run: the tensor does not change from run to run");
        if (sk->streamed[t] && (sk->from[t] < 0 || sk->runs != sg->micro ||
                                sg->stages[sk->from[t]].runs != sg->micro ||
                                rotor_segment_sole_axis(e, t, sg->dim) != sk->axis))
            return bad(rd, f, "streamed: needs a streamed producer read along the stream axis");
        double got;
        /* at worst the partition of every core of the plan through one port
         * (segment.c: the larger of what a core receives and sends) */
        int64_t most = sk->plan.info.bytes[t] * sk->plan.info.cores; /* <= S * N */
        if ((st = get_int(rd, z, "xfer_bytes", 0, most, "the tensor's partition times the stage plan's cores",
                          &sk->xfer_bytes[t])) ||
            (st = get_num(rd, z, "xfer_s", &got)))
            return st;
        if (chip->topology != ROTOR_TOPO_MESH) sk->xfer_s[t] = rotor_compile_setup_s(chip, sk->xfer_bytes[t], 1);
        else if ((st = rotor_segment_xfer(chip, sg, k, t, &most, &sk->xfer_s[t], NULL, NULL, rd->err))) return st;
        if (!close_rel(got, sk->xfer_s[t])) return mismatch(rd, "xfer_s", got, sk->xfer_s[t]);
    }
    return ROTOR_OK;
}

/* Stage k's run expression (its operator's, its axis at extent / runs)
 * and its plan, costed on its group of cores. */
static rotor_status read_stage_plan(reader *rd, const cJSON *y, const rotor_chip *chip, const rotor_expr *e,
                                    rotor_stage *sk) {
    rotor_status st;
    rotor_error e2;
    if (rotor_segment_micro_expr(e, sk->axis, sk->runs, &sk->micro, &e2)) return bad(rd, "axis", e2.msg);
    char where[256];
    snprintf(where, sizeof where, "%s.plan", rd->where);
    if ((st = rotor_json_read_plan(cJSON_GetObjectItemCaseSensitive(y, "plan"), &sk->micro, rd->label, where,
                                   &sk->plan.plan, rd->err)))
        return st;
    rotor_chip gc = rotor_segment_group_chip(chip, sk->cores);
    if (rotor_cost_plan(rotor_cost_model_default(), &sk->micro, &gc, &sk->plan.plan, &sk->plan.info,
                        &sk->plan.cost, &e2))
        return bad(rd, "plan", e2.msg);
    sk->exec_s = sk->plan.cost.total;
    double got;
    int64_t mem;
    if ((st = get_num(rd, y, "exec_s", &got))) return st;
    if (!close_rel(got, sk->exec_s)) return mismatch(rd, "exec_s", got, sk->exec_s);
    if ((st = get_int(rd, y, "memory_bytes", 1, rotor_chip_sram(chip), WHY_SRAM, &mem))) return st;
    if (mem != sk->plan.info.memory) return bad(rd, "memory_bytes", "does not match the plan");
    return ROTOR_OK;
}

/* Stage k (object y) of segment sg: its operator, its group of cores from
 * *next_core on, its axis, runs, plan, setup and inputs. */
static rotor_status read_stage(reader *rd, const cJSON *y, const rotor_chip *chip, const rotor_program *p,
                               rotor_segment *sg, int k, int64_t *next_core) {
    rotor_stage *sk = &sg->stages[k];
    rotor_status st;
    int64_t n = rotor_chip_cores(chip);
    if (!cJSON_IsObject(y)) return bad(rd, "", "expected an object");
    sk->op = op_named(rd, y, "op", p, &st);
    if (st) return st;
    if (sk->op != sg->first + k) return bad(rd, "op", "is not the segment's next operator");
    const rotor_program_op *op = &p->ops[sk->op];
    if (op->vendor) return bad(rd, "op", "a vendor operator cannot be a stage");
    if ((st = get_int(rd, y, "first_core", 0, n - 1, "the chip's cores", &sk->first_core))) return st;
    if (sk->first_core != *next_core) return bad(rd, "first_core", "groups must follow each other from core 0");
    if ((st = get_int(rd, y, "cores", 1, n - sk->first_core, "the chip's cores from first_core on", &sk->cores)))
        return st;
    *next_core += sk->cores;
    if (chip->topology == ROTOR_TOPO_MESH && (sk->first_core % chip->mesh_width || sk->cores % chip->mesh_width))
        return bad(rd, "cores", "a group on a mesh is a band of whole rows (docs/kapla.md)");
    sk->outside_first = chip->topology == ROTOR_TOPO_MESH;
    const rotor_expr *e = &op->expr;
    const cJSON *ax = cJSON_GetObjectItemCaseSensitive(y, "axis");
    sk->axis = -1;
    if (cJSON_IsString(ax)) {
        sk->axis = rotor_expr_axis(e, ax->valuestring);
        if (sk->axis < 0 || rotor_segment_sole_axis(e, 0, sg->dim) != sk->axis)
            return bad(rd, "axis", "is not the axis of the output's stream dimension");
        if (e->extent[sk->axis] % sg->micro) return bad(rd, "axis", "its extent is not a multiple of micro");
    } else if (!cJSON_IsNull(ax)) {
        return bad(rd, "axis", "expected an axis name or null");
    }
    if ((st = get_int(rd, y, "runs", 1, sg->micro, "the segment's micro", &sk->runs))) return st;
    if (sk->runs != (sk->axis >= 0 ? sg->micro : 1))
        return bad(rd, "runs", "must be micro for a streamed stage, else 1");
    if ((st = read_stage_plan(rd, y, chip, e, sk))) return st;
    /* weights and what setup gathers are partitions of the stage's plan;
     * its setup is one gather, or none (segment.c) */
    int64_t mem = sk->plan.info.memory;
    if ((st = get_int(rd, y, "weight_bytes", 0, mem, "the stage plan's memory_bytes", &sk->weight_bytes)) ||
        (st = get_int(rd, y, "setup_bytes", 0, mem, "the stage plan's memory_bytes", &sk->setup_bytes)) ||
        (st = get_int(rd, y, "setup_rounds", 0, 1, "a stage's setup is one gather", &sk->setup_rounds)) ||
        (st = get_num(rd, y, "setup_s", &sk->setup_s)))
        return st;
    double want = rotor_compile_setup_s(chip, sk->setup_bytes, sk->setup_rounds);
    if (!close_rel(sk->setup_s, want)) return mismatch(rd, "setup_s", sk->setup_s, want);
    if (sk->setup_s > sg->setup_s) sg->setup_s = sk->setup_s;
    return read_stage_inputs(rd, cJSON_GetObjectItemCaseSensitive(y, "inputs"), chip, sg, k);
}

/* One segment, re-derived: each stage's run expression from its operator's
 * and its axis, its plan costed on its group, its setup and moves from their
 * bytes, and the segment's times by rotor_segment_times. */
static rotor_status read_segment(reader *rd, const cJSON *x, const rotor_chip *chip, const rotor_program *p,
                                 int prev_last, rotor_segment *sg) {
    rotor_status st;
    int64_t v;
    if (!cJSON_IsObject(x)) return bad(rd, "", "expected an object");
    sg->first = op_named(rd, x, "first", p, &st);
    if (st) return st;
    sg->last = op_named(rd, x, "last", p, &st);
    if (st) return st;
    if (sg->first <= prev_last) return bad(rd, "first", "overlaps or precedes the previous segment");
    if (sg->last <= sg->first) return bad(rd, "last", "must come after first");
    if ((st = get_int(rd, x, "dim", 0, ROTOR_MAX_DIMS - 1, "a tensor's dimensions", &v))) return st;
    sg->dim = (int)v;
    /* the replay runs every stage micro times: the reader's cap (the
     * compiler tries at most 16 unless told, compile.h max_micro) */
    if ((st = get_int(rd, x, "micro", 1, 4096, "the reader's cap on micro-batches", &sg->micro))) return st;
    if (!get_bool(x, "weights_resident", &sg->weights_resident)) return bad(rd, "weights_resident", "expected true or false");
    double setup_s, run_s, total_s;
    if ((st = get_num(rd, x, "setup_s", &setup_s)) || (st = get_num(rd, x, "run_s", &run_s)) ||
        (st = get_num(rd, x, "total_s", &total_s)) || (st = get_num(rd, x, "interval_s", &sg->interval_s)) ||
        (st = get_int(rd, x, "peak_bytes", 0, rotor_chip_sram(chip), WHY_SRAM, &sg->peak_bytes)) ||
        (st = get_int(rd, x, "idle_added", 0, rotor_chip_sram(chip), WHY_SRAM, &sg->idle_added)))
        return st;
    const cJSON *stages = cJSON_GetObjectItemCaseSensitive(x, "stages");
    int S = sg->last - sg->first + 1;
    if (!cJSON_IsArray(stages) || cJSON_GetArraySize(stages) != S) {
        char msg[80];
        snprintf(msg, sizeof msg, "expected an array of %d stages, one per operator", S);
        return bad(rd, "stages", msg);
    }
    sg->nstages = S;
    sg->serial_moves = chip->topology == ROTOR_TOPO_MESH;
    if (!(sg->stages = calloc((size_t)S, sizeof *sg->stages))) return rotor_nomem(rd->err);
    char base[192];
    snprintf(base, sizeof base, "%s", rd->where);
    int64_t next_core = 0;
    const cJSON *y = stages->child; /* walked: cJSON_GetArrayItem is linear */
    for (int k = 0; k < S; k++, y = y->next) {
        snprintf(rd->where, sizeof rd->where, "%.160s.stages[%d]", base, k);
        if ((st = read_stage(rd, y, chip, p, sg, k, &next_core))) return st;
    }
    snprintf(rd->where, sizeof rd->where, "%s", base);
    if ((st = rotor_segment_times(sg, NULL, NULL, &sg->run_s, rd->err))) return st;
    sg->total_s = sg->setup_s + sg->run_s;
    if (!close_rel(setup_s, sg->setup_s)) return mismatch(rd, "setup_s", setup_s, sg->setup_s);
    if (!close_rel(run_s, sg->run_s)) return mismatch(rd, "run_s", run_s, sg->run_s);
    if (!close_rel(total_s, sg->total_s)) return mismatch(rd, "total_s", total_s, sg->total_s);
    return ROTOR_OK;
}

/* "chip_file", when the file has it: a chip file's checks, then the
 * program's own words about its chip (name, cores, SRAM) held to it. */
static rotor_status read_compiled_chip(reader *rd, const cJSON *root, int64_t sram, rotor_program *out) {
    const cJSON *cf = cJSON_GetObjectItemCaseSensitive(root, "chip_file");
    if (!cf) return ROTOR_OK;
    char label[300];
    snprintf(label, sizeof label, "%s: chip_file", rd->label);
    rotor_status st = rotor_chip_from_cjson(cf, label, &out->compiled_chip, rd->err);
    if (st) return st;
    const rotor_chip *c = &out->compiled_chip;
    char msg[200];
    if (strcmp(c->name, out->chip)) {
        snprintf(msg, sizeof msg, "'%s' is not the program's chip, '%s'", c->name, out->chip);
        return bad(rd, "chip_file.name", msg);
    }
    if (rotor_chip_cores(c) != out->cores) {
        snprintf(msg, sizeof msg, "%lld cores, the program's are %lld", (long long)rotor_chip_cores(c),
                 (long long)out->cores);
        return bad(rd, "chip_file", msg);
    }
    if (c->sram_bytes != sram) {
        snprintf(msg, sizeof msg, "%lld is not the program's sram_bytes, %lld", (long long)c->sram_bytes,
                 (long long)sram);
        return bad(rd, "chip_file.sram_bytes", msg);
    }
    out->has_compiled_chip = true;
    return ROTOR_OK;
}

/* The top level before the operators: format, version, model, chip, the
 * chip's cores and SRAM, the solver and the totals. */
static rotor_status read_head(reader *rd, const cJSON *root, const rotor_chip *chip, rotor_program *out) {
    rotor_status st = ROTOR_OK;
    const char *s;
    int64_t ver = 0, cores = 0, sram = 0, S = rotor_chip_sram(chip);
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, PROGRAM_FORMAT) != 0)
        return bad(rd, "format", "expected \"" PROGRAM_FORMAT "\"");
    if ((st = get_int(rd, root, "version", 0, JSON_INT_MAX, "a JSON integer", &ver))) return st;
    if (ver != ROTOR_PROGRAM_VERSION)
        return rotor_fail(rd->err, ROTOR_ERR_INPUT, "%s: version: %lld is not %d, the version this rotor reads",
                          rd->label, (long long)ver, ROTOR_PROGRAM_VERSION);
    if ((st = get_str(rd, root, "model", &s))) return st;
    snprintf(out->model, sizeof out->model, "%s", s);
    if ((st = get_str(rd, root, "chip", &s))) return st;
    snprintf(out->chip, sizeof out->chip, "%s", s);
    if ((st = get_int(rd, root, "cores", 1, JSON_INT_MAX, "a JSON integer", &cores))) return st;
    if (cores != rotor_chip_cores(chip))
        return rotor_fail(rd->err, ROTOR_ERR_INPUT, "%s: cores: the program is for %lld cores, the chip has %lld",
                          rd->label, (long long)cores, (long long)rotor_chip_cores(chip));
    out->cores = cores;
    if (cJSON_GetObjectItemCaseSensitive(root, "topology")) {
        if ((st = get_str(rd, root, "topology", &s))) return st;
        long long w = 0, h = 0;
        char tail;
        if (strcmp(s, "all-to-all") && !(sscanf(s, "mesh %lldx%lld%c", &w, &h, &tail) == 2 && w > 0 && h > 0))
            return bad(rd, "topology", "expected \"all-to-all\" or \"mesh WxH\"");
        snprintf(out->topology, sizeof out->topology, "%s", s);
    }
    /* every byte count of the program is per core, against this S */
    /* the carried chip first: a chip_file that disagrees with the
     * program's words is the file's fault, not the chip's */
    if ((st = get_int(rd, root, "sram_bytes", -JSON_INT_MAX, JSON_INT_MAX, "a JSON integer", &sram)) ||
        (sram >= 1 && (st = read_compiled_chip(rd, root, sram, out))) ||
        (st = get_int(rd, root, "sram_bytes", S, S, "the chip's sram_bytes", &sram)))
        return st;
    if (cJSON_GetObjectItemCaseSensitive(root, "solver") && !(st = get_str(rd, root, "solver", &s)) &&
        !rotor_solver_find(s, &out->solver))
        st = bad(rd, "solver", "expected \"exact\" or \"fast\"");
    if (st) return st;
    const cJSON *tot = cJSON_GetObjectItemCaseSensitive(root, "totals");
    if (!cJSON_IsObject(tot)) return bad(rd, "totals", tot ? "expected an object" : "missing");
    snprintf(rd->where, sizeof rd->where, "totals");
    if ((st = get_num(rd, tot, "total_s", &out->total_s)) || (st = get_num(rd, tot, "setup_s", &out->setup_s)) ||
        (st = get_num(rd, tot, "compute_s", &out->compute_s)) ||
        (st = get_num(rd, tot, "communication_s", &out->comm_s)) ||
        (st = get_num(rd, tot, "reduction_s", &out->reduction_s)) ||
        (st = get_num(rd, tot, "vendor_s", &out->vendor_s)) ||
        (st = get_int(rd, tot, "idle_bytes", 0, S, WHY_SRAM, &out->idle_bytes)) ||
        (st = get_int(rd, tot, "peak_bytes", 0, S, WHY_SRAM, &out->peak_bytes)))
        return st;
    /* written since 2026-12-03; a file without it takes the operators' sum
     * (check_totals) */
    out->hidden_s = -1;
    if (cJSON_GetObjectItemCaseSensitive(tot, "hidden_s") && (st = get_num(rd, tot, "hidden_s", &out->hidden_s)))
        return st;
    rd->where[0] = '\0';
    return ROTOR_OK;
}

/* The totals' parts, each the operators' sum as the compile writes it
 * (compile.c, fill_schedule), and the peak, the largest idle + live +
 * active while one operator runs.  Until 2026-12-03 only total_s was
 * checked, and a program's other totals were taken as written (found by a
 * review helper).  A program with segments counts its segments' figures
 * (segment.c), and is held to total_s and the segments' own checks. */
static rotor_status check_totals(reader *rd, rotor_program *p) {
    double setup = 0, part[5] = {0}; /* compute, communication, reduction, hidden, vendor */
    int64_t idle = 0, peak = 0;
    for (int o = 0; o < p->nops; o++) {
        const rotor_program_op *op = &p->ops[o];
        setup += op->setup_s;
        idle += op->idle_bytes;
        if (op->vendor) {
            part[4] += op->exec_s;
            continue;
        }
        part[0] += op->active_cost.compute, part[1] += op->active_cost.comm;
        part[2] += op->active_cost.reduction, part[3] += op->active_cost.hidden;
    }
    for (int o = 0; o < p->nops; o++) {
        const rotor_program_op *op = &p->ops[o];
        int64_t at = idle - op->idle_bytes + op->live_bytes + op->active_bytes;
        if (at > peak) peak = at;
    }
    if (p->hidden_s < 0) p->hidden_s = part[3]; /* a file from before hidden_s */
    static const char *const name[] = {"totals.compute_s", "totals.communication_s", "totals.reduction_s",
                                       "totals.hidden_s", "totals.vendor_s"};
    const double got[] = {p->compute_s, p->comm_s, p->reduction_s, p->hidden_s, p->vendor_s};
    for (int i = 0; i < 5; i++)
        if (!close_rel(got[i], part[i])) return bad(rd, name[i], "is not the sum of the operators'");
    if (!close_rel(p->setup_s, setup)) return bad(rd, "totals.setup_s", "is not the sum of the operators'");
    if (p->idle_bytes != idle) return bad(rd, "totals.idle_bytes", "is not the sum of the operators'");
    if (p->peak_bytes != peak)
        return bad(rd, "totals.peak_bytes", "is not the largest idle + live + active bytes of an operator");
    return ROTOR_OK;
}

/* totals.setup_bound_s, written on a mesh since 2026-12-04: the operators'
 * busiest links' bounds (rotor_mesh_setup_s of each one's setup_link_bytes,
 * setup_rounds and setup_hops) summed as rotor_compile_mesh_setups sums
 * them; a file without it (from before) has nothing to check; refused on a
 * chip without a mesh.  Checked, not kept: the operators' fields give it. */
static rotor_status check_setup_bound(reader *rd, const rotor_chip *chip, const cJSON *root, const rotor_program *p) {
    const cJSON *tot = cJSON_GetObjectItemCaseSensitive(root, "totals");
    if (!cJSON_GetObjectItemCaseSensitive(tot, "setup_bound_s")) return ROTOR_OK;
    double got;
    snprintf(rd->where, sizeof rd->where, "totals");
    rotor_status st = get_num(rd, tot, "setup_bound_s", &got);
    rd->where[0] = '\0';
    if (st) return st;
    if (chip->topology != ROTOR_TOPO_MESH) return bad(rd, "totals.setup_bound_s", "is a mesh's; the chip has none");
    double bound = 0;
    for (int o = 0; o < p->nops; o++) {
        const rotor_program_op *op = &p->ops[o];
        if (rotor_compile_setup_counted(op->vendor, op->segment, op->setup_bytes))
            bound += rotor_mesh_setup_s(chip, op->setup_link_bytes, op->setup_rounds, op->setup_hops);
    }
    if (!close_rel(got, bound))
        return bad(rd, "totals.setup_bound_s", "is not the sum of the operators' busiest links' bounds");
    return ROTOR_OK;
}

/* rotor_program_parse with the placements it checks from (and into) the
 * memo pm. */
static rotor_status parse_with(const char *text, const char *label, const rotor_chip *chip, place_memo *pm,
                               rotor_program *out, rotor_error *err) {
    memset(out, 0, sizeof *out);
    cJSON *root;
    rotor_status pst = rotor_json_parse(text, strlen(text), label, &root, err);
    if (pst) return pst;
    reader rd = {.label = label, .err = err, .pm = pm};
    rotor_status st = read_head(&rd, root, chip, out);
    const cJSON *ops = st ? NULL : cJSON_GetObjectItemCaseSensitive(root, "operators");
    if (!st && (!cJSON_IsArray(ops) || cJSON_GetArraySize(ops) < 1))
        st = bad(&rd, "operators", ops ? "expected a non-empty array" : "missing");
    /* the operators are allocated before they are read: their count is
     * bounded by the text, as the shortest operator object takes 88 bytes
     * ({"name":"","type":"","vendor":true,"setup_s":0,"exec_s":0,
     * "live_bytes":0,"idle_bytes":0}, a vendor op) */
    int n = st ? 0 : cJSON_GetArraySize(ops);
    if (!st && (size_t)n > strlen(text) / 88) {
        char msg[160];
        snprintf(msg, sizeof msg, "%d entries, more than the text holds (one per 88 bytes, at most %zu)", n,
                 strlen(text) / 88);
        st = bad(&rd, "operators", msg);
    }
    if (!st) {
        out->ops = calloc((size_t)n, sizeof *out->ops);
        if (!out->ops) st = rotor_nomem(err);
        else out->nops = n;
        double sum = 0;
        const cJSON *x = ops->child; /* walked, not indexed: cJSON_GetArrayItem is linear */
        for (int i = 0; !st && i < n; i++, x = x->next) {
            snprintf(rd.where, sizeof rd.where, "operators[%d]", i);
            st = read_op(&rd, x, chip, &out->ops[i]);
            if (!st) st = read_handoff(&rd, x, out, i);
            sum += out->ops[i].setup_s + out->ops[i].exec_s;
        }
        rd.where[0] = '\0';
        const cJSON *segs = st ? NULL : cJSON_GetObjectItemCaseSensitive(root, "segments");
        if (!st && segs) {
            const cJSON *obj = cJSON_GetObjectItemCaseSensitive(root, "objective");
            if (!cJSON_IsArray(segs) || cJSON_GetArraySize(segs) < 1)
                st = bad(&rd, "segments", "expected a non-empty array");
            else if (!cJSON_IsString(obj) || !rotor_pipeline_objective_find(obj->valuestring, &out->objective))
                st = bad(&rd, "objective", "expected \"latency\" or \"throughput\"");
            int ns = st ? 0 : cJSON_GetArraySize(segs);
            if (ns > n / 2) /* each holds two operators or more, and none overlaps the next */
                st = bad(&rd, "segments", "more segments than half the operators");
            if (!st && !(out->segments = calloc((size_t)ns, sizeof *out->segments))) st = rotor_nomem(err);
            for (int i = 0; !st && i < ns; i++) {
                snprintf(rd.where, sizeof rd.where, "segments[%d]", i);
                out->nsegments = i + 1;
                st = read_segment(&rd, cJSON_GetArrayItem(segs, i), chip, out,
                                  i ? out->segments[i - 1].last : -1, &out->segments[i]);
                for (int o = out->segments[i].first; !st && o <= out->segments[i].last; o++) {
                    out->ops[o].segment = i + 1;
                    sum += out->segments[i].total_s / (out->segments[i].last - out->segments[i].first + 1) -
                           out->ops[o].setup_s - out->ops[o].exec_s;
                }
            }
            rd.where[0] = '\0';
        }
        if (!st && !close_rel(sum, out->total_s))
            st = bad(&rd, "totals.total_s",
                     out->nsegments ? "is not the sum of the segments' totals and the other operators' setup and exec times"
                                    : "is not the sum of the operators' setup and exec times");
        if (!st && !out->nsegments) st = check_totals(&rd, out);
        if (!st) st = check_setup_bound(&rd, chip, root, out);
        if (!st && out->hidden_s < 0) { /* segments, from before hidden_s: the others' sum, as segment.c's */
            out->hidden_s = 0;
            for (int o = 0; o < n; o++)
                if (!out->ops[o].vendor && !out->ops[o].segment) out->hidden_s += out->ops[o].active_cost.hidden;
        }
    }
    cJSON_Delete(root);
    if (st) rotor_program_free(out);
    return st;
}

rotor_status rotor_program_parse(const char *text, const char *label, const rotor_chip *chip,
                                 rotor_program *out, rotor_error *err) {
    memset(out, 0, sizeof *out);
    place_memo *pm = pm_new();
    if (!pm) return rotor_nomem(err);
    rotor_status st = parse_with(text, label, chip, pm, out, err);
    pm_free(pm);
    return st;
}

/* One memo for both: the reader checks each placement the file holds
 * against the summary of the same (shape, plan), which the writer has just
 * made from the same key; a file from disk gets its own (rotor_program_read). */
rotor_status rotor_program_roundtrip(const rotor_graph *g, const rotor_chip *chip, const rotor_compile_result *r,
                                     const char *label, rotor_program *out, rotor_error *err) {
    memset(out, 0, sizeof *out);
    place_memo *pm = pm_new();
    if (!pm) return rotor_nomem(err);
    char *text = NULL;
    rotor_status st = write_with(g, chip, r, pm, &text, err);
    if (!st) st = parse_with(text, label, chip, pm, out, err);
    free(text);
    pm_free(pm);
    return st;
}

rotor_status rotor_program_read(const char *path, const rotor_chip *chip, rotor_program *out,
                                rotor_error *err) {
    memset(out, 0, sizeof *out);
    char *text;
    rotor_status st = rotor_json_read_text(path, &text, err);
    if (st) return st;
    st = rotor_program_parse(text, path, chip, out, err);
    free(text);
    return st;
}

rotor_status rotor_program_chip(const char *text, const char *label, rotor_chip *out, bool *found,
                                rotor_error *err) {
    *found = false;
    cJSON *root;
    rotor_status st = rotor_json_parse(text, strlen(text), label, &root, err);
    if (st) return st;
    st = rotor_json_chip_file(root, label, out, found, err);
    cJSON_Delete(root);
    return st;
}

void rotor_program_free(rotor_program *p) {
    if (!p) return;
    for (int i = 0; i < p->nsegments; i++) rotor_segment_free(&p->segments[i]);
    free(p->segments);
    for (int i = 0; i < p->nops; i++) free(p->ops[i].name);
    free(p->ops);
    memset(p, 0, sizeof *p);
}
