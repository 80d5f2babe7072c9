/* onnxsort.c — the order of an ONNX graph's nodes (docs/onnx.md): Kahn's
 * algorithm, taking the ready node that comes first in the file, so a sorted
 * file keeps its order and an unsorted one gets a deterministic order. */
#include "onnxir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Kahn's algorithm, taking the ready node that comes first in the file (a
 * binary min-heap of node indices): a sorted file keeps its order. */
rotor_status ox_sort_nodes(ox_model *m, rotor_error *err) {
    int nn = m->nnodes;
    int *pending = calloc((size_t)(nn ? nn : 1), sizeof(int));
    int *heap = malloc(sizeof(int) * (size_t)(nn ? nn : 1));
    m->order = malloc(sizeof(int) * (size_t)(nn ? nn : 1));
    if (!pending || !heap || !m->order) {
        free(pending), free(heap);
        return rotor_nomem(err);
    }
    for (int i = 0; i < nn; i++)
        for (int k = 0; k < m->nodes[i].nin; k++) {
            int v = m->nodes[i].in[k];
            if (v >= 0 && m->vals[v].producer >= 0) pending[i]++;
        }
    int hn = 0, done = 0;
#define HPUSH(x)                                                                    \
    do {                                                                            \
        int c_ = hn++;                                                              \
        heap[c_] = (x);                                                             \
        while (c_ > 0 && heap[(c_ - 1) / 2] > heap[c_]) {                           \
            int t_ = heap[c_]; heap[c_] = heap[(c_ - 1) / 2]; heap[(c_ - 1) / 2] = t_; \
            c_ = (c_ - 1) / 2;                                                      \
        }                                                                           \
    } while (0)
    for (int i = 0; i < nn; i++)
        if (!pending[i]) HPUSH(i);
    while (hn) {
        int top = heap[0];
        heap[0] = heap[--hn];
        for (int c = 0;;) {
            int l = 2 * c + 1, r = l + 1, s = c;
            if (l < hn && heap[l] < heap[s]) s = l;
            if (r < hn && heap[r] < heap[s]) s = r;
            if (s == c) break;
            int t = heap[c];
            heap[c] = heap[s];
            heap[s] = t;
            c = s;
        }
        m->order[done++] = top;
        ox_node *n = &m->nodes[top];
        for (int k = 0; k < n->nout; k++) {
            int v = n->out[k];
            if (v < 0) continue;
            for (int j = m->cons_start[v]; j < m->cons_start[v + 1]; j++)
                if (--pending[m->cons[j]] == 0) HPUSH(m->cons[j]);
        }
    }
#undef HPUSH
    int stuck = -1;
    for (int i = 0; i < nn && stuck < 0; i++)
        if (pending[i] > 0) stuck = i;
    free(pending);
    free(heap);
    if (done != nn)
        return ox_node_fail(m, &m->nodes[stuck], err, ROTOR_ERR_INPUT,
                            "the graph has a cycle through this node; ONNX graphs must be acyclic");
    return ROTOR_OK;
}
