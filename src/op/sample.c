/* sample.c — random valid compute-shift plans (see include/rotor/op/sample.h).
 *
 * Draws are rejection-sampled against rotor_plan_derive, the one judge of
 * validity, so the sampler can never disagree with the planner about what a
 * valid plan is.  "Uniform-ish": F_op is log-uniform per axis (so small and
 * large splits are equally common), ring sizes are uniform over the divisors
 * of the sharing degree, loop orders uniform. */
#include "rotor/op/sample.h"
#include "rotor/op/cost.h"
#include "rotor/op/meshmap.h"

#include <math.h>
#include <stddef.h>

uint64_t rotor_rng_next(rotor_rng *r) {
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int64_t rotor_rng_below(rotor_rng *r, int64_t n) {
    return n <= 1 ? 0 : (int64_t)(rotor_rng_next(r) % (uint64_t)n);
}

static int64_t log_uniform(rotor_rng *r, int64_t max) {
    if (max <= 1) return 1;
    double u = (double)(rotor_rng_next(r) >> 11) * 0x1.0p-53;
    int64_t v = (int64_t)floor(exp(u * log((double)max + 1.0)));
    return v < 1 ? 1 : v > max ? max : v;
}

static int64_t random_divisor(rotor_rng *r, int64_t n) {
    int64_t divs[2048], nd = 0;
    for (int64_t d = 1; d * d <= n && nd < 2046; d++)
        if (n % d == 0) {
            divs[nd++] = d;
            if (d != n / d) divs[nd++] = n / d;
        }
    return divs[rotor_rng_below(r, nd)];
}

static void draw(const rotor_expr *e, int64_t budget, rotor_rng *r, rotor_plan *p) {
    rotor_plan_init(e, p);
    const int na = e->naxes, nt = e->ntensors;
    int perm[ROTOR_MAX_AXES];
    for (int a = 0; a < na; a++) perm[a] = a;
    for (int a = na - 1; a > 0; a--) {
        int b = (int)rotor_rng_below(r, a + 1), tmp = perm[a];
        perm[a] = perm[b];
        perm[b] = tmp;
    }
    for (int k = 0; k < na; k++) {
        int a = perm[k];
        int64_t max = e->extent[a] < budget ? e->extent[a] : budget;
        p->fop[a] = rotor_rng_below(r, 4) == 0 ? 1 : log_uniform(r, max);
        budget /= p->fop[a];
    }
    for (int t = 0; t < nt; t++) {
        const rotor_tensor *x = &e->tensors[t];
        int64_t share = 1;
        int axes[ROTOR_MAX_AXES], nx = 0;
        for (int a = 0; a < na; a++) {
            if (!x->has_axis[a]) share *= p->fop[a];
            else axes[nx++] = a;
        }
        int64_t q = rotor_rng_below(r, 6) == 0 ? 1 : random_divisor(r, share);
        /* split q over the tensor's axes prime by prime */
        for (int64_t f = 2; q > 1; f++)
            while (q % f == 0) {
                q /= f;
                p->ft[t][axes[rotor_rng_below(r, nx)]] *= f;
            }
    }
    for (int a = 0; a < na; a++) p->order[a] = perm[a];
    for (int a = na - 1; a > 0; a--) {
        int b = (int)rotor_rng_below(r, a + 1), tmp = p->order[a];
        p->order[a] = p->order[b];
        p->order[b] = tmp;
    }
}

rotor_status rotor_sample_plan(const rotor_expr *e, const rotor_chip *chip, int64_t max_cores,
                               rotor_rng *rng, rotor_plan *out, rotor_plan_info *info,
                               rotor_error *err) {
    int64_t budget = rotor_chip_cores(chip);
    if (max_cores > 0 && max_cores < budget) budget = max_cores;
    for (int attempt = 0; attempt < 100000; attempt++) {
        draw(e, budget, rng, out);
        if (rotor_plan_derive(e, chip, out, info, NULL) != ROTOR_OK) continue;
        /* valid on the chip: on a mesh the plan must lay out on the grid
         * (its F_op, the search's first rule, fopwalk.c) and its rings must
         * have lines, which the cost checks; `rotor verify --random` drew
         * plans it then refused ("no layout on the 32x46 mesh", "its
         * reduction ring has no line on a mesh"; found by an audit helper) */
        rotor_cost cost;
        if (chip->topology == ROTOR_TOPO_MESH &&
            (!rotor_mesh_fits(chip, out->fop, e->naxes) ||
             rotor_cost_plan(rotor_cost_model_default(), e, chip, out, info, &cost, NULL) != ROTOR_OK))
            continue;
        return ROTOR_OK;
    }
    return rotor_fail(err, ROTOR_ERR_NOFIT, "no valid plan found in 100000 random draws");
}
