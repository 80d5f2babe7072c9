/* onnxeinsum.c — ONNX Einsum: the equation parsed into labels, and the
 * output shape it gives.  An Einsum *is* a tensor expression (T10 §4.2
 * writes operators the same way): lower.c turns the parsed labels into one
 * when no term repeats a label (docs/onnx.md, "Einsum").
 *
 * Rules (ONNX Einsum, after numpy.einsum):
 *  - terms are separated by ',', one per input; "->" introduces the output;
 *  - a label is a letter; "..." stands for the broadcast dimensions, as
 *    many in every term (ONNX: "every occurrence of ellipsis in the
 *    equation must represent the same number of dimensions", where numpy
 *    would align them to the right), an extent 1 broadcasting against n;
 *  - a letter's extent is the same wherever it appears;
 *  - without "->", the output is the ellipsis dimensions, then the letters
 *    that appear exactly once, in ASCII order (upper case first). */
#include "onnxir.h"

#include <stdio.h>
#include <string.h>

static int label_of(char ch) {
    if (ch >= 'a' && ch <= 'z') return ch - 'a';
    if (ch >= 'A' && ch <= 'Z') return 26 + ch - 'A';
    return -1;
}

/* ASCII order of letter labels: 'A'..'Z' before 'a'..'z'. */
static int ascii_rank(int l) { return l < 26 ? 26 + l : l - 26; }

void ox_einsum_label_name(int l, char *buf, size_t cap) {
    if (l < 26) snprintf(buf, cap, "%c", 'a' + l);
    else if (l < OX_EINSUM_LETTERS) snprintf(buf, cap, "%c", 'A' + l - 26);
    else snprintf(buf, cap, "e%d", l - OX_EINSUM_LETTERS);
}

/* Parses one term of len characters into labels (ellipsis dims as -1 - k
 * placeholders, resolved by the caller).  Returns false with *why set. */
static bool parse_term(const char *s, size_t len, int *lab, int *n, int *ell_at, const char **why) {
    *n = 0;
    *ell_at = -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == ' ') continue;
        if (s[i] == '.') {
            if (i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.' || *ell_at >= 0)
                return *why = "an ellipsis must be exactly '...', once per term", false;
            *ell_at = *n;
            i += 2;
            continue;
        }
        int l = label_of(s[i]);
        if (l < 0) return *why = "labels must be letters", false;
        if (*n == OX_MAX_RANK) return *why = "a term has too many dimensions", false;
        lab[(*n)++] = l;
    }
    return true;
}

rotor_status ox_einsum_parse(ox_model *m, ox_node *n, ox_einsum *es, rotor_error *err) {
    const Onnx__AttributeProto *a = ox_attr(n, "equation");
    if (!a || !a->has_s || a->s.len == 0) NFAIL("attribute 'equation' is missing");
    char eq[256];
    if (a->s.len >= sizeof eq) NFAIL("equation is longer than %d characters", (int)sizeof eq - 1);
    memcpy(eq, a->s.data, a->s.len);
    eq[a->s.len] = '\0';
    memset(es, 0, sizeof *es);
    const char *arrow = strstr(eq, "->");
    size_t lhs_len = arrow ? (size_t)(arrow - eq) : strlen(eq);
    const char *why = NULL;
    int ell_at[OX_EINSUM_MAX_IN];
    int lab[OX_EINSUM_MAX_IN][OX_MAX_RANK];
    int nlab[OX_EINSUM_MAX_IN];
    /* the terms */
    size_t start = 0;
    for (size_t i = 0; i <= lhs_len; i++) {
        if (i < lhs_len && eq[i] != ',') continue;
        if (es->nin == OX_EINSUM_MAX_IN) NFAIL("equation '%s' has more than %d terms", eq, OX_EINSUM_MAX_IN);
        if (!parse_term(eq + start, i - start, lab[es->nin], &nlab[es->nin], &ell_at[es->nin], &why))
            NFAIL("equation '%s': term %d: %s", eq, es->nin + 1, why);
        es->nin++;
        start = i + 1;
    }
    int nin = 0;
    for (int k = 0; k < n->nin; k++) nin += n->in[k] >= 0;
    if (es->nin != nin || nin != n->nin) NFAIL("equation '%s' has %d terms for %d inputs", eq, es->nin, n->nin);
    /* the ellipsis rank, then every term's labels with its dims resolved */
    int ell = 0, ell_term = -1;
    for (int t = 0; t < es->nin; t++) {
        const ox_val *x = ox_in(m, n, t);
        int e = x->rank - nlab[t];
        if (e < 0 || (e > 0 && ell_at[t] < 0))
            NFAIL("equation '%s': term %d names %d dimensions, input '%s' has %d", eq, t + 1, nlab[t], x->name,
                  x->rank);
        if (ell_at[t] < 0) continue;
        if (ell_term >= 0 && e != ell)
            NFAIL("equation '%s': '...' stands for %d dimension(s) in term %d but %d in term %d; ONNX's Einsum "
                  "needs the same number in every term", eq, ell, ell_term + 1, e, t + 1);
        ell = e;
        ell_term = t;
    }
    for (int l = 0; l < OX_EINSUM_LABELS; l++) es->extent[l] = -1;
    for (int t = 0; t < es->nin; t++) {
        const ox_val *x = ox_in(m, n, t);
        int e = x->rank - nlab[t], d = 0;
        es->rank[t] = x->rank;
        for (int i = 0; i <= nlab[t]; i++) {
            if (i == ell_at[t])
                for (int k = 0; k < e; k++) es->label[t][d++] = OX_EINSUM_LETTERS + ell - e + k;
            if (i < nlab[t]) es->label[t][d++] = lab[t][i];
        }
        for (d = 0; d < x->rank; d++) {
            int l = es->label[t][d];
            int64_t ext = x->shape[d];
            bool bcast = l >= OX_EINSUM_LETTERS;
            if (es->extent[l] < 0 || (bcast && es->extent[l] == 1)) es->extent[l] = ext;
            else if (es->extent[l] != ext && !(bcast && ext == 1)) {
                char nm[8];
                ox_einsum_label_name(l, nm, sizeof nm);
                NFAIL("equation '%s': label '%s' is %lld in input '%s' but %lld elsewhere", eq, nm, (long long)ext,
                      x->name, (long long)es->extent[l]);
            }
            es->uses[l]++;
        }
    }
    /* the output */
    if (arrow) {
        int ea;
        const char *rhs = arrow + 2;
        if (!parse_term(rhs, strlen(rhs), lab[0], &nlab[0], &ea, &why)) NFAIL("equation '%s': output: %s", eq, why);
        for (int i = 0; i <= nlab[0]; i++) {
            if (i == ea)
                for (int k = 0; k < ell; k++) es->out[es->out_rank++] = OX_EINSUM_LETTERS + k;
            if (i == nlab[0]) break;
            int l = lab[0][i];
            char nm[8];
            ox_einsum_label_name(l, nm, sizeof nm);
            if (es->extent[l] < 0) NFAIL("equation '%s': output label '%s' is in no input", eq, nm);
            for (int j = 0; j < es->out_rank; j++)
                if (es->out[j] == l) NFAIL("equation '%s': output label '%s' appears twice", eq, nm);
            es->out[es->out_rank++] = l;
        }
        if (ea < 0 && ell > 0) NFAIL("equation '%s': the output drops the '...' dimensions", eq);
    } else {
        for (int k = 0; k < ell; k++) es->out[es->out_rank++] = OX_EINSUM_LETTERS + k;
        for (int r = 0; r < OX_EINSUM_LETTERS; r++)
            for (int l = 0; l < OX_EINSUM_LETTERS; l++)
                if (ascii_rank(l) == r && es->uses[l] == 1) es->out[es->out_rank++] = l;
    }
    if (es->out_rank > OX_MAX_RANK) NFAIL("equation '%s': the output has more than %d dimensions", eq, OX_MAX_RANK);
    return ROTOR_OK;
}

rotor_status ox_infer_einsum(ox_model *m, ox_node *n, rotor_error *err) {
    rotor_status st;
    if ((st = ox_need(m, n, 1, err))) return st;
    ox_einsum es;
    if ((st = ox_einsum_parse(m, n, &es, err))) return st;
    int64_t shape[OX_MAX_RANK];
    for (int d = 0; d < es.out_rank; d++) shape[d] = es.extent[es.out[d]];
    return ox_set_out(m, n, 0, ox_in(m, n, 0)->onnx_type, es.out_rank, shape, err);
}
