/* test_searchjoint.c — issue 45, the joint floor of a frontier search
 * (op/steps.c, "The joint floor"; op/pareto.c, search_front_dominates_joint).
 *
 * 1. The floor T + lam M >= k must hold for every plan below the node it is
 *    computed for: for every F_op of small plain contractions, every step
 *    vector and every f_t of every tensor (the plans rotor_cost_plan
 *    accepts), the plan's time and memory against k of the F_op (no step
 *    chosen), of each prefix of its steps and of its whole step vector.
 *    And it must be the line the model's plans lie on: some rotating plan
 *    meets it (a floor made too weak, lam = 0 say, fails that).
 * 2. The coverage test must say exactly whether the front beats every
 *    (T, M) the floors allow: against a scan of every integer memory up to
 *    the cap, over random fronts and regions. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "searchfix.h"

/* ---- 1. the floor holds over every plan ----------------------------------- */

typedef struct joint_walk {
    ctx *c;
    worker *w;
    int64_t fop[ROTOR_MAX_AXES];
    rotor_plan plan;
    int64_t steps[ROTOR_MAX_AXES];
    int64_t plans, met; /* plans checked; rotating plans on the line */
    double worst;       /* least (T + lam M) / k - 1 over the plans */
} joint_walk;

/* The plan in j->plan (f_t set; steps in j->steps), costed if valid and
 * checked against k of the F_op and of every prefix of its steps. */
static void joint_check_plan(joint_walk *j) {
    const ctx *c = j->c;
    const rotor_expr *e = c->e;
    rotor_plan_info info;
    rotor_cost cost;
    if (!searchfix_cost_at(c, &j->plan, j->steps, &info, &cost)) return;
    j->plans++;
    /* an input rotates: its shifts are on the line only with lam = 1 / beta */
    bool rot = false;
    for (int t = 1; t < e->ntensors; t++)
        for (int a = 0; a < e->naxes; a++) rot |= j->plan.ft[t][a] > 1;
    for (int upto = -1; upto < e->naxes; upto++) {
        double k = search_joint_floor(j->w, j->fop, j->steps, upto);
        cr_assert(!isnan(k), "%s: the joint floor is off", e->text);
        double lhs = cost.total + j->w->lam * (double)info.memory;
        cr_assert_geq(lhs, k * (1 - 1e-12),
                      "%s: F_op %lld,%lld,%lld steps %lld,%lld,%lld upto %d: T %.17g M %lld, T + lam M %.17g "
                      "below the joint floor %.17g",
                      e->text, (long long)j->fop[0], (long long)j->fop[1], (long long)j->fop[2],
                      (long long)j->steps[0], (long long)j->steps[1], (long long)j->steps[2], upto, cost.total,
                      (long long)info.memory, lhs, k);
        if (upto == e->naxes - 1) {
            if (lhs / k - 1 < j->worst) j->worst = lhs / k - 1;
            if (rot && fabs(lhs - k) <= 1e-9 * k) j->met++;
        }
    }
}

/* Every f_t of tensors t.. along axes a.. (f | S_a, the product | P_X). */
static void joint_ft(joint_walk *j, int t, int a, int64_t q) {
    const rotor_expr *e = j->c->e;
    if (t == e->ntensors) {
        joint_check_plan(j);
        return;
    }
    int64_t share = 1;
    for (int b = 0; b < e->naxes; b++)
        if (!e->tensors[t].has_axis[b]) share *= j->fop[b];
    if (a == e->naxes) {
        joint_ft(j, t + 1, 0, 1);
        return;
    }
    if (!e->tensors[t].has_axis[a]) {
        joint_ft(j, t, a + 1, q);
        return;
    }
    for (int64_t f = 1; f <= j->steps[a]; f++) {
        if (j->steps[a] % f || share % (q * f)) continue;
        j->plan.ft[t][a] = f;
        joint_ft(j, t, a + 1, q * f);
    }
    j->plan.ft[t][a] = 1;
}

/* fixture_each_steps' visit: every f_t of a step vector. */
static void joint_steps_visit(void *arg) {
    joint_walk *j = arg;
    rotor_plan_init(j->c->e, &j->plan);
    memcpy(j->plan.fop, j->fop, sizeof j->plan.fop);
    joint_ft(j, 0, 0, 1);
}

/* fixture_each_fop's visit: every step vector the search offers the F_op
 * (S_a a divisor of the P_X of a tensor carrying a) */
static void joint_fops_visit(void *arg) {
    joint_walk *j = arg;
    fixture_each_steps(j->c->e, j->fop, j->steps, j->c->cores, 0, joint_steps_visit, j);
}

static void joint_floor_holds(const char *text, const char *dims, int64_t cores, const char *chip_name) {
    rotor_expr e = make_expr(text, dims);
    rotor_chip chip = mk2_small(cores, 1 << 20, 32);
    if (strcmp(chip_name, "mesh") == 0) {
        chip.topology = ROTOR_TOPO_MESH;
        chip.mesh_width = cores / 2;
        chip.mesh_height = 2;
    }
    ctx c;
    searchfix_ctx(&c, &e, &chip, cores);
    c.cap = chip.sram_bytes;
    c.frontier = true;
    c.time_cap = INFINITY;
    worker *w = calloc(1, sizeof *w);
    cr_assert_not_null(w);
    w->c = &c;
    joint_walk j = {.c = &c, .w = w, .worst = INFINITY};
    fixture_each_fop(j.c->e, j.fop, 0, cores, joint_fops_visit, &j);
    cr_assert_gt(j.plans, 100, "%s: %lld plans", text, (long long)j.plans);
    /* the line is the model's own on an all-to-all chip: plans rotating an
     * input, whose shifts telescope, meet it (lam = 0 would leave every
     * input's shifts out of the floor) */
    if (strcmp(chip_name, "mesh") != 0)
        cr_assert_gt(j.met, 0, "%s: no plan rotating an input on the joint floor (least gap %g)", text, j.worst);
    free(w);
}

Test(searchjoint, the_joint_floor_is_at_most_every_plans_time_and_memory, .timeout = 240) {
    joint_floor_holds("C[m,n] += A[m,k] * B[k,n]", "m=6,k=4,n=6", 8, "a2a");
    joint_floor_holds("C[m,n] += A[m,k] * B[k,n]", "m=5,k=12,n=3", 6, "a2a");
    joint_floor_holds("C[b,n] += A[b,c,h] * W[n,c,h]", "b=4,c=3,h=2,n=4", 8, "a2a");
    joint_floor_holds("C[b,t,n] += X[b,c,t,f] * W[c,f,n]", "b=2,c=4,t=3,f=2,n=2", 4, "a2a");
    joint_floor_holds("C[m,n] += A[m,k] * B[k,n]", "m=6,k=4,n=6", 8, "mesh");
}

/* ---- 2. the coverage test against a scan ---------------------------------- */

/* Whether every integer M in [m, cap] with tmin(M) = max(t, k - lam M) is
 * beaten by an entry with no more memory (strictly faster, with the slack)
 * or lies over the time cap: the definition, one M at a time. */
static bool covered_scan(const worker *w, double t, int64_t m, double lam, double k) {
    const front *f = &w->front;
    for (int64_t x = m; x <= w->c->cap; x++) {
        double tmin = fmax(t, k - lam * (double)x);
        bool beaten = false;
        for (int i = 0; i < f->n && !beaten; i++)
            beaten = f->v[i].info.memory <= x && f->v[i].cost.total * (1 + SLACK) < tmin;
        if (!beaten && !(tmin > w->c->time_cap * (1 + SLACK))) return false;
    }
    return true;
}

Test(searchjoint, the_coverage_test_is_the_scan_of_every_memory) {
    ctx c;
    memset(&c, 0, sizeof c);
    worker *w = calloc(1, sizeof *w);
    cr_assert_not_null(w);
    w->c = &c;
    rotor_candidate v[8];
    memset(v, 0, sizeof v);
    w->front.v = v;
    srand(45);
    int64_t yes = 0, no = 0;
    for (int round = 0; round < 4000; round++) {
        c.cap = 60 + rand() % 60;
        c.time_cap = rand() % 3 ? INFINITY : 20 + rand() % 40;
        /* a front: memory ascending, time strictly falling */
        int n = rand() % 6;
        int64_t mem = rand() % 20;
        double time = 40 + rand() % 40;
        for (int i = 0; i < n; i++) {
            v[i].info.memory = mem;
            v[i].cost.total = time;
            mem += 1 + rand() % 30;
            time -= 1 + rand() % 12;
        }
        w->front.n = n;
        double t = rand() % 50, lam = (rand() % 5) / 4.0, k = t + rand() % 120;
        int64_t m = rand() % 130;
        bool got = search_front_dominates_joint(w, t, m, lam, k);
        cr_assert_eq(got, covered_scan(w, t, m, lam, k),
                     "round %d: front of %d, t %g m %lld lam %g k %g cap %lld: %d", round, n, t, (long long)m, lam,
                     k, (long long)c.cap, got);
        if (got) yes++;
        else no++;
    }
    /* both answers are exercised */
    cr_assert_gt(yes, 100);
    cr_assert_gt(no, 100);
    free(w);
}
