/* gpu.c — one operator's time on a GPU (docs/gpu.md, "The model").
 *
 * A contraction is a GEMM kernel.  For each candidate thread-block tile
 * (the shapes cuBLAS and CUTLASS ship for Ampere and Hopper: NVIDIA's Matrix
 * Multiplication Background guide, "Typical Tile Dimensions in cuBLAS") and
 * split-K factor:
 *   compute = ceil(tiles / SMs) * 2 tm tn k_slice / (rate / SMs) / occupancy
 *             + the C stores the main loops do not hide (exposed_epilogue_s)
 *             + the pipeline fills they do not hide (exposed_prologue_s)
 *   L2      = (A * N_tiles + B * M_tiles + C + split-K partials)
 *             / (L2 bandwidth * ROTOR_GPU_L2_EFFICIENCY)
 *   HBM     = (A + B' + C) / (HBM bandwidth * ROTOR_GPU_HBM_EFFICIENCY), B' = B when it fits half
 *             the L2, else B once per wave of tile rows (the rows a wave of
 *             resident tiles covers in raster order; once per M tile when a
 *             tile row is wider than a wave)
 * and the kernel takes max(compute, L2, HBM) + one launch; the fastest
 * candidate, either operand as B, is the answer.  Everything else is a
 * memory-bound kernel: max(bytes / HBM, bytes / L2, operations / CUDA cores) + launch. */
#include "rotor/op/gpu.h"

#include <math.h>
#include <string.h>

const char *rotor_gpu_bound_name(rotor_gpu_bound b) {
    static const char *const names[] = {"compute", "HBM", "L2", "launch"};
    return b >= ROTOR_GPU_BOUND_COMPUTE && b <= ROTOR_GPU_BOUND_LAUNCH ? names[b] : "?";
}

/* Candidate tiles (M x N) of the threadblock; the k-slice is 64 bytes of
 * operand (32 fp16, 16 tf32/fp32, 64 int8 elements), as CUTLASS's Ampere
 * kernels (cutlass_tensorop_s16816gemm_f16_256x128_32x3 ...). */
static const int64_t TILES[][2] = {{256, 128}, {128, 256}, {128, 128}, {256, 64}, {64, 256},
                                   {128, 64},  {64, 128},  {64, 64}};
#define NTILES ((int)(sizeof TILES / sizeof TILES[0]))
static const int64_t SPLITS[] = {1, 2, 3, 4, 6, 8, 12, 16};
#define NSPLITS ((int)(sizeof SPLITS / sizeof SPLITS[0]))

/* Pipeline stages of a tile's operands in shared memory (CUTLASS's Ampere
 * default, the "x3" of its kernel names). */
#define STAGES 3
/* Warps an SM needs resident to keep its four tensor cores issuing (two
 * per sub-partition to cover the ldmatrix/mma latency): fewer run the SM at
 * that fraction of its rate.  An assumption, docs/gpu.md. */
#define WARPS_FOR_PEAK 8

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static void finish(rotor_gpu_estimate *o, const rotor_gpu *g) {
    o->launch_s = g->launch_us * 1e-6 * (double)o->kernels;
    double body = fmax(o->compute_s, fmax(o->hbm_s, o->l2_s));
    o->bound = o->compute_s >= o->hbm_s && o->compute_s >= o->l2_s ? ROTOR_GPU_BOUND_COMPUTE
             : o->hbm_s >= o->l2_s                                  ? ROTOR_GPU_BOUND_HBM
                                                                    : ROTOR_GPU_BOUND_L2;
    if (o->launch_s > body) o->bound = ROTOR_GPU_BOUND_LAUNCH;
    o->seconds = body + o->launch_s;
}

/* Element-wise and reduction work on the CUDA cores (an epilogue, a norm, a
 * softmax's max, subtract, sum and rescale), in operations a second.  The
 * spec's FP32 rate counts a fused multiply-add as two FLOPs (A100: 108 SMs x
 * 64 lanes x 2 x 1.41 GHz = 19.5 TFLOP/s); a max, an add or a multiply is one
 * result a lane a clock (CUDA C++ Programming Guide, "Arithmetic
 * Instructions": 64 results a clock an SM for 32-bit floating-point add,
 * multiply and multiply-add on compute capability 8.0), so half that rate. */
static double cuda_core_ops(const rotor_gpu *g) { return g->fp32_tflops * 1e12 / 2.0; }

/* The pipeline fills of a GEMM's tiles that no main loop hides.  A
 * CUTLASS/cuBLAS multistage main loop issues its first k-slices' loads
 * (cp.async) and waits for the first before its first MMA.  The SM's first
 * tile's wait is part of the launch (launch_us is a whole one-block kernel's
 * measured duration, its first loads included), and with more CTAs an SM a
 * co-resident CTA's main loop covers the later ones; with one CTA an SM every
 * later tile's fill shows, as its epilogue does (the next CTA starts when the
 * last retires).  Its operands are panels earlier tiles read, in L2, and a
 * k-slice's sectors are spread over both L2 partitions, so it waits the far
 * partition's latency (ROTOR_GPU_L2_LATENCY_CYCLES), at the SM clock. */
static double exposed_prologue_s(int64_t per_sm, int64_t ctas, const rotor_gpu *g) {
    double later = ctas == 1 && per_sm > 1 ? (double)(per_sm - 1) : 0.0;
    return later * ROTOR_GPU_L2_LATENCY_CYCLES / (g->clock_mhz * 1e6);
}

/* Resident CTAs of one tile on an SM: by registers (fp32 accumulators
 * tm*tn/threads a thread, plus 64 for addresses and fragments) and by
 * shared memory (STAGES k-slices of both operands), at most 4. */
static int64_t ctas_per_sm(const rotor_gpu *g, int64_t tm, int64_t tn, int64_t kt, int64_t elem, int64_t *warps) {
    int64_t threads = tm * tn >= 128 * 128 ? 256 : 128;
    int64_t regs = tm * tn / threads + 64;
    int64_t by_regs = g->regs_per_sm / (threads * regs);
    int64_t by_smem = g->smem_bytes / (STAGES * (tm + tn) * kt * elem);
    int64_t c = by_regs < by_smem ? by_regs : by_smem;
    *warps = threads / 32;
    return c < 1 ? 1 : c > 4 ? 4 : c;
}

/* The time a wave's output tiles take to leave the SMs that the tensor
 * cores do not hide.  A non-persistent kernel (cuBLAS's and CUTLASS 2.x's
 * Ampere GEMMs) writes a tile's C after its main loop, and the SM's next tile
 * starts only when the CTA retires: with one CTA an SM every tile's store is
 * exposed; with more, another CTA's main loop covers it but for the last
 * tile of each SM (CUTLASS's efficient_gemm.md: overlapping one tile's epilogue with
 * another's MMAs is what its persistent "ping-pong" schedule is for).  The
 * stores go to the L2 (write-back) at its sustained bandwidth.  A split-K
 * tile writes its fp32 partial. */
static double exposed_epilogue_s(int64_t tiles, int64_t ctas, int64_t tile_bytes, const rotor_gpu *g) {
    int64_t exposed = ctas == 1 || tiles < g->sms ? tiles : g->sms; /* tiles whose store shows */
    return (double)exposed * (double)tile_bytes / (g->l2_gbps * 1e9 * ROTOR_GPU_L2_EFFICIENCY);
}

/* One candidate: tile tm x tn, split s, with A (M x K) and B (K x N). */
static void gemm_candidate(const rotor_gemm_shape *s, int64_t tm, int64_t tn, int64_t split, const rotor_gpu *g,
                           const rotor_gpu_context *ctx, rotor_gpu_estimate *o) {
    int64_t elem = rotor_gpu_dtype_bytes(g->dtype);
    int64_t kt = 64 / elem;
    int64_t mt = ceil_div(s->m, tm), nt = ceil_div(s->n, tn);
    int64_t kslice = ceil_div(ceil_div(s->k, split), kt) * kt;
    int64_t warps;
    int64_t ctas = ctas_per_sm(g, tm, tn, kt, elem, &warps);
    int64_t tiles = s->batch * mt * nt * split;
    int64_t per_sm = ceil_div(tiles, g->sms); /* the busiest SM's CTAs, round-robin */
    double occupancy = fmin(1.0, (double)((per_sm < ctas ? per_sm : ctas) * warps) / WARPS_FOR_PEAK);
    double sm_rate = rotor_gpu_matrix_rate(g, g->dtype) / (double)g->sms;
    memset(o, 0, sizeof *o);
    o->gemm = *s;
    o->flops = 2.0 * (double)s->batch * (double)s->m * (double)s->n * (double)s->k;
    o->compute_s = (double)per_sm * 2.0 * (double)(tm * tn) * (double)kslice / (sm_rate * occupancy);
    if (ctx) o->compute_s += ctx->epilogue_flops / cuda_core_ops(g);
    o->compute_s += exposed_epilogue_s(tiles, ctas, tm * tn * (split > 1 ? 4 : elem), g);
    o->compute_s += exposed_prologue_s(per_sm, ctas, g);
    /* split-K: each split's fp32 partial tile is written to and read back
     * from a workspace (CUTLASS's serial split-K reduction) */
    double partial = split > 1 ? 2.0 * 4.0 * (double)s->batch * (double)s->m * (double)s->n * (double)(split - 1) : 0;
    double epi = ctx ? (double)ctx->epilogue_bytes : 0;
    o->l2_bytes = (double)s->a_bytes * (double)nt + (double)s->b_bytes * (double)mt + (double)s->c_bytes + partial + epi;
    int64_t resident = g->sms * ctas;
    int64_t rows_per_wave = resident / nt > 0 ? resident / nt : 1;
    double half_l2 = (double)g->l2_bytes / 2.0;
    double b_hbm = (double)s->b_bytes <= half_l2 ? (double)s->b_bytes
                                                 : (double)s->b_bytes * (double)ceil_div(mt, rows_per_wave);
    double a_hbm = (double)s->a_bytes;
    if (ctx) a_hbm = fmax(0.0, a_hbm - (double)ctx->l2_resident_bytes);
    o->hbm_bytes = a_hbm + b_hbm + (double)s->c_bytes + (partial > half_l2 ? partial : 0) + epi;
    o->hbm_s = o->hbm_bytes / (g->hbm_gbps * 1e9 * ROTOR_GPU_HBM_EFFICIENCY);
    o->l2_s = o->l2_bytes / (g->l2_gbps * 1e9 * ROTOR_GPU_L2_EFFICIENCY);
    o->kernels = 1;
    o->tile_m = tm;
    o->tile_n = tn;
    o->tile_k = kt;
    o->split_k = split;
    o->tiles = tiles;
    o->ctas_per_sm = ctas;
    o->waves = ceil_div(tiles, g->sms * ctas);
    finish(o, g);
}

void rotor_gpu_gemm(const rotor_gemm_shape *s, const rotor_gpu *g, const rotor_gpu_context *ctx,
                    rotor_gpu_estimate *out) {
    bool have = false;
    /* either operand may be the one streamed (cuBLAS computes C or C^T) */
    rotor_gemm_shape swapped = *s;
    swapped.m = s->n;
    swapped.n = s->m;
    swapped.a_bytes = s->b_bytes;
    swapped.b_bytes = s->a_bytes;
    rotor_gpu_context sctx = ctx ? *ctx : (rotor_gpu_context){0};
    for (int o = 0; o < 2; o++) {
        const rotor_gemm_shape *sh = o ? &swapped : s;
        /* the L2-resident input is the activation, A in s's orientation */
        rotor_gpu_context c = sctx;
        if (o && ctx) c.l2_resident_bytes = 0;
        for (int t = 0; t < NTILES; t++)
            for (int p = 0; p < NSPLITS; p++) {
                int64_t split = SPLITS[p];
                /* split-K only when the tiles alone underfill the SMs (cuBLAS's
                 * heuristic), and a split keeps at least 256 of K */
                int64_t base_tiles = sh->batch * ceil_div(sh->m, TILES[t][0]) * ceil_div(sh->n, TILES[t][1]);
                if (split > 1 && (base_tiles >= g->sms || sh->k / split < 256)) continue;
                rotor_gpu_estimate e;
                gemm_candidate(sh, TILES[t][0], TILES[t][1], split, g, ctx ? &c : NULL, &e);
                if (!have || e.seconds < out->seconds) {
                    *out = e;
                    out->gemm = *s;
                    have = true;
                }
            }
    }
}

void rotor_gpu_memory_kernel(double bytes, double flops, const rotor_gpu *g, const rotor_gpu_context *ctx,
                             rotor_gpu_estimate *o) {
    memset(o, 0, sizeof *o);
    double resident = ctx ? fmin(bytes, (double)ctx->l2_resident_bytes) : 0;
    o->flops = flops;
    o->l2_bytes = bytes;
    o->hbm_bytes = bytes - resident;
    o->compute_s = flops / cuda_core_ops(g);
    o->hbm_s = o->hbm_bytes / (g->hbm_gbps * 1e9 * ROTOR_GPU_HBM_EFFICIENCY);
    o->l2_s = bytes / (g->l2_gbps * 1e9 * ROTOR_GPU_L2_EFFICIENCY);
    o->kernels = 1;
    finish(o, g);
}

void rotor_gpu_fused_attention(double flops_qk, double flops_pv, double softmax_flops, double exps, double io_bytes,
                               const rotor_gpu *g, rotor_gpu_estimate *o) {
    memset(o, 0, sizeof *o);
    o->flops = flops_qk + flops_pv + softmax_flops + exps;
    /* the softmax's exponentials (on the SFUs, one a clock each) and its
     * max, subtract, sum and rescale (on the CUDA cores) run between the two
     * tensor-core GEMMs of each block (FlashAttention-2, Dao 2023, §3.1):
     * they add to the GEMMs' time, they do not overlap it */
    double sfu_rate = (double)g->sms * (double)g->sfu_per_sm * g->clock_mhz * 1e6;
    o->compute_s = (flops_qk + flops_pv) / rotor_gpu_matrix_rate(g, g->dtype) + softmax_flops / cuda_core_ops(g) +
                   exps / sfu_rate;
    o->hbm_bytes = io_bytes;
    o->l2_bytes = io_bytes;
    o->hbm_s = io_bytes / (g->hbm_gbps * 1e9 * ROTOR_GPU_HBM_EFFICIENCY);
    o->l2_s = io_bytes / (g->l2_gbps * 1e9 * ROTOR_GPU_L2_EFFICIENCY);
    o->kernels = 1;
    finish(o, g);
}

/* Distinct elements of tensor t: a dimension a+b spans E_a + E_b - 1. */
static int64_t distinct_elements(const rotor_expr *e, int t) {
    int64_t n = 1;
    const rotor_tensor *x = &e->tensors[t];
    for (int d = 0; d < x->ndims; d++) {
        int64_t span = 1;
        for (int k = 0; k < x->dims[d].nterms; k++) span += x->dims[d].coef[k] * (e->extent[x->dims[d].axis[k]] - 1);
        n *= span;
    }
    return n;
}

rotor_status rotor_gpu_gemm_shape(const rotor_expr *e, const rotor_gpu *g, rotor_gemm_shape *out, rotor_error *err) {
    if (e->op_class != ROTOR_OP_CONTRACTION || e->ntensors != 3)
        return rotor_fail(err, ROTOR_ERR_INPUT, "'%s': not a two-input contraction, so not a GEMM", e->text);
    rotor_gemm_shape s = {1, 1, 1, 1, 0, 0, 0};
    for (int a = 0; a < e->naxes; a++) {
        bool y = e->tensors[0].has_axis[a], in_a = e->tensors[1].has_axis[a], in_b = e->tensors[2].has_axis[a];
        int64_t x = e->extent[a];
        if (!y) s.k *= x;
        else if (in_a && in_b) s.batch *= x;
        else if (in_b) s.n *= x;
        else s.m *= x; /* in A, or in the output alone */
    }
    int64_t elem = rotor_gpu_dtype_bytes(g->dtype);
    s.a_bytes = distinct_elements(e, 1) * elem;
    s.b_bytes = distinct_elements(e, 2) * elem;
    s.c_bytes = distinct_elements(e, 0) * elem;
    *out = s;
    return ROTOR_OK;
}

rotor_status rotor_gpu_op(const rotor_expr *e, const rotor_gpu *g, const rotor_gpu_context *ctx,
                          rotor_gpu_estimate *out, rotor_error *err) {
    if (e->op_class == ROTOR_OP_CONTRACTION && e->ntensors == 3) {
        rotor_gemm_shape s;
        rotor_status st = rotor_gpu_gemm_shape(e, g, &s, err);
        if (st) return st;
        rotor_gpu_gemm(&s, g, ctx, out);
        return ROTOR_OK;
    }
    double bytes = 0;
    for (int t = 0; t < e->ntensors; t++) bytes += (double)distinct_elements(e, t);
    rotor_gpu_memory_kernel(bytes * (double)rotor_gpu_dtype_bytes(g->dtype), rotor_expr_flops(e), g, ctx, out);
    return ROTOR_OK;
}
