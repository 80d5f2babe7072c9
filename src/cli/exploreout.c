/* rotor explore's outputs (docs/explore.md, "The CSV" to "The JSON"): a
 * point's CSV rows, and the same rows read back (every output shows the
 * CSV's figures, so a point resumed from a file prints as a computed one),
 * --resume, the table, the JSON, the line plot and the heat maps. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore.h"
#include "rotor/pipeline/report.h"


/* ---- the CSV ------------------------------------------------------------- */

/* Splits s (modified) at commas into at most max fields; the count. */
static int split(char *s, char **fields, int max) {
    int n = 0;
    for (char *p = s;; p++) {
        if (n < max) fields[n] = p;
        n++;
        p = strchr(p, ',');
        if (!p) break;
        *p = '\0';
    }
    return n;
}

/* Compares FILE's header with the grid's; 0, or the error printed. */
static int check_header(const char *cmd, const char *path, char *have, const char *want_text) {
    char want_buf[1024];
    snprintf(want_buf, sizeof want_buf, "%s", want_text);
    char *hf[64], *wf[64];
    int nh = split(have, hf, 64), nw = split(want_buf, wf, 64);
    for (int i = 0; i < nw; i++) {
        if (i >= nh)
            return cli_usage_error(cmd, "--resume %s: the header has no column %d; this grid's is '%s' (its "
                                   "columns: %s)", path, i + 1, wf[i], want_text);
        if (strcmp(hf[i], wf[i]))
            return cli_usage_error(cmd, "--resume %s: column %d is '%s', this grid's is '%s' (its columns: %s)",
                                   path, i + 1, i < 64 ? hf[i] : "?", wf[i], want_text);
    }
    if (nh > nw)
        return cli_usage_error(cmd, "--resume %s: column %d '%s' is not one of this grid's (its columns: %s)", path,
                               nw + 1, nh <= 64 ? hf[nw] : "?", want_text);
    return 0;
}

/* One row of FILE (line lineno, its text in s, modified) into lines[]:
 * 0, or the error printed. */
static int resume_row(const char *cmd, const char *path, int lineno, char *s, const ex_grid *g,
                      const rotor_preload_design *designs, int nd, char **lines) {
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", s);
    char *fields[64];
    int want = g->naxes + 1 + EX_NMETRICS, n = split(s, fields, 64);
    if (n != want)
        return cli_usage_error(cmd, "--resume %s: line %d: expected %d fields, got %d", path, lineno, want, n);
    int vi[EX_NKEYS];
    for (int a = 0; a < g->naxes; a++) {
        const ex_axis *ax = &g->axes[a];
        vi[a] = -1;
        for (int i = 0; i < ax->n && vi[a] < 0; i++)
            if (!strcmp(ax->text[i], fields[a])) vi[a] = i;
        if (vi[a] < 0)
            return cli_usage_error(cmd, "--resume %s: line %d: %s=%s is not a value of this grid", path, lineno,
                                   rotor_ex_keys[ax->key].name, fields[a]);
    }
    int i = rotor_ex_grid_index(g, vi), d = -1;
    if (i < 0)
        return cli_usage_error(cmd, "--resume %s: line %d: its values are not paired so by --zip", path, lineno);
    for (int k = 0; k < nd && d < 0; k++)
        if (!strcmp(rotor_preload_designs[designs[k]].name, fields[g->naxes])) d = k;
    if (d < 0)
        return cli_usage_error(cmd, "--resume %s: line %d: design '%s' is not one of --design", path, lineno,
                               fields[g->naxes]);
    ex_row r;
    if (!rotor_ex_csv_read_metrics(copy, g->naxes + 1, &r))
        return cli_usage_error(cmd, "--resume %s: line %d: expected the figures a run writes after the design (none negative, "
                               "a positive latency its preload, execute, overlap and stall add up to)",
                               path, lineno);
    char **slot = &lines[(size_t)i * (size_t)nd + (size_t)d];
    if (*slot) {
        char name[512];
        return cli_usage_error(cmd, "--resume %s: line %d: a second row for %s, design %s", path, lineno,
                               rotor_ex_point_name(g, vi, name, sizeof name), fields[g->naxes]);
    }
    if (!(*slot = strdup(copy))) return cli_nomem(cmd);
    return 0;
}

int ex_resume(const char *cmd, const char *path, const ex_grid *g, const rotor_preload_design *designs, int nd,
              ex_point *pts) {
    FILE *f = fopen(path, "r");
    if (!f) return cli_usage_error(cmd, "--resume %s: cannot read (%s)", path, strerror(errno));
    char **lines = calloc((size_t)g->npts * (size_t)nd, sizeof *lines);
    if (!lines) {
        fclose(f);
        return cli_nomem(cmd);
    }
    char header[1024], *buf = NULL;
    size_t cap = 0;
    rotor_ex_csv_header(g, header, sizeof header);
    int rc = 0, lineno = 0;
    ssize_t len;
    while (!rc && (len = getline(&buf, &cap, f)) >= 0) {
        lineno++;
        if (len > 0 && buf[len - 1] == '\n') buf[--len] = '\0';
        if (len >= 1000) rc = cli_usage_error(cmd, "--resume %s: line %d is too long for a row", path, lineno);
        else if (lineno == 1) rc = check_header(cmd, path, buf, header);
        else if (len) rc = resume_row(cmd, path, lineno, buf, g, designs, nd, lines);
    }
    if (!rc && ferror(f)) rc = cli_usage_error(cmd, "--resume %s: cannot read (%s)", path, strerror(errno));
    if (!rc && lineno == 0) rc = cli_usage_error(cmd, "--resume %s: empty (expected the CSV header)", path);
    free(buf);
    fclose(f);
    /* a point with a row for every design is done: its rows as they were */
    for (int i = 0; i < g->npts && !rc; i++) {
        char **l = &lines[(size_t)i * (size_t)nd];
        bool all = true;
        size_t total = 1;
        for (int k = 0; k < nd; k++) {
            all &= l[k] != NULL;
            if (l[k]) total += strlen(l[k]) + 1;
        }
        if (!all) continue;
        char *csv = malloc(total), *w = csv;
        if (!csv) {
            rc = cli_nomem(cmd);
            break;
        }
        for (int k = 0; k < nd; k++) w += sprintf(w, "%s\n", l[k]);
        pts[i].csv = csv;
        pts[i].resumed = true;
        pts[i].st = ROTOR_OK;
        rotor_ex_csv_read_back(&pts[i], designs, nd);
    }
    for (size_t i = 0; i < (size_t)g->npts * (size_t)nd; i++) free(lines[i]);
    free(lines);
    return rc;
}

void ex_write_csv(FILE *f, const ex_view *v) {
    char header[1024];
    rotor_ex_csv_header(v->g, header, sizeof header);
    fprintf(f, "%s\n", header);
    for (int i = 0; i < v->g->npts; i++)
        if (!v->pts[i].st && v->pts[i].csv) fputs(v->pts[i].csv, f);
}

/* ---- the line plot ------------------------------------------------------- */

static const char *const COLOURS[EX_ND] = {"#d62728", "#ff7f0e", "#2ca02c", "#1f77b4", "#555555", "#9467bd"};

/* The x of value index i on axis 0 (a number, or its index for a topology). */
static double xval(const ex_axis *ax, int i) { return rotor_ex_keys[ax->key].kind == EX_TOPOLOGY ? i : ax->num[i]; }

/* A line plot's frame: the plot area, the x range (u0..u1, log2 when logx)
 * and the top of the y axis in ms. */
typedef struct lines_frame {
    double L, R, T, B, u0, u1, ytop;
    bool logx;
} lines_frame;

static double lx(const lines_frame *fr, double x) {
    return fr->u1 > fr->u0 ? fr->L + 20 + ((fr->logx ? log2(x) : x) - fr->u0) / (fr->u1 - fr->u0) * (fr->R - fr->L - 40)
                           : (fr->L + fr->R) / 2;
}

static double ly(const lines_frame *fr, double ms) { return fr->B - ms / fr->ytop * (fr->B - fr->T); }

/* Whether designs a and b draw the same line: every point within a
 * thousandth of the y axis (a third of a pixel), so that one hides the
 * other (issue 46: four designs overplotted into one line). */
static bool coincide(const ex_view *v, const lines_frame *fr, const int *idx, int n, int a, int b) {
    for (int i = 0; i < n; i++)
        if (fabs(v->pts[idx[i]].rows[a].latency_us - v->pts[idx[i]].rows[b].latency_us) * 1e-3 > fr->ytop * 1e-3)
            return false;
    return true;
}

/* One polyline and its markers per design (the points idx[0..n), by x),
 * then the legend.  A design that coincides with an earlier one says so in
 * the legend ("dyn = static", class "coincide") and draws its markers as
 * a ring around the earlier ones', one size larger per design hidden
 * there, so that every design stays visible. */
static void lines_designs(FILE *f, const ex_view *v, const lines_frame *fr, const int *idx, int n) {
    const ex_axis *ax = &v->g->axes[0];
    for (int k = 0; k < v->nd; k++) {
        rotor_preload_design d = v->designs[k];
        const char *name = rotor_preload_designs[d].name, *col = COLOURS[d];
        const char *dash = d >= ROTOR_PRELOAD_IDEAL ? " stroke-dasharray=\"5 3\"" : "";
        int same = -1, under = 0; /* the first earlier design it coincides with; how many lie under it */
        for (int j = 0; j < k; j++)
            if (coincide(v, fr, idx, n, v->designs[j], d)) {
                if (same < 0) same = j;
                under++;
            }
        double rad = 3.5 + 2.0 * under;
        char fill[64];
        snprintf(fill, sizeof fill, under ? "none\" stroke=\"%s\" stroke-width=\"1.5" : "%s", col);
        fprintf(f, "<g class=\"design\" id=\"%s\">\n<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"",
                name, col, dash);
        for (int i = 0; i < n; i++)
            fprintf(f, "%s%.2f,%.2f", i ? " " : "", lx(fr, xval(ax, idx[i])),
                    ly(fr, v->pts[idx[i]].rows[d].latency_us * 1e-3));
        fprintf(f, "\"/>\n");
        for (int i = 0; i < n; i++) {
            const ex_point *p = &v->pts[idx[i]];
            char pname[512];
            fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%.1f\" fill=\"%s\"><title>%s ", lx(fr, xval(ax, idx[i])),
                    ly(fr, p->rows[d].latency_us * 1e-3), rad, fill, name);
            cli_xml_text(f, rotor_ex_point_name(v->g, p->vi, pname, sizeof pname));
            fprintf(f, ": %.4f ms</title></circle>\n", p->rows[d].latency_us * 1e-3);
        }
        double lyy = fr->T + 10 + 20 * k;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s/>\n",
                fr->R + 20, lyy, fr->R + 50, lyy, col, dash);
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\"/>\n", fr->R + 35, lyy, fmin(rad, 7.5), fill);
        if (same >= 0)
            fprintf(f, "<text class=\"coincide\" x=\"%.1f\" y=\"%.1f\">%s = %s</text>\n</g>\n", fr->R + 58, lyy + 4,
                    name, rotor_preload_designs[v->designs[same]].name);
        else fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n</g>\n", fr->R + 58, lyy + 4, name);
    }
}

void ex_write_lines(FILE *f, const ex_view *v, bool inline_svg) {
    const double W = 760, H = 440;
    lines_frame fr = {.L = 80, .R = 570, .T = 50, .B = 370};
    const double L = fr.L, R = fr.R, T = fr.T, B = fr.B;
    const ex_grid *g = v->g;
    const ex_axis *ax = &g->axes[0];
    const ex_point *pts = v->pts;
    int idx[EX_MAX_VALUES] = {0}, n = 0;
    for (int i = 0; i < g->npts && n < EX_MAX_VALUES; i++)
        if (!pts[i].st) idx[n++] = i;
    if (n == 0) return; /* not called so: a grid with no point that fits is an error */
    for (int a = 1; a < n; a++) /* by value: the polylines run left to right */
        for (int b = a; b > 0 && xval(ax, idx[b - 1]) > xval(ax, idx[b]); b--) {
            int t = idx[b];
            idx[b] = idx[b - 1];
            idx[b - 1] = t;
        }
    bool cat = rotor_ex_keys[ax->key].kind == EX_TOPOLOGY;
    double xmin = cat ? 0 : xval(ax, idx[0]), xmax = cat ? ax->n - 1 : xval(ax, idx[n - 1]), ymax = 0;
    fr.logx = !cat && xmax / xmin > 8;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < v->nd; k++) ymax = fmax(ymax, pts[idx[i]].rows[v->designs[k]].latency_us * 1e-3);
    if (!(ymax > 0)) ymax = 1;
    rotor_report_axis ya;
    rotor_report_axis_fit(0, ymax * 1.05, 5, &ya);
    int yticks = ya.n - 1;
    double ystep = ya.step;
    fr.ytop = ya.hi;
    fr.u0 = fr.logx ? log2(xmin) : xmin;
    fr.u1 = fr.logx ? log2(xmax) : xmax;
    if (!inline_svg) fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" %swidth=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n", inline_svg ? "class=\"sweep\" " : "", W, H, W, H);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", W, H);
    fprintf(f, "<text x=\"%.1f\" y=\"28\" text-anchor=\"middle\" font-size=\"15\">", (L + R) / 2);
    cli_xml_text(f, v->model);
    fputs(" on ", f);
    cli_xml_text(f, v->chip_name);
    fprintf(f, ": latency vs %s", rotor_ex_keys[ax->key].name);
    for (int a = 1; a < g->naxes; a++)
        fprintf(f, "%s%s", a == 1 ? " (zipped with " : ", ", rotor_ex_keys[g->axes[a].key].name);
    fprintf(f, "%s</text>\n", g->naxes > 1 ? ")" : "");
    for (int t = 0; t <= yticks; t++) {
        double y = ly(&fr, t * ystep);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.2f\" x2=\"%.1f\" y2=\"%.2f\" stroke=\"#dddddd\"/>\n", L, y, R, y);
        fprintf(f, "<text x=\"%.1f\" y=\"%.2f\" text-anchor=\"end\">%.6g</text>\n", L - 6, y + 4, t * ystep);
    }
    /* x ticks at the swept values, a label only where it has room */
    double last = -1e9;
    for (int i = 0; i < n; i++) {
        double x = lx(&fr, xval(ax, idx[i]));
        fprintf(f, "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"black\"/>\n", x, B, x, B + 5);
        if (x - last >= 36) {
            fprintf(f, "<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\">", x, B + 19);
            cli_xml_text(f, ax->text[pts[idx[i]].vi[0]]);
            fputs("</text>\n", f);
            last = x;
        }
    }
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"black\"/>\n", L,
            T, R - L, B - T);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s%s</text>\n", (L + R) / 2, B + 42,
            rotor_ex_keys[ax->key].axis, fr.logx ? ", log scale" : "");
    fprintf(f, "<text transform=\"translate(22 %.1f) rotate(-90)\" text-anchor=\"middle\">%s</text>\n", (T + B) / 2,
            v->ylabel);
    lines_designs(f, v, &fr, idx, n);
    fprintf(f, "</svg>\n");
}

/* ---- the heat maps ------------------------------------------------------- */

/* The design a heat map shows at a point: the fastest of the real designs
 * asked for (basic, static, dyn, full), else the first asked. */
static int heat_design(const ex_view *v, const ex_point *p) {
    int best = -1;
    for (int k = 0; k < v->nd; k++) {
        rotor_preload_design d = v->designs[k];
        if (d >= ROTOR_PRELOAD_IDEAL) continue;
        if (best < 0 || p->rows[d].latency_us < p->rows[best].latency_us) best = d;
    }
    return best >= 0 ? best : (int)v->designs[0];
}

int ex_write_heat(FILE *f, const ex_view *v, int a, int b, bool energy, bool inline_svg) {
    const ex_grid *g = v->g;
    const ex_axis *ra = &g->axes[a], *cb = &g->axes[b];
    int nr = ra->n, nc = cb->n;
    double *vals = calloc((size_t)nr * (size_t)nc, sizeof *vals);
    char **tips = calloc((size_t)nr * (size_t)nc, sizeof *tips);
    const char *rl[EX_MAX_VALUES], *cl[EX_MAX_VALUES];
    char title[600], others[400] = "";
    size_t used = 0;
    for (int o = 0; o < g->naxes; o++) {
        if (o == a || o == b) continue;
        int w = snprintf(others + used, sizeof others - used, "%s%s=%s", used ? ", " : "; ",
                         rotor_ex_keys[g->axes[o].key].name, g->axes[o].text[0]);
        if (w > 0 && (size_t)w < sizeof others - used) used += (size_t)w;
    }
    snprintf(title, sizeof title, "%s on %s: %s%s", v->model, v->chip_name, energy ? v->elabel : v->ylabel, others);
    if (vals && tips) {
        int vi[EX_NKEYS] = {0};
        for (int r = 0; r < nr; r++) {
            rl[r] = ra->text[r];
            for (int c = 0; c < nc; c++) {
                cl[c] = cb->text[c];
                vi[a] = r;
                vi[b] = c;
                const ex_point *p = &v->pts[rotor_ex_grid_index(g, vi)];
                char name[512], tip[1100];
                rotor_ex_point_name(g, vi, name, sizeof name);
                if (p->st) {
                    vals[r * nc + c] = NAN;
                    snprintf(tip, sizeof tip, "%s: does not fit: %s", name, p->err.msg);
                } else {
                    int d = heat_design(v, p);
                    vals[r * nc + c] = energy ? p->rows[d].energy_j : p->rows[d].latency_us * 1e-3;
                    if (energy)
                        snprintf(tip, sizeof tip, "%s: %s %.4g J", name, rotor_preload_designs[d].name,
                                 p->rows[d].energy_j);
                    else
                        snprintf(tip, sizeof tip, "%s: %s %.4f ms", name, rotor_preload_designs[d].name,
                                 p->rows[d].latency_us * 1e-3);
                }
                tips[r * nc + c] = strdup(tip);
            }
        }
        char xl[128], yl[128];
        snprintf(xl, sizeof xl, "%s", rotor_ex_keys[cb->key].axis);
        snprintf(yl, sizeof yl, "%s", rotor_ex_keys[ra->key].axis);
        cli_grid_chart ch = {.title = title, .xlabel = xl, .ylabel = yl, .unit = energy ? "J" : "ms", .nrows = nr,
                             .ncols = nc,
                             .row_labels = rl, .col_labels = cl, .values = vals,
                             .tips = (const char *const *)tips, .inline_svg = inline_svg};
        cli_svg_grid(f, &ch);
    }
    int rc = vals && tips ? 0 : cli_nomem("explore");
    if (tips)
        for (int i = 0; i < nr * nc; i++) free(tips[i]);
    free(tips);
    free(vals);
    return rc;
}

/* ---- the table and the JSON ---------------------------------------------- */

void ex_print_table(const ex_view *v) {
    const ex_grid *g = v->g;
    for (int a = 0; a < g->naxes; a++) printf("%10s ", rotor_ex_keys[g->axes[a].key].name);
    printf("%-7s %11s %8s %10s %10s %10s %10s %6s %6s %8s\n", "design", "latency ms", "% ideal", "preload ms",
           "execute ms", "overlap ms", "stall ms", "HBM %", "link %", "TFLOPS");
    for (int i = 0; i < g->npts; i++) {
        const ex_point *p = &v->pts[i];
        if (p->st) {
            for (int a = 0; a < g->naxes; a++) printf("%10s ", g->axes[a].text[p->vi[a]]);
            printf("does not fit: %s\n", p->err.msg);
            continue;
        }
        for (int k = 0; k < v->nd; k++) {
            const ex_row *r = &p->rows[v->designs[k]];
            for (int a = 0; a < g->naxes; a++) printf("%10s ", g->axes[a].text[p->vi[a]]);
            printf("%-7s %11.4f %8.2f %10.4f %10.4f %10.4f %10.4f %6.1f %6.1f %8.2f\n",
                   rotor_preload_designs[v->designs[k]].name, r->latency_us * 1e-3, r->pct_ideal, r->preload_us * 1e-3,
                   r->execute_us * 1e-3, r->overlap_us * 1e-3, r->stall_us * 1e-3, 100.0 * r->hbm_util,
                   100.0 * r->link_util, r->tflops);
        }
    }
}

int ex_print_json(const ex_view *v, const rotor_chip *chip, const char *csv, const char *const *svgs, int nsvg) {
    char *text = NULL;
    rotor_error err = {{0}};
    rotor_status st = rotor_ex_doc(v->g, v->pts, v->designs, v->nd, v->model, chip, csv, svgs, nsvg, &text, &err);
    if (st) return cli_fail("explore", st, &err);
    cli_puts(text);
    free(text);
    return 0;
}
