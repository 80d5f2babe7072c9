/* rotor CLI — the charts of the HTML report (docs/report.md), as inline SVG:
 * a plan frontier with its chosen plan, stacked horizontal bars, a heat map
 * of the chip's cores and a schedule timeline.  Every chart has width,
 * height and viewBox, axes with their units and a legend; the same input
 * gives the same bytes.  No XML prolog: they are written into an HTML page
 * (svgplot.c draws the line plots, standalone or inline). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "rotor/pipeline/report.h"

#define FONT "font-family=\"sans-serif\" font-size=\"11\""

/* The axis from 0 holding vmax, at round numbers (1-2-5 steps,
 * rotor_report_axis_fit). */
static rotor_report_axis axis_from_0(double vmax) {
    rotor_report_axis a;
    rotor_report_axis_fit(0, vmax > 0 ? vmax : 1, 5, &a);
    return a;
}

static void svg_open(FILE *f, const char *cls, double w, double h) {
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"%s\" width=\"%.0f\" height=\"%.0f\" "
               "viewBox=\"0 0 %.0f %.0f\" " FONT ">\n<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" "
               "fill=\"white\"/>\n",
            cls, w, h, w, h, w, h);
}

static void title(FILE *f, double x, double y, const char *s) {
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"13\">", x, y);
    cli_xml_text(f, s);
    fputs("</text>\n", f);
}

/* Vertical grid lines from T to B and the labels of a linear x axis a from
 * L to R, below B (and, on a tall chart, above T too, so that a reader far
 * down or up has the scale in view), its label below. */
static void x_axis(FILE *f, double L, double R, double T, double B, const rotor_report_axis *a, const char *label,
                   bool top) {
    double span = a->hi - a->lo;
    fputs("<g class=\"axis\">\n", f);
    for (int i = 0; i < a->n; i++) {
        double v = rotor_report_tick(a, i), x = L + (v - a->lo) / span * (R - L);
        fprintf(f, "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"#e0e0e0\"/>\n", x, T, x, B);
        fprintf(f, "<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\">%.4g</text>\n", x, B + 14, v);
    }
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", L, B, R, B);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", (L + R) / 2, B + 30);
    cli_xml_text(f, label);
    fputs("</text>\n</g>\n", f);
    if (!top) return;
    fputs("<g class=\"axis\">\n", f);
    for (int i = 0; i < a->n; i++) {
        double v = rotor_report_tick(a, i), x = L + (v - a->lo) / span * (R - L);
        fprintf(f, "<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\">%.4g</text>\n", x, T - 4, v);
    }
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n</g>\n", L, T, R, T);
}

void cli_svg_colour_scale(FILE *f, double x, double y, double lo, double hi, const char *unit) {
    const double sw = 24; /* a step's width */
    char col[16];
    for (int k = 0; k < 10; k++) {
        cli_heat_colour((k + 0.5) / 10, col, sizeof col);
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"10\" fill=\"%s\" stroke=\"#999999\" "
                   "stroke-width=\"0.3\"/>\n",
                x + k * sw, y, sw, col);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.4g</text>\n", x, y + 24, lo);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.4g</text>\n", x + 10 * sw, y + 24, hi);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", x + 10 * sw + 16, y + 9);
    cli_xml_text(f, unit);
}

/* A legend entry: a swatch (a filled square, or a marker) and its name. */
static void legend_box(FILE *f, double x, double y, const char *colour, const char *name) {
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>", x, y - 9, colour);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", x + 14, y);
    cli_xml_text(f, name);
    fputs("</text>\n", f);
}

void cli_svg_frontier(FILE *f, const cli_frontier_chart *c) {
    const double W = 330, H = 240, L = 58, R = 318, T = 30, B = 180;
    double xmax = 0, ymax = 0;
    for (int i = 0; i < c->n; i++) {
        xmax = fmax(xmax, c->mem_kib[i]);
        ymax = fmax(ymax, c->time_us[i]);
    }
    rotor_report_axis xa = axis_from_0(xmax), ya = axis_from_0(ymax);
    double xt = xa.hi, yt = ya.hi;
    svg_open(f, "frontier", W, H);
    title(f, (L + R) / 2, 16, c->title);
    for (int i = 0; i < ya.n; i++) {
        double v = rotor_report_tick(&ya, i), y = B - v / yt * (B - T);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.2f\" x2=\"%.1f\" y2=\"%.2f\" stroke=\"#e0e0e0\"/>\n", L, y, R, y);
        fprintf(f, "<text x=\"%.1f\" y=\"%.2f\" text-anchor=\"end\">%.4g</text>\n", L - 4, y + 4, v);
    }
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", L, T, L, B);
    x_axis(f, L, R, T, B, &xa, "memory per core (KiB)", false);
    fprintf(f, "<text transform=\"translate(14 %.1f) rotate(-90)\" text-anchor=\"middle\">time (us)</text>\n",
            (T + B) / 2);
#define FX(v) (L + (v) / xt * (R - L))
#define FY(v) (B - (v) / yt * (B - T))
    /* the staircase: each plan is the fastest down to the next one's memory */
    fputs("<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.2\" points=\"", f);
    for (int i = 0; i < c->n; i++) {
        if (i) fprintf(f, " %.2f,%.2f", FX(c->mem_kib[i - 1]), FY(c->time_us[i]));
        fprintf(f, "%s%.2f,%.2f", i ? " " : "", FX(c->mem_kib[i]), FY(c->time_us[i]));
    }
    fputs("\"/>\n", f);
    for (int i = 0; i < c->n; i++) {
        fprintf(f, "<circle class=\"plan\" cx=\"%.2f\" cy=\"%.2f\" r=\"2.5\" fill=\"#1f77b4\"><title>plan %d: %.4g us, "
                   "%.4g KiB per core</title></circle>\n",
                FX(c->mem_kib[i]), FY(c->time_us[i]), i, c->time_us[i], c->mem_kib[i]);
    }
    for (int i = 0; c->chosen && i < c->n; i++)
        if (c->chosen[i] > 0)
            fprintf(f, "<circle class=\"chosen\" cx=\"%.2f\" cy=\"%.2f\" r=\"6\" fill=\"none\" stroke=\"#d62728\" "
                       "stroke-width=\"2.5\"><title>chosen (active) plan %d of %d operator%s: %.4g us, %.4g KiB per "
                       "core</title></circle>\n",
                    FX(c->mem_kib[i]), FY(c->time_us[i]), i, c->chosen[i], c->chosen[i] > 1 ? "s" : "", c->time_us[i],
                    c->mem_kib[i]);
#undef FX
#undef FY
    double ly = H - 12;
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"#1f77b4\"/><text x=\"%.1f\" y=\"%.1f\">Pareto plan (%d%s)</text>\n",
            L, ly - 4, L + 8, ly, c->n, c->truncated ? ", cut" : "");
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\"/>"
               "<text x=\"%.1f\" y=\"%.1f\">chosen</text>\n",
            R - 60, ly - 4, R - 52, ly);
    fputs("</svg>\n", f);
}

/* A chart taller than this has its axis at the top as well as the bottom,
 * and its legend above the bars (issue 46: a 9,316 px chart had its axis
 * only at the bottom). */
#define TALL_PX 600

bool cli_bar_rows_new(cli_bar_rows *r, int nrows, int ncats) {
    size_t n = (size_t)(nrows > 0 ? nrows : 1);
    *r = (cli_bar_rows){calloc(n * (size_t)(ncats > 0 ? ncats : 1), sizeof *r->values), calloc(n, sizeof *r->labels),
                        calloc(n, sizeof *r->group), calloc(n, sizeof *r->names)};
    return r->values && r->labels && r->group && r->names;
}

void cli_bar_rows_free(cli_bar_rows *r) {
    free(r->values), free(r->labels), free(r->group), free(r->names);
    *r = (cli_bar_rows){0};
}

void cli_svg_bars(FILE *f, const cli_bars *b) {
    const double rowh = 14, gap = 4, L = 190, R = 700, W = 900;
    double body = b->nrows * (rowh + gap) + (b->ngroups > 1 ? (b->ngroups - 1) * 6 : 0);
    bool tall = body + 82 > TALL_PX;
    double T = tall ? 56 : 36, B = T + body, H = B + 46;
    double vmax = 0;
    for (int r = 0; r < b->nrows; r++) {
        double s = 0;
        for (int k = 0; k < b->ncats; k++) s += b->values[r * b->ncats + k];
        vmax = fmax(vmax, s);
    }
    rotor_report_axis xa = axis_from_0(vmax);
    double top = xa.hi;
    svg_open(f, "bars", W, H);
    title(f, (L + R) / 2, 18, b->title);
    x_axis(f, L, R, T - 4, B, &xa, b->unit, tall);
    double y = T;
    for (int r = 0; r < b->nrows; r++) {
        if (r > 0 && b->group && b->group[r] != b->group[r - 1]) y += 6;
        fprintf(f, "<g class=\"bar\"><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", L - 6, y + rowh - 3);
        cli_xml_text(f, b->labels[r]);
        fputs("</text>\n", f);
        double x = L, total = 0;
        for (int k = 0; k < b->ncats; k++) total += b->values[r * b->ncats + k];
        for (int k = 0; k < b->ncats; k++) {
            double v = b->values[r * b->ncats + k];
            if (!(v > 0)) continue;
            double w = v / top * (R - L);
            fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.0f\" fill=\"%s\"><title>", x, y, w,
                    rowh, b->cats[k].colour);
            cli_xml_text(f, b->labels[r]);
            fputs(": ", f);
            cli_xml_text(f, b->cats[k].name);
            fprintf(f, " %.6g of %.6g</title></rect>\n", v, total);
            x += w;
        }
        fputs("</g>\n", f);
        y += rowh + gap;
    }
    fputs("<g class=\"legend\">\n", f);
    for (int k = 0; k < b->ncats; k++) legend_box(f, R + 16, T + 10 + 18 * k, b->cats[k].colour, b->cats[k].name);
    fputs("</g>\n", f);
    if (tall) { /* the legend again at the bottom, beside the lower axis */
        fputs("<g class=\"legend\">\n", f);
        for (int k = 0; k < b->ncats; k++)
            legend_box(f, R + 16, B - 18 * (b->ncats - 1 - k) - 4, b->cats[k].colour, b->cats[k].name);
        fputs("</g>\n", f);
    }
    fputs("</svg>\n", f);
}

void cli_heat_colour(double u, char *buf, size_t size) {
    u = fmin(1, fmax(0, isfinite(u) ? u : 0));
    int r = (int)lround(247 - u * (247 - 8)), g = (int)lround(251 - u * (251 - 48)), b = (int)lround(255 - u * (255 - 107));
    snprintf(buf, size, "#%02x%02x%02x", r, g, b);
}

void cli_svg_heatmap(FILE *f, const cli_heatmap *h) {
    int64_t w = h->width, rows = h->height, chips = h->chips;
    double cell = fmax(3, fmin(14, floor(880.0 / (double)(chips * w + (chips - 1) * 2))));
    double L = 20, T = 40, chipw = (double)w * cell, chipgap = 2 * cell;
    double W = fmax(L + chips * chipw + (chips - 1) * chipgap + 20, 560), B = T + (double)rows * cell;
    double H = B + 70;
    /* shaded from the smallest value to the largest (issue 46: on 0..100%
     * cores 55-61% busy were one colour) */
    rotor_report_scale sc;
    rotor_report_scale_fit(h->value, chips * h->cores_per_chip, &sc);
    svg_open(f, "heatmap", W, H);
    title(f, W / 2, 18, h->title);
    char col[16];
    for (int64_t c = 0; c < chips; c++) {
        double x0 = L + (double)c * (chipw + chipgap);
        if (chips > 1) fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">chip %lld</text>\n", x0, T - 4, (long long)c);
        for (int64_t i = 0; i < h->cores_per_chip; i++) {
            int64_t core = c * h->cores_per_chip + i;
            double v = h->value[core];
            cli_heat_colour(rotor_report_scale_at(&sc, v), col, sizeof col);
            fprintf(f, "<rect class=\"core\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
                       "<title>core %lld: %.4g %s</title></rect>\n",
                    x0 + (double)(i % w) * cell, T + (double)(i / w) * cell, cell, cell, col, (long long)core, v,
                    h->unit);
        }
    }
    /* the colour scale: ten steps from the smallest value to the largest */
    cli_svg_colour_scale(f, L, B + 16, sc.lo, sc.hi, h->unit);
    fprintf(f, " per core, %s from the smallest to the largest (%lld x %lld cores per chip%s)</text>\n",
            sc.log ? "log scale" : "linear", (long long)w, (long long)rows,
            h->mesh ? ", the mesh" : ", laid out row by row");
    fputs("</svg>\n", f);
}

/* One bar of a timeline lane: class cls from t0 to t1 (us) at y, at least
 * half a pixel wide so that a short one still shows. */
static void span(FILE *f, const char *cls, const char *colour, double x0, double x1, double y, const char *name,
                 const char *what, double t0, double t1) {
    fprintf(f, "<rect class=\"%s\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"6\" fill=\"%s\"><title>", cls, x0, y,
            fmax(0.5, x1 - x0), colour);
    cli_xml_text(f, name);
    fprintf(f, ": %s %.4f to %.4f us</title></rect>\n", what, t0, t1);
}

void cli_svg_timeline(FILE *f, const cli_timeline *t) {
    const double rowh = 16, L = 190, R = 760, T = 50, W = 900;
    bool tall = t->nlanes * rowh + 98 > TALL_PX;
    double B = T + t->nlanes * rowh, H = B + 48, tmax = 0;
    for (int i = 0; i < t->n; i++) tmax = fmax(tmax, fmax(t->rows[i].pre_end, t->rows[i].exe_end));
    rotor_report_axis xa = axis_from_0(tmax);
    double top = xa.hi;
    static const char *const PRE = "#ff7f0e", *const EXE = "#1f77b4", *const STALL = "#d62728";
    svg_open(f, "timeline", W, H + (tall ? 20 : 0));
    title(f, (L + R) / 2, 18, t->title);
    x_axis(f, L, R, T - 4, B, &xa, "time from the start of the step (us)", tall);
    double ly = tall ? H + 8 : 38; /* a tall one's legend below, clear of its top axis */
    fputs("<g class=\"legend\">\n", f);
    legend_box(f, L, ly, PRE, "preload from HBM");
    legend_box(f, L + 140, ly, EXE, "execution");
    legend_box(f, L + 250, ly, STALL, "stall (contention inside the execution)");
    fputs("</g>\n", f);
#define TX(v) (L + (v) / top * (R - L))
    for (int k = 0; k < t->nlanes; k++) {
        double y = T + k * rowh;
        fprintf(f, "<g class=\"op\"><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", L - 6, y + rowh - 4);
        cli_xml_text(f, t->lane_labels[k]);
        fputs("</text>\n", f);
        for (int i = 0; i < t->n; i++) {
            const cli_timeline_row *r = &t->rows[i];
            if (t->lane_of[i] != k) continue;
            if (r->pre_end > r->pre_start)
                span(f, "preload", PRE, TX(r->pre_start), TX(r->pre_end), y + 2, r->name, "preload", r->pre_start,
                     r->pre_end);
            span(f, "exec", EXE, TX(r->exe_start), TX(r->exe_end), y + 8, r->name, "execution", r->exe_start,
                 r->exe_end);
            if (r->stall > 0) {
                double s0 = fmax(r->exe_start, r->exe_end - r->stall);
                span(f, "stall", STALL, TX(s0), TX(r->exe_end), y + 8, r->name, "stall", s0, r->exe_end);
            }
        }
        fputs("</g>\n", f);
    }
#undef TX
    fputs("</svg>\n", f);
}
