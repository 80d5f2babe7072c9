/* docexplore.c — rotor explore's points and document (pipeline/explore.h;
 * docs/explore.md, "The CSV" and "The JSON"): one point scheduled into its
 * CSV rows, the rows read back (every output shows the CSV's figures, so a
 * point resumed from a file prints as a computed one), and the --json
 * document, built here for `rotor explore --json` and rotor_doc("explore")
 * alike (the options object's run is docexplopts.c's). */
#include "rotor/pipeline/explore.h"

#include "pipeline/docint.h"
#include "rotor/compile/energy.h"
#include "rotor/model/zoo.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const METRICS = "latency_us,percent_of_ideal,preload_us,execute_us,overlap_us,stall_us,"
                                   "hbm_util,link_util,tflops,energy_j,edp_js";

static double us(int64_t ps) { return (double)ps * 1e-6; }

void rotor_ex_csv_header(const ex_grid *g, char *buf, size_t size) {
    size_t used = 0;
    for (int a = 0; a < g->naxes; a++) {
        int w = snprintf(buf + used, size - used, "%s,", rotor_ex_keys[g->axes[a].key].name);
        if (w > 0) used += (size_t)w;
    }
    snprintf(buf + used, size - used, "design,%s", METRICS);
}

char *rotor_ex_csv_rows(const ex_grid *g, const int *vi, const rotor_preload_design *designs, int nd,
                        const ex_row *rows) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    for (int k = 0; k < nd; k++) {
        const ex_row *r = &rows[designs[k]];
        for (int a = 0; a < g->naxes; a++) fprintf(f, "%s,", g->axes[a].text[vi[a]]);
        fprintf(f, "%s,%.6f,%.4f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.4f,%.9g,%.9g\n", rotor_preload_designs[designs[k]].name,
                r->latency_us, r->pct_ideal, r->preload_us, r->execute_us, r->overlap_us, r->stall_us, r->hbm_util,
                r->link_util, r->tflops, r->energy_j, r->edp_js);
    }
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

bool rotor_ex_csv_read_metrics(const char *line, int skip, ex_row *r) {
    const char *p = line;
    for (int i = 0; i < skip; i++) {
        p = strchr(p, ',');
        if (!p) return false;
        p++;
    }
    double v[EX_NMETRICS];
    for (int m = 0; m < EX_NMETRICS; m++) {
        char *end;
        errno = 0;
        v[m] = strtod(p, &end);
        if (end == p || errno || !isfinite(v[m]) || (*end != ',' && m < EX_NMETRICS - 1)) return false;
        p = end + 1;
    }
    /* a row a run could have written: nothing negative, a latency a
     * schedule can reach (picoseconds in an int64) and its four parts
     * summing to it as written (%.6f each).  Until 2026-12-04 a latency of
     * -5 or 1e308 in an edited CSV was taken into the table (found by an
     * audit helper) */
    for (int m = 0; m < EX_NMETRICS; m++)
        if (v[m] < 0) return false;
    double parts = v[2] + v[3] + v[4] + v[5];
    if (!(v[0] > 0) || v[0] > (double)INT64_MAX * 1e-6 || fabs(parts - v[0]) > 1e-5 + 1e-12 * v[0]) return false;
    *r = (ex_row){v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10]};
    return true;
}

void rotor_ex_csv_read_back(ex_point *p, const rotor_preload_design *designs, int nd) {
    const char *line = p->csv;
    int skip = 0;
    for (const char *c = line; *c && *c != '\n'; c++) skip += *c == ',';
    skip -= EX_NMETRICS - 1; /* the keys and the design */
    for (int k = 0; k < nd && line && *line; k++) {
        rotor_ex_csv_read_metrics(line, skip, &p->rows[designs[k]]); /* our own text: it reads */
        line = strchr(line, '\n');
        if (line) line++;
    }
}

void rotor_ex_point_run(const ex_grid *g, const rotor_graph *graph, const rotor_schedule_options *base,
                        const bool *want, const rotor_preload_design *designs, int nd, ex_point *p) {
    rotor_schedule_options so = *base;
    so.threads = 1; /* the points are the parallel loop */
    rotor_schedule *s = NULL;
    ex_row rows[EX_ND] = {{0}};
    p->st = rotor_schedule_build(graph, &p->chip, &so, &s, &p->err);
    for (int d = 0; d < EX_ND && !p->st; d++) {
        if (!want[d]) continue;
        rotor_schedule_report rep;
        if ((p->st = rotor_schedule_run(s, (rotor_preload_design)d, &rep, &p->err))) break;
        const rotor_preload_breakdown *b = &rep.result.breakdown;
        rows[d] = (ex_row){.latency_us = us(rep.result.latency_ps), .preload_us = us(b->preload_ps),
                           .execute_us = us(b->execute_ps), .overlap_us = us(b->overlap_ps),
                           .stall_us = us(b->stall_ps), .hbm_util = rep.hbm_util, .link_util = rep.link_util,
                           .tflops = rep.tflops};
        /* energy per token or step, priced on the tensor-parallel chips (docs/energy.md) */
        rotor_energy_counts ec;
        rotor_energy en;
        rotor_chip pkg = s->chip;
        pkg.chips = s->tensor_parallel;
        if (!(p->st = rotor_schedule_energy(s, &rep, &ec, &p->err))) {
            rotor_energy_price(&pkg, &ec, rep.latency_s, &en);
            rows[d].energy_j = en.total_j;
            rows[d].edp_js = en.edp;
        }
        rotor_schedule_report_free(&rep);
    }
    rotor_schedule_free(s);
    if (p->st) return;
    double ideal = rows[ROTOR_PRELOAD_IDEAL].latency_us;
    for (int d = 0; d < EX_ND; d++)
        if (want[d]) rows[d].pct_ideal = rows[d].latency_us > 0 ? 100.0 * ideal / rows[d].latency_us : 0;
    if (!(p->csv = rotor_ex_csv_rows(g, p->vi, designs, nd, rows))) {
        p->st = rotor_nomem(&p->err);
        return;
    }
    rotor_ex_csv_read_back(p, designs, nd);
}

static cJSON *json_value(const ex_axis *ax, int i) {
    if (rotor_ex_keys[ax->key].kind == EX_TOPOLOGY) return cJSON_CreateString(ax->text[i]);
    return cJSON_CreateNumber(ax->num[i]);
}

rotor_status rotor_ex_doc(const ex_grid *g, const ex_point *pts, const rotor_preload_design *designs, int nd,
                    const char *model, const rotor_chip *chip, const char *csv, const char *const *svgs, int nsvg,
                    char **out, rotor_error *err) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "format", "rotor-explore");
    cJSON_AddNumberToObject(root, "version", 2);
    cJSON_AddStringToObject(root, "model", model);
    cJSON_AddStringToObject(root, "chip", chip->name);
    cJSON_AddNumberToObject(root, "chips", (double)chip->chips);
    cJSON *ds = cJSON_AddArrayToObject(root, "designs");
    for (int k = 0; k < nd; k++) cJSON_AddItemToArray(ds, cJSON_CreateString(rotor_preload_designs[designs[k]].name));
    cJSON_AddBoolToObject(root, "zip", g->zip);
    cJSON *ka = cJSON_AddArrayToObject(root, "keys");
    for (int a = 0; a < g->naxes; a++) {
        const ex_axis *ax = &g->axes[a];
        cJSON *ko = cJSON_CreateObject();
        cJSON_AddStringToObject(ko, "key", rotor_ex_keys[ax->key].name);
        cJSON_AddStringToObject(ko, "unit", rotor_ex_keys[ax->key].unit);
        cJSON_AddStringToObject(ko, "sets", rotor_ex_keys[ax->key].field);
        cJSON *va = cJSON_AddArrayToObject(ko, "values");
        for (int i = 0; i < ax->n; i++) cJSON_AddItemToArray(va, json_value(ax, i));
        cJSON_AddItemToArray(ka, ko);
    }
    if (csv) { /* the files the CLI wrote; rotor_doc writes none */
        cJSON_AddStringToObject(root, "csv", csv);
        cJSON *sa = cJSON_AddArrayToObject(root, "svg");
        for (int s = 0; s < nsvg; s++) cJSON_AddItemToArray(sa, cJSON_CreateString(svgs[s]));
    }
    cJSON *pa = cJSON_AddArrayToObject(root, "points");
    for (int i = 0; i < g->npts; i++) {
        const ex_point *p = &pts[i];
        cJSON *po = cJSON_CreateObject();
        cJSON *vo = cJSON_AddObjectToObject(po, "values");
        for (int a = 0; a < g->naxes; a++)
            cJSON_AddItemToObject(vo, rotor_ex_keys[g->axes[a].key].name, json_value(&g->axes[a], p->vi[a]));
        cJSON_AddBoolToObject(po, "fits", p->st == ROTOR_OK);
        if (p->st) {
            cJSON_AddStringToObject(po, "error", p->err.msg);
        } else {
            cJSON *ra = cJSON_AddArrayToObject(po, "results");
            for (int k = 0; k < nd; k++) {
                const ex_row *r = &p->rows[designs[k]];
                cJSON *ro = cJSON_CreateObject();
                cJSON_AddStringToObject(ro, "design", rotor_preload_designs[designs[k]].name);
                cJSON_AddNumberToObject(ro, "latency_us", r->latency_us);
                cJSON_AddNumberToObject(ro, "percent_of_ideal", r->pct_ideal);
                cJSON_AddNumberToObject(ro, "preload_us", r->preload_us);
                cJSON_AddNumberToObject(ro, "execute_us", r->execute_us);
                cJSON_AddNumberToObject(ro, "overlap_us", r->overlap_us);
                cJSON_AddNumberToObject(ro, "stall_us", r->stall_us);
                cJSON_AddNumberToObject(ro, "hbm_util", r->hbm_util);
                cJSON_AddNumberToObject(ro, "link_util", r->link_util);
                cJSON_AddNumberToObject(ro, "tflops", r->tflops);
                cJSON_AddNumberToObject(ro, "energy_j", r->energy_j);
                cJSON_AddNumberToObject(ro, "edp_js", r->edp_js);
                cJSON_AddItemToArray(ra, ro);
            }
        }
        cJSON_AddItemToArray(pa, po);
    }
    return rotor_doc_print(root, out, err);
}

rotor_status rotor_ex_grid_check_model(const ex_grid *g, const char *model, bool batch_given, bool seq_given,
                                 rotor_error *err) {
    for (int k = KEY_BATCH; k <= KEY_SEQ; k++) {
        if (g->axis_of[k] < 0) continue;
        if (rotor_model_is_onnx(model))
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "--sweep %s shapes zoo models; an ONNX file's dimensions are bound with --dim",
                              rotor_ex_keys[k].name);
        if (k == KEY_BATCH ? batch_given : seq_given)
            return rotor_fail(err, ROTOR_ERR_INPUT, "%s and --sweep %s: give one", rotor_ex_keys[k].field,
                              rotor_ex_keys[k].name);
    }
    return ROTOR_OK;
}

rotor_status rotor_ex_prepare(const ex_grid *g, const rotor_chip *chip, const rotor_pipeline_options *po, int64_t tp,
                        ex_point **pts, rotor_pipeline **pls, int *nshapes, rotor_error *err) {
    *nshapes = rotor_ex_shape_count(g);
    *pts = calloc((size_t)g->npts, sizeof **pts);
    *pls = calloc((size_t)*nshapes, sizeof **pls);
    char *loaded = calloc((size_t)*nshapes, 1); /* per shape: 0 no point has it, 1 some point has it, 2 loaded */
    rotor_status st = *pts && *pls && loaded ? ROTOR_OK : rotor_nomem(err);
    for (int i = 0; i < g->npts && !st; i++) {
        ex_point *p = &(*pts)[i];
        rotor_ex_grid_point(g, i, p->vi);
        p->shape = rotor_ex_shape_index(g, p->vi);
        loaded[p->shape] = 1;
        st = rotor_ex_point_chip(g, p->vi, chip, tp, &p->chip, err);
    }
    for (int i = 0; i < g->npts && !st; i++) { /* each shape once, from its first point */
        const ex_point *p = &(*pts)[i];
        if (loaded[p->shape] != 1) continue;
        loaded[p->shape] = 2;
        rotor_pipeline_options at = *po;
        rotor_ex_point_shape(g, p->vi, &po->zoo, &at.zoo);
        st = rotor_pipeline_run(&at, chip, &(*pls)[p->shape], err);
    }
    free(loaded);
    return st;
}

void rotor_ex_points_free(ex_point *pts, int npts, rotor_pipeline *pls, int nshapes) {
    if (pls)
        for (int s = 0; s < nshapes; s++) rotor_pipeline_free(&pls[s]);
    if (pts)
        for (int i = 0; i < npts; i++) free(pts[i].csv);
    free(pls);
    free(pts);
}

rotor_status rotor_ex_check_fits(const ex_grid *g, ex_point *pts, rotor_error *err) {
    for (int i = 0; i < g->npts; i++)
        if (pts[i].st == ROTOR_OK) return ROTOR_OK;
    char keys[200] = "", pre[800], name[512];
    size_t used = 0;
    for (int a = 0; a < g->naxes; a++) {
        int w = snprintf(keys + used, sizeof keys - used, "%s%s", a ? " x " : "", rotor_ex_keys[g->axes[a].key].name);
        if (w > 0 && (size_t)w < sizeof keys - used) used += (size_t)w;
    }
    ex_point *p = &pts[0];
    snprintf(pre, sizeof pre, "--sweep %s: no point fits; at %s", keys,
             rotor_ex_point_name(g, p->vi, name, sizeof name));
    rotor_error_prefix(&p->err, pre);
    *err = p->err;
    return p->st;
}
