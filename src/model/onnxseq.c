/* onnxseq.c — sequences that live inside a graph (docs/onnx.md,
 * "Sequences"): SequenceConstruct and SplitToSequence build one, and
 * ConcatFromSequence, SequenceLength and SequenceAt read it.  A sequence is
 * not a tensor, so rotor never makes a graph value of it: its producer node
 * says what its elements are (SequenceConstruct's inputs, or
 * SplitToSequence's slices of X), and each reader reads them through it.
 * Decisions:
 *  - a sequence value carries its first element's type and shape for the
 *    importer's bookkeeping, and the rule that makes it checks that only
 *    these three readers consume it and that it is no graph output, so no
 *    other rule can take it for a tensor;
 *  - SequenceLength folds to its constant count; ConcatFromSequence is a
 *    vendor op over the elements (Concat, or a stack with new_axis);
 *    SequenceAt is a vendor op over the elements and the position, shaped
 *    as the element at a known position; at a run-time position every
 *    element must have one shape (otherwise the output shape depends on
 *    data, and is refused);
 *  - sequences that arrive as graph inputs, SequenceEmpty, SequenceInsert,
 *    SequenceErase and SequenceMap stay refused. */
#include "lowerint.h"
#include "onnxops.h"

#include <stdio.h>
#include <string.h>

#define SEQ_MAX 4096 /* elements of one sequence rotor takes apart */

/* A sequence's elements, read off its producer. */
typedef struct seq {
    const ox_node *p;  /* the producer */
    bool split;        /* SplitToSequence */
    int count;
    int axis;          /* split: the axis of X */
    bool keep;         /* split: the element keeps the axis */
    int64_t chunk;     /* split: every element's length but the last (0: the lengths are split's entries) */
} seq;

static bool is_reader(const char *op) {
    return !strcmp(op, "ConcatFromSequence") || !strcmp(op, "SequenceLength") || !strcmp(op, "SequenceAt");
}

/* Output 0 of a sequence-making node: the first element's type and shape,
 * once its consumers are all readers and it is no graph output. */
static rotor_status seq_out(ox_model *m, ox_node *n, const ox_val *first, const int64_t *shape, int rank,
                            rotor_error *err) {
    const ox_val *o = ox_out(m, n, 0);
    if (!o) NFAIL("has no output");
    if (o->is_output) NFAIL("sequence '%s' is a graph output; rotor's outputs are tensors", o->name);
    int v = n->out[0];
    for (int j = m->cons_start[v]; j < m->cons_start[v + 1]; j++) {
        const ox_node *c = &m->nodes[m->cons[j]];
        if (!is_reader(c->p->op_type) || c->in[0] != v)
            NFAIL("sequence '%s' is read by %s (op %s); rotor reads sequences only with ConcatFromSequence, "
                  "SequenceLength and SequenceAt", o->name, c->name, c->p->op_type);
    }
    return ox_set_out(m, n, 0, first->onnx_type, rank, shape, err);
}

rotor_status ox_infer_seq_construct(ox_model *m, ox_node *n, rotor_error *err) {
    if (n->nin < 1) NFAIL("needs at least one tensor");
    for (int i = 0; i < n->nin; i++) {
        const ox_val *x = ox_in(m, n, i), *f = ox_in(m, n, 0);
        if (!x) NFAIL("input %d is missing", i);
        if (x->onnx_type != f->onnx_type) NFAIL("input '%s' is %s where '%s' is %s; a sequence has one type", x->name,
                                                ox_type_name(x->onnx_type), f->name, ox_type_name(f->onnx_type));
    }
    const ox_val *f = ox_in(m, n, 0);
    return seq_out(m, n, f, f->shape, f->rank, err);
}

/* A SplitToSequence node's elements (its rule and the readers share it). */
static rotor_status split_of(ox_model *m, const ox_node *n, seq *q, rotor_error *err) {
    const ox_val *x = ox_in(m, n, 0), *s = ox_in(m, n, 1);
    if (!x) NFAIL("input 0 is missing");
    q->split = true;
    if (!ox_norm_axis(ox_attr_int(n, "axis", 0), x->rank, &q->axis))
        NFAIL("axis %lld is out of range for rank %d", (long long)ox_attr_int(n, "axis", 0), x->rank);
    int64_t dim = x->shape[q->axis], lens[SEQ_MAX];
    int cnt = 0;
    q->keep = s || ox_attr_int(n, "keepdims", 1) != 0; /* keepdims is ignored with split */
    q->chunk = 1;
    if (s && s->rank == 0) { /* one length: equal chunks, the last shorter */
        rotor_status st = ox_const_ints(m, n, 1, "split", lens, 1, &cnt, err);
        if (st) return st;
        if (lens[0] < 1) NFAIL("split %lld is not positive", (long long)lens[0]);
        q->chunk = lens[0];
    } else if (s) {
        rotor_status st = ox_const_ints(m, n, 1, "split", lens, SEQ_MAX, &cnt, err);
        if (st) return st;
        int64_t sum = 0;
        for (int k = 0; k < cnt; k++) {
            if (lens[k] < 0) NFAIL("split has a negative length %lld", (long long)lens[k]);
            sum += lens[k];
        }
        if (sum != dim) NFAIL("split sums to %lld but the axis has %lld", (long long)sum, (long long)dim);
        q->chunk = 0;
        q->count = cnt;
        return ROTOR_OK;
    }
    if ((dim + q->chunk - 1) / q->chunk > SEQ_MAX) NFAIL("would make more than %d elements", SEQ_MAX);
    q->count = (int)((dim + q->chunk - 1) / q->chunk);
    return ROTOR_OK;
}

/* Element k's shape. */
static rotor_status elem_shape(ox_model *m, const seq *q, int k, int64_t *shape, int *rank, int *type,
                               rotor_error *err) {
    const ox_node *n = q->p;
    if (!q->split) {
        const ox_val *x = ox_in(m, n, k);
        memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->rank);
        *rank = x->rank;
        *type = x->onnx_type;
        return ROTOR_OK;
    }
    const ox_val *x = ox_in(m, n, 0);
    int64_t len = q->chunk;
    if (!q->chunk) {
        int64_t lens[SEQ_MAX];
        int cnt;
        rotor_status st = ox_const_ints(m, n, 1, "split", lens, SEQ_MAX, &cnt, err);
        if (st) return st;
        len = lens[k];
    } else if ((int64_t)(k + 1) * q->chunk > x->shape[q->axis]) {
        len = x->shape[q->axis] - (int64_t)k * q->chunk;
    }
    *rank = 0;
    for (int d = 0; d < x->rank; d++) {
        if (d == q->axis && !q->keep) continue;
        shape[(*rank)++] = d == q->axis ? len : x->shape[d];
    }
    *type = x->onnx_type;
    return ROTOR_OK;
}

rotor_status ox_infer_split_to_seq(ox_model *m, ox_node *n, rotor_error *err) {
    seq q = {.p = n};
    rotor_status st = split_of(m, n, &q, err);
    if (st) return st;
    if (q.count < 1) NFAIL("makes an empty sequence");
    int64_t shape[OX_MAX_RANK];
    int rank, type;
    if ((st = elem_shape(m, &q, 0, shape, &rank, &type, err))) return st;
    return seq_out(m, n, ox_in(m, n, 0), shape, rank, err);
}

/* The sequence input 0 of reader n. */
static rotor_status seq_in(ox_model *m, ox_node *n, seq *q, rotor_error *err) {
    const ox_val *s = ox_in(m, n, 0);
    memset(q, 0, sizeof *q);
    const ox_node *p = s && s->producer >= 0 ? &m->nodes[s->producer] : NULL;
    if (!p || !p->def || (p->def->infer != ox_infer_seq_construct && p->def->infer != ox_infer_split_to_seq))
        NFAIL("input 0 is not a sequence SequenceConstruct or SplitToSequence makes");
    q->p = p;
    if (p->def->infer == ox_infer_split_to_seq) return split_of(m, p, q, err);
    q->count = p->nin;
    return ROTOR_OK;
}

rotor_status ox_infer_seq_length(ox_model *m, ox_node *n, rotor_error *err) {
    seq q;
    rotor_status st = seq_in(m, n, &q, err);
    if (!st) st = ox_set_out(m, n, 0, T_INT64, 0, NULL, err);
    if (st) return st;
    ox_val *o = ox_out(m, n, 0);
    if (o) {
        if (!ox_alloc_data(o)) return rotor_nomem(err);
        ox_put(o, 0, q.count);
        o->kind = OX_CONST; /* the count is known whatever the elements hold */
    }
    return ROTOR_OK;
}

rotor_status ox_infer_concat_from_seq(ox_model *m, ox_node *n, rotor_error *err) {
    seq q;
    rotor_status st = seq_in(m, n, &q, err);
    if (st) return st;
    int64_t shape[OX_MAX_RANK + 1], e[OX_MAX_RANK];
    int rank, er, type, et, axis;
    bool stack = ox_attr_int(n, "new_axis", 0) != 0;
    if ((st = elem_shape(m, &q, 0, shape, &rank, &type, err))) return st;
    if (!ox_norm_axis(ox_attr_int(n, "axis", 0), rank + (stack ? 1 : 0), &axis))
        NFAIL("axis %lld is out of range", (long long)ox_attr_int(n, "axis", 0));
    int64_t total = 0;
    for (int k = 0; k < q.count; k++) {
        if ((st = elem_shape(m, &q, k, e, &er, &et, err))) return st;
        bool fits = er == rank;
        for (int d = 0; fits && d < rank; d++) fits = e[d] == shape[d] || (!stack && d == axis);
        if (!fits) NFAIL("element %d does not %s element 0", k, stack ? "stack with" : "concatenate with");
        total += stack ? 1 : e[axis];
    }
    if (stack) {
        memmove(shape + axis + 1, shape + axis, sizeof(int64_t) * (size_t)(rank - axis));
        rank++;
    }
    shape[axis] = total;
    return ox_set_out(m, n, 0, type, rank, shape, err);
}

rotor_status ox_infer_seq_at(ox_model *m, ox_node *n, rotor_error *err) {
    seq q;
    rotor_status st = seq_in(m, n, &q, err);
    if (st) return st;
    const ox_val *pos = ox_in(m, n, 1);
    if (!pos || pos->elems != 1 || (pos->onnx_type != T_INT32 && pos->onnx_type != T_INT64))
        NFAIL("position must be an int32 or int64 scalar");
    int64_t shape[OX_MAX_RANK], e[OX_MAX_RANK];
    int rank, er, type, et;
    if (pos->kind == OX_CONST && pos->has_data) {
        int64_t k = ox_get_i(pos, 0);
        if (k < -q.count || k >= q.count)
            NFAIL("position %lld is outside the sequence's %d elements", (long long)k, q.count);
        if ((st = elem_shape(m, &q, (int)(k < 0 ? k + q.count : k), shape, &rank, &type, err))) return st;
        return ox_set_out(m, n, 0, type, rank, shape, err);
    }
    if ((st = elem_shape(m, &q, 0, shape, &rank, &type, err))) return st;
    for (int k = 1; k < q.count; k++) {
        if ((st = elem_shape(m, &q, k, e, &er, &et, err))) return st;
        if (er != rank || memcmp(e, shape, sizeof(int64_t) * (size_t)rank))
            NFAIL("position '%s' is known only at run time and the elements differ in shape: the output's shape "
                  "depends on it", pos->name);
    }
    return ox_set_out(m, n, 0, type, rank, shape, err);
}

/* ---- lowering ---------------------------------------------------------------------------- */

/* SequenceConstruct, SplitToSequence: nothing of their own (the readers
 * read the elements). */
rotor_status lw_seq_none(lower_ctx *c, const ox_node *n) {
    (void)c, (void)n;
    return ROTOR_OK;
}

/* A vendor op of type `type` from the sequence's elements (and the extra
 * input, -1 for none) to output 0. */
static rotor_status from_elements(lower_ctx *c, const ox_node *n, const char *type, int extra) {
    ox_model *m = c->m;
    seq q;
    rotor_status st = seq_in(m, (ox_node *)n, &q, c->err);
    if (st) return st;
    int nin = q.split ? 1 : q.count, ins[64], y;
    if (nin > 63) return ox_node_fail(m, n, c->err, ROTOR_ERR_INPUT, "reads %d elements; rotor's ops take 63", nin);
    for (int k = 0; k < nin; k++)
        if ((st = lw_gval(c, n, q.p->in[k], &ins[k]))) return st;
    if (extra >= 0 && (st = lw_gval(c, n, extra, &ins[nin++]))) return st;
    if ((st = lw_gval(c, n, n->out[0], &y))) return st;
    return lw_op(c, n, n->name, type, NULL, NULL, NULL, 0, ins, nin, y);
}

rotor_status lw_concat_from_seq(lower_ctx *c, const ox_node *n) {
    return from_elements(c, n, "ConcatFromSequence", -1);
}

rotor_status lw_seq_at(lower_ctx *c, const ox_node *n) {
    return from_elements(c, n, "SequenceAt", n->in[1]);
}
