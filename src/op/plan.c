/* plan.c — what an rTensor plan is, whether it is valid, and what it implies
 * (T10 §4.1–§4.2; cost-model-v1.md "A plan" and "Derived quantities").
 *
 * This file owns every derived quantity: sharing degree, rings, steps,
 * padding, partitions, memory and shift counts.  The cost model, the search,
 * and later the placement and the emulator read them from rotor_plan_info and
 * never recompute them. */
#include "rotor/op/plan.h"

#include <stdio.h>
#include <string.h>

void rotor_plan_init(const rotor_expr *e, rotor_plan *p) {
    memset(p, 0, sizeof *p);
    for (int a = 0; a < ROTOR_MAX_AXES; a++) p->fop[a] = 1;
    for (int t = 0; t < ROTOR_MAX_TENSORS; t++)
        for (int a = 0; a < ROTOR_MAX_AXES; a++) p->ft[t][a] = 1;
    for (int a = 0; a < e->naxes; a++) p->order[a] = a;
}

void rotor_plan_steps(const rotor_expr *e, const int64_t ft[ROTOR_MAX_TENSORS][ROTOR_MAX_AXES],
                      int64_t *steps) {
    for (int a = 0; a < e->naxes; a++) {
        steps[a] = 1;
        for (int t = 0; t < e->ntensors; t++)
            if (e->tensors[t].has_axis[a] && ft[t][a] > steps[a]) steps[a] = ft[t][a];
    }
}

int64_t rotor_tensor_extents(const rotor_expr *e, int t, int64_t *dim_extent) {
    const rotor_tensor *x = &e->tensors[t];
    int64_t n = 1;
    bool over = false;
    for (int d = 0; d < x->ndims; d++) {
        int64_t len[2];
        for (int k = 0; k < x->dims[d].nterms; k++) len[k] = e->extent[x->dims[d].axis[k]];
        int64_t ext = rotor_dim_extent(&x->dims[d], len);
        if (dim_extent) dim_extent[d] = ext;
        if (!over && !rotor_mul_i64(n, ext, &n)) over = true;
    }
    return over ? INT64_MAX : n;
}

int64_t rotor_tensor_elements(const rotor_expr *e, int t) { return rotor_tensor_extents(e, t, NULL); }

int64_t rotor_plan_shifts(const rotor_expr *e, const int64_t *steps, const int64_t *ft_x,
                          const int *order) {
    /* cost-model-v1.md "Shifts": the boustrophedon walk changes the index of
     * level l (prod_{i<l} S_i) * (S_l - 1) times, and the tensor's block along
     * that axis changes at t_l - 1 of every S_l - 1 such changes. */
    int64_t outer = 1, shifts = 0;
    for (int l = 0; l < e->naxes; l++) {
        int a = order[l];
        shifts += outer * (ft_x[a] - 1);
        outer *= steps[a];
    }
    return shifts;
}

void rotor_plan_best_order(const rotor_expr *e, const int64_t *steps,
                           const int64_t ft[ROTOR_MAX_TENSORS][ROTOR_MAX_AXES],
                           const int64_t *bytes, int *order) {
    /* Communication is sum_l Q_l * w_l with Q_l = prod_{i<l} S_i.  Swapping
     * adjacent levels a, b changes Q*(w_a + S_a w_b) into Q*(w_b + S_b w_a), so
     * a belongs outside b exactly when w_a (S_b - 1) >= w_b (S_a - 1): sorting by
     * w/(S-1), largest outermost, is optimal.  Axes with S = 1 cost nothing
     * anywhere; they go first, in axis order. */
    __int128 w[ROTOR_MAX_AXES];
    int n = 0;
    for (int a = 0; a < e->naxes; a++) {
        w[a] = 0;
        for (int t = 0; t < e->ntensors; t++)
            if (e->tensors[t].has_axis[a]) w[a] += (__int128)(ft[t][a] - 1) * bytes[t];
        if (steps[a] == 1) order[n++] = a;
    }
    int first_active = n;
    for (int a = 0; a < e->naxes; a++) {
        if (steps[a] == 1) continue;
        /* insertion: place a after every active axis that goes outside it */
        int i = n++;
        while (i > first_active) {
            int b = order[i - 1];
            __int128 lhs = w[a] * (steps[b] - 1), rhs = w[b] * (steps[a] - 1);
            if (lhs > rhs) { /* a strictly outside b */
                order[i] = b;
                i--;
            } else {
                break;
            }
        }
        order[i] = a;
    }
}

int rotor_plan_compare(const rotor_expr *e, const rotor_plan *x, const rotor_plan *y) {
    for (int a = 0; a < e->naxes; a++)
        if (x->fop[a] != y->fop[a]) return x->fop[a] < y->fop[a] ? -1 : 1;
    for (int t = 0; t < e->ntensors; t++)
        for (int a = 0; a < e->naxes; a++)
            if (x->ft[t][a] != y->ft[t][a]) return x->ft[t][a] < y->ft[t][a] ? -1 : 1;
    for (int l = 0; l < e->naxes; l++)
        if (x->order[l] != y->order[l]) return x->order[l] < y->order[l] ? -1 : 1;
    if (x->overlap != y->overlap) return x->overlap ? 1 : -1;
    return 0;
}

static rotor_status overflow(rotor_error *err, const char *what) {
    return rotor_fail(err, ROTOR_ERR_INPUT, "plan: %s overflows 64 bits", what);
}

/* F_op: 1 <= F_op[a] <= E_a, and prod F_op <= N. */
static rotor_status derive_cores(const rotor_expr *e, const rotor_chip *chip, const rotor_plan *p,
                                 rotor_plan_info *info, rotor_error *err) {
    int64_t cores = 1;
    for (int a = 0; a < e->naxes; a++) {
        if (p->fop[a] < 1 || p->fop[a] > e->extent[a])
            return rotor_fail(err, ROTOR_ERR_INPUT, "F_op[%s] = %lld: expected 1 to E_%s = %lld",
                              e->axis_name[a], (long long)p->fop[a], e->axis_name[a],
                              (long long)e->extent[a]);
        if (!rotor_mul_i64(cores, p->fop[a], &cores)) return overflow(err, "prod F_op");
    }
    int64_t n = rotor_chip_cores(chip);
    if (cores > n)
        return rotor_fail(err, ROTOR_ERR_INPUT, "F_op uses %lld cores; the chip has %lld",
                          (long long)cores, (long long)n);
    info->cores = cores;
    return ROTOR_OK;
}

/* f_t, sharing degree P_X and rings R_X = P_X / prod f_t^X. */
static rotor_status derive_rings(const rotor_expr *e, const rotor_plan *p, rotor_plan_info *info,
                                 rotor_error *err) {
    for (int t = 0; t < e->ntensors; t++) {
        const rotor_tensor *x = &e->tensors[t];
        int64_t share = 1, q = 1;
        for (int a = 0; a < e->naxes; a++) {
            int64_t f = p->ft[t][a];
            if (f < 1)
                return rotor_fail(err, ROTOR_ERR_INPUT, "f_t_%s_%s = %lld: expected at least 1",
                                  x->name, e->axis_name[a], (long long)f);
            if (!x->has_axis[a]) {
                if (f != 1)
                    return rotor_fail(err, ROTOR_ERR_INPUT,
                                      "f_t_%s_%s = %lld: tensor %s has no axis %s (expected 1)",
                                      x->name, e->axis_name[a], (long long)f, x->name,
                                      e->axis_name[a]);
                share *= p->fop[a]; /* <= cores: no overflow */
            } else if (!rotor_mul_i64(q, f, &q)) {
                return overflow(err, "prod f_t");
            }
        }
        if (share % q != 0)
            return rotor_fail(err, ROTOR_ERR_INPUT,
                              "prod f_t of %s (%lld) does not divide its sharing degree P_%s = %lld",
                              x->name, (long long)q, x->name, (long long)share);
        info->sharing[t] = share;
        info->ring_size[t] = q;
        info->rings[t] = share / q;
    }
    return ROTOR_OK;
}

/* Alignment: along each axis the factors of the tensors that carry it
 * pairwise divide one another (T10 §4.2, "Alignment constraints"); the loop
 * order is a permutation of the axes. */
static rotor_status check_aligned(const rotor_expr *e, const rotor_plan *p, rotor_error *err) {
    const int na = e->naxes, nt = e->ntensors;
    for (int a = 0; a < na; a++)
        for (int t = 0; t < nt; t++) {
            if (!e->tensors[t].has_axis[a]) continue;
            for (int u = t + 1; u < nt; u++) {
                if (!e->tensors[u].has_axis[a]) continue;
                int64_t f = p->ft[t][a], g = p->ft[u][a];
                if (f % g != 0 && g % f != 0)
                    return rotor_fail(err, ROTOR_ERR_INPUT,
                                      "f_t along %s are not aligned: f_t_%s_%s = %lld and f_t_%s_%s = "
                                      "%lld do not divide one another",
                                      e->axis_name[a], e->tensors[t].name, e->axis_name[a],
                                      (long long)f, e->tensors[u].name, e->axis_name[a], (long long)g);
            }
        }
    bool seen[ROTOR_MAX_AXES] = {false};
    for (int l = 0; l < na; l++) {
        int a = p->order[l];
        if (a < 0 || a >= na || seen[a])
            return rotor_fail(err, ROTOR_ERR_INPUT, "loop order is not a permutation of the %d axes", na);
        seen[a] = true;
    }
    return ROTOR_OK;
}

/* Steps and padding. */
static rotor_status derive_steps(const rotor_expr *e, const rotor_plan *p, rotor_plan_info *info,
                                 rotor_error *err) {
    rotor_plan_steps(e, p->ft, info->steps);
    int64_t total = 1;
    double ratio = 1.0;
    for (int a = 0; a < e->naxes; a++) {
        int64_t unit;
        if (!rotor_mul_i64(p->fop[a], info->steps[a], &unit)) return overflow(err, "F_op * S");
        int64_t blocks = (e->extent[a] + unit - 1) / unit;
        if (!rotor_mul_i64(blocks, unit, &info->padded[a])) return overflow(err, "padded extent");
        info->sub_op[a] = info->padded[a] / p->fop[a];
        info->sub_task[a] = info->sub_op[a] / info->steps[a];
        if (!rotor_mul_i64(total, info->steps[a], &total)) return overflow(err, "total steps T");
        ratio *= (double)info->padded[a] / (double)e->extent[a];
        if (info->steps[a] > 1) info->rotates = true;
    }
    info->total_steps = total;
    info->padding_ratio = ratio;
    return ROTOR_OK;
}

/* A plan overlaps only where the chip's cores compute while their links
 * move data, only if it has something to shift, and only its inputs: a
 * run writes the output's partition, so a rotating output could leave only
 * after the run (docs/cost-model.md, "Overlap").  And only rings of one
 * digit (every shift steps the ring by one): the replay of rings that
 * step by several digits was measured up to 6 % slower than the closed
 * form (docs/cost-model.md says where). */
/* Whether plan p cannot overlap on chip (the one statement of the rule, for
 * derive's error and the search's question); the reason is written into
 * buf when buf is not NULL.  The search asks for every plan it costs
 * (search_leaf) and wants no reason: formatting one was 0.6 % of a
 * DenseNet-121 compile's instructions on a chip without overlap. */
static bool overlap_refused(const rotor_expr *e, const rotor_chip *chip, const rotor_plan *p,
                            const rotor_plan_info *info, char *buf, size_t size) {
    if (!chip->compute_overlap) {
        if (buf)
            snprintf(buf, size,
                     "plan: overlap needs a chip whose cores compute while their links move data "
                     "(compute_overlap = 1); %s has 0",
                     chip->name);
        return true;
    }
    if (!info->rotates) {
        if (buf) snprintf(buf, size, "plan: overlap needs a rotating tensor (some f_t > 1)");
        return true;
    }
    if (info->ring_size[0] > 1) {
        if (buf)
            snprintf(buf, size,
                     "plan: overlap needs the output %s in place (it rotates: its partial sums move only "
                     "once a run has written them)",
                     e->tensors[0].name);
        return true;
    }
    for (int t = 1; t < e->ntensors; t++)
        if (!rotor_plan_one_digit(e, p, t)) {
            if (buf)
                snprintf(buf, size,
                         "plan: overlap needs every ring to step one way: %s rotates along more than one "
                         "axis or inside another tensor's ring",
                         e->tensors[t].name);
            return true;
        }
    return false;
}

static rotor_status check_overlap(const rotor_expr *e, const rotor_chip *chip, const rotor_plan *p,
                                  rotor_plan_info *info, rotor_error *err) {
    info->overlap = p->overlap;
    char why[ROTOR_ERROR_MAX];
    if (p->overlap && overlap_refused(e, chip, p, info, why, sizeof why))
        return rotor_fail(err, ROTOR_ERR_INPUT, "%s", why);
    return ROTOR_OK;
}

bool rotor_plan_one_digit(const rotor_expr *e, const rotor_plan *p, int t) {
    int axes = 0;
    for (int a = 0; a < e->naxes; a++) {
        int64_t f = p->ft[t][a];
        if (f <= 1) continue;
        axes++;
        for (int u = 0; u < e->ntensors; u++)
            if (e->tensors[u].has_axis[a] && p->ft[u][a] > 1 && p->ft[u][a] < f) return false;
    }
    return axes <= 1;
}

bool rotor_plan_may_overlap(const rotor_expr *e, const rotor_chip *chip, const rotor_plan *p,
                            const rotor_plan_info *info) {
    return !overlap_refused(e, chip, p, info, NULL, 0);
}

/* Partitions and memory per core. */
static rotor_status derive_memory(const rotor_expr *e, const rotor_chip *chip, const rotor_plan *p,
                                  rotor_plan_info *info, rotor_error *err) {
    int64_t mem = 0;
    int64_t eb = chip->element_bytes;
    for (int t = 0; t < e->ntensors; t++) {
        const rotor_tensor *x = &e->tensors[t];
        int64_t bytes = eb;
        for (int d = 0; d < x->ndims; d++) {
            const rotor_dim *dim = &x->dims[d];
            int64_t len[2];
            for (int k = 0; k < dim->nterms; k++)
                len[k] = info->sub_op[dim->axis[k]] / p->ft[t][dim->axis[k]];
            int64_t ext = rotor_dim_extent(dim, len);
            info->part[t][d] = ext;
            if (!rotor_mul_i64(bytes, ext, &bytes)) return overflow(err, "partition bytes");
        }
        info->bytes[t] = bytes;
        if (!rotor_add_i64(mem, bytes, &mem)) return overflow(err, "memory per core");
    }
    if (info->rotates) {
        /* Overlap (docs/cost-model.md): a receive buffer for every rotating
         * tensor, in place of the staging buffer B_buf, and never less than
         * it, so that the search's memory floors (which add B_buf) hold. */
        int64_t buf = 0;
        for (int t = 0; p->overlap && t < e->ntensors; t++)
            if (info->ring_size[t] > 1 && !rotor_add_i64(buf, info->bytes[t], &buf))
                return overflow(err, "double buffers");
        if (buf < chip->shift_buffer_bytes) buf = chip->shift_buffer_bytes;
        if (!rotor_add_i64(mem, buf, &mem)) return overflow(err, "memory per core");
    }
    info->memory = mem;
    if (mem > rotor_chip_sram(chip))
        return rotor_fail(err, ROTOR_ERR_NOFIT, "needs %lld bytes per core; the chip has %lld",
                          (long long)mem, (long long)rotor_chip_sram(chip));
    return ROTOR_OK;
}

rotor_status rotor_plan_derive(const rotor_expr *e, const rotor_chip *chip, const rotor_plan *p,
                               rotor_plan_info *info, rotor_error *err) {
    memset(info, 0, sizeof *info);
    rotor_status st;
    if ((st = derive_cores(e, chip, p, info, err)) || (st = derive_rings(e, p, info, err)) ||
        (st = check_aligned(e, p, err)) || (st = derive_steps(e, p, info, err)) ||
        (st = check_overlap(e, chip, p, info, err)) || (st = derive_memory(e, chip, p, info, err)))
        return st;
    for (int t = 0; t < e->ntensors; t++)
        info->shifts[t] = rotor_plan_shifts(e, info->steps, p->ft[t], p->order);
    return ROTOR_OK;
}
