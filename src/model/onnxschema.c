/* onnxschema.c — every default-domain node checked against its operator's
 * ONNX schema at the model's opset, once, before its shape rule runs
 * (onnxshape.c; docs/onnx.md, "Validation").  The schemas are ONNX's own,
 * read from its operator changelog by scripts/onnxschema.py into
 * onnxschema_tab.h: per version of each operator, the opset it starts at,
 * its attributes (name, type, required), how many inputs and outputs it
 * takes, and the element types of each.  One check covers every operator:
 *  - an attribute the version does not have: one ONNX removed ("TopK has no
 *    attribute 'k' from opset 10"), one it adds later, or one no version has;
 *  - an attribute of the wrong type (ints where an int is due), a required
 *    one missing, one given twice;
 *  - too few or too many inputs or outputs, an empty name for an input that
 *    is not optional;
 *  - inputs and outputs of element types no version of the operator takes
 *    together (a type outside a formal's list, two values that share a type
 *    parameter T and differ);
 *  - a string attribute outside the values ONNX defines (CHOICES below).
 * The error names the attribute, input or output, the operator and the
 * opset, and what ONNX allows there.
 *
 * Decisions where ONNX leaves room:
 *  - A node whose operator the model's opset does not have yet is not
 *    checked (nor refused): it is not ONNX's operator but an exporter's
 *    registration in the default domain, as onnxruntime's LayerNormalization
 *    from opset 1, whose schema ONNX does not give.  Exports at opset 12
 *    carry it, one with a misspelt attribute ('epsion' in
 *    ../shared/onnx/real/attention_distilbert.onnx) that onnxruntime's
 *    kernel ignores.
 *  - A deprecated version (Upsample-10, Scatter-11) keeps the version
 *    before it in force (the table has no row for it).
 *  - A node's element types, taken together, must fit one version of its
 *    operator, not necessarily the one in force at the model's opset: ONNX
 *    widens the type lists over opsets (uint8 for Add at 14, bfloat16 for
 *    most float operators at 13 to 22, any type for Constant at 9, which
 *    PyTorch's opset-6 exports already used) and loosens the sharing of a
 *    type (BatchNormalization's scale may differ from its input from 15)
 *    without changing what the operator computes, and rotor computes in
 *    double and rounds into the type whatever the opset.  Types no version
 *    takes (an int32 input to InstanceNormalization, float16 scales for
 *    Resize, int32 pads) are refused, with what the version in force takes.
 *    The values of a string attribute are likewise ONNX's at any opset
 *    (GridSample's 'bilinear' became 'linear' at 20).
 *  - An attribute without its type field (IR version 1 files) is not
 *    type-checked; ONNX's checker refuses it, but its value is unambiguous.
 *  - Only operators rotor imports are checked: a row of the registry in the
 *    default domain (com.microsoft rows, also those that answer the default
 *    domain, have no ONNX schema). */
#include "onnxops.h"

#include <stdio.h>
#include <string.h>

/* AttributeProto.AttributeType */
enum {
    OX_AT_FLOAT = 1, OX_AT_INT, OX_AT_STRING, OX_AT_TENSOR, OX_AT_GRAPH, OX_AT_FLOATS, OX_AT_INTS,
    OX_AT_STRINGS, OX_AT_TENSORS, OX_AT_GRAPHS, OX_AT_SPARSE_TENSOR, OX_AT_SPARSE_TENSORS,
    OX_AT_TYPE_PROTO, OX_AT_TYPE_PROTOS
};
enum { OX_F_OPTIONAL = 1, OX_F_VARIADIC = 2, OX_F_HETEROGENEOUS = 4 };

typedef struct ox_sattr {
    const char *name;
    unsigned char type;     /* OX_AT_* */
    unsigned char required;
} ox_sattr;

/* One formal input or output: the element types it takes (bit t: TensorProto
 * type t; 0: no tensor type rotor checks), its type parameter (formals with
 * the same one have one type; -1: its own). */
typedef struct ox_sformal {
    const char *name;
    uint32_t types;
    signed char param;
    unsigned char flags;    /* OX_F_* */
} ox_sformal;

/* One version of one operator. */
typedef struct ox_schema {
    const char *op;
    int since;
    int in_min, in_max, out_min, out_max; /* max -1: unbounded */
    int attr0, nattr;                      /* SATTRS[attr0 .. attr0 + nattr) */
    int formal0, nin, nout;                /* SFORMALS[formal0 ..): the inputs, then the outputs */
} ox_schema;

#include "onnxschema_tab.h"

#define NSCHEMAS ((int)(sizeof SCHEMAS / sizeof SCHEMAS[0]))

/* String attributes whose values ONNX enumerates, from the operators' text
 * (docs/Operators.md), at any opset (see the header). */
typedef struct ox_choice {
    const char *op, *attr;
    const char *values; /* '|'-separated */
} ox_choice;

#define AUTOPAD "NOTSET|SAME_UPPER|SAME_LOWER|VALID"
#define DIRECTION "forward|reverse|bidirectional"
static const ox_choice CHOICES[] = {
    {"AveragePool", "auto_pad", AUTOPAD},
    {"Conv", "auto_pad", AUTOPAD},
    {"ConvInteger", "auto_pad", AUTOPAD},
    {"ConvTranspose", "auto_pad", AUTOPAD},
    {"LpPool", "auto_pad", AUTOPAD},
    {"MaxPool", "auto_pad", AUTOPAD},
    {"QLinearConv", "auto_pad", AUTOPAD},
    {"DepthToSpace", "mode", "DCR|CRD"},
    {"GRU", "direction", DIRECTION},
    {"LSTM", "direction", DIRECTION},
    {"RNN", "direction", DIRECTION},
    {"Gelu", "approximate", "none|tanh"},
    {"GridSample", "mode", "bilinear|nearest|bicubic|linear|cubic"},
    {"GridSample", "padding_mode", "zeros|border|reflection"},
    {"NegativeLogLikelihoodLoss", "reduction", "none|sum|mean"},
    {"SoftmaxCrossEntropyLoss", "reduction", "none|sum|mean"},
    {"Pad", "mode", "constant|reflect|edge|wrap"},
    {"Resize", "mode", "nearest|linear|cubic"},
    {"Resize", "coordinate_transformation_mode",
     "half_pixel|half_pixel_symmetric|pytorch_half_pixel|align_corners|asymmetric|tf_half_pixel_for_nn|"
     "tf_crop_and_resize"},
    {"Resize", "nearest_mode", "round_prefer_floor|round_prefer_ceil|floor|ceil"},
    {"Resize", "keep_aspect_ratio_policy", "stretch|not_larger|not_smaller"},
    {"RoiAlign", "mode", "avg|max"},
    {"RoiAlign", "coordinate_transformation_mode", "half_pixel|output_half_pixel"},
    {"ScatterElements", "reduction", "none|add|mul|max|min"},
    {"ScatterND", "reduction", "none|add|mul|max|min"},
    {"Upsample", "mode", "nearest|linear|bilinear"},
};

/* ---- lookup --------------------------------------------------------------------------- */

/* The versions of op: SCHEMAS[*first .. *first + return). */
static int versions(const char *op, int *first) {
    int lo = 0, hi = NSCHEMAS;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (strcmp(SCHEMAS[mid].op, op) < 0) lo = mid + 1;
        else hi = mid;
    }
    int n = 0;
    while (lo + n < NSCHEMAS && !strcmp(SCHEMAS[lo + n].op, op)) n++;
    *first = lo;
    return n;
}

/* The version of op in force at opset: the last one at or before it, or
 * NULL (no version yet, or no such ONNX operator). */
static const ox_schema *in_force(const char *op, int64_t opset) {
    int first, n = versions(op, &first);
    const ox_schema *s = NULL;
    for (int i = 0; i < n; i++)
        if (SCHEMAS[first + i].since <= opset) s = &SCHEMAS[first + i];
    return s;
}

int ox_schema_since(const char *op, int64_t opset) {
    const ox_schema *s = in_force(op, opset);
    return s ? s->since : -1;
}

static const ox_sattr *find_attr(const ox_schema *s, const char *name) {
    for (int i = 0; i < s->nattr; i++)
        if (!strcmp(SATTRS[s->attr0 + i].name, name)) return &SATTRS[s->attr0 + i];
    return NULL;
}

/* The formal of input (out = false) or output k in version s, or NULL: a
 * variadic last formal takes every position from its own on. */
static const ox_sformal *formal_at(const ox_schema *s, bool out, int k) {
    int nf = out ? s->nout : s->nin;
    const ox_sformal *f = &SFORMALS[s->formal0 + (out ? s->nin : 0)];
    if (k < nf) return &f[k];
    return nf > 0 && (f[nf - 1].flags & OX_F_VARIADIC) ? &f[nf - 1] : NULL;
}

/* ---- messages ------------------------------------------------------------------------- */

static const char *attr_type_name(int t) {
    static const char *const names[] = {"undefined", "a float", "an int", "a string", "a tensor", "a graph",
                                        "floats", "ints", "strings", "tensors", "graphs", "a sparse tensor",
                                        "sparse tensors", "a type", "types"};
    return t >= 0 && t <= OX_AT_TYPE_PROTOS ? names[t] : "of an unknown type";
}

/* "float16, float, double" for a type mask, into buf. */
static const char *mask_names(uint32_t mask, char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = 0;
    for (int t = 1; t < 32 && len < cap; t++)
        if (mask & (UINT32_C(1) << t))
            len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", ox_type_name(t));
    return buf;
}

/* "2", "2 to 3", "at least 1" */
static const char *count_range(int lo, int hi, char *buf, size_t cap) {
    if (hi == lo) snprintf(buf, cap, "%d", lo);
    else if (hi < 0) snprintf(buf, cap, "at least %d", lo);
    else snprintf(buf, cap, "%d to %d", lo, hi);
    return buf;
}

/* ---- the checks ----------------------------------------------------------------------- */

/* An attribute s does not have: where in op's history it is. */
static rotor_status absent_attr(ox_model *m, ox_node *n, const ox_schema *s, const char *name, rotor_error *err) {
    const char *op = s->op;
    int first, nv = versions(op, &first);
    int cur = (int)(s - SCHEMAS) - first;
    for (int i = cur + 1; i < nv; i++)
        if (find_attr(&SCHEMAS[first + i], name))
            NFAIL("attribute '%s' is not in %s at opset %lld: ONNX adds it at opset %d", name, op,
                  (long long)m->opset, SCHEMAS[first + i].since);
    for (int i = cur - 1; i >= 0; i--)
        if (find_attr(&SCHEMAS[first + i], name))
            NFAIL("attribute '%s' is not in %s at opset %lld: ONNX removed it at opset %d", name, op,
                  (long long)m->opset, SCHEMAS[first + i + 1].since);
    NFAIL("attribute '%s' is not an attribute of %s at any opset", name, op);
}

static rotor_status check_attrs(ox_model *m, ox_node *n, const ox_schema *s, rotor_error *err) {
    for (size_t i = 0; i < n->p->n_attribute; i++) {
        const Onnx__AttributeProto *a = n->p->attribute[i];
        const char *name = a->name ? a->name : "";
        for (size_t j = 0; j < i; j++)
            if (n->p->attribute[j]->name && !strcmp(n->p->attribute[j]->name, name))
                NFAIL("attribute '%s' is given twice", name);
        const ox_sattr *sa = find_attr(s, name);
        if (!sa) return absent_attr(m, n, s, name, err);
        if (a->has_type && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT &&
            sa->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT && a->has_i && a->i >= -(INT64_C(1) << 24) &&
            a->i <= (INT64_C(1) << 24)) {
            /* Decision: a float attribute written as an integer (MIGraphX's
             * RNN clip, a Random*Like seed) is read as that number.  The
             * widening is exact (|i| <= 2^24 fits a float), so no reading
             * differs from the writer's; ONNX's checker and onnxruntime
             * refuse the type.  The node's attribute is rewritten once
             * here, so that every reader downstream sees a float. */
            Onnx__AttributeProto *w = n->p->attribute[i];
            w->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
            w->has_f = 1;
            w->f = (float)w->i;
            w->has_i = 0;
            w->i = 0;
            continue;
        }
        if (a->has_type && (int)a->type != sa->type)
            NFAIL("attribute '%s' is %s; %s at opset %lld takes %s", name, attr_type_name((int)a->type), s->op,
                  (long long)m->opset, attr_type_name(sa->type));
    }
    for (int i = 0; i < s->nattr; i++)
        if (SATTRS[s->attr0 + i].required && !ox_attr(n, SATTRS[s->attr0 + i].name))
            NFAIL("required attribute '%s' is missing (%s at opset %lld)", SATTRS[s->attr0 + i].name, s->op,
                  (long long)m->opset);
    return ROTOR_OK;
}

/* "none, sum or mean" from "none|sum|mean", into buf. */
static void choice_list(const char *values, char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = 0;
    for (const char *v = values; *v && len < cap;) {
        size_t k = strcspn(v, "|");
        const char *sep = v == values ? "" : v[k] ? ", " : " or ";
        len += (size_t)snprintf(buf + len, cap - len, "%s%.*s", sep, (int)k, v);
        v += k + (v[k] == '|');
    }
}

/* String attributes against CHOICES. */
static rotor_status check_choices(ox_model *m, ox_node *n, rotor_error *err) {
    for (size_t i = 0; i < sizeof CHOICES / sizeof CHOICES[0]; i++) {
        const ox_choice *c = &CHOICES[i];
        if (strcmp(c->op, n->p->op_type)) continue;
        const Onnx__AttributeProto *a = ox_attr(n, c->attr);
        if (!a || !a->has_s) continue;
        size_t len = a->s.len;
        bool ok = false;
        for (const char *v = c->values; *v && !ok;) {
            size_t k = strcspn(v, "|");
            ok = k == len && !memcmp(v, a->s.data, len);
            v += k + (v[k] == '|');
        }
        if (!ok) {
            char list[160];
            choice_list(c->values, list, sizeof list);
            NFAIL("attribute %s '%.*s' is not %s (%s at any opset)", c->attr, (int)(len > 40 ? 40 : len),
                  (const char *)a->s.data, list, c->op);
        }
    }
    return ROTOR_OK;
}

static rotor_status check_counts(ox_model *m, ox_node *n, const ox_schema *s, rotor_error *err) {
    char want[32];
    int nin = n->nin;
    while (nin > 0 && n->in[nin - 1] < 0) nin--; /* trailing omitted inputs */
    if (n->nin < s->in_min || (s->in_max >= 0 && nin > s->in_max))
        NFAIL("%d input%s; %s at opset %lld takes %s", nin, nin == 1 ? "" : "s", s->op, (long long)m->opset,
              count_range(s->in_min, s->in_max, want, sizeof want));
    if (n->nout < s->out_min || (s->out_max >= 0 && n->nout > s->out_max))
        NFAIL("%d output%s; %s at opset %lld gives %s", n->nout, n->nout == 1 ? "" : "s", s->op, (long long)m->opset,
              count_range(s->out_min, s->out_max, want, sizeof want));
    /* an empty name stands for an omitted optional input only (a variadic
     * formal's entries are not checked: ONNX's checker does not either) */
    for (int k = 0; k < n->nin; k++) {
        const ox_sformal *f = formal_at(s, false, k);
        if (f && n->in[k] < 0 && !(f->flags & (OX_F_OPTIONAL | OX_F_VARIADIC)))
            NFAIL("input %d (%s) is empty; %s at opset %lld needs it", k, f->name, s->op, (long long)m->opset);
    }
    return ROTOR_OK;
}

/* The first input or output of n before x (inputs first) whose formal in s
 * has type parameter param, or NULL. */
static const ox_val *first_with_param(ox_model *m, ox_node *n, const ox_schema *s, int param, const ox_val *x,
                                      bool *is_out) {
    for (int io = 0; io < 2; io++) {
        for (int j = 0; j < (io ? n->nout : n->nin); j++) {
            const ox_val *y = io ? ox_out(m, n, j) : ox_in(m, n, j);
            const ox_sformal *f = formal_at(s, io, j);
            if (y == x) return NULL;
            if (y && y->onnx_type > 0 && f && f->param == param) {
                *is_out = io;
                return y;
            }
        }
    }
    return NULL;
}

/* Whether the element types of n's inputs (and outputs, with outs) fit
 * version s: each one its formal takes, one type per type parameter.  If
 * not and why is given, why says which (at the model's opset). */
static bool types_fit(ox_model *m, ox_node *n, const ox_schema *s, bool outs, char *why, size_t cap) {
    char buf[200];
    for (int io = 0; io <= (int)outs; io++) {
        const char *what = io ? "output" : "input";
        for (int k = 0; k < (io ? n->nout : n->nin); k++) {
            const ox_val *x = io ? ox_out(m, n, k) : ox_in(m, n, k);
            const ox_sformal *f = formal_at(s, io, k);
            if (!x || x->onnx_type <= 0) continue;
            if (!f) return false; /* a version without this input */
            if (!f->types) continue;
            /* Decision: an int32 tensor where the formal takes int64 alone
             * (pads, a shape, sequence_lens, axes: index inputs) is read
             * as int64, an exact widening MIGraphX's files rely on. */
            if (x->onnx_type == T_INT32 && f->types == (UINT32_C(1) << T_INT64)) continue;
            if (x->onnx_type > 31 || !(f->types & (UINT32_C(1) << x->onnx_type))) {
                if (why)
                    snprintf(why, cap, "%s '%s' (%s) is %s; %s at opset %lld takes %s", what, x->name, f->name,
                             ox_type_name(x->onnx_type), s->op, (long long)m->opset,
                             mask_names(f->types, buf, sizeof buf));
                return false;
            }
            bool yout = false;
            const ox_val *y =
                f->param < 0 || (f->flags & OX_F_HETEROGENEOUS) ? NULL : first_with_param(m, n, s, f->param, x, &yout);
            if (y && y->onnx_type != x->onnx_type) {
                if (why)
                    snprintf(why, cap, "%s '%s' is %s but %s '%s' is %s; %s at opset %lld takes one type for both",
                             what, x->name, ox_type_name(x->onnx_type), yout ? "output" : "input", y->name,
                             ox_type_name(y->onnx_type), s->op, (long long)m->opset);
                return false;
            }
        }
    }
    return true;
}

/* The node's element types against version s, in force at the model's
 * opset, or any other version of its operator (see the header). */
static rotor_status check_types(ox_model *m, ox_node *n, const ox_schema *s, bool outs, rotor_error *err) {
    char why[ROTOR_ERROR_MAX / 2];
    if (types_fit(m, n, s, outs, why, sizeof why)) return ROTOR_OK;
    int first, nv = versions(s->op, &first);
    for (int i = 0; i < nv; i++)
        if (&SCHEMAS[first + i] != s && types_fit(m, n, &SCHEMAS[first + i], outs, NULL, 0)) return ROTOR_OK;
    NFAIL("%s (nor at any other opset)", why);
}

/* Only nodes bound to a default-domain row (see the header). */
static const ox_schema *schema_of(const ox_model *m, const ox_node *n) {
    if (!n->def || strcmp(n->def->domain, "ai.onnx") != 0) return NULL;
    return in_force(n->p->op_type, m->opset);
}

rotor_status ox_schema_check(ox_model *m, ox_node *n, rotor_error *err) {
    const ox_schema *s = schema_of(m, n);
    if (!s) return ROTOR_OK;
    rotor_status st;
    if ((st = check_attrs(m, n, s, err)) || (st = check_choices(m, n, err)) || (st = check_counts(m, n, s, err)))
        return st;
    return check_types(m, n, s, false, err);
}

rotor_status ox_schema_check_outputs(ox_model *m, ox_node *n, rotor_error *err) {
    const ox_schema *s = schema_of(m, n);
    return s ? check_types(m, n, s, true, err) : ROTOR_OK;
}
