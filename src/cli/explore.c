/* rotor explore — a design-space sweep of Elk's HBM schedules (Elk §6.4,
 * Figures 19-23, docs/explore.md): one chip parameter takes a list of values,
 * the model is scheduled at each (rotor_schedule_build, then every requested
 * design), and each sweep writes a CSV and an SVG line plot of the per-token
 * latency.  The points run in parallel; the output does not depend on the
 * thread count (results are kept per point and printed in point order). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rotor/hbm/schedule.h"
#include "rotor/pipeline/pipeline.h"

#define MAX_SWEEPS 8
#define MAX_POINTS 64
#define MESH_MAX_ASPECT 4 /* cores on a mesh: the longer side at most 4x the shorter */

static const char *const CMD = "explore";

/* ---- the sweep keys ------------------------------------------------------ */

typedef enum sweep_key { KEY_HBM_BW, KEY_NOC_BW, KEY_CORES, KEY_FLOPS, NKEYS } sweep_key;

static const struct {
    const char *name;  /* --sweep NAME=... and the file suffix */
    const char *unit;
    const char *axis;  /* the SVG's x-axis label */
    const char *field; /* the chip field it sets (docs/chip-format.md) */
    bool integer;
} KEYS[NKEYS] = {
    {"hbm-bw", "TB/s", "total HBM bandwidth of all chips (TB/s)", "hbm_gbps", false},
    {"noc-bw", "GB/s", "per-core link bandwidth (GB/s)", "link_gbps", false},
    {"cores", "cores", "cores per chip", "cores_per_chip", true},
    {"flops", "TFLOP/s", "matrix TFLOP/s per chip", "matrix_tflops", false},
};

static void explore_usage(FILE *f) {
    fprintf(f,
            "usage: rotor explore MODEL|FILE.onnx --sweep KEY=VALUES [options]\n"
            "\n"
            "Sweeps one chip parameter (Elk §6.4): the model is scheduled as `rotor schedule`\n"
            "does at every value, for every design, and each sweep writes PREFIX-KEY.csv and\n"
            "PREFIX-KEY.svg (a line plot of the latency against the value) and prints a table.\n"
            "\n"
            "keys:\n"
            "  hbm-bw   total HBM bandwidth of all chips, TB/s (as rotor schedule --hbm-bw)\n"
            "  noc-bw   per-core link bandwidth, GB/s (the chip's link_gbps)\n"
            "  cores    cores per chip (cores_per_chip); on a mesh chip the mesh becomes the\n"
            "           most nearly square WxH (refused beyond 4:1)\n"
            "  flops    matrix TFLOP/s per chip (matrix_tflops); vector_tflops is scaled by\n"
            "           the same ratio\n"
            "values: a comma list (2,4,8,16), ranges START:END:xF (geometric, 2:32:x2 is\n"
            "2,4,8,16,32) or START:END:+S (arithmetic), or both mixed; at most %d points.\n"
            "\n"
            "  --sweep KEY=VALUES  a sweep (repeatable, one per key: each writes its own files)\n"
            "  --design D,...      basic, static, dyn, full, ideal, roofline, or all (default all)\n"
            "  -o PREFIX|DIR       output files PREFIX-KEY.csv and .svg (default explore-MODEL;\n"
            "                      a directory: DIR/explore-MODEL-KEY.csv and .svg)\n"
            "  --chip NAME|FILE    preset or chip file with HBM; default ipu-pod4\n"
            "  --set KEY=VALUE     override one chip field before the sweep (repeatable)\n"
            "  --hbm-bw BW         total HBM bandwidth when it is not the swept key (TB/s)\n"
            "  --batch N, --seq N, --layers N, --decode, --prefill, --dim k=v,..., --input NAME=AxB,..,\n"
            "                      --value NAME=SPEC\n"
            "                      shape the model, as in rotor schedule\n"
            "  --tp N              chips the model is split over (default: all of them)\n"
            "  --sram-nonblocking  inter-core writes do not pause a core's SRAM accesses\n"
            "  --max-orders N      preload orders tried per layer (default 5040)\n"
            "  --json              print JSON (rotor-explore, version 1) instead of the table\n"
            "  --report FILE.html  also one self-contained HTML page of every sweep's plot and table\n"
            "                      (docs/report.md; a directory: into it as PREFIX.html)\n"
            "  --threads N         sweep points run in parallel (default: all cores); the\n"
            "                      output is the same for every N\n"
            "  --list              list the zoo\n"
            "  -q, --quiet         no progress on stderr\n"
            "  -h, --help          this help\n"
            "\n"
            "A point where an operator does not fit is skipped (noted on stderr and in the\n"
            "table); a sweep with no point that fits is an error.\n"
            "exit status: 0 swept, 1 no point of a sweep fits, 2 bad input\n",
            MAX_POINTS);
}

/* ---- value lists --------------------------------------------------------- */

/* A positive finite decimal number, the whole of s[0..len). */
static bool parse_number(const char *s, size_t len, double *out) {
    char buf[64];
    if (len == 0 || len >= sizeof buf) return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    for (size_t i = 0; i < len; i++)
        if (!strchr("0123456789.eE+-", buf[i])) return false;
    char *end;
    double v = strtod(buf, &end);
    if (*end || !isfinite(v)) return false;
    *out = v;
    return true;
}

/* Parses VALUES into vals (at most MAX_POINTS), or writes why not into msg. */
static bool parse_values(const char *list, bool integer, double *vals, int *n, char *msg, size_t msize) {
    *n = 0;
    if (!*list) {
        snprintf(msg, msize, "no values (expected V1,V2,... or START:END:xF)");
        return false;
    }
    const char *p = list;
    for (int item = 1;; item++) {
        size_t len = strcspn(p, ",");
        if (len == 0) {
            snprintf(msg, msize, "value %d is empty", item);
            return false;
        }
        const char *c1 = memchr(p, ':', len);
        if (!c1) {
            double v;
            if (!parse_number(p, len, &v)) {
                snprintf(msg, msize, "value %d: expected a number, got '%.*s'", item, (int)len, p);
                return false;
            }
            if (*n == MAX_POINTS) {
                snprintf(msg, msize, "more than %d values", MAX_POINTS);
                return false;
            }
            vals[(*n)++] = v;
        } else {
            const char *c2 = memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - p));
            double a, b, step;
            char op = c2 && c2 + 1 < p + len ? c2[1] : 0;
            if (!c2 || (op != 'x' && op != '+') || !parse_number(p, (size_t)(c1 - p), &a) ||
                !parse_number(c1 + 1, (size_t)(c2 - c1 - 1), &b) ||
                !parse_number(c2 + 2, len - (size_t)(c2 + 2 - p), &step)) {
                snprintf(msg, msize, "value %d: expected a range START:END:xFACTOR or START:END:+STEP, got '%.*s'",
                         item, (int)len, p);
                return false;
            }
            if (!(a > 0) || b < a || (op == 'x' ? !(step > 1) : !(step > 0))) {
                snprintf(msg, msize, "range '%.*s': expected 0 < START <= END and a %s", (int)len, p,
                         op == 'x' ? "factor above 1" : "positive step");
                return false;
            }
            /* values a*F^k or a+k*S up to END (a relative 1e-9 of slack for
             * decimal steps such as 0.1) */
            for (int k = 0;; k++) {
                double v = op == 'x' ? a * pow(step, k) : a + k * step;
                if (v > b * (1 + 1e-9)) break;
                if (*n == MAX_POINTS) {
                    snprintf(msg, msize, "more than %d values", MAX_POINTS);
                    return false;
                }
                vals[(*n)++] = v;
            }
        }
        p += len;
        if (!*p) break;
        p++; /* the comma */
        if (!*p) {
            snprintf(msg, msize, "value %d is empty", item + 1);
            return false;
        }
    }
    for (int i = 0; i < *n; i++) {
        if (!(vals[i] > 0)) {
            snprintf(msg, msize, "%g: expected a positive value", vals[i]);
            return false;
        }
        if (integer && vals[i] != floor(vals[i])) {
            snprintf(msg, msize, "%g: expected a whole number", vals[i]);
            return false;
        }
        for (int j = 0; j < i; j++)
            if (vals[j] == vals[i]) {
                snprintf(msg, msize, "%g listed twice", vals[i]);
                return false;
            }
    }
    return true;
}

/* ---- applying a value to the chip ------------------------------------------ */

/* One "field=value" through rotor_chip_set, its "--set: " prefix dropped (the
 * caller names the sweep instead). */
static rotor_status set_field(rotor_chip *c, const char *field, double v, rotor_error *err) {
    char a[96];
    snprintf(a, sizeof a, "%s=%.17g", field, v);
    rotor_status st = rotor_chip_set(c, a, err);
    if (st && !strncmp(err->msg, "--set: ", 7)) memmove(err->msg, err->msg + 7, strlen(err->msg + 7) + 1);
    return st;
}

/* The chip at one sweep point: base with the key's value applied, validated. */
static rotor_status apply_value(const rotor_chip *base, sweep_key key, double v, rotor_chip *out, rotor_error *err) {
    rotor_chip c = *base;
    rotor_status st = ROTOR_OK;
    switch (key) {
    case KEY_HBM_BW:
        if (c.hbm_controllers == 0)
            return rotor_fail(err, ROTOR_ERR_INPUT, "chip '%s' has no HBM (set hbm_bytes, hbm_gbps and "
                              "hbm_controllers, or use ipu-pod4)", c.name);
        st = set_field(&c, "hbm_gbps", v * 1000.0 / (double)c.chips, err);
        break;
    case KEY_NOC_BW: st = set_field(&c, "link_gbps", v, err); break;
    case KEY_FLOPS:
        st = set_field(&c, "matrix_tflops", v, err);
        if (!st) st = set_field(&c, "vector_tflops", base->vector_tflops * (v / base->matrix_tflops), err);
        break;
    case KEY_CORES:
        st = set_field(&c, "cores_per_chip", v, err);
        if (!st && c.topology == ROTOR_TOPO_MESH) {
            /* the most nearly square factorisation, the base's orientation kept */
            int64_t n = c.cores_per_chip, small = 1;
            for (int64_t d = 1; d * d <= n; d++)
                if (n % d == 0) small = d;
            int64_t big = n / small;
            if (big > MESH_MAX_ASPECT * small)
                return rotor_fail(err, ROTOR_ERR_INPUT,
                                  "the chip is a mesh and %lld cores make no mesh within %d:1 (the squarest "
                                  "is %lldx%lld)", (long long)n, MESH_MAX_ASPECT, (long long)big,
                                  (long long)small);
            bool wide = base->mesh_width >= base->mesh_height;
            c.mesh_width = wide ? big : small;
            c.mesh_height = wide ? small : big;
        }
        break;
    case NKEYS: break;
    }
    if (!st) st = rotor_chip_validate(&c, err);
    if (!st) *out = c;
    return st;
}

/* ---- the sweep ----------------------------------------------------------- */

typedef struct row {
    double latency_us, pct_ideal, preload_us, execute_us, overlap_us, stall_us, hbm_util, link_util, tflops;
} row;

typedef struct point {
    int sweep;
    double value;
    rotor_chip chip;
    rotor_status st;
    rotor_error err;
    int64_t tensor_parallel;
    int nops;
    row rows[ROTOR_PRELOAD_NDESIGNS]; /* by design */
} point;

typedef struct sweep {
    sweep_key key;
    const char *spec;
    int first, n; /* its points: pts[first .. first + n) */
    int fits;
    cli_output csv, svg; /* opened before the work, renamed into place when written */
} sweep;

static double us(int64_t ps) { return (double)ps * 1e-6; }

/* Schedules one point: every design in want (ideal always among them). */
static void run_point(const rotor_graph *g, const rotor_schedule_options *base_opt, const bool *want, point *pt) {
    rotor_schedule_options so = *base_opt;
    so.threads = 1; /* the points are the parallel loop */
    rotor_schedule *s = NULL;
    pt->st = rotor_schedule_build(g, &pt->chip, &so, &s, &pt->err);
    if (!pt->st) {
        pt->tensor_parallel = s->tensor_parallel;
        pt->nops = s->nops;
        for (int d = 0; d < ROTOR_PRELOAD_NDESIGNS && !pt->st; d++) {
            if (!want[d]) continue;
            rotor_schedule_report rep;
            pt->st = rotor_schedule_run(s, (rotor_preload_design)d, &rep, &pt->err);
            if (pt->st) break;
            const rotor_preload_breakdown *b = &rep.result.breakdown;
            pt->rows[d] = (row){.latency_us = us(rep.result.latency_ps), .preload_us = us(b->preload_ps),
                                .execute_us = us(b->execute_ps), .overlap_us = us(b->overlap_ps),
                                .stall_us = us(b->stall_ps), .hbm_util = rep.hbm_util,
                                .link_util = rep.link_util, .tflops = rep.tflops};
            rotor_schedule_report_free(&rep);
        }
        double ideal = pt->rows[ROTOR_PRELOAD_IDEAL].latency_us;
        for (int d = 0; d < ROTOR_PRELOAD_NDESIGNS; d++)
            if (want[d]) pt->rows[d].pct_ideal = pt->rows[d].latency_us > 0 ? 100.0 * ideal / pt->rows[d].latency_us : 0;
    }
    rotor_schedule_free(s);
}

/* ---- outputs ------------------------------------------------------------- */

static void print_value(FILE *f, double v) { fprintf(f, "%.10g", v); }

static void write_csv(FILE *f, const sweep *sw, const point *pts, const rotor_preload_design *designs, int nd) {
    fprintf(f, "key,value,design,latency_us,percent_of_ideal,preload_us,execute_us,overlap_us,stall_us,"
               "hbm_util,link_util,tflops\n");
    for (int i = sw->first; i < sw->first + sw->n; i++) {
        if (pts[i].st) continue;
        for (int k = 0; k < nd; k++) {
            const row *r = &pts[i].rows[designs[k]];
            fprintf(f, "%s,", KEYS[sw->key].name);
            print_value(f, pts[i].value);
            fprintf(f, ",%s,%.6f,%.4f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.4f\n", rotor_preload_designs[designs[k]].name,
                    r->latency_us, r->pct_ideal, r->preload_us, r->execute_us, r->overlap_us, r->stall_us,
                    r->hbm_util, r->link_util, r->tflops);
        }
    }
}

/* s with &, <, >, " escaped for XML text and attributes. */
static void xml_text(FILE *f, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* A round tick step near span / 5: 1, 2, 2.5 or 5 times a power of ten. */
static double nice_step(double span) {
    double raw = span / 5.0;
    double p = pow(10.0, floor(log10(raw)));
    double m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 2.5 ? 2.5 : m <= 5 ? 5 : 10) * p;
}

static const char *const COLOURS[ROTOR_PRELOAD_NDESIGNS] = {"#d62728", "#ff7f0e", "#2ca02c", "#1f77b4",
                                                            "#555555", "#9467bd"};

/* The SVG line plot: x the swept value (log2 when it spans more than 8x), y
 * the latency in ms from 0, one polyline with markers per design. */
static void write_svg(FILE *f, const sweep *sw, const point *pts, const rotor_preload_design *designs, int nd,
                      const char *model, const char *chip, const char *ylabel, bool inline_svg) {
    const double W = 760, H = 440, L = 80, R = 570, T = 50, B = 370;
    int idx[MAX_POINTS] = {0}, n = 0;
    for (int i = sw->first; i < sw->first + sw->n; i++)
        if (!pts[i].st) idx[n++] = i;
    if (n == 0) return; /* not called so: a sweep without a point that fits is an error */
    for (int a = 1; a < n; a++) /* by value: the polylines run left to right */
        for (int b = a; b > 0 && pts[idx[b - 1]].value > pts[idx[b]].value; b--) {
            int t = idx[b];
            idx[b] = idx[b - 1];
            idx[b - 1] = t;
        }
    double xmin = pts[idx[0]].value, xmax = pts[idx[n - 1]].value, ymax = 0;
    bool logx = xmax / xmin > 8;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < nd; k++) ymax = fmax(ymax, pts[idx[i]].rows[designs[k]].latency_us * 1e-3);
    if (!(ymax > 0)) ymax = 1;
    double ystep = nice_step(ymax * 1.05);
    int yticks = (int)ceil(ymax * 1.05 / ystep - 1e-9);
    double ytop = yticks * ystep;
    double u0 = logx ? log2(xmin) : xmin, u1 = logx ? log2(xmax) : xmax;
#define XPOS(v) (u1 > u0 ? L + 20 + ((logx ? log2(v) : (v)) - u0) / (u1 - u0) * (R - L - 40) : (L + R) / 2)
#define YPOS(ms) (B - (ms) / ytop * (B - T))
    if (!inline_svg) fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" %swidth=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n", inline_svg ? "class=\"sweep\" " : "", W, H, W, H);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", W, H);
    fprintf(f, "<text x=\"%.1f\" y=\"28\" text-anchor=\"middle\" font-size=\"15\">", (L + R) / 2);
    xml_text(f, model);
    fputs(" on ", f);
    xml_text(f, chip);
    fprintf(f, ": latency vs %s</text>\n", KEYS[sw->key].name);
    /* grid and y ticks */
    for (int t = 0; t <= yticks; t++) {
        double y = YPOS(t * ystep);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.2f\" x2=\"%.1f\" y2=\"%.2f\" stroke=\"#dddddd\"/>\n", L, y, R, y);
        fprintf(f, "<text x=\"%.1f\" y=\"%.2f\" text-anchor=\"end\">%.6g</text>\n", L - 6, y + 4, t * ystep);
    }
    /* x ticks at the swept values, a label only where it has room */
    double last = -1e9;
    for (int i = 0; i < n; i++) {
        double x = XPOS(pts[idx[i]].value);
        fprintf(f, "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"black\"/>\n", x, B, x, B + 5);
        if (x - last >= 36) {
            fprintf(f, "<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\">%.6g</text>\n", x, B + 19,
                    pts[idx[i]].value);
            last = x;
        }
    }
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"black\"/>\n", L,
            T, R - L, B - T);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s%s</text>\n", (L + R) / 2, B + 42,
            KEYS[sw->key].axis, logx ? ", log scale" : "");
    fprintf(f, "<text transform=\"translate(22 %.1f) rotate(-90)\" text-anchor=\"middle\">%s</text>\n", (T + B) / 2,
            ylabel);
    /* one polyline and its markers per design, then the legend */
    for (int k = 0; k < nd; k++) {
        const char *name = rotor_preload_designs[designs[k]].name;
        const char *col = COLOURS[designs[k]];
        const char *dash = designs[k] >= ROTOR_PRELOAD_IDEAL ? " stroke-dasharray=\"5 3\"" : "";
        fprintf(f, "<g class=\"design\" id=\"%s\">\n<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"",
                name, col, dash);
        for (int i = 0; i < n; i++)
            fprintf(f, "%s%.2f,%.2f", i ? " " : "", XPOS(pts[idx[i]].value),
                    YPOS(pts[idx[i]].rows[designs[k]].latency_us * 1e-3));
        fprintf(f, "\"/>\n");
        for (int i = 0; i < n; i++) {
            const point *p = &pts[idx[i]];
            fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3.5\" fill=\"%s\"><title>%s ", XPOS(p->value),
                    YPOS(p->rows[designs[k]].latency_us * 1e-3), col, name);
            fprintf(f, "%s=%.10g: %.4f ms</title></circle>\n", KEYS[sw->key].name, p->value,
                    p->rows[designs[k]].latency_us * 1e-3);
        }
        double ly = T + 10 + 20 * k;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s/>\n", R + 20,
                ly, R + 50, ly, col, dash);
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n", R + 35, ly, col);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n</g>\n", R + 58, ly + 4, name);
    }
#undef XPOS
#undef YPOS
    fprintf(f, "</svg>\n");
}

static void print_table(const sweep *sw, const point *pts, const rotor_preload_design *designs, int nd) {
    printf("sweep %s (%s): %d point%s x %d design%s -> %s, %s\n", KEYS[sw->key].name, KEYS[sw->key].unit, sw->n,
           sw->n > 1 ? "s" : "", nd, nd > 1 ? "s" : "", sw->csv.path, sw->svg.path);
    printf("%10s %-7s %11s %8s %10s %10s %10s %10s %6s %6s %8s\n", KEYS[sw->key].name, "design", "latency ms",
           "% ideal", "preload ms", "execute ms", "overlap ms", "stall ms", "HBM %", "link %", "TFLOPS");
    for (int i = sw->first; i < sw->first + sw->n; i++) {
        const point *p = &pts[i];
        if (p->st) {
            printf("%10.6g does not fit: %s\n", p->value, p->err.msg);
            continue;
        }
        for (int k = 0; k < nd; k++) {
            const row *r = &p->rows[designs[k]];
            printf("%10.6g %-7s %11.4f %8.2f %10.4f %10.4f %10.4f %10.4f %6.1f %6.1f %8.2f\n", p->value,
                   rotor_preload_designs[designs[k]].name, r->latency_us * 1e-3, r->pct_ideal, r->preload_us * 1e-3,
                   r->execute_us * 1e-3, r->overlap_us * 1e-3, r->stall_us * 1e-3, 100.0 * r->hbm_util,
                   100.0 * r->link_util, r->tflops);
        }
    }
}

static int print_json(const char *model, const rotor_chip *chip, const sweep *sws, int nsw, const point *pts,
                      const rotor_preload_design *designs, int nd) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "format", "rotor-explore");
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON_AddStringToObject(root, "model", model);
    cJSON_AddStringToObject(root, "chip", chip->name);
    cJSON_AddNumberToObject(root, "chips", (double)chip->chips);
    cJSON *ds = cJSON_AddArrayToObject(root, "designs");
    for (int k = 0; k < nd; k++) cJSON_AddItemToArray(ds, cJSON_CreateString(rotor_preload_designs[designs[k]].name));
    cJSON *sa = cJSON_AddArrayToObject(root, "sweeps");
    for (int w = 0; w < nsw; w++) {
        const sweep *sw = &sws[w];
        cJSON *so = cJSON_CreateObject();
        cJSON_AddStringToObject(so, "key", KEYS[sw->key].name);
        cJSON_AddStringToObject(so, "unit", KEYS[sw->key].unit);
        cJSON_AddStringToObject(so, "chip_field", KEYS[sw->key].field);
        cJSON_AddStringToObject(so, "csv", sw->csv.path);
        cJSON_AddStringToObject(so, "svg", sw->svg.path);
        cJSON *pa = cJSON_AddArrayToObject(so, "points");
        for (int i = sw->first; i < sw->first + sw->n; i++) {
            const point *p = &pts[i];
            cJSON *po = cJSON_CreateObject();
            cJSON_AddNumberToObject(po, "value", p->value);
            cJSON_AddBoolToObject(po, "fits", p->st == ROTOR_OK);
            if (p->st) {
                cJSON_AddStringToObject(po, "error", p->err.msg);
            } else {
                cJSON_AddNumberToObject(po, "tensor_parallel", (double)p->tensor_parallel);
                cJSON_AddNumberToObject(po, "operators", p->nops);
                cJSON *ra = cJSON_AddArrayToObject(po, "results");
                for (int k = 0; k < nd; k++) {
                    const row *r = &p->rows[designs[k]];
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
                    cJSON_AddItemToArray(ra, ro);
                }
            }
            cJSON_AddItemToArray(pa, po);
        }
        cJSON_AddItemToArray(sa, so);
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) {
        return cli_nomem("explore");
    }
    printf("%s\n", text);
    free(text);
    return 0;
}

/* ---- the command --------------------------------------------------------- */

/* Parses one --sweep KEY=VALUES into sw and its values. */
static int parse_sweep(const char *spec, sweep *sw, double *vals) {
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec)
        return cli_usage_error(CMD, "--sweep: expected KEY=V1,V2,... (keys: hbm-bw, noc-bw, cores, flops), got '%s'",
                               spec);
    int k = 0;
    while (k < NKEYS && (strlen(KEYS[k].name) != (size_t)(eq - spec) || strncmp(KEYS[k].name, spec, (size_t)(eq - spec))))
        k++;
    if (k == NKEYS)
        return cli_usage_error(CMD, "--sweep: unknown key '%.*s' (keys: hbm-bw, noc-bw, cores, flops)",
                               (int)(eq - spec), spec);
    sw->key = (sweep_key)k;
    sw->spec = spec;
    char msg[256];
    if (!parse_values(eq + 1, KEYS[k].integer, vals, &sw->n, msg, sizeof msg))
        return cli_usage_error(CMD, "--sweep %s: %s", spec, msg);
    return 0;
}

/* "explore-" plus the model's name: a zoo name, or an ONNX file's base name
 * without ".onnx". */
static void default_prefix(const char *input, bool onnx, char *buf, size_t size) {
    const char *base = input;
    size_t len = strlen(input);
    if (onnx) {
        const char *slash = strrchr(input, '/');
        if (slash) base = slash + 1;
        len = strlen(base);
        if (len > 5 && !strcmp(base + len - 5, ".onnx")) len -= 5;
    }
    snprintf(buf, size, "explore-%.*s", (int)len, base);
}

/* After a failure: every output of this run is closed and its temporary
 * removed; the names asked for are left as they were. */
static void abort_outputs(sweep *sws, int nsw, cli_output *report) {
    cli_output_abort(report);
    for (int w = 0; w < nsw; w++) {
        cli_output_abort(&sws[w].csv);
        cli_output_abort(&sws[w].svg);
    }
}

/* One run of `rotor explore`: what was asked, the points, the outputs. */
typedef struct explore {
    const char *input, *prefix, *report_path;
    cli_hbm_args ha;
    cli_output report; /* --report FILE.html, opened before the work */
    const char *sweep_specs[MAX_SWEEPS];
    int nsw, npts, nd, nthreads;
    sweep sws[MAX_SWEEPS];
    double vals[MAX_SWEEPS][MAX_POINTS];
    rotor_preload_design designs[ROTOR_PRELOAD_NDESIGNS];
    bool want[ROTOR_PRELOAD_NDESIGNS];
    bool decode;
    rotor_pipeline_options po;
    rotor_schedule_options so;
    rotor_chip chip;
    point *pts;
    rotor_pipeline pl; /* its graph is the model every point schedules */
} explore;

/* Parses argv into ex (the options, the designs, the sweeps and their
 * values); returns -1 to go on, else the exit status (0 after --help). */
static int parse_explore(int argc, char **argv, explore *ex) {
    static const cli_opt own[] = {
        CLI_HBM_OPTS(explore, ha),
        {"sweep", 0, CLI_MANY, offsetof(explore, sweep_specs), offsetof(explore, nsw), MAX_SWEEPS},
        {"output", 'o', CLI_VALUE, offsetof(explore, prefix), 0, 0},
        {"report", 0, CLI_VALUE, offsetof(explore, report_path), 0, 0},
        {0}};
    int rc = cli_parse_options(CMD, argc, argv, CLI_TAKES_ALL, &ex->ha.m, own, ex, explore_usage, cli_list_zoo, &ex->input,
                               "a model is required (try --help)");
    if (rc >= 0) return rc;
    if (ex->nsw == 0)
        return cli_usage_error(CMD, "--sweep KEY=V1,V2,... is required (keys: hbm-bw, noc-bw, cores, flops)");
    if (ex->prefix && !*ex->prefix) return cli_usage_error(CMD, "-o: expected a file name prefix, got ''");
    if (ex->prefix && !strcmp(ex->prefix, "-"))
        return cli_usage_error(CMD, "-o -: explore writes a CSV and an SVG per sweep; give a prefix or a directory");
    if (ex->report_path && !strcmp(ex->report_path, "-"))
        return cli_usage_error(CMD, "--report -: explore prints its table on stdout; give a file or a directory");
    if (cli_hbm_workload(CMD, ex->input, &ex->ha, &ex->po, &ex->so)) return EXIT_BADINPUT;
    ex->decode = ex->po.zoo.phase == ROTOR_PHASE_DECODE;
    ex->nthreads = ex->so.threads ? ex->so.threads : omp_get_max_threads(); /* --threads: the points' loop */
    if ((rc = cli_parse_designs(CMD, ex->ha.design, ex->designs, &ex->nd))) return rc;
    for (int k = 0; k < ex->nd; k++) ex->want[ex->designs[k]] = true;
    ex->want[ROTOR_PRELOAD_IDEAL] = true; /* percent_of_ideal in every row */
    /* the sweeps and their values, each key at most once (its files) */
    for (int w = 0; w < ex->nsw; w++) {
        sweep *sw = &ex->sws[w];
        if ((rc = parse_sweep(ex->sweep_specs[w], sw, ex->vals[w]))) return rc;
        for (int u = 0; u < w; u++)
            if (ex->sws[u].key == sw->key)
                return cli_usage_error(CMD, "--sweep %s given twice (one sweep per key: each writes "
                                       "PREFIX-%s.csv)", KEYS[sw->key].name, KEYS[sw->key].name);
        sw->first = ex->npts;
        ex->npts += sw->n;
    }
    return -1;
}

/* The chip, every point's chip (checked before anything runs), the model. */
static int prepare(explore *ex) {
    rotor_error err = {{0}};
    rotor_status st;
    const cli_shared_args *m = &ex->ha.m;
    if ((st = cli_chip(m->chip ? m->chip : "ipu-pod4", m->sets, m->nsets, &ex->chip, &err)))
        return cli_fail(CMD, st, &err);
    if (cli_apply_hbm_bw(CMD, ex->ha.hbm, &ex->chip)) return EXIT_BADINPUT;
    if (ex->so.tensor_parallel > ex->chip.chips)
        return cli_usage_error(CMD, "--tp: expected 1..%lld (the chips of %s), got %lld", (long long)ex->chip.chips,
                               ex->chip.name, (long long)ex->so.tensor_parallel);
    if (!(ex->pts = calloc((size_t)ex->npts, sizeof *ex->pts))) return cli_nomem(CMD);
    for (int w = 0; w < ex->nsw; w++)
        for (int i = 0; i < ex->sws[w].n; i++) {
            point *p = &ex->pts[ex->sws[w].first + i];
            p->sweep = w;
            p->value = ex->vals[w][i];
            if ((st = apply_value(&ex->chip, ex->sws[w].key, p->value, &p->chip, &err))) {
                char pre[96];
                snprintf(pre, sizeof pre, "--sweep %s=%.10g", KEYS[ex->sws[w].key].name, p->value);
                rotor_error_prefix(&err, pre);
                return cli_fail(CMD, st, &err);
            }
        }
    if ((st = rotor_pipeline_run(&ex->po, &ex->chip, &ex->pl, &err))) return cli_fail(CMD, st, &err);
    return 0;
}

/* The output files, opened before the work so that a bad path fails fast
 * (under temporary names beside the final ones: cli_output).  -o DIR writes
 * into DIR under the default prefix. */
static int open_outputs(explore *ex) {
    char defprefix[300], given[4096];
    default_prefix(ex->input, rotor_model_is_onnx(ex->input), defprefix, sizeof defprefix);
    const char *prefix = defprefix;
    if (ex->prefix && cli_is_dir(ex->prefix)) {
        snprintf(given, sizeof given, "%s%s%s", ex->prefix, ex->prefix[strlen(ex->prefix) - 1] == '/' ? "" : "/",
                 defprefix);
        prefix = given;
    } else if (ex->prefix) {
        prefix = ex->prefix;
    }
    int rc = 0;
    if (ex->report_path) {
        char name[320];
        snprintf(name, sizeof name, "%s.html", defprefix);
        rc = cli_output_open(CMD, "--report", ex->report_path, name, &ex->report);
    }
    for (int w = 0; w < ex->nsw && !rc; w++) {
        sweep *sw = &ex->sws[w];
        char path[4200];
        snprintf(path, sizeof path, "%s-%s.csv", prefix, KEYS[sw->key].name);
        rc = cli_output_open(CMD, "-o", path, "", &sw->csv);
        snprintf(path, sizeof path, "%s-%s.svg", prefix, KEYS[sw->key].name);
        if (!rc) rc = cli_output_open(CMD, "-o", path, "", &sw->svg);
    }
    if (rc) abort_outputs(ex->sws, ex->nsw, &ex->report);
    return rc;
}

/* The points, in parallel (each writes only its own slot), then checked in
 * point order: a misfit is skipped, any other failure ends the run, and so
 * does a sweep none of whose points fits. */
static int run_points(explore *ex) {
    cli_progress prog;
    cli_progress_begin(&prog, CMD, "sweep points", ex->ha.m.quiet);
    int done = 0, npts = ex->npts;
#pragma omp parallel for schedule(dynamic, 1) num_threads(ex->nthreads)
    for (int i = 0; i < npts; i++) {
        run_point(&ex->pl.graph, &ex->so, ex->want, &ex->pts[i]);
#pragma omp critical(explore_progress)
        cli_progress_step(&prog, ++done, npts);
    }
    cli_progress_end(&prog);
    for (int i = 0; i < npts; i++) {
        point *p = &ex->pts[i];
        if (p->st == ROTOR_ERR_NOFIT) continue;
        if (p->st) {
            char pre[96];
            snprintf(pre, sizeof pre, "%s=%.10g", KEYS[ex->sws[p->sweep].key].name, p->value);
            rotor_error_prefix(&p->err, pre);
            return cli_fail(CMD, p->st, &p->err);
        }
        ex->sws[p->sweep].fits++;
    }
    for (int w = 0; w < ex->nsw; w++)
        if (!ex->sws[w].fits) {
            point *p = &ex->pts[ex->sws[w].first];
            const char *key = KEYS[ex->sws[w].key].name;
            char pre[160];
            snprintf(pre, sizeof pre, "--sweep %s: no point fits; at %s=%.10g", key, key, p->value);
            rotor_error_prefix(&p->err, pre);
            return cli_fail(CMD, p->st, &p->err);
        }
    for (int i = 0; i < npts; i++)
        if (ex->pts[i].st)
            fprintf(stderr, "rotor explore: %s=%.10g skipped: %s\n", KEYS[ex->sws[ex->pts[i].sweep].key].name,
                    ex->pts[i].value, ex->pts[i].err.msg);
    return 0;
}

/* Every sweep's CSV and SVG, written, checked and renamed into place. */
static int write_outputs(explore *ex) {
    const char *ylabel = ex->decode ? "per-token latency (ms)" : "latency per step (ms)";
    for (int w = 0; w < ex->nsw; w++) {
        sweep *sw = &ex->sws[w];
        write_csv(sw->csv.f, sw, ex->pts, ex->designs, ex->nd);
        write_svg(sw->svg.f, sw, ex->pts, ex->designs, ex->nd, ex->pl.graph.name, ex->chip.name, ylabel, false);
        int rc = cli_output_commit(CMD, "-o", &sw->csv);
        if (!rc) rc = cli_output_commit(CMD, "-o", &sw->svg);
        if (rc) return rc;
    }
    return 0;
}

/* --report: one HTML page (docs/report.md) with every sweep's plot and
 * table, self-contained as rotor report's. */
static int write_html(explore *ex) {
    FILE *f = ex->report.f;
    const char *ylabel = ex->decode ? "per-token latency (ms)" : "latency per step (ms)";
    char title[200], sub[300];
    snprintf(title, sizeof title, "rotor explore: %s on %s", ex->pl.graph.name, ex->chip.name);
    snprintf(sub, sizeof sub, "%d sweep%s of a chip parameter over the HBM schedules of %d design%s (Elk §6.4); "
             "points where an operator does not fit are left out.", ex->nsw, ex->nsw > 1 ? "s" : "", ex->nd,
             ex->nd > 1 ? "s" : "");
    cli_html_begin(f, title, sub);
    cli_html_section(f, "sweeps", "Design-space sweeps");
    for (int w = 0; w < ex->nsw; w++) {
        const sweep *sw = &ex->sws[w];
        fprintf(f, "<h3>%s (%s)</h3>\n", KEYS[sw->key].name, KEYS[sw->key].unit);
        cli_html_figure_begin(f, "sweep");
        write_svg(f, sw, ex->pts, ex->designs, ex->nd, ex->pl.graph.name, ex->chip.name, ylabel, true);
        cli_html_figure_end(f, KEYS[sw->key].axis);
        fprintf(f, "<table>\n<tr><th>%s</th><th>design</th><th>latency (ms)</th><th>%% of ideal</th>"
                   "<th>preload (ms)</th><th>execute (ms)</th><th>overlap (ms)</th><th>stall (ms)</th></tr>\n",
                KEYS[sw->key].name);
        for (int i = sw->first; i < sw->first + sw->n; i++) {
            const point *p = &ex->pts[i];
            if (p->st) {
                fprintf(f, "<tr><td>%.10g</td><td colspan=\"7\">does not fit: ", p->value);
                cli_xml_text(f, p->err.msg);
                fputs("</td></tr>\n", f);
                continue;
            }
            for (int k = 0; k < ex->nd; k++) {
                const row *r = &p->rows[ex->designs[k]];
                fprintf(f, "<tr><td>%.10g</td><td>%s</td><td>%.4f</td><td>%.2f</td><td>%.4f</td><td>%.4f</td>"
                           "<td>%.4f</td><td>%.4f</td></tr>\n",
                        p->value, rotor_preload_designs[ex->designs[k]].name, r->latency_us * 1e-3, r->pct_ideal,
                        r->preload_us * 1e-3, r->execute_us * 1e-3, r->overlap_us * 1e-3, r->stall_us * 1e-3);
            }
        }
        fputs("</table>\n", f);
    }
    cli_html_section_end(f);
    cli_html_end(f);
    return cli_output_commit(CMD, "--report", &ex->report);
}

/* The text report: the chip, then one table per sweep. */
static void print_report(const explore *ex) {
    const rotor_chip *chip = &ex->chip;
    char topo[64] = "all-to-all";
    if (chip->topology == ROTOR_TOPO_MESH)
        snprintf(topo, sizeof topo, "mesh %lldx%lld", (long long)chip->mesh_width, (long long)chip->mesh_height);
    printf("%s on %s: %lld chip%s x %lld cores (%s), HBM %.6g TB/s in all, links %.6g GB/s, %.6g TFLOP/s "
           "matrix per chip; %s\n",
           ex->pl.graph.name, chip->name, (long long)chip->chips, chip->chips > 1 ? "s" : "",
           (long long)chip->cores_per_chip, topo, chip->hbm_gbps * (double)chip->chips / 1000.0, chip->link_gbps,
           chip->matrix_tflops, ex->decode ? "decode step (latency per token)" : "one step");
    for (int w = 0; w < ex->nsw; w++) {
        printf("\n");
        print_table(&ex->sws[w], ex->pts, ex->designs, ex->nd);
    }
}

int cmd_explore(int argc, char **argv) {
    explore *ex = calloc(1, sizeof *ex);
    if (!ex) return cli_nomem(CMD);
    int rc = parse_explore(argc, argv, ex);
    if (rc < 0) {
        rc = prepare(ex);
        bool opened = !rc && !(rc = open_outputs(ex));
        if (!rc) rc = run_points(ex);
        if (!rc) rc = write_outputs(ex);
        if (!rc && ex->report_path) rc = write_html(ex);
        if (rc && opened) abort_outputs(ex->sws, ex->nsw, &ex->report);
        else if (!rc && ex->ha.json)
            rc = print_json(ex->pl.graph.name, &ex->chip, ex->sws, ex->nsw, ex->pts, ex->designs, ex->nd);
        else if (!rc)
            print_report(ex);
    }
    rotor_pipeline_free(&ex->pl);
    free(ex->pts);
    free(ex);
    return rc;
}
