/* rotor CLI — a heat map of one value over two swept parameters (rotor
 * explore's grids, docs/explore.md "Heat maps"): one cell per pair of
 * values, shaded as the report's core heat map (cli_heat_colour) from the
 * smallest value to the largest (on a log scale when they span over 4x), the value written in cells wide enough to
 * hold it, a tooltip per cell and a colour scale.  Self-contained SVG 1.1,
 * the same bytes for the same input. */
#include <math.h>
#include <stdio.h>

#include "cli.h"
#include "rotor/pipeline/report.h"

void cli_svg_grid(FILE *f, const cli_grid_chart *c) {
    /* from the smallest value to the largest, a log shading when they span
     * more than 4x, so that the small ones do not all look alike */
    rotor_report_scale sc;
    rotor_report_scale_fit(c->values, (int64_t)c->nrows * c->ncols, &sc);
    double cw = fmin(110, fmax(28, floor(640.0 / c->ncols))), ch = fmin(50, fmax(16, floor(420.0 / c->nrows)));
    double L = 130, T = 64, R = L + cw * c->ncols, B = T + ch * c->nrows;
    double W = fmax(R + 30, 600), H = B + 110;
    if (!c->inline_svg) fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" %swidth=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
               "font-family=\"sans-serif\" font-size=\"11\">\n",
            c->inline_svg ? "class=\"grid\" " : "", W, H, W, H);
    fprintf(f, "<defs><pattern id=\"nofit\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\">"
               "<path d=\"M0,6 L6,0\" stroke=\"#999999\"/></pattern></defs>\n");
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", W, H);
    fprintf(f, "<text x=\"%.1f\" y=\"24\" text-anchor=\"middle\" font-size=\"14\">", W / 2);
    cli_xml_text(f, c->title);
    fputs("</text>\n", f);
    char col[16];
    for (int r = 0; r < c->nrows; r++) {
        double y = T + r * ch;
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", L - 6, y + ch / 2 + 4);
        cli_xml_text(f, c->row_labels[r]);
        fputs("</text>\n", f);
        for (int k = 0; k < c->ncols; k++) {
            double v = c->values[r * c->ncols + k], x = L + k * cw;
            double u = rotor_report_scale_at(&sc, v);
            if (isfinite(v)) cli_heat_colour(u, col, sizeof col);
            fprintf(f, "<rect class=\"cell\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                       "stroke=\"white\"><title>",
                    x, y, cw, ch, isfinite(v) ? col : "url(#nofit)");
            if (c->tips && c->tips[r * c->ncols + k]) cli_xml_text(f, c->tips[r * c->ncols + k]);
            else fprintf(f, "%.6g %s", v, c->unit);
            fputs("</title></rect>\n", f);
            if (isfinite(v) && cw >= 40 && ch >= 14)
                fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"%s\">%.4g</text>\n", x + cw / 2,
                        y + ch / 2 + 4, u > 0.55 ? "white" : "black", v);
        }
    }
    for (int k = 0; k < c->ncols; k++) {
        double x = L + k * cw + cw / 2;
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x, B + 14);
        cli_xml_text(f, c->col_labels[k]);
        fputs("</text>\n", f);
    }
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"black\"/>\n", L, T,
            R - L, B - T);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", (L + R) / 2, B + 32);
    cli_xml_text(f, c->xlabel);
    fputs("</text>\n", f);
    /* the rows' label above their values: a long one would not fit beside a short grid */
    fprintf(f, "<text x=\"8\" y=\"%.1f\">", T - 10);
    cli_xml_text(f, c->ylabel);
    fputs(" \xe2\x86\x93", f); /* a downwards arrow: the rows' values below it */
    fputs("</text>\n", f);
    /* the colour scale: ten steps from the smallest value to the largest */
    cli_svg_colour_scale(f, L, B + 52, sc.lo, sc.hi, c->unit);
    fprintf(f, "%s; hatched: does not fit</text>\n</svg>\n", sc.log ? ", log scale" : "");
}
