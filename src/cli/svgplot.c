/* rotor CLI — SVG line plots for reports (rotor reproduce, rotor report): series of
 * (x, y) points on linear or log axes, with a legend and a tooltip per
 * point.  Self-contained SVG 1.1, the same for the same input. */
#include <math.h>
#include <stdio.h>

#include "cli.h"
#include "rotor/pipeline/report.h"

static const char *const PALETTE[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                      "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};
#define NPALETTE ((int)(sizeof PALETTE / sizeof PALETTE[0]))

void cli_xml_text(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else if (*s == '"') fputs("&quot;", f);
        else fputc(*s, f);
    }
}

/* The range [*lo, *hi] of the series' values along x (or y). */
static void range(const cli_series *s, int ns, bool y, bool logscale, double *lo, double *hi) {
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int k = 0; k < ns; k++)
        for (int i = 0; i < s[k].n; i++) {
            double v = y ? s[k].y[i] : s[k].x[i];
            if (!isfinite(v) || (logscale && !(v > 0))) continue;
            *lo = fmin(*lo, v);
            *hi = fmax(*hi, v);
        }
    if (!isfinite(*lo)) *lo = *hi = 1;
    if (!logscale && *lo > 0 && y) *lo = 0;
    if (*hi <= *lo) *hi = *lo + (logscale ? *lo : 1);
}

typedef struct frame {
    double L, R, T, B, x0, x1, y0, y1;
    bool logx, logy;
    bool round; /* linear axes widened to round numbers, ticks at 1-2-5 steps (the report's plots) */
} frame;

static double px(const frame *fr, double v) {
    double u = fr->logx ? log10(v) : v, a = fr->logx ? log10(fr->x0) : fr->x0, b = fr->logx ? log10(fr->x1) : fr->x1;
    return b > a ? fr->L + 20 + (u - a) / (b - a) * (fr->R - fr->L - 40) : (fr->L + fr->R) / 2;
}

static double py(const frame *fr, double v) {
    double u = fr->logy ? log10(v) : v, a = fr->logy ? log10(fr->y0) : fr->y0, b = fr->logy ? log10(fr->y1) : fr->y1;
    return fr->B - (u - a) / (b - a) * (fr->B - fr->T);
}

/* Ticks along an axis from lo to hi: on a log axis the powers of ten
 * between, or of two when fewer than two powers of ten fall there; else
 * at round numbers (fr->round; lo and hi are then whole steps) or five
 * evenly spaced (rotor reproduce's figures, as they were). */
static void axis_ticks(FILE *f, const frame *fr, bool y, double lo, double hi, bool logscale) {
    double t[16];
    int n = 0;
    for (int base = 10; logscale && n < 2 && base >= 2; base -= 8) {
        n = 0;
        for (double p = pow(base, floor(log(lo) / log(base))); p <= hi * 1.0001 && n < 16; p *= base)
            if (p >= lo * 0.9999) t[n++] = p;
    }
    if (n < 2 && fr->round && !logscale) {
        rotor_report_axis a;
        rotor_report_axis_fit(lo, hi, 5, &a);
        for (n = 0; n < a.n && n < 16; n++) t[n] = rotor_report_tick(&a, n);
    } else if (n < 2) {
        n = 0;
        for (int i = 0; i <= 4; i++) t[n++] = lo + (hi - lo) * i / 4;
    }
    for (int i = 0; i < n; i++) {
        if (y) {
            double v = py(fr, t[i]);
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.2f\" x2=\"%.1f\" y2=\"%.2f\" stroke=\"#dddddd\"/>\n", fr->L, v, fr->R, v);
            fprintf(f, "<text x=\"%.1f\" y=\"%.2f\" text-anchor=\"end\">%.4g</text>\n", fr->L - 6, v + 4, t[i]);
        } else {
            double v = px(fr, t[i]);
            fprintf(f, "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"black\"/>\n", v, fr->B, v,
                    fr->B + 5);
            fprintf(f, "<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\">%.4g</text>\n", v, fr->B + 19, t[i]);
        }
    }
}

static void lines(FILE *f, const cli_plot *p, const cli_series *s, int ns, bool inline_svg) {
    frame fr = {.L = 80, .R = 570, .T = 50, .B = 370, .logx = p->logx, .logy = p->logy, .round = inline_svg};
    range(s, ns, false, p->logx, &fr.x0, &fr.x1);
    range(s, ns, true, p->logy, &fr.y0, &fr.y1);
    rotor_report_axis a;
    if (fr.round && !fr.logx) {
        rotor_report_axis_fit(fr.x0, fr.x1, 5, &a);
        fr.x0 = a.lo;
        fr.x1 = a.hi;
    }
    if (fr.round && !fr.logy) {
        rotor_report_axis_fit(fr.y0, fr.y1, 5, &a);
        fr.y0 = a.lo;
        fr.y1 = a.hi;
    }
    if (!inline_svg) fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" %swidth=\"760\" height=\"440\" viewBox=\"0 0 760 440\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n", inline_svg ? "class=\"lines\" " : "");
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"760\" height=\"440\" fill=\"white\"/>\n");
    fprintf(f, "<text x=\"%.1f\" y=\"28\" text-anchor=\"middle\" font-size=\"15\">", (fr.L + fr.R) / 2);
    cli_xml_text(f, p->title);
    fputs("</text>\n", f);
    axis_ticks(f, &fr, true, fr.y0, fr.y1, p->logy);
    axis_ticks(f, &fr, false, fr.x0, fr.x1, p->logx);
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"black\"/>\n", fr.L,
            fr.T, fr.R - fr.L, fr.B - fr.T);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", (fr.L + fr.R) / 2, fr.B + 42);
    cli_xml_text(f, p->xlabel);
    fprintf(f, "%s</text>\n<text transform=\"translate(22 %.1f) rotate(-90)\" text-anchor=\"middle\">",
            p->logx ? ", log scale" : "", (fr.T + fr.B) / 2);
    cli_xml_text(f, p->ylabel);
    fprintf(f, "%s</text>\n", p->logy ? ", log scale" : "");
    for (int k = 0; k < ns; k++) {
        const char *col = PALETTE[k % NPALETTE];
        fprintf(f, "<g class=\"series\">\n<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"", col,
                s[k].dashed ? " stroke-dasharray=\"5 3\"" : "");
        int drawn = 0;
        for (int i = 0; i < s[k].n; i++)
            if (isfinite(s[k].y[i]) && (!p->logy || s[k].y[i] > 0))
                fprintf(f, "%s%.2f,%.2f", drawn++ ? " " : "", px(&fr, s[k].x[i]), py(&fr, s[k].y[i]));
        fprintf(f, "\"/>\n");
        for (int i = 0; i < s[k].n; i++) {
            if (!isfinite(s[k].y[i]) || (p->logy && !(s[k].y[i] > 0))) continue;
            fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3\" fill=\"%s\"><title>", px(&fr, s[k].x[i]),
                    py(&fr, s[k].y[i]), col);
            cli_xml_text(f, s[k].name);
            fprintf(f, ": %.6g, %.6g</title></circle>\n", s[k].x[i], s[k].y[i]);
        }
        double ly = fr.T + 10 + 18 * k;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s/>\n",
                fr.R + 20, ly, fr.R + 45, ly, col, s[k].dashed ? " stroke-dasharray=\"5 3\"" : "");
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", fr.R + 52, ly + 4);
        cli_xml_text(f, s[k].name);
        fputs("</text>\n</g>\n", f);
    }
    fputs("</svg>\n", f);
}

void cli_svg_lines(FILE *f, const cli_plot *p, const cli_series *s, int ns) { lines(f, p, s, ns, false); }

void cli_svg_lines_inline(FILE *f, const cli_plot *p, const cli_series *s, int ns) { lines(f, p, s, ns, true); }
