/* gpucompile.c — a grouped graph's kernels on a GPU and their times
 * (docs/gpu.md, "A whole model"; include/rotor/compile/gpucompile.h). */
#include "rotor/compile/gpucompile.h"

#include <stdlib.h>
#include <string.h>

#include "rotor/model/elemtype.h"

const char *rotor_gpu_kernel_kind_name(rotor_gpu_kernel_kind k) {
    static const char *const names[] = {"gemm", "memory", "attention", "fused"};
    return k >= ROTOR_GPU_KERNEL_GEMM && k <= ROTOR_GPU_KERNEL_FUSED ? names[k] : "?";
}

/* An op's bytes (every input and output; a Gather's rows) in the GPU's
 * precision: the graph's bytes scaled from its output's element size. */
static double op_bytes(const rotor_graph *g, const rotor_op *op, const rotor_gpu *gpu) {
    /* a Gather reads the rows it writes, not its whole table */
    if (op->vendor && !strcmp(op->type, "Gather") && op->noutputs == 1)
        return 2.0 * (double)g->values[op->outputs[0]].elements * (double)rotor_gpu_dtype_bytes(gpu->dtype);
    int64_t e = op->noutputs > 0 ? rotor_dtype_bytes(g->values[op->outputs[0]].dtype) : 0;
    if (e <= 0) e = 4;
    return (double)op->bytes * (double)rotor_gpu_dtype_bytes(gpu->dtype) / (double)e;
}

static double value_bytes(const rotor_graph *g, int v, const rotor_gpu *gpu) {
    return v < 0 ? 0 : (double)g->values[v].elements * (double)rotor_gpu_dtype_bytes(gpu->dtype);
}

/* The single consumer of value v after op `from`, or -1. */
static int only_consumer(const rotor_graph *g, int v, int from) {
    if (v < 0 || g->values[v].consumers != 1 || g->values[v].is_output) return -1;
    for (int j = from + 1; j < g->nops; j++)
        for (int i = 0; i < g->ops[j].ninputs; i++)
            if (g->ops[j].inputs[i] == v) return j;
    return -1;
}

static bool is_gemm(const rotor_op *op) {
    return !op->vendor && op->expr.op_class == ROTOR_OP_CONTRACTION && op->expr.ntensors == 3;
}

/* scores (op i) -> Softmax (j) -> context (k), each the only reader of the
 * last: one flash-style kernel at op i.  Returns the context op, or -1. */
static int try_attention(const rotor_graph *g, int i, const rotor_gpu *gpu, rotor_gpu_compile_result *r) {
    const rotor_op *qk = &g->ops[i];
    if (!gpu->fused_attention || !is_gemm(qk) || qk->noutputs != 1) return -1;
    int j = only_consumer(g, qk->outputs[0], i);
    if (j < 0 || strcmp(g->ops[j].type, "Softmax") || g->ops[j].noutputs != 1) return -1;
    int k = only_consumer(g, g->ops[j].outputs[0], j);
    if (k < 0 || !is_gemm(&g->ops[k]) || g->ops[k].noutputs != 1) return -1;
    const rotor_op *pv = &g->ops[k];
    double io = value_bytes(g, pv->outputs[0], gpu);
    for (int t = 0; t < qk->ninputs; t++) io += value_bytes(g, qk->inputs[t], gpu);
    for (int t = 0; t < pv->ninputs; t++)
        if (pv->inputs[t] != g->ops[j].outputs[0]) io += value_bytes(g, pv->inputs[t], gpu);
    /* one exponential a score; the softmax's other arithmetic is its
     * vendor-op FLOPs (graph.h: one a score read or written) */
    double scores = qk->noutputs ? (double)g->values[qk->outputs[0]].elements : 0;
    rotor_gpu_fused_attention(qk->flops, pv->flops, g->ops[j].flops, scores, io, gpu, &r->ops[i].est);
    r->ops[i].kind = ROTOR_GPU_KERNEL_ATTENTION;
    r->ops[j].kind = r->ops[k].kind = ROTOR_GPU_KERNEL_FUSED;
    r->ops[j].fused_into = r->ops[k].fused_into = i;
    return k;
}

/* Bytes of op's inputs the kernel before it (op `prev`) wrote and left in
 * L2: values that fit half the L2. */
static double resident_inputs(const rotor_graph *g, const rotor_op *op, const rotor_op *prev, const rotor_gpu *gpu) {
    if (!prev) return 0;
    double b = 0;
    for (int i = 0; i < op->ninputs; i++)
        for (int o = 0; o < prev->noutputs; o++)
            if (op->inputs[i] == prev->outputs[o] && value_bytes(g, op->inputs[i], gpu) <= (double)gpu->l2_bytes / 2)
                b += value_bytes(g, op->inputs[i], gpu);
    return b;
}

static rotor_status one_op(const rotor_graph *g, int i, const rotor_op *prev, const rotor_gpu *gpu,
                           rotor_gpu_compile_result *r, rotor_error *err) {
    const rotor_op *op = &g->ops[i];
    rotor_gpu_context ctx = {0};
    ctx.l2_resident_bytes = (int64_t)resident_inputs(g, op, prev, gpu);
    rotor_gpu_op_time *t = &r->ops[i];
    if (is_gemm(op)) {
        rotor_gemm_shape s;
        rotor_status st = rotor_gpu_gemm_shape(&op->expr, gpu, &s, err);
        if (st) return st;
        double epi = op_bytes(g, op, gpu) - (double)(s.a_bytes + s.b_bytes + s.c_bytes);
        ctx.epilogue_bytes = epi > 0 ? (int64_t)epi : 0;
        double fl = op->flops - 2.0 * (double)s.batch * (double)s.m * (double)s.n * (double)s.k;
        ctx.epilogue_flops = fl > 0 ? fl : 0;
        rotor_gpu_gemm(&s, gpu, &ctx, &t->est);
        t->kind = ROTOR_GPU_KERNEL_GEMM;
        return ROTOR_OK;
    }
    rotor_gpu_memory_kernel(op_bytes(g, op, gpu), op->flops, gpu, &ctx, &t->est);
    t->kind = ROTOR_GPU_KERNEL_MEMORY;
    return ROTOR_OK;
}

/* The kernel op i runs in: its own, or the attention kernel it is fused into. */
static int kernel_of(const rotor_gpu_compile_result *r, int i) { return r->ops[i].fused_into >= 0 ? r->ops[i].fused_into : i; }

/* rotor_gpu_compile_result.hbm_held, in doubles (exact below 2^53 bytes,
 * past any GPU's HBM), over the kernels in graph order, each at the index
 * of its first op. */
static rotor_status held_bytes(const rotor_graph *g, const rotor_gpu *gpu, rotor_gpu_compile_result *r,
                               rotor_error *err) {
    int n = g->nops;
    double *diff = calloc((size_t)n + 2, sizeof *diff), always = 0, live = 0, most = 0;
    int *last = malloc(((size_t)g->nvalues + 1) * sizeof *last); /* the last kernel that reads it */
    bool *inside = malloc(((size_t)g->nvalues + 1) * sizeof *inside); /* read only inside its writer's kernel */
    if (!diff || !last || !inside) return free(diff), free(last), free(inside), rotor_nomem(err);
    for (int v = 0; v < g->nvalues; v++) last[v] = -1, inside[v] = true;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < g->ops[i].ninputs; k++) {
            int v = g->ops[i].inputs[k], p = g->values[v].producer, ki = kernel_of(r, i);
            if (ki > last[v]) last[v] = ki;
            if (p < 0 || kernel_of(r, p) != ki) inside[v] = false;
        }
    for (int v = 0; v < g->nvalues; v++) {
        const rotor_value *val = &g->values[v];
        double b = value_bytes(g, v, gpu);
        if (val->role != ROTOR_ROLE_ACTIVATION) {
            if (last[v] >= 0) always += b; /* weights and KV cache an operator reads */
            continue;
        }
        /* from the kernel that writes it (an attention kernel writes its
         * context at its first op) to the last kernel that reads it */
        int from = val->producer < 0 ? 0 : kernel_of(r, val->producer), to = val->is_output ? n : last[v];
        if (val->producer >= 0 && !val->is_output && (last[v] < 0 || inside[v])) continue;
        if (to < 0) continue;   /* a model input no kernel reads */
        if (to < from) to = from; /* read by an attention kernel placed before its writer: held there at least */
        diff[from] += b, diff[to + 1] -= b;
    }
    for (int i = 0; i <= n; i++) {
        live += diff[i];
        if (live > most) most = live;
    }
    free(diff), free(last), free(inside);
    r->hbm_held = always + most;
    if (r->hbm_held <= (double)gpu->hbm_bytes) return ROTOR_OK;
    return rotor_fail(err, ROTOR_ERR_NOFIT,
                      "model '%s' needs %.0f bytes of HBM at once (%.0f of weights and KV cache, %.0f of activations "
                      "at their peak) in %s, more than %s's %lld (hbm_bytes)",
                      g->name, r->hbm_held, always, most, rotor_gpu_dtype_name(gpu->dtype), gpu->name,
                      (long long)gpu->hbm_bytes);
}

rotor_status rotor_gpu_compile(const rotor_graph *g, const rotor_gpu *gpu, rotor_gpu_compile_result *out,
                               rotor_error *err) {
    memset(out, 0, sizeof *out);
    if (g->nops == 0) return rotor_fail(err, ROTOR_ERR_INPUT, "model '%s' has no operators", g->name);
    out->ops = calloc((size_t)g->nops, sizeof *out->ops);
    if (!out->ops) return rotor_nomem(err);
    out->nops = g->nops;
    for (int i = 0; i < g->nops; i++) {
        out->ops[i].fused_into = -1;
        out->int8_ops += rotor_op_elem_of(g, i).int8;
    }
    const rotor_op *prev = NULL;
    for (int i = 0; i < g->nops; i++) {
        rotor_gpu_op_time *t = &out->ops[i];
        if (t->kind == ROTOR_GPU_KERNEL_FUSED) continue;
        int ctx_op = try_attention(g, i, gpu, out);
        if (ctx_op < 0) {
            rotor_status st = one_op(g, i, prev, gpu, out, err);
            if (st) {
                rotor_error_prefix(err, g->ops[i].name);
                rotor_gpu_compile_free(out);
                return st;
            }
        }
        prev = &g->ops[ctx_op >= 0 ? ctx_op : i]; /* the kernel that wrote the next op's input */
        out->total_s += t->est.seconds;
        out->bound_s[t->est.bound] += t->est.seconds;
        out->kernels += t->est.kernels;
        out->hbm_bytes += t->est.hbm_bytes;
        out->flops += t->est.flops;
    }
    rotor_status st = held_bytes(g, gpu, out, err);
    if (st) rotor_gpu_compile_free(out);
    return st;
}

void rotor_gpu_compile_free(rotor_gpu_compile_result *r) {
    free(r->ops);
    r->ops = NULL;
    r->nops = 0;
}
