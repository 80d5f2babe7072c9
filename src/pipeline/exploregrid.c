/* rotor explore's grid (docs/explore.md, "Keys", "Values", "Grids"): the
 * swept keys and their value lists, the points of a full product or of a
 * --zip, and the chip and model shape at each point.  Library code
 * (pipeline/explore.h): `rotor explore` and rotor_doc("explore") read the
 * same grid; errors are one line naming --sweep, which the CLI prints. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/pipeline/explore.h"
#include "rotor/base/suggest.h"

#define MESH_MAX_ASPECT 4 /* cores on a mesh: the longer side at most 4x the shorter */

const ex_key_info rotor_ex_keys[EX_NKEYS] = {
    {"hbm-bw", "TB/s", "total HBM bandwidth of all chips (TB/s)", "hbm_gbps", EX_NUMBER, false, 0},
    {"noc-bw", "GB/s", "per-core link bandwidth (GB/s)", "link_gbps", EX_NUMBER, false, 0},
    {"cores", "cores", "cores per chip", "cores_per_chip", EX_INTEGER, false, 0},
    {"flops", "TFLOP/s", "matrix TFLOP/s per chip", "matrix_tflops", EX_NUMBER, false, 0},
    {"sram", "bytes", "SRAM per core (bytes)", "sram_bytes", EX_INTEGER, false, 0},
    {"chips", "chips", "chips", "chips", EX_INTEGER, false, 0},
    {"topology", "", "on-chip network", "topology", EX_TOPOLOGY, false, 0},
    {"batch", "", "batch size", "--batch", EX_INTEGER, true, 1 << 20}, /* --batch's range, the CLI's CLI_MAX_BATCH */
    {"seq", "tokens", "sequence length (tokens)", "--seq", EX_INTEGER, true, 1 << 24},
};

static const char KEY_LIST[] = "hbm-bw, noc-bw, cores, flops, sram, chips, topology, batch, seq";

/* ---- value lists --------------------------------------------------------- */

/* A finite decimal number, the whole of s[0..len). */
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

static bool add_value(ex_axis *ax, double v, const char *text, size_t len, char *msg, size_t msize) {
    if (ax->n == EX_MAX_VALUES) {
        snprintf(msg, msize, "more than %d values", EX_MAX_VALUES);
        return false;
    }
    ax->num[ax->n] = v;
    if (text) snprintf(ax->text[ax->n], EX_VALUE_TEXT, "%.*s", (int)len, text);
    else snprintf(ax->text[ax->n], EX_VALUE_TEXT, "%.10g", v);
    ax->n++;
    return true;
}

/* One item of a topology list: all-to-all, mesh (the squarest mesh of the
 * point's cores) or mesh:WxH. */
static bool topology_item(const char *p, size_t len, int item, ex_axis *ax, char *msg, size_t msize) {
    char buf[EX_VALUE_TEXT];
    long long w, h;
    char tail;
    bool good = len < sizeof buf;
    if (good) {
        memcpy(buf, p, len);
        buf[len] = '\0';
        good = !strcmp(buf, "all-to-all") || !strcmp(buf, "mesh") ||
               (sscanf(buf, "mesh:%lldx%lld%c", &w, &h, &tail) == 2 && w > 0 && h > 0 && w <= 1 << 20 &&
                h <= 1 << 20);
    }
    if (!good) {
        snprintf(msg, msize, "value %d: expected all-to-all, mesh or mesh:WxH, got '%.*s'", item, (int)len, p);
        return false;
    }
    return add_value(ax, ax->n, p, len, msg, msize);
}

/* One item of a number list: a number, START:END:xF or START:END:+S. */
static bool number_item(const char *p, size_t len, int item, ex_axis *ax, char *msg, size_t msize) {
    const char *c1 = memchr(p, ':', len);
    if (!c1) {
        double v;
        if (!parse_number(p, len, &v)) {
            snprintf(msg, msize, "value %d: expected a number, got '%.*s'", item, (int)len, p);
            return false;
        }
        return add_value(ax, v, NULL, 0, msg, msize);
    }
    const char *c2 = memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - p));
    double a, b, step;
    char op = c2 && c2 + 1 < p + len ? c2[1] : 0;
    if (!c2 || (op != 'x' && op != '+') || !parse_number(p, (size_t)(c1 - p), &a) ||
        !parse_number(c1 + 1, (size_t)(c2 - c1 - 1), &b) || !parse_number(c2 + 2, len - (size_t)(c2 + 2 - p), &step)) {
        snprintf(msg, msize, "value %d: expected a range START:END:xFACTOR or START:END:+STEP, got '%.*s'", item,
                 (int)len, p);
        return false;
    }
    if (!(a > 0) || b < a || (op == 'x' ? !(step > 1) : !(step > 0))) {
        snprintf(msg, msize, "range '%.*s': expected 0 < START <= END and a %s", (int)len, p,
                 op == 'x' ? "factor above 1" : "positive step");
        return false;
    }
    /* a*F^k or a+k*S up to END (a relative 1e-9 of slack for decimal steps such as 0.1) */
    for (int k = 0;; k++) {
        double v = op == 'x' ? a * pow(step, k) : a + k * step;
        if (v > b * (1 + 1e-9)) break;
        if (!add_value(ax, v, NULL, 0, msg, msize)) return false;
    }
    return true;
}

/* Parses VALUES into ax, or writes why not into msg. */
static bool parse_values(const char *list, ex_axis *ax, char *msg, size_t msize) {
    const ex_key_info *k = &rotor_ex_keys[ax->key];
    ax->n = 0;
    if (!*list) {
        snprintf(msg, msize, k->kind == EX_TOPOLOGY ? "no values (expected all-to-all, mesh or mesh:WxH, comma "
                                                      "separated)"
                                                    : "no values (expected V1,V2,... or START:END:xF)");
        return false;
    }
    const char *p = list;
    for (int item = 1;; item++) {
        size_t len = strcspn(p, ",");
        if (len == 0) {
            snprintf(msg, msize, "value %d is empty", item);
            return false;
        }
        if (!(k->kind == EX_TOPOLOGY ? topology_item : number_item)(p, len, item, ax, msg, msize)) return false;
        p += len;
        if (!*p) break;
        p++; /* the comma */
        if (!*p) {
            snprintf(msg, msize, "value %d is empty", item + 1);
            return false;
        }
    }
    for (int i = 0; i < ax->n; i++) {
        double v = ax->num[i];
        if (k->kind != EX_TOPOLOGY && !(v > 0)) {
            snprintf(msg, msize, "%g: expected a positive value", v);
            return false;
        }
        if (k->kind == EX_INTEGER && v != floor(v)) {
            snprintf(msg, msize, "%g: expected a whole number", v);
            return false;
        }
        if (k->max > 0 && v > k->max) {
            snprintf(msg, msize, "%.10g: expected at most %.10g", v, k->max);
            return false;
        }
        for (int j = 0; j < i; j++)
            if (!strcmp(ax->text[j], ax->text[i])) {
                snprintf(msg, msize, "%s listed twice", ax->text[i]);
                return false;
            }
    }
    return true;
}

/* hbm-bw's values in the command line's one convention (issue 46; as
 * --hbm-bw): each number of the list or range may carry its unit, 8000GB/s
 * or 8TB/s, and is rewritten as the TB/s it is ("8"), what the key's column
 * and CSV show; a bare number is TB/s already. */
static bool hbm_values(const char *list, char *out, size_t size, char *msg, size_t msize) {
    size_t used = 0;
    for (const char *p = list;;) {
        size_t len = strcspn(p, ",:");
        char item[64];
        if (len >= sizeof item) { /* refused whole, never read cut short (found by a review helper) */
            snprintf(msg, msize, "'%.*s...': a value of more than %d characters", 20, p, (int)sizeof item - 1);
            return false;
        }
        snprintf(item, sizeof item, "%.*s", (int)len, p);
        double gbps;
        char text[64];
        /* a range's step ("x2", "+4") and anything not a bandwidth stay for parse_values to judge */
        if (strpbrk(item, "GgTt") && rotor_bandwidth_parse(item, &gbps)) snprintf(text, sizeof text, "%.10g", gbps / 1000.0);
        else snprintf(text, sizeof text, "%s", item);
        int n = snprintf(out + used, size - used, "%s%c", text, p[len] ? p[len] : '\0');
        if (n < 0 || (size_t)n >= size - used) {
            snprintf(msg, msize, "the list is too long");
            return false;
        }
        used += (size_t)n - (p[len] ? 0 : 1);
        if (!p[len]) return true;
        p += len + 1;
    }
}

rotor_status rotor_ex_parse_sweep(const char *spec, ex_axis *ax, rotor_error *err) {
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec)
        return rotor_fail(err, ROTOR_ERR_INPUT, "--sweep: expected KEY=V1,V2,... (keys: %s), got '%s'", KEY_LIST, spec);
    int k = 0;
    while (k < EX_NKEYS &&
           (strlen(rotor_ex_keys[k].name) != (size_t)(eq - spec) ||
            strncmp(rotor_ex_keys[k].name, spec, (size_t)(eq - spec))))
        k++;
    if (k == EX_NKEYS) {
        const char *names[EX_NKEYS];
        char word[64], hint[96];
        for (int i = 0; i < EX_NKEYS; i++) names[i] = rotor_ex_keys[i].name;
        snprintf(word, sizeof word, "%.*s", (int)(eq - spec), spec);
        return rotor_fail(err, ROTOR_ERR_INPUT, "--sweep: unknown key '%s'%s (keys: %s)", word,
                               rotor_suggest_phrase(word, names, EX_NKEYS, hint, sizeof hint), KEY_LIST);
    }
    ax->key = (ex_key)k;
    ax->spec = spec;
    char msg[256], values[512];
    const char *list = eq + 1;
    if (k == KEY_HBM_BW) {
        if (!hbm_values(list, values, sizeof values, msg, sizeof msg))
            return rotor_fail(err, ROTOR_ERR_INPUT, "--sweep %s: %s", spec, msg);
        list = values;
    }
    if (!parse_values(list, ax, msg, sizeof msg)) return rotor_fail(err, ROTOR_ERR_INPUT, "--sweep %s: %s", spec, msg);
    return ROTOR_OK;
}

rotor_status rotor_ex_grid_finish(ex_grid *g, rotor_error *err) {
    for (int k = 0; k < EX_NKEYS; k++) g->axis_of[k] = -1;
    int64_t n = 1;
    char sizes[256] = "";
    size_t used = 0;
    for (int a = 0; a < g->naxes; a++) {
        const ex_axis *ax = &g->axes[a];
        if (g->axis_of[ax->key] >= 0)
            return rotor_fail(err, ROTOR_ERR_INPUT, "--sweep %s given twice (one list per key)",
                              rotor_ex_keys[ax->key].name);
        g->axis_of[ax->key] = a;
        if (g->zip && ax->n != g->axes[0].n)
            return rotor_fail(err, ROTOR_ERR_INPUT, "--zip: --sweep %s has %d values and --sweep %s has %d; zipped lists "
                                   "pair their values, so their lengths must be equal",
                                   rotor_ex_keys[g->axes[0].key].name, g->axes[0].n, rotor_ex_keys[ax->key].name, ax->n);
        if (!g->zip) n *= ax->n; /* at most 64^9: no overflow */
        int w = snprintf(sizes + used, sizeof sizes - used, "%s%s %d", a ? " x " : "", rotor_ex_keys[ax->key].name,
                         ax->n);
        if (w > 0 && (size_t)w < sizeof sizes - used) used += (size_t)w;
    }
    if (g->zip) n = g->axes[0].n;
    if (n > EX_MAX_POINTS)
        return rotor_fail(err, ROTOR_ERR_INPUT, "--sweep: the grid has %lld points (%s), more than %d; sweep fewer values, or "
                               "split the grid into several runs",
                               (long long)n, sizes, EX_MAX_POINTS);
    g->npts = (int)n;
    return ROTOR_OK;
}

void rotor_ex_grid_point(const ex_grid *g, int i, int *vi) {
    for (int a = g->naxes - 1; a >= 0; a--) {
        if (g->zip) {
            vi[a] = i;
        } else {
            vi[a] = i % g->axes[a].n;
            i /= g->axes[a].n;
        }
    }
}

int rotor_ex_grid_index(const ex_grid *g, const int *vi) {
    if (g->zip) {
        for (int a = 1; a < g->naxes; a++)
            if (vi[a] != vi[0]) return -1;
        return vi[0];
    }
    int i = 0;
    for (int a = 0; a < g->naxes; a++) i = i * g->axes[a].n + vi[a];
    return i;
}

const char *rotor_ex_point_name(const ex_grid *g, const int *vi, char *buf, size_t size) {
    size_t used = 0;
    buf[0] = '\0';
    for (int a = 0; a < g->naxes; a++) {
        int w = snprintf(buf + used, size - used, "%s%s=%s", a ? ", " : "", rotor_ex_keys[g->axes[a].key].name,
                         g->axes[a].text[vi[a]]);
        if (w < 0 || (size_t)w >= size - used) break;
        used += (size_t)w;
    }
    return buf;
}

/* ---- the chip at a point --------------------------------------------------- */

/* One "field=value" through rotor_chip_set, its "--set: " prefix dropped. */
static rotor_status set_field(rotor_chip *c, const char *field, double v, rotor_error *err) {
    char a[96];
    snprintf(a, sizeof a, "%s=%.17g", field, v);
    rotor_status st = rotor_chip_set(c, a, err);
    if (st && !strncmp(err->msg, "--set: ", 7)) memmove(err->msg, err->msg + 7, strlen(err->msg + 7) + 1);
    return st;
}

/* c made a mesh of its cores_per_chip: the most nearly square W x H, the
 * longer side along wide's choice (refused beyond MESH_MAX_ASPECT:1). */
static rotor_status squarest_mesh(rotor_chip *c, bool wide, rotor_error *err) {
    int64_t n = c->cores_per_chip, small = 1;
    for (int64_t d = 1; d * d <= n; d++)
        if (n % d == 0) small = d;
    int64_t big = n / small;
    if (big > MESH_MAX_ASPECT * small)
        return rotor_fail(err, ROTOR_ERR_INPUT,
                          "the chip is a mesh and %lld cores make no mesh within %d:1 (the squarest is %lldx%lld)",
                          (long long)n, MESH_MAX_ASPECT, (long long)big, (long long)small);
    c->topology = ROTOR_TOPO_MESH;
    c->mesh_width = wide ? big : small;
    c->mesh_height = wide ? small : big;
    return ROTOR_OK;
}

/* Applies axis a's value v (its text t) to c; base is the chip before any key. */
static rotor_status apply_key(ex_key key, double v, const char *t, const rotor_chip *base, rotor_chip *c,
                              rotor_error *err) {
    bool wide = base->mesh_width >= base->mesh_height;
    rotor_status st = ROTOR_OK;
    switch (key) {
    case KEY_HBM_BW:
        if (c->hbm_controllers == 0)
            return rotor_fail(err, ROTOR_ERR_INPUT, "chip '%s' has no HBM (set hbm_bytes, hbm_gbps and "
                              "hbm_controllers, or use ipu-pod4)", c->name);
    {
        double per = 0;
        if (v > 0 && !rotor_hbm_bw_per_chip(v * 1000.0, c->chips, &per))
            return rotor_fail(err, ROTOR_ERR_INPUT, "hbm-bw: %s TB/s over %lld chips is %.3g GB/s a chip, below the "
                              "least (%g GB/s)", t, (long long)c->chips, per, ROTOR_RATE_MIN);
        return set_field(c, "hbm_gbps", per, err);
    }
    case KEY_NOC_BW: return set_field(c, "link_gbps", v, err);
    case KEY_FLOPS: {
        /* each field set by name, so that a value out of range is refused
         * naming it; the values are rotor_chip_with_matrix_tflops's */
        rotor_chip x = rotor_chip_with_matrix_tflops(base, v);
        st = set_field(c, "matrix_tflops", x.matrix_tflops, err);
        if (!st) st = set_field(c, "vector_tflops", x.vector_tflops, err);
        if (!st && x.int8_tops > 0) st = set_field(c, "int8_tops", x.int8_tops, err);
        return st;
    }
    case KEY_SRAM: return set_field(c, "sram_bytes", v, err);
    case KEY_CHIPS:
        /* the chip-to-chip bandwidth keeps its share per chip */
        st = set_field(c, "chips", v, err);
        if (!st && base->chips > 0)
            st = set_field(c, "interchip_gbps", base->interchip_gbps / (double)base->chips * v, err);
        return st;
    case KEY_CORES:
        st = set_field(c, "cores_per_chip", v, err);
        if (!st && c->topology == ROTOR_TOPO_MESH) st = squarest_mesh(c, wide, err);
        return st;
    case KEY_TOPOLOGY:
        if (!strcmp(t, "all-to-all")) {
            c->topology = ROTOR_TOPO_ALL_TO_ALL;
            c->mesh_width = c->mesh_height = 0;
        } else if (!strcmp(t, "mesh")) {
            st = squarest_mesh(c, wide, err);
        } else {
            long long w = 0, h = 0;
            sscanf(t, "mesh:%lldx%lld", &w, &h); /* checked when parsed */
            if (w * h != c->cores_per_chip)
                return rotor_fail(err, ROTOR_ERR_INPUT, "a %lldx%lld mesh has %lld cores, the chip %lld", w, h,
                                  w * h, (long long)c->cores_per_chip);
            c->topology = ROTOR_TOPO_MESH;
            c->mesh_width = w;
            c->mesh_height = h;
        }
        return st;
    case KEY_BATCH: case KEY_SEQ: case EX_NKEYS: break;
    }
    return st;
}

rotor_status rotor_ex_point_chip(const ex_grid *g, const int *vi, const rotor_chip *base, int64_t tp, rotor_chip *out,
                           rotor_error *err) {
    static const ex_key order[] = {KEY_CHIPS, KEY_CORES, KEY_TOPOLOGY, KEY_SRAM, KEY_NOC_BW, KEY_FLOPS, KEY_HBM_BW};
    rotor_chip c = *base;
    for (size_t o = 0; o < sizeof order / sizeof order[0]; o++) {
        int a = g->axis_of[order[o]];
        if (a < 0) continue;
        const ex_axis *ax = &g->axes[a];
        rotor_status st = apply_key(ax->key, ax->num[vi[a]], ax->text[vi[a]], base, &c, err);
        if (st) {
            char pre[96];
            snprintf(pre, sizeof pre, "--sweep %s=%s", rotor_ex_keys[ax->key].name, ax->text[vi[a]]);
            rotor_error_prefix(err, pre);
            return st;
        }
    }
    char name[512], pre[540];
    snprintf(pre, sizeof pre, "--sweep %s", rotor_ex_point_name(g, vi, name, sizeof name));
    rotor_status st = rotor_chip_validate(&c, err);
    if (!st && tp > c.chips)
        st = rotor_fail(err, ROTOR_ERR_INPUT, "--tp %lld is more than the %lld chips", (long long)tp,
                        (long long)c.chips);
    if (st) {
        rotor_error_prefix(err, pre);
        return st;
    }
    *out = c;
    return ROTOR_OK;
}

void rotor_ex_point_shape(const ex_grid *g, const int *vi, const rotor_zoo_options *base, rotor_zoo_options *out) {
    *out = *base;
    int a = g->axis_of[KEY_BATCH], s = g->axis_of[KEY_SEQ];
    if (a >= 0) out->batch = (int64_t)g->axes[a].num[vi[a]];
    if (s >= 0) out->seq = (int64_t)g->axes[s].num[vi[s]];
}

int rotor_ex_shape_count(const ex_grid *g) {
    int a = g->axis_of[KEY_BATCH], s = g->axis_of[KEY_SEQ];
    return (a >= 0 ? g->axes[a].n : 1) * (s >= 0 ? g->axes[s].n : 1);
}

int rotor_ex_shape_index(const ex_grid *g, const int *vi) {
    int a = g->axis_of[KEY_BATCH], s = g->axis_of[KEY_SEQ];
    return (a >= 0 ? vi[a] : 0) * (s >= 0 ? g->axes[s].n : 1) + (s >= 0 ? vi[s] : 0);
}
