/* rotor CLI — the HTML page of a report (docs/report.md): one
 * self-contained file, CSS and SVG inline, that opens from disk.  Its
 * Content-Security-Policy forbids every fetch and every script, so that a
 * reference to anything outside the file would be a visible violation in a
 * browser (tests/cli_report.sh checks for none).  The same input gives the
 * same bytes: no dates, no paths, no host names. */
#include <stdarg.h>
#include <stdio.h>

#include "cli.h"

static const char *const CSS =
    "body{font-family:sans-serif;margin:1.5em auto;max-width:1100px;padding:0 1em;color:#222}"
    "h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:2em}"
    "p.sub{color:#555;margin-top:0}p.na{background:#fff6e0;border-left:4px solid #e0a000;padding:.5em .8em}"
    "figure.chart{margin:.6em 0}figure.chart svg{display:block;max-width:100%;height:auto}"
    "figure.chart figcaption{color:#555;font-size:.85em;margin-top:.2em}"
    "div.grid{display:flex;flex-wrap:wrap;gap:.3em}div.grid figure.chart{margin:0}"
    "table{border-collapse:collapse;font-size:.9em}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}"
    "th{background:#f0f0f0}td:first-child,th:first-child{text-align:left}"
    "nav{margin-top:.8em}nav a{margin-right:1em}table.run td{text-align:left}";

void cli_html_begin(FILE *f, const char *title, const char *subtitle) {
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
          f);
    cli_xml_text(f, title);
    fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", CSS);
    cli_xml_text(f, title);
    fputs("</h1>\n<p class=\"sub\">", f);
    cli_xml_text(f, subtitle);
    fputs("</p>\n", f);
}

void cli_html_end(FILE *f) { fputs("</body>\n</html>\n", f); }

void cli_html_section(FILE *f, const char *id, const char *heading) {
    fprintf(f, "<section id=\"%s\">\n<h2>", id);
    cli_xml_text(f, heading);
    fputs("</h2>\n", f);
}

void cli_html_section_end(FILE *f) { fputs("</section>\n", f); }

static void para(FILE *f, const char *cls, const char *fmt, va_list ap) {
    char buf[2048];
    vsnprintf(buf, sizeof buf, fmt, ap);
    fprintf(f, "<p%s>", cls);
    cli_xml_text(f, buf);
    fputs("</p>\n", f);
}

void cli_html_p(FILE *f, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    para(f, "", fmt, ap);
    va_end(ap);
}

void cli_html_na(FILE *f, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    para(f, " class=\"na\"", fmt, ap);
    va_end(ap);
}

void cli_html_section_na(FILE *f, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    para(f, " class=\"na\"", fmt, ap);
    va_end(ap);
    cli_html_section_end(f);
}

void cli_html_figure_begin(FILE *f, const char *kind) {
    fprintf(f, "<figure class=\"chart\" data-kind=\"%s\">\n", kind);
}

void cli_html_figure_end(FILE *f, const char *caption) {
    if (caption && *caption) {
        fputs("<figcaption>", f);
        cli_xml_text(f, caption);
        fputs("</figcaption>\n", f);
    }
    fputs("</figure>\n", f);
}
