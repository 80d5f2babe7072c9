/* emu.c — functional emulation of a placed compute-shift plan (T10 §4.2 and
 * §4.4; cost-model-v1.md), and the direct reference it is checked against.
 *
 * Every virtual core owns one slice of a single arena: one buffer per tensor
 * (the partition it holds, in the chip's SRAM budget at element_bytes per
 * element) and the shift buffer.  Data are float32.  A step computes the
 * core's sub-task from its own buffers only; a transition moves, for each
 * tensor whose block changes, every partition to the core the placement
 * names, chunk by chunk through the receivers' shift buffers (BSP: all sends
 * of a chunk land before any is consumed, so a ring's permutation needs no
 * other scratch).  Each buffer carries a tag, the block it really holds, so
 * that a placement error is reported at the step it happens.
 *
 * Padding: sub-tasks are clipped to the real extents, so padded points never
 * contribute (for a reduction through exp() a padded zero would add 1). */
#include "rotor/op/emu.h"

#include "rotor/op/cost.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t rotor_emu_tensor_elems(const rotor_expr *e, int t, int64_t *dim_extent) {
    return rotor_tensor_extents(e, t, dim_extent); /* emulated tensors are small: never INT64_MAX */
}

/* Per-axis strides of a tensor stored row-major with the given dimension
 * extents: a point's element offset is sum_a stride[a] * idx_a, compound
 * dimensions included (c0*h + c1*kh is linear). */
static void axis_strides(const rotor_expr *e, int t, const int64_t *dim_ext, int64_t *stride) {
    const rotor_tensor *x = &e->tensors[t];
    for (int a = 0; a < e->naxes; a++) stride[a] = 0;
    int64_t s = 1;
    for (int d = x->ndims - 1; d >= 0; d--) {
        for (int k = 0; k < x->dims[d].nterms; k++) stride[x->dims[d].axis[k]] += s * x->dims[d].coef[k];
        s *= dim_ext[d];
    }
}

/* ---- kernels --------------------------------------------------------------
 * One nested loop over a box of the iteration space: n[a] points along each
 * axis, tensor t's element at the box origin at p[t], strides st[t][a].  The
 * innermost axis is `inner`; the others run as an odometer, last fastest. */

typedef struct box {
    int na, nt, inner;
    int64_t n[ROTOR_MAX_AXES];
    int64_t st[ROTOR_MAX_TENSORS][ROTOR_MAX_AXES];
} box;

#define ODOMETER_BEGIN(B, OFF)                                                                   \
    int outer_[ROTOR_MAX_AXES], no_ = 0;                                                          \
    for (int a_ = 0; a_ < (B)->na; a_++)                                                          \
        if (a_ != (B)->inner && (B)->n[a_] > 1) outer_[no_++] = a_;                               \
    int64_t idx_[ROTOR_MAX_AXES] = {0};                                                           \
    for (;;) {
#define ODOMETER_END(B, OFF)                                                                     \
    int k_ = no_ - 1;                                                                             \
    for (; k_ >= 0; k_--) {                                                                       \
        int a_ = outer_[k_];                                                                      \
        for (int t_ = 0; t_ < (B)->nt; t_++) OFF[t_] += (B)->st[t_][a_];                         \
        if (++idx_[k_] < (B)->n[a_]) break;                                                       \
        for (int t_ = 0; t_ < (B)->nt; t_++) OFF[t_] -= (B)->st[t_][a_] * (B)->n[a_];             \
        idx_[k_] = 0;                                                                             \
    }                                                                                             \
    if (k_ < 0) break;                                                                            \
    }

/* Y += X1 * X2 in float32 (the matrix class).  The inner loop runs along the
 * output's last axis; the two common shapes (MatMul: X1 constant, X2 unit
 * stride; convolution: X2 constant, X1 unit stride) get loops the compiler
 * vectorises. */
static void kernel_contract_f(const box *b, float *y, const float *x1, const float *x2) {
    int64_t off[3] = {0, 0, 0};
    const int64_t L = b->n[b->inner];
    const int64_t sy = b->st[0][b->inner], s1 = b->st[1][b->inner], s2 = b->st[2][b->inner];
    ODOMETER_BEGIN(b, off)
    float *restrict yy = y + off[0];
    const float *restrict a1 = x1 + off[1];
    const float *restrict a2 = x2 + off[2];
    if (sy == 1 && s1 == 0 && s2 == 1) {
        const float av = a1[0];
#pragma omp simd
        for (int64_t i = 0; i < L; i++) yy[i] += av * a2[i];
    } else if (sy == 1 && s2 == 0 && s1 == 1) {
        const float bv = a2[0];
#pragma omp simd
        for (int64_t i = 0; i < L; i++) yy[i] += a1[i] * bv;
    } else {
        for (int64_t i = 0; i < L; i++) yy[i * sy] += a1[i * s1] * a2[i * s2];
    }
    ODOMETER_END(b, off)
}

/* Any expression, point by point, with the float evaluator. */
static void kernel_eval_f(const rotor_expr *e, const box *b, float *y, const float *const *x) {
    int64_t off[ROTOR_MAX_TENSORS] = {0};
    const int64_t L = b->n[b->inner];
    float v[ROTOR_MAX_TENSORS];
    ODOMETER_BEGIN(b, off)
    for (int64_t i = 0; i < L; i++) {
        for (int t = 1; t < b->nt; t++) v[t] = x[t][off[t] + i * b->st[t][b->inner]];
        float r = rotor_expr_eval_f(e, v);
        float *yy = y + off[0] + i * b->st[0][b->inner];
        if (e->accumulate) *yy += r;
        else *yy = r;
    }
    ODOMETER_END(b, off)
}

/* ---- the reference ------------------------------------------------------- */

static int pick_inner(const rotor_expr *e) {
    const rotor_tensor *y = &e->tensors[0];
    if (e->op_class == ROTOR_OP_CONTRACTION) return y->dims[y->ndims - 1].axis[0];
    const rotor_tensor *x = &e->tensors[1];
    return x->dims[x->ndims - 1].axis[0];
}

/* The direct execution over box b from offsets off (one chunk of the
 * reference; every output element's terms in the same order whatever the
 * chunking). */
static void reference_box(const rotor_expr *e, const box *bp, const float *const *in, double *ref, double *mag,
                          int64_t *off) {
    const box b = *bp;
    const int64_t L = b.n[b.inner];
    const bool contract = e->op_class == ROTOR_OP_CONTRACTION;
    double v[ROTOR_MAX_TENSORS];
    const int64_t sy = b.st[0][b.inner], s1 = contract ? b.st[1][b.inner] : -1, s2 = contract ? b.st[2][b.inner] : -1;
    ODOMETER_BEGIN(&b, off)
    /* the two common contraction shapes (as kernel_contract_f): loops the
     * compiler vectorises, each element's terms in the same order */
    if (contract && e->accumulate && sy == 1 && ((s1 == 0 && s2 == 1) || (s2 == 0 && s1 == 1))) {
        const float *restrict xs = s1 == 0 ? in[2] + off[2] : in[1] + off[1];
        const double c = s1 == 0 ? (double)in[1][off[1]] : (double)in[2][off[2]];
        double *restrict ry = ref + off[0], *restrict my = mag + off[0];
#pragma omp simd
        for (int64_t i = 0; i < L; i++) {
            double r = c * (double)xs[i];
            ry[i] += r;
            my[i] += fabs(r);
        }
    } else {
        for (int64_t i = 0; i < L; i++) {
            int64_t oy = off[0] + i * b.st[0][b.inner];
            double r;
            if (contract) {
                r = (double)in[1][off[1] + i * b.st[1][b.inner]] * (double)in[2][off[2] + i * b.st[2][b.inner]];
            } else {
                for (int t = 1; t < b.nt; t++) v[t] = in[t][off[t] + i * b.st[t][b.inner]];
                r = rotor_expr_eval(e, v);
            }
            if (e->accumulate) {
                ref[oy] += r;
                mag[oy] += fabs(r);
            } else {
                ref[oy] = r;
                mag[oy] = fabs(r);
            }
        }
    }
    ODOMETER_END(&b, off)
}

/* Points per chunk below which the reference runs on one thread. */
#define REFERENCE_PARALLEL_MIN ((int64_t)1 << 16)

rotor_status rotor_emu_reference(const rotor_expr *e, const float *const *in, double *ref,
                                 double *mag, rotor_error *err) {
    rotor_status st;
    if (e->op_class != ROTOR_OP_CONTRACTION && (st = rotor_expr_check_eval(e, err))) return st;
    box b = {.na = e->naxes, .nt = e->ntensors, .inner = pick_inner(e)};
    for (int t = 0; t < e->ntensors; t++) {
        int64_t ext[ROTOR_MAX_DIMS];
        rotor_emu_tensor_elems(e, t, ext);
        axis_strides(e, t, ext, b.st[t]);
    }
    double points = 1;
    for (int a = 0; a < e->naxes; a++) {
        b.n[a] = e->extent[a];
        points *= (double)e->extent[a];
    }
    int64_t ny = rotor_emu_tensor_elems(e, 0, NULL);
    memset(ref, 0, (size_t)ny * sizeof *ref);
    memset(mag, 0, (size_t)ny * sizeof *mag);
    /* Chunks of the largest output axis that is a plain dimension of the
     * output, alone in it: chunks write disjoint elements, each element's
     * terms still summed in the serial order, so any thread count gives the
     * same bits. */
    const rotor_tensor *y = &e->tensors[0];
    int split = -1;
    for (int d = 0; d < y->ndims; d++) {
        if (y->dims[d].nterms != 1 || y->dims[d].coef[0] != 1) continue;
        int a = y->dims[d].axis[0], uses = 0;
        for (int k = 0; k < y->ndims; k++)
            for (int q = 0; q < y->dims[k].nterms; q++) uses += y->dims[k].axis[q] == a;
        if (uses == 1 && (split < 0 || e->extent[a] > e->extent[split])) split = a;
    }
    int64_t chunks = split < 0 || points < 2.0 * (double)REFERENCE_PARALLEL_MIN ? 1 : e->extent[split];
    if (chunks > 64) chunks = 64;
#pragma omp parallel for schedule(dynamic, 1) if (chunks > 1)
    for (int64_t ch = 0; ch < chunks; ch++) {
        box bb = b;
        int64_t off[ROTOR_MAX_TENSORS] = {0};
        if (chunks > 1) {
            int64_t lo = e->extent[split] * ch / chunks, hi = e->extent[split] * (ch + 1) / chunks;
            bb.n[split] = hi - lo;
            for (int t = 0; t < b.nt; t++) off[t] = lo * b.st[t][split];
        }
        if (bb.n[split < 0 ? 0 : split] > 0) reference_box(e, &bb, in, ref, mag, off);
    }
    return ROTOR_OK;
}

static uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void rotor_emu_random_inputs(const rotor_expr *e, uint64_t seed, float *const *in) {
    /* inputs in the operator's domain: positive for a division, log, roots,
     * reciprocal and pow (a negative base to a fractional power is NaN); at
     * least 1 for acosh (every plan "failed" with an infinite error on
     * [-1, 1) until 2026-12-04; found by an audit helper) */
    bool positive = false, above_one = false;
    for (int i = 0; i < e->nnodes; i++) {
        const rotor_node *n = &e->rhs[i];
        if (n->op == ROTOR_NODE_DIV) positive = true;
        if (n->op == ROTOR_NODE_CALL &&
            (n->arg == ROTOR_FN_LOG || n->arg == ROTOR_FN_SQRT || n->arg == ROTOR_FN_RSQRT ||
             n->arg == ROTOR_FN_RECIP || n->arg == ROTOR_FN_POW))
            positive = true;
        if (n->op == ROTOR_NODE_CALL && n->arg == ROTOR_FN_ACOSH) above_one = true;
    }
    for (int t = 1; t < e->ntensors; t++) {
        uint64_t s = seed * 1000003u + (uint64_t)t;
        int64_t n = rotor_emu_tensor_elems(e, t, NULL);
        for (int64_t k = 0; k < n; k++) {
            double u = (double)(splitmix64(&s) >> 11) * 0x1.0p-53; /* [0, 1) */
            in[t][k] = (float)(above_one ? 1.0 + u : positive ? 0.5 + u : 2.0 * u - 1.0);
        }
    }
}

double rotor_emu_max_error(const rotor_expr *e, const float *out, const double *ref,
                           const double *mag) {
    int64_t n = rotor_emu_tensor_elems(e, 0, NULL);
    double worst = 0;
    for (int64_t k = 0; k < n; k++) {
        double d = fabs((double)out[k] - ref[k]) / (1.0 + mag[k]);
        if (!(d <= worst)) worst = isnan(d) ? INFINITY : d;
    }
    return worst;
}

/* ---- the emulator -------------------------------------------------------- */

typedef struct emu {
    const rotor_place *pl;
    const rotor_expr *e;
    const rotor_plan *p;
    const rotor_plan_info *info;
    int na, nt;
    int64_t cores;
    int64_t pelems[ROTOR_MAX_TENSORS];              /* elements of one partition */
    int64_t pdim[ROTOR_MAX_TENSORS][ROTOR_MAX_DIMS]; /* partition extents */
    int64_t pst[ROTOR_MAX_TENSORS][ROTOR_MAX_AXES]; /* strides inside a partition */
    int64_t gdim[ROTOR_MAX_TENSORS][ROTOR_MAX_DIMS]; /* full tensor extents */
    int64_t toff[ROTOR_MAX_TENSORS + 1];            /* buffer offsets in a core slice; [nt]: shift buffer */
    int64_t chunk;                                  /* shift-buffer capacity, elements */
    int64_t per_core;                               /* floats per core slice */
    float *arena;
    int64_t *tag;                                   /* nt x cores: block id held */
    int64_t *tag_tmp;
    int64_t *sent;                                  /* cores: bytes sent this transition */
    int64_t *recv_count;                            /* nt x cores */
    int64_t *bytes_count;                           /* nt x cores */
    int64_t *copy_count;                            /* nt x cores */
    int32_t *src;                                   /* cores: sender this transition */
} emu;

static float *buf(const emu *m, int64_t c, int t) { return m->arena + c * m->per_core + m->toff[t]; }
static float *sbuf(const emu *m, int64_t c) {
    return m->arena + c * m->per_core + m->toff[m->nt];
}

/* Partition origin, per axis, of tensor t's block blk on core coordinates c:
 * c_a * L_a + blk_a * L_a / f_t. */
static void part_origin(const emu *m, int t, const int64_t *coord, const int64_t *blk, int64_t *org) {
    for (int a = 0; a < m->na; a++) {
        int64_t L = m->info->sub_op[a];
        org[a] = coord[a] * L + blk[a] * (L / m->p->ft[t][a]);
    }
}

/* Copies between a partition buffer and the full tensor: load (zero outside
 * the real extent, which is the padding) or store/add (real elements only). */
enum { LOAD, STORE, ADD };
static void transfer(const emu *m, int t, const int64_t *org, float *part, float *full, int mode) {
    const rotor_tensor *x = &m->e->tensors[t];
    int nd = x->ndims;
    int64_t g0[ROTOR_MAX_DIMS], gstride[ROTOR_MAX_DIMS];
    int64_t s = 1;
    for (int d = nd - 1; d >= 0; d--) {
        gstride[d] = s;
        s *= m->gdim[t][d];
        g0[d] = 0;
        for (int k = 0; k < x->dims[d].nterms; k++) g0[d] += x->dims[d].coef[k] * org[x->dims[d].axis[k]];
    }
    /* Row by row along the last dimension: rows wholly or partly outside the
     * real extent are the padding. */
    const int last = nd - 1;
    const int64_t row = m->pdim[t][last];
    int64_t valid = m->gdim[t][last] - g0[last];
    valid = valid < 0 ? 0 : valid > row ? row : valid;
    int64_t idx[ROTOR_MAX_DIMS] = {0};
    for (int64_t q = 0; q < m->pelems[t]; q += row) {
        bool inside = true;
        int64_t g = g0[last];
        for (int d = 0; d < last; d++) {
            int64_t v = g0[d] + idx[d];
            if (v >= m->gdim[t][d]) inside = false;
            g += v * gstride[d];
        }
        int64_t n = inside ? valid : 0;
        if (mode == LOAD) {
            if (n) memcpy(part + q, full + g, (size_t)n * sizeof(float));
            if (n < row) memset(part + q + n, 0, (size_t)(row - n) * sizeof(float));
        } else if (mode == STORE) {
            if (n) memcpy(full + g, part + q, (size_t)n * sizeof(float));
        } else {
            for (int64_t k = 0; k < n; k++) full[g + k] += part[q + k];
        }
        for (int d = last - 1; d >= 0; d--) {
            if (++idx[d] < m->pdim[t][d]) break;
            idx[d] = 0;
        }
    }
}

static void decode_block(const emu *m, int t, int64_t id, int64_t *blk) {
    for (int a = m->na - 1; a >= 0; a--) {
        if (!m->e->tensors[t].has_axis[a]) {
            blk[a] = 0;
            continue;
        }
        int64_t f = m->p->ft[t][a];
        blk[a] = id % f;
        id /= f;
    }
}

static void emu_free(emu *m) {
    free(m->arena);
    free(m->tag);
    free(m->tag_tmp);
    free(m->sent);
    free(m->recv_count);
    free(m->bytes_count);
    free(m->copy_count);
    free(m->src);
}

static rotor_status emu_setup(emu *m, const rotor_place *pl, const rotor_chip *chip,
                              const rotor_emu_options *opt, rotor_error *err) {
    memset(m, 0, sizeof *m);
    m->pl = pl;
    m->e = rotor_place_expr(pl);
    m->p = rotor_place_plan(pl);
    m->info = rotor_place_info(pl);
    m->na = m->e->naxes;
    m->nt = m->e->ntensors;
    m->cores = m->info->cores;
    rotor_status st;
    if (m->e->op_class != ROTOR_OP_CONTRACTION && (st = rotor_expr_check_eval(m->e, err))) {
        rotor_error_prefix(err, "emulator");
        return st;
    }
    /* The SRAM bound, charged at the chip's element size: the emulator holds
     * float32 but models the chip's storage (FP16 on ipu-mk2). */
    int64_t eb = chip->element_bytes, charged = 0, off = 0;
    for (int t = 0; t < m->nt; t++) {
        int64_t n = 1;
        for (int d = 0; d < m->e->tensors[t].ndims; d++) {
            m->pdim[t][d] = m->info->part[t][d];
            n *= m->pdim[t][d];
        }
        rotor_emu_tensor_elems(m->e, t, m->gdim[t]);
        m->pelems[t] = n;
        axis_strides(m->e, t, m->pdim[t], m->pst[t]);
        m->toff[t] = off;
        off += n;
        charged += n * eb;
    }
    m->chunk = chip->shift_buffer_bytes / eb > 0 ? chip->shift_buffer_bytes / eb : 1;
    m->toff[m->nt] = off;
    if (m->info->rotates) charged += chip->shift_buffer_bytes;
    m->per_core = off + m->chunk;
    int64_t sram = opt && opt->sram_bytes > 0 ? opt->sram_bytes : rotor_chip_sram(chip);
    if (charged > sram) {
        char parts[256];
        int k = 0;
        for (int t = 0; t < m->nt && k < (int)sizeof parts; t++)
            k += snprintf(parts + k, sizeof parts - (size_t)k, "%s%s %lld", t ? ", " : "",
                          m->e->tensors[t].name, (long long)(m->pelems[t] * eb));
        return rotor_fail(err, ROTOR_ERR_NOFIT,
                          "emulator: every core must hold %lld bytes (partitions %s%s) but has %lld bytes "
                          "of SRAM",
                          (long long)charged, parts,
                          m->info->rotates ? ", shift buffer" : "", (long long)sram);
    }
    int64_t floats;
    if (!rotor_mul_i64(m->per_core, m->cores, &floats) || floats > INT64_MAX / 8)
        return rotor_fail(err, ROTOR_ERR_NOMEM, "emulator: memory of %lld cores overflows",
                          (long long)m->cores);
    size_t nc = (size_t)m->cores, nct = nc * (size_t)m->nt;
    m->arena = calloc((size_t)floats, sizeof(float));
    m->tag = malloc(nct * sizeof(int64_t));
    m->tag_tmp = malloc(nc * sizeof(int64_t));
    m->sent = calloc(nc, sizeof(int64_t));
    m->recv_count = calloc(nct, sizeof(int64_t));
    m->bytes_count = calloc(nct, sizeof(int64_t));
    m->copy_count = calloc(nct, sizeof(int64_t));
    m->src = malloc(nc * sizeof(int32_t));
    if (!m->arena || !m->tag || !m->tag_tmp || !m->sent || !m->recv_count || !m->bytes_count ||
        !m->copy_count || !m->src) {
        emu_free(m);
        return rotor_nomem(err);
    }
    return ROTOR_OK;
}

/* One transition: every tensor whose block changes moves around its rings. */
static void emu_transition(emu *m, const rotor_emu_options *opt, const int64_t *i_old,
                           const int64_t *i_new, int64_t *shift_no, rotor_emu_result *res) {
    bool any = false;
    memset(m->sent, 0, (size_t)m->cores * sizeof *m->sent);
    for (int t = 0; t < m->nt; t++) {
        if (!rotor_place_changes(m->pl, t, i_old, i_new)) continue;
        any = true;
        bool reverse = opt && opt->mutation == ROTOR_EMU_REVERSE_RING && opt->mutate_tensor == t;
        bool skip = opt && opt->mutation == ROTOR_EMU_SKIP_SHIFT && opt->mutate_tensor == t &&
                    opt->mutate_transition == shift_no[t];
        for (int64_t c = 0; c < m->cores; c++) {
            int64_t s = rotor_place_sender(m->pl, t, c, i_old, i_new, reverse);
            if (skip && c == opt->mutate_core) s = c;
            m->src[c] = (int32_t)s;
        }
        int64_t n = m->pelems[t], nchunks = 0;
        for (int64_t start = 0; start < n; start += m->chunk, nchunks++) {
            int64_t len = n - start < m->chunk ? n - start : m->chunk;
            for (int64_t c = 0; c < m->cores; c++) /* every send of this chunk lands */
                memcpy(sbuf(m, c), buf(m, m->src[c], t) + start, (size_t)len * sizeof(float));
            for (int64_t c = 0; c < m->cores; c++) /* ... then every receiver consumes it */
                memcpy(buf(m, c, t) + start, sbuf(m, c), (size_t)len * sizeof(float));
        }
        int64_t *tag = m->tag + (size_t)t * (size_t)m->cores;
        for (int64_t c = 0; c < m->cores; c++) m->tag_tmp[c] = tag[m->src[c]];
        memcpy(tag, m->tag_tmp, (size_t)m->cores * sizeof *tag);
        int64_t bytes = m->info->bytes[t];
        for (int64_t c = 0; c < m->cores; c++) {
            int64_t s = m->src[c];
            if (s == c) continue;
            m->sent[s] += bytes;
            m->bytes_count[(size_t)t * (size_t)m->cores + (size_t)s] += bytes;
            m->recv_count[(size_t)t * (size_t)m->cores + (size_t)c]++;
            m->copy_count[(size_t)t * (size_t)m->cores + (size_t)c] += nchunks;
        }
        shift_no[t]++;
    }
    if (!any) return;
    int64_t most = 0;
    for (int64_t c = 0; c < m->cores; c++)
        if (m->sent[c] > most) most = m->sent[c];
    res->exchange_bytes += most;
    res->transitions++;
}

/* Points of a step (all cores' sub-tasks) below which cores run serially. */
#define EMU_PARALLEL_MIN ((int64_t)1 << 15)

/* One core computes its sub-task for loop counter i. */
static rotor_status emu_compute(emu *m, const rotor_emu_options *opt, int64_t c, int64_t step,
                                const int64_t *i, rotor_error *err) {
    int64_t coord[ROTOR_MAX_AXES], j[ROTOR_MAX_AXES], blk[ROTOR_MAX_AXES], org[ROTOR_MAX_AXES];
    rotor_place_coords(m->pl, c, coord);
    rotor_place_subtask(m->pl, c, i, j);
    box b = {.na = m->na, .nt = m->nt, .inner = pick_inner(m->e)};
    int64_t start[ROTOR_MAX_AXES];
    bool empty = false;
    for (int a = 0; a < m->na; a++) {
        int64_t s = m->info->sub_task[a];
        start[a] = coord[a] * m->info->sub_op[a] + j[a] * s;
        int64_t n = m->e->extent[a] - start[a];
        b.n[a] = n < 0 ? 0 : n < s ? n : s;
        empty |= b.n[a] == 0;
    }
    const float *x[ROTOR_MAX_TENSORS] = {NULL};
    float *y = NULL;
    for (int t = 0; t < m->nt; t++) {
        rotor_place_block(m->pl, t, j, blk);
        int64_t want = rotor_place_block_id(m->pl, t, blk);
        int64_t held = m->tag[(size_t)t * (size_t)m->cores + (size_t)c];
        if (want != held && !(opt && opt->no_tag_check))
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "emulator: at step %lld core %lld needs partition %lld of %s but holds %lld",
                              (long long)step, (long long)c, (long long)want, m->e->tensors[t].name,
                              (long long)held);
        part_origin(m, t, coord, blk, org);
        int64_t base = 0;
        for (int a = 0; a < m->na; a++) {
            b.st[t][a] = m->pst[t][a];
            base += m->pst[t][a] * (start[a] - org[a]);
        }
        if (t == 0) y = buf(m, c, 0) + base;
        else x[t] = buf(m, c, t) + base;
    }
    if (empty) return ROTOR_OK;
    if (m->e->op_class == ROTOR_OP_CONTRACTION) kernel_contract_f(&b, y, x[1], x[2]);
    else kernel_eval_f(m->e, &b, y, x);
    return ROTOR_OK;
}

rotor_status rotor_emu_run(const rotor_place *pl, const rotor_chip *chip,
                           const rotor_emu_options *opt, const float *const *in, float *out,
                           rotor_emu_result *res, rotor_error *err) {
    memset(res, 0, sizeof *res);
    emu m;
    rotor_status st = emu_setup(&m, pl, chip, opt, err);
    if (st) return st;
    res->cores = m.cores;
    res->memory_per_core = m.info->memory;

    /* Step 0: every core loads, for every tensor, the partition the placement
     * gives it (the output starts at zero). */
    int64_t i[ROTOR_MAX_AXES], i_prev[ROTOR_MAX_AXES];
    rotor_place_loop(pl, 0, i);
    for (int64_t c = 0; c < m.cores; c++) {
        int64_t coord[ROTOR_MAX_AXES], j[ROTOR_MAX_AXES], blk[ROTOR_MAX_AXES], org[ROTOR_MAX_AXES];
        rotor_place_coords(pl, c, coord);
        rotor_place_subtask(pl, c, i, j);
        for (int t = 0; t < m.nt; t++) {
            rotor_place_block(pl, t, j, blk);
            int64_t id = rotor_place_block_id(pl, t, blk);
            if (opt && opt->mutation == ROTOR_EMU_CORRUPT_PLACEMENT && opt->mutate_tensor == t &&
                opt->mutate_core == c) {
                id = (id + 1) % m.info->ring_size[t];
                decode_block(&m, t, id, blk);
            }
            m.tag[(size_t)t * (size_t)m.cores + (size_t)c] = id;
            if (t == 0) continue; /* zeroed by calloc */
            part_origin(&m, t, coord, blk, org);
            transfer(&m, t, org, buf(&m, c, t), (float *)in[t], LOAD);
        }
    }

    int64_t shift_no[ROTOR_MAX_TENSORS] = {0}, work = 1; /* points of one sub-task */
    for (int a = 0; a < m.na; a++) work *= m.info->sub_task[a];
    for (int64_t s = 0; s < m.info->total_steps; s++) {
        if (s > 0) {
            memcpy(i_prev, i, sizeof i);
            rotor_place_loop(pl, s, i);
            emu_transition(&m, opt, i_prev, i, shift_no, res);
        }
        /* Cores compute apart, each into its own buffers: in parallel, and
         * the same bits whatever the thread count.  A core that fails (it
         * holds the wrong partition) fails before it writes; the lowest
         * such core is reported, as a serial run would. */
        int64_t bad = m.cores;
#pragma omp parallel for schedule(static) reduction(min : bad) if (m.cores * work >= EMU_PARALLEL_MIN)
        for (int64_t c = 0; c < m.cores; c++) {
            rotor_error ignored;
            if (emu_compute(&m, opt, c, s, i, &ignored) && c < bad) bad = c;
        }
        if (bad < m.cores) {
            st = emu_compute(&m, opt, bad, s, i, err);
            emu_free(&m);
            return st;
        }
    }
    res->steps = m.info->total_steps;

    /* The output's partial sums: each of the R_Y rings holds one copy of every
     * partition; the reduction adds them (cost-model-v1.md "Reduction"). */
    int64_t ny = rotor_emu_tensor_elems(m.e, 0, NULL);
    if (m.e->accumulate) memset(out, 0, (size_t)ny * sizeof *out);
    for (int64_t c = 0; c < m.cores; c++) {
        int64_t coord[ROTOR_MAX_AXES], j[ROTOR_MAX_AXES], blk[ROTOR_MAX_AXES], org[ROTOR_MAX_AXES];
        rotor_place_coords(pl, c, coord);
        rotor_place_subtask(pl, c, i, j);
        rotor_place_block(pl, 0, j, blk);
        part_origin(&m, 0, coord, blk, org);
        transfer(&m, 0, org, buf(&m, c, 0), out, m.e->accumulate ? ADD : STORE);
    }

    res->exchange_time = rotor_cost_shift_s(chip, res->exchange_bytes, res->transitions);
    if (m.info->rings[0] > 1) res->reduction_time = rotor_cost_reduction_s(chip, m.info->bytes[0], m.info->rings[0]);
    for (int t = 0; t < m.nt; t++) {
        res->shifts_min[t] = INT64_MAX;
        for (int64_t c = 0; c < m.cores; c++) {
            size_t k = (size_t)t * (size_t)m.cores + (size_t)c;
            if (m.recv_count[k] < res->shifts_min[t]) res->shifts_min[t] = m.recv_count[k];
            if (m.recv_count[k] > res->shifts_max[t]) res->shifts_max[t] = m.recv_count[k];
            if (m.bytes_count[k] > res->bytes_max[t]) res->bytes_max[t] = m.bytes_count[k];
            if (m.copy_count[k] > res->copies_max[t]) res->copies_max[t] = m.copy_count[k];
        }
        if (opt && opt->core_shifts)
            memcpy(opt->core_shifts + (size_t)t * (size_t)m.cores, m.recv_count + (size_t)t * (size_t)m.cores,
                   (size_t)m.cores * sizeof(int64_t));
    }
    emu_free(&m);
    return ROTOR_OK;
}
