/* cost.c — cost model v1 (docs/cost-model-v1.md, "Time") and the
 * table of cost models.
 *
 * Decisions where the spec is silent (docs/cost-model.md repeats them):
 *  - pad(Mg) and pad(Kg) round to the systolic rows r, pad(Ng) to the columns c
 *    (the spec's 16 for both on ipu-mk2).
 *  - In a contraction, an axis in the output and both inputs is batch, in the
 *    output and one input is Mg (first input) or Ng (second), and any axis not
 *    in the output is Kg.
 *  - Communication sums shift bytes exactly in integers and divides once by
 *    beta, so the search's bounds compare like with like.
 */
#include "rotor/op/cost.h"

#include "rotor/op/meshmap.h"

#include <string.h>

double rotor_cost_v1_subtask(const rotor_expr *e, const rotor_chip *chip, const int64_t *sub) {
    if (e->op_class == ROTOR_OP_CONTRACTION) {
        const rotor_tensor *y = &e->tensors[0], *x1 = &e->tensors[1], *x2 = &e->tensors[2];
        double b = 1, mg = 1, ng = 1, kg = 1;
        for (int a = 0; a < e->naxes; a++) {
            double s = (double)sub[a];
            if (!y->has_axis[a]) kg *= s;
            else if (x1->has_axis[a] && x2->has_axis[a]) b *= s;
            else if (x1->has_axis[a]) mg *= s;
            else ng *= s;
        }
        /* Group products fit easily in int64 (each s_a <= E_a <= 2^32 and the
         * iteration space is bounded at bind time), but pad in doubles to keep
         * one arithmetic path: values below 2^53 are exact. */
        double flops = 2.0 * b * (double)rotor_cost_pad_to((int64_t)mg, chip->systolic_rows) *
                       (double)rotor_cost_pad_to((int64_t)kg, chip->systolic_rows) *
                       (double)rotor_cost_pad_to((int64_t)ng, chip->systolic_cols);
        return flops / rotor_chip_matrix_rate(chip);
    }
    double points = 1;
    for (int a = 0; a < e->naxes; a++) points *= (double)sub[a];
    return (double)e->flops_per_point * points / rotor_chip_vector_rate(chip);
}

double rotor_cost_shift_s(const rotor_chip *chip, int64_t bytes, int64_t rounds) {
    return (double)bytes / rotor_chip_link_bw(chip) + (double)rounds * rotor_chip_link_latency(chip);
}

double rotor_cost_reduction_s(const rotor_chip *chip, int64_t bytes, int64_t rings) {
    if (rings <= 1) return 0.0;
    double beta = rotor_chip_link_bw(chip), alpha = rotor_chip_link_latency(chip);
    return (double)(rings - 1) / (double)rings * (double)bytes / beta + (double)(rings - 1) * alpha;
}

/* One level of the loop order.  Along its axis the rotating tensors change
 * block every P_t = S / f_t steps, and the P_t form a chain (alignment,
 * plan.c), so a boundary j's moving set is every tensor whose P_t divides
 * the largest period dividing j.  per[k] ascending; shift[k] the time of
 * the set with P_t <= per[k] (the latency, then per set of links the sum
 * of its tensors, the busiest set counting); n[k] the boundaries of one
 * sweep whose largest period is per[k]; none: those where nothing moves. */
typedef struct level_shifts {
    int k;
    int64_t per[ROTOR_MAX_TENSORS], n[ROTOR_MAX_TENSORS], none;
    double shift[ROTOR_MAX_TENSORS];
} level_shifts;

static void level_of(const rotor_expr *e, const rotor_plan *p, int64_t s, int a, const rotor_shift_step *ss,
                     level_shifts *lv) {
    lv->k = 0;
    for (int t = 0; t < e->ntensors; t++) {
        if (p->ft[t][a] <= 1) continue;
        int64_t per = s / p->ft[t][a];
        int i = 0;
        while (i < lv->k && lv->per[i] < per) i++;
        if (i == lv->k || lv->per[i] != per) {
            memmove(lv->per + i + 1, lv->per + i, (size_t)(lv->k - i) * sizeof lv->per[0]);
            lv->per[i] = per;
            lv->k++;
        }
    }
    for (int i = 0; i < lv->k; i++) {
        double on[ROTOR_SHIFT_DIMS] = {0}, most = 0;
        for (int t = 0; t < e->ntensors; t++)
            if (p->ft[t][a] > 1 && s / p->ft[t][a] <= lv->per[i])
                for (int d = 0; d < ROTOR_SHIFT_DIMS; d++)
                    if (ss->dim[t] == d || ss->dim[t] == ROTOR_SHIFT_ALL) on[d] += ss->w[t];
        for (int d = 0; d < ROTOR_SHIFT_DIMS; d++)
            if (on[d] > most) most = on[d];
        lv->shift[i] = ss->lat + most;
        lv->n[i] = s / lv->per[i] - (i + 1 < lv->k ? s / lv->per[i + 1] : 1);
    }
    lv->none = lv->k ? s - s / lv->per[0] : s - 1;
}

static double over(double shift, double run) { return shift > run ? shift - run : 0.0; }

void rotor_cost_shift_walk(const rotor_expr *e, const rotor_plan *p, const rotor_plan_info *info,
                           const rotor_shift_step *ss, double sub_s, double *comm, double *exposed) {
    /* Every step pays the latency (cost-model-v1.md's (T - 1) alpha); a
     * boundary where something moves, its shift.  With overlap
     * (docs/cost-model.md, "Overlap") a run of sub-tasks on the same
     * partitions ends at a boundary where something moves, and the shift
     * into it starts with the run before, so only its excess over that
     * run's compute shows.  The boustrophedon walk makes every run the
     * innermost level's least period p steps long, except the first run of
     * an inner sweep after an outer boundary where nothing moved: 2p. */
    int act[ROTOR_MAX_AXES], na = 0;
    for (int l = 0; l < e->naxes; l++)
        if (info->steps[p->order[l]] > 1) act[na++] = p->order[l];
    *comm = *exposed = 0;
    if (na == 0) return;
    level_shifts in;
    level_of(e, p, info->steps[act[na - 1]], act[na - 1], ss, &in);
    double run = (double)in.per[0] * sub_s, sweeps = 1, still = 0;
    for (int i = 0; i < na; i++) {
        level_shifts lv;
        level_of(e, p, info->steps[act[i]], act[i], ss, &lv);
        for (int k = 0; k < lv.k; k++) {
            *comm += sweeps * (double)lv.n[k] * lv.shift[k];
            *exposed += sweeps * (double)lv.n[k] * over(lv.shift[k], run);
        }
        *comm += sweeps * (double)lv.none * ss->lat;
        if (i + 1 < na) still += sweeps * (double)lv.none;
        sweeps *= (double)info->steps[act[i]];
    }
    *exposed += still * (over(in.shift[0], 2 * run) - over(in.shift[0], run));
}

static void v1_evaluate(const rotor_cost_model *m, const rotor_expr *e, const rotor_chip *chip,
                        const rotor_plan *p, const rotor_plan_info *info, rotor_cost *out) {
    (void)m;
    (void)p;
    out->compute = (double)info->total_steps * rotor_cost_v1_subtask(e, chip, info->sub_task);
    int64_t moved = 0; /* sum_X shifts(X) * bytes(X); bounded by T * memory */
    for (int t = 0; t < e->ntensors; t++) moved += info->shifts[t] * info->bytes[t];
    out->comm = rotor_cost_shift_s(chip, moved, info->total_steps - 1);
    /* Only the output holds partial sums; replicas of inputs need no reduction. */
    out->reduction = rotor_cost_reduction_s(chip, info->bytes[0], info->rings[0]);
    out->total = out->compute + out->comm + out->reduction;
}

static double v1_step_bound(const rotor_cost_model *m, const rotor_expr *e, const rotor_chip *chip,
                            const int64_t *fop, const int64_t *steps, const int64_t *sub) {
    (void)m;
    if (steps) {
        double t = 1;
        for (int a = 0; a < e->naxes; a++) t *= (double)steps[a];
        return t * rotor_cost_v1_subtask(e, chip, sub);
    }
    /* Any steps: S_a * pad(ceil(E_a / (F_a S_a))) >= pad(ceil(E_a / F_a)) for
     * every group (docs/cost-model.md, "Bounds"), so the plan with all S_a = 1
     * has the least compute of its F_op. */
    /* Pass 1's walk carries this value from axis to axis (op/searchint.h,
     * v1_floor) with the same operations in the same order: a change here or
     * in rotor_cost_v1_subtask changes it too (tests/test_searchbig.c,
     * the_walks_carried_v1_floor_is_the_models_bit_for_bit, fails until it
     * does). */
    int64_t one[ROTOR_MAX_AXES];
    for (int a = 0; a < e->naxes; a++) one[a] = (e->extent[a] + fop[a] - 1) / fop[a];
    return rotor_cost_v1_subtask(e, chip, one);
}

static double v1_tensor_bound(const rotor_cost_model *m, const rotor_expr *e,
                              const rotor_chip *chip, int t, int64_t bytes, int64_t ring,
                              int64_t rings) {
    (void)m;
    /* A tensor split into Q = prod f_t partitions visits all of them: under any
     * loop order shifts(X) >= Q - 1 (the sum telescopes to Q - 1 when its axes
     * are outermost and only grows otherwise). */
    /* Where plans may overlap (docs/cost-model.md, "Overlap") the shifts may
     * all hide under compute: only the reduction, which follows the last
     * sub-task, is the tensor's own. */
    double b = chip->compute_overlap ? 0.0 : (double)((ring - 1) * bytes) / rotor_chip_link_bw(chip);
    /* On a mesh the tensors ringing along X and along Y shift at once
     * (rotor_cost_shift_walk): a step costs the busier of the two, at least
     * half their sum. */
    if (chip->topology == ROTOR_TOPO_MESH) b /= 2;
    if (t == 0) b += rotor_cost_reduction_s(chip, bytes, rings);
    /* On a mesh a reduction ring of three or more lies folded along one
     * dimension (op/meshmap.h): every round crosses at least 2 hops, so its
     * latency is at least twice all-to-all's (what meshmap charges, at the
     * least stride).  A wafer's millions of plans prune on it. */
    if (t == 0 && rings >= 3 && chip->topology == ROTOR_TOPO_MESH)
        b += (double)(rings - 1) * rotor_chip_link_latency(chip);
    (void)e;
    return b;
}

static const rotor_cost_model v1_model = {
    .name = "v1",
    .description = "analytical cost model v1 (cost-model-v1.md): padded systolic compute, "
                   "shift bytes over link bandwidth, ring reduction",
    .evaluate = v1_evaluate,
    .step_bound = v1_step_bound,
    .tensor_bound = v1_tensor_bound,
    /* S_a -> k S_a: s_a -> ceil(s_a / k), so k s_a' >= s_a and each group's
     * product g' has k g' >= g; k pad(g') is a multiple of the rows (or
     * columns) at least g, so at least pad(g); the batch group and the
     * vector ops' points likewise: T' t_sub' = k T t_sub' >= T t_sub. */
    .step_bound_multiples = true,
};

/* The registry: adding a model is one file and one row here. */
static const rotor_cost_model *const models[] = {&v1_model};

int rotor_cost_model_count(void) { return (int)(sizeof models / sizeof models[0]); }
const rotor_cost_model *rotor_cost_model_at(int i) {
    return i >= 0 && i < rotor_cost_model_count() ? models[i] : NULL;
}
const rotor_cost_model *rotor_cost_model_find(const char *name) {
    for (int i = 0; i < rotor_cost_model_count(); i++)
        if (strcmp(models[i]->name, name) == 0) return models[i];
    return NULL;
}
const rotor_cost_model *rotor_cost_model_default(void) { return models[0]; }

rotor_status rotor_cost_plan(const rotor_cost_model *m, const rotor_expr *e, const rotor_chip *chip,
                             const rotor_plan *p, rotor_plan_info *info, rotor_cost *out,
                             rotor_error *err) {
    rotor_status st = rotor_plan_derive(e, chip, p, info, err);
    if (st) return st;
    out->hidden = 0;
    m->evaluate(m, e, chip, p, info, out);
    /* what one step's shift costs: a latency, and each tensor's bytes over
     * its own link (all-to-all: one port a core, so they add up) */
    rotor_shift_step ss = {.lat = rotor_chip_link_latency(chip)};
    for (int t = 0; t < e->ntensors; t++) ss.w[t] = (double)info->bytes[t] / rotor_chip_link_bw(chip);
    if (chip->topology == ROTOR_TOPO_MESH) {
        /* the same terms with the mesh's routes counted (meshmap.h) */
        rotor_mesh_map mm;
        if ((st = rotor_mesh_map_plan(e, chip, p, info, &mm, err))) return st;
        out->comm = mm.comm;
        out->reduction = mm.reduction;
        out->total = out->compute + out->comm + out->reduction;
        rotor_mesh_map_step(&mm, info, chip, &ss);
    }
    if (info->overlap) {
        double all, exposed;
        rotor_cost_shift_walk(e, p, info, &ss, rotor_cost_v1_subtask(e, chip, info->sub_task), &all, &exposed);
        out->hidden = out->comm - exposed;
        out->total = out->compute + exposed + out->reduction;
    }
    return ROTOR_OK;
}
