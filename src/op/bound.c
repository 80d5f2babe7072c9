/* bound.c — the lower bounds of an F_op that let pass 1 (fopwalk.c) and
 * pass 2 skip it: memory floors (weak, per tensor; strong, over the divisor
 * lattice of each ring) and the time floor under the memory cap, a small
 * multiple-choice knapsack over ring sizes (docs/cost-model.md, "Bounds"). */
#include "searchint.h"

/* A floor on memory for any plan with this F_op: each tensor's plain
 * dimensions and the longer term of each compound one hold at least
 * prod ceil(E_a / F_a) / P_X elements (its f_t multiply to at most P_X).
 * A compound extent c (L_a / f_a - 1) + L_b / f_b (every coefficient >= 1,
 * every L / f >= 1) is at least either term's L / f, so it counts as its
 * longer term's, as the step floor's windows do (steps.c): the factors of
 * the axes so counted (a tensor names an axis once, which the parser
 * checks) multiply to a divisor of prod f_t^X, so to at most P_X.  Before,
 * a window counted one element: AlexNet's first layer at batch 1,024 (stride
 * 4, an 11-wide kernel) kept 581,555 F_op for its divisor-walk floors in a
 * capped search that no plan fits, now 286,997.  l1[a] = ceil(E_a / F_a).
 *
 * A term's stride c counts too (2026-11-30).  Write the product of the
 * dimensions' extents as prod_d (phi_d ext_d) / prod_d phi_d, phi_d the
 * f_t of the axis counted in dimension d: prod_d phi_d <= P_X, so the
 * floor is prod_d H_d / P_X with H_d any lower bound of phi_d ext_d.  With
 * l = ceil(E_a / F_a) and f = f_t[a] <= P_X, L_a / f >= ceil(l / f), so
 *   f ext >= f (1 + c (ceil(l / f) - 1)) >= f + c (l - f) = c l - (c-1) f
 * while f <= l, at least c l - (c-1) min(P_X, l); and f ext >= f > l when
 * f > l (possible only when P_X > l).  Both are at least
 *   H = l + (c - 1) max(0, l - P_X),
 * which for c = 1 is the plain term's l.  A window keeps the larger of
 * its two terms' H, each plus the other term's share (dim_weak).  For AlexNet's first layer (4*h+kh) it counts the input rows a
 * partition of h reads at their stride whenever the input is shared by
 * fewer cores than the partition has rows. */
static inline int64_t term_weak(int64_t l, int64_t cf, int64_t share) {
    return cf > 1 && l > share ? l + (cf - 1) * (l - share) : l;
}

/* A dimension's H (above) and its all-ones extent 1 + sum c (l - 1) (what
 * rotor_dim_extent gives for these l).  In a window the other term j adds
 * c_j (ceil(l_j / P_X) - 1): its partition is at least ceil(l_j / f_j) with
 * f_j <= P_X, and phi_d >= 1 multiplies it, so the bounds above grow by it. */
static inline int64_t dim_weak(const rotor_dim *dim, const int64_t *l1, int64_t share, int64_t *ext) {
    int64_t l0 = l1[dim->axis[0]], c0 = dim->coef[0];
    if (dim->nterms == 1) {
        *ext = 1 + c0 * (l0 - 1);
        return term_weak(l0, c0, share);
    }
    int64_t l1b = l1[dim->axis[1]], c1 = dim->coef[1];
    *ext = 1 + c0 * (l0 - 1) + c1 * (l1b - 1);
    int64_t r0 = c0 * ((l0 + share - 1) / share - 1), r1 = c1 * ((l1b + share - 1) / share - 1);
    int64_t h0 = term_weak(l0, c0, share) + r1, h1 = term_weak(l1b, c1, share) + r0;
    return h0 > h1 ? h0 : h1;
}

static double weak_elems(const rotor_tensor *x, const int64_t *l1, int64_t share) {
    double elems = 1;
    int64_t ext;
    for (int d = 0; d < x->ndims; d++) elems *= (double)dim_weak(&x->dims[d], l1, share, &ext);
    return elems;
}

int64_t search_tensor_weak_floor(const ctx *c, int t, const int64_t *fop) {
    const rotor_expr *e = c->e;
    const rotor_tensor *x = &e->tensors[t];
    int64_t share = 1, l1[ROTOR_MAX_AXES];
    for (int a = 0; a < e->naxes; a++) {
        if (!x->has_axis[a]) share *= fop[a];
        l1[a] = (e->extent[a] + fop[a] - 1) / fop[a];
    }
    double q = ceil(weak_elems(x, l1, share) / (double)share);
    if (q > 1e15) q = 1e15;
    return (int64_t)q * c->chip->element_bytes;
}

int64_t search_fop_mem_bound(const ctx *c, const int64_t *fop) {
    int64_t mem = 0;
    for (int t = 0; t < c->e->ntensors; t++) mem += search_tensor_weak_floor(c, t, fop);
    return mem;
}

/* The least bytes(X) of any plan with this F_op, over every f_t^X vector
 * whose product divides P_X (alignment with the other tensors ignored, so
 * this is a floor, not the minimum).  With f = f_t^X[a] dividing S_a, the
 * partition extent L_a / f = ceil(E_a / (F_a S_a)) S_a / f is an integer at
 * least E_a / (F_a f), so at least ceil(E_a / (F_a f)) whatever the steps;
 * compound extents grow with their terms.  The vectors are a walk of the
 * divisor lattice of P_X (at most a few thousand points for P_X <= N). */
typedef struct floor_walk {
    const ctx *c;
    const rotor_tensor *x;
    const int64_t *fop;
    int axes[ROTOR_MAX_AXES];
    int naxes;
    int64_t f[ROTOR_MAX_AXES];
    const int64_t *div; /* divisors of P_X, ascending */
    int ndiv;
    double best;
} floor_walk;

/* Elements of X with f_t[axes[j]] = fw->f for j < i and = room for the
 * axes not yet chosen: a lower bound for every completion of the prefix,
 * since partitions only shrink as f grows (exact when i == naxes). */
static double floor_walk_elems(const floor_walk *fw, int i, int64_t room) {
    const rotor_expr *e = fw->c->e;
    int64_t l[ROTOR_MAX_AXES];
    for (int j = 0; j < fw->naxes; j++) {
        int a = fw->axes[j];
        int64_t unit = fw->fop[a] * (j < i ? fw->f[a] : room);
        l[a] = (e->extent[a] + unit - 1) / unit;
    }
    double elems = 1;
    for (int d = 0; d < fw->x->ndims; d++) {
        const rotor_dim *dim = &fw->x->dims[d];
        int64_t ld[2];
        for (int k = 0; k < dim->nterms; k++) ld[k] = l[dim->axis[k]];
        elems *= (double)rotor_dim_extent(dim, ld);
    }
    return elems;
}

/* Branch and bound over the divisor lattice, largest factors first so that
 * a small best is found early and the prefix bound cuts the rest. */
static void floor_walk_visit(floor_walk *fw, int i, int64_t room) {
    double bound = floor_walk_elems(fw, i, room);
    if (bound >= fw->best) return;
    if (i == fw->naxes) {
        fw->best = bound;
        return;
    }
    int a = fw->axes[i];
    /* f may exceed E_a / F_a (the axis is then padded up to F_a * f), and
     * such an f can be the only divisor of P_X that fits: no cut-off here.
     * Every divisor of room divides P_X, so only P_X's divisors are tried. */
    for (int k = fw->ndiv - 1; k >= 0; k--) {
        int64_t f = fw->div[k];
        if (f > room || room % f) continue;
        fw->f[a] = f;
        floor_walk_visit(fw, i + 1, room / f);
    }
    fw->f[a] = 1;
}

static int64_t fop_tensor_floor(const ctx *c, int t, const int64_t *fop, int64_t share) {
    const rotor_expr *e = c->e;
    floor_walk fw = {.c = c, .x = &e->tensors[t], .fop = fop, .best = INFINITY};
    for (int a = 0; a < e->naxes; a++) {
        fw.f[a] = 1;
        if (fw.x->has_axis[a]) fw.axes[fw.naxes++] = a;
    }
    int64_t div[MAX_DIVISORS];
    search_divisors(share, div, &fw.ndiv);
    fw.div = div;
    floor_walk_visit(&fw, 0, share);
    double b = fw.best * (double)c->chip->element_bytes;
    return b > 9e15 ? (int64_t)9e15 : (int64_t)b;
}

/* Memory per core of the F_op's all-ones plan (every f_t = 1, nothing
 * rotates, no shift buffer): every tensor's whole partition. */
double search_all_ones_bytes_of(const ctx *c, const int64_t *fop, int t) {
    const rotor_expr *e = c->e;
    const rotor_tensor *x = &e->tensors[t];
    double elems = 1;
    for (int d = 0; d < x->ndims; d++) {
        const rotor_dim *dim = &x->dims[d];
        int64_t l[2];
        for (int k = 0; k < dim->nterms; k++) {
            int a = dim->axis[k];
            l[k] = (e->extent[a] + fop[a] - 1) / fop[a];
        }
        elems *= (double)rotor_dim_extent(dim, l);
    }
    return elems * (double)c->chip->element_bytes;
}

static double all_ones_bytes(const ctx *c, const int64_t *fop) {
    /* search_all_ones_bytes_of summed over the tensors, each axis's
     * ceil(E_a / F_a) divided once for all of them (issue 45: pass 2 asks
     * this twice per F_op): the same integers multiplied in the same order */
    const rotor_expr *e = c->e;
    int64_t l1[ROTOR_MAX_AXES];
    for (int a = 0; a < e->naxes; a++) l1[a] = (e->extent[a] + fop[a] - 1) / fop[a];
    double bytes = 0;
    for (int t = 0; t < e->ntensors; t++) {
        const rotor_tensor *x = &e->tensors[t];
        double elems = 1;
        for (int d = 0; d < x->ndims; d++) {
            const rotor_dim *dim = &x->dims[d];
            int64_t l[2];
            for (int k = 0; k < dim->nterms; k++) l[k] = l1[dim->axis[k]];
            elems *= (double)rotor_dim_extent(dim, l);
        }
        bytes += elems * (double)c->chip->element_bytes;
    }
    return bytes;
}

double search_fop_all_ones_bytes(const ctx *c, const int64_t *fop) { return all_ones_bytes(c, fop); }

/* The weak memory floor (search_fop_mem_bound) and the all-ones bytes
 * (all_ones_bytes) of an F_op in one pass over its tensors: the walk of
 * pass 1 computes both for most F_op vectors. */
void search_fop_cheap_mem(const ctx *c, const int64_t *fop, int64_t *mb, double *ones) {
    const rotor_expr *e = c->e;
    int64_t l1[ROTOR_MAX_AXES];
    for (int a = 0; a < e->naxes; a++) l1[a] = (e->extent[a] + fop[a] - 1) / fop[a];
    int64_t weak = 0;
    double all = 0;
    for (int t = 0; t < e->ntensors; t++) {
        const rotor_tensor *x = &e->tensors[t];
        int64_t share = 1;
        for (int a = 0; a < e->naxes; a++)
            if (!x->has_axis[a]) share *= fop[a];
        /* One loop over the terms for both: the extent is rotor_dim_extent's
         * 1 + sum c (l - 1) (a plain axis's l), the floor's term weak_elems'. */
        double elems = 1, plain = 1;
        for (int d = 0; d < x->ndims; d++) {
            const rotor_dim *dim = &x->dims[d];
            int64_t ext, most = dim_weak(dim, l1, share, &ext);
            elems *= (double)ext;
            plain *= (double)most;
        }
        double q = ceil(plain / (double)share);
        if (q > 1e15) q = 1e15;
        weak += (int64_t)q * c->chip->element_bytes;
        all += elems * (double)c->chip->element_bytes;
    }
    *mb = weak;
    *ones = all;
}

/* ---- the output's floor ------------------------------------------------- */

/* Under v1 an output split over s = P_0 > 1 cores along the axes it lacks
 * (the reduction axes) holds partial sums, and whatever ring Q | s a plan
 * gives it, the output's share of the plan's time is at least v1's
 * tensor_bound (op/cost.c) of its bytes b:
 *   (Q - 1) b / beta + (s/Q - 1) / (s/Q) * b / beta + (s/Q - 1) alpha,
 * with b >= b1 / Q, b1 the all-ones tile's bytes (each plain dimension's
 * extent ceil(L_a / u) >= L_a / u over a split u; the product of the u is
 * Q).  So the share is at least
 *   [(Q - 1) / Q + (1/Q - 1/s)] b1 / beta = (1 - 1/s) b1 / beta
 * whatever Q, and under any cap: a floor of the output's fastest option,
 * which pass 2's options cut (search_fop_options_cut) computes from the
 * option lattice.  Pass 1 adds it to the compute floor without that
 * lattice (fopwalk.c, pass1_visit; v1_floor_out carries it down the walk),
 * and a session's floors (ctx.cf) keep the sum: on DenseNet-121 at batch
 * 128 it would have pruned in pass 1 67 % of the F_op that pass 2's
 * options cut pruned (0.83 of 1.24 million; 68 % at batch 32).  Some plans
 * meet it exactly (tests/test_searchbig.c checks it against every plan the
 * brute force costs).  It holds only for the v1 model on all-to-all links
 * without overlap (overlap hides the shifts; a mesh halves them), an
 * output of plain dimensions (a window's extent does not shrink as 1/u;
 * rotor_expr_make allows none in outputs) and contractions, whose walk
 * carries it; the factor is 0 elsewhere.  Scaled down by 1e-9: the model
 * rounds its sums, the floor must not exceed them. */
/* Whether v1's link terms bound every plan as they stand: the v1 model on
 * all-to-all links whose shifts do not overlap compute (overlap hides the
 * shifts, a mesh prices its routes apart and its two dimensions at once).
 * The gate of the output's floor. */
static bool v1_links_exposed(const rotor_cost_model *m, const rotor_chip *chip) {
    return m == rotor_cost_model_find("v1") && chip->topology == ROTOR_TOPO_ALL_TO_ALL && !chip->compute_overlap;
}

double search_output_floor_k(const rotor_cost_model *m, const rotor_expr *e, const rotor_chip *chip) {
    if (!v1_links_exposed(m, chip) || e->op_class != ROTOR_OP_CONTRACTION || e->ntensors < 1) return 0;
    const rotor_tensor *y = &e->tensors[0];
    int uses[ROTOR_MAX_AXES] = {0};
    for (int d = 0; d < y->ndims; d++)
        if (y->dims[d].nterms != 1 || y->dims[d].coef[0] != 1 || ++uses[y->dims[d].axis[0]] > 1) return 0;
    return (double)chip->element_bytes / rotor_chip_link_bw(chip) * (1 - 1e-9);
}

/* searchint.h says why (docs/cost-model.md, "Bounds", "Latency").  Unlike
 * the output's floor it holds on a mesh too: there every boundary of the
 * walk pays hops * alpha, hops at least 1, moving or not
 * (rotor_cost_shift_walk's comm, meshmap.c's step).  Until 2026-12-04 it
 * was all-to-all's alone, and a mesh's latency pruned nothing: ResNet-18
 * on ipu-mk2-mesh at 300 ns took 14 s, at 1 us 353 s. */
double search_rotation_latency(const rotor_cost_model *m, const rotor_chip *chip) {
    return m == rotor_cost_model_find("v1") && !chip->compute_overlap ? rotor_chip_link_latency(chip) * (1 - 1e-9)
                                                                      : 0;
}

double search_output_floor(const ctx *c, const int64_t *fop) {
    if (!(c->out_floor_k > 0)) return 0;
    const rotor_expr *e = c->e;
    int64_t s = 1;
    double elems = 1;
    for (int a = 0; a < e->naxes; a++) {
        if (e->tensors[0].has_axis[a]) elems *= (double)((e->extent[a] + fop[a] - 1) / fop[a]);
        else s *= fop[a];
    }
    return search_output_floor_of(elems, (double)s, c->out_floor_k);
}

/* ---- the time floor of an F_op under the memory cap ---------------------- */

/* Under a tight cap the compute floor of an F_op says little: the plans that
 * fit must rotate their tensors, and rotating costs communication.  This
 * floor couples the two (T10 §4.3.1 searches the same space; the bound is
 * rotor's).  For every tensor X and every ring size Q dividing P_X, let
 * b_X(Q) be the least bytes(X) over f_t^X vectors with product Q, each
 * plain partition extent floored at ceil(E_a / (F_a f)) and compound ones
 * grown from those (the floor of fop_tensor_floor, per Q).  Every plan with
 * this F_op and memory M <= cap picks some Q_X per tensor, and then
 *   bytes(X) >= b_X(Q_X),  so  sum_X b_X(Q_X) + B_buf [some Q_X > 1] <= cap,
 *   time >= op_bound(F_op) + sum_X tensor_bound(X, bytes(X), Q_X, P_X / Q_X)
 *        >= op_bound(F_op) + sum_X tensor_bound(X, b_X(Q_X), Q_X, P_X / Q_X)
 * (the model's bound inequality, step_bound >= op_bound, and tensor_bound
 * not decreasing in bytes, which docs/cost-model.md asks of every model).
 * So the least right-hand side over the choices of Q_X that fit the cap
 * (a small multiple-choice knapsack) bounds every plan of the F_op.  The
 * plan without rotation (every f_t = 1) is the one choice that needs no
 * shift buffer. */




static int knap_opt_cmp(const void *x, const void *y) {
    const knap_opt *a = x, *b = y;
    if (a->bytes != b->bytes) return a->bytes < b->bytes ? -1 : 1;
    if (a->time != b->time) return a->time < b->time ? -1 : 1;
    return 0;
}

/* Sorts v and keeps its Pareto front: bytes ascending, time strictly falling. */
static int knap_front(knap_opt *v, int n) {
    if (n > 48) {
        qsort(v, (size_t)n, sizeof *v, knap_opt_cmp);
    } else {
        /* most lists are a tensor's few ring sizes: insertion sort, which
         * orders them as qsort does (equal entries are equal values) */
        for (int i = 1; i < n; i++) {
            knap_opt x = v[i];
            int j = i;
            while (j > 0 && knap_opt_cmp(&v[j - 1], &x) > 0) {
                v[j] = v[j - 1];
                j--;
            }
            v[j] = x;
        }
    }
    int k = 0;
    for (int i = 0; i < n; i++)
        if (k == 0 || v[i].time < v[k - 1].time) v[k++] = v[i];
    return k;
}

/* Index of d among the ascending divisors div[0..n-1] (d is one of them). */
static int div_index(const int64_t *div, int n, int64_t d) {
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (div[mid] < d) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The lattice of `share` from ks's cache, built on a miss; NULL when it
 * does not fit a slot. */
static const lattice *lattice_of(knap_scratch *ks, int64_t share) {
    lattice *l = &ks->lat[share % LAT_SLOTS];
    if (l->share == share) return l;
    int nd;
    search_divisors(share, ks->div, &nd);
    if (nd > LAT_DIV) return NULL;
    int np = 0;
    for (int j = 0; j < nd; j++)
        for (int i = 0; i <= j; i++) {
            if (ks->div[j] % ks->div[i]) continue;
            if (np == LAT_PAIRS) {
                l->share = 0;
                return NULL;
            }
            l->pj[np] = (uint16_t)j;
            l->pi[np] = (uint16_t)i;
            l->pk[np] = (uint16_t)div_index(ks->div, nd, ks->div[j] / ks->div[i]);
            np++;
        }
    memcpy(l->div, ks->div, (size_t)nd * sizeof *l->div);
    l->nd = nd;
    l->npairs = np;
    l->share = share;
    return l;
}

/* Tensor t's options (b_X(Q), tensor_bound) over the ring sizes Q | P_X
 * with b_X(Q) <= cap, as a Pareto front into ks->opt[t].  b_X(Q) is a
 * product over the dimensions of their extents, each depending on the
 * factors of its own axes only, so it is a min-product over the ways to
 * split Q among the dimensions: a dynamic program over the divisors of P_X
 * (g[Q] = least elements of the dimensions so far with product Q).  A
 * tensor naming an axis in two dimensions gets one option, its
 * fop_tensor_floor with time 0 (still a floor, just weaker). */
/* The one term of a window that can vary (issue 45): a term whose axis has
 * extent 1 has F_op 1 and partition extent 1 under every f (f_t divides
 * S_a, which divides L_a; a padded L_a of an extent-1 axis is not a case
 * the dynamic program asks: it floors each term at ceil(E_a / (F_a f))),
 * so the dimension's extent is 1 + c (l - 1) over the other term's l
 * alone: DenseNet's and GoogLeNet's 1x1 convolutions, h+kh with kh = 1.
 * That extent does not fall as l grows (c >= 1) and l does not grow with
 * the other term's factor, so the least over the splits (u, q / u) of a
 * ring size q is at u = q: the plain dimension's value, read as
 * tensor_options_run's plain branch reads it.  Returns the term, or -1
 * when both vary. */
static int window_term(const rotor_expr *e, const rotor_dim *dim) {
    if (e->extent[dim->axis[1]] == 1) return 0;
    if (e->extent[dim->axis[0]] == 1) return 1;
    return -1;
}

/* Ring size q's least extent of a dimension with one varying term k
 * (window_term; k = 0 for a plain dimension): 1 + c (l - 1), l =
 * ceil(E_a / (F_a q)), as rotor_dim_extent gives it. */
static double dim_extent_at(const rotor_expr *e, const rotor_dim *dim, int k, const int64_t *fop, int64_t q) {
    int a = dim->axis[k];
    int64_t l = (e->extent[a] + fop[a] * q - 1) / (fop[a] * q);
    if (dim->nterms == 1) return (double)rotor_dim_extent(dim, &l);
    return (double)(1 + dim->coef[k] * (l - 1));
}

/* A dimension whose every term's axis has extent 1 (a 1x1 convolution's
 * kh of its weights, a batch of 1): its extent is 1 under every ring size,
 * so the dynamic program's step for it is g'[Q] = min over R | Q of
 * g[Q / R].  After a first dimension g does not rise along divisibility
 * (g[Q] <= g[Q'] for Q' | Q: give the rest of Q to the first dimension,
 * whose extent does not grow with its factor), so the least is g[Q] itself
 * (R = 1): the step changes nothing and is skipped (issue 45), exactly (the
 * products are integers below 2^53, multiplied by 1).  The first dimension
 * is always taken: before it, only g[1] is finite. */
static bool dim_constant(const rotor_expr *e, const rotor_dim *dim) {
    for (int k = 0; k < dim->nterms; k++)
        if (e->extent[dim->axis[k]] != 1) return false;
    return true;
}

static int64_t tensor_options_run(const ctx *c, knap_scratch *ks, int t, const int64_t *fop, int64_t share,
                                  int64_t cap) {
    const rotor_expr *e = c->e;
    const rotor_tensor *x = &e->tensors[t];
    int uses[ROTOR_MAX_AXES] = {0};
    bool simple = true;
    for (int d = 0; d < x->ndims; d++)
        for (int k = 0; k < x->dims[d].nterms; k++)
            if (++uses[x->dims[d].axis[k]] > 1) simple = false;
    if (!simple) {
        int64_t floor = fop_tensor_floor(c, t, fop, share);
        ks->opt[t][0].bytes = floor;
        ks->opt[t][0].time = 0;
        ks->po[t] = ks->opt[t];
        ks->nopt[t] = floor <= cap;
        return floor;
    }
    int nd;
    const lattice *lat = lattice_of(ks, share);
    if (lat) {
        nd = lat->nd;
        memcpy(ks->div, lat->div, (size_t)nd * sizeof *ks->div);
    } else {
        search_divisors(share, ks->div, &nd);
    }
    const int64_t *div = ks->div;
    for (int j = 0; j < nd; j++) ks->g[j] = j == 0 ? 1.0 : INFINITY;
    for (int d = 0; lat && d < x->ndims; d++) {
        /* the same dynamic program as below over the lattice's pairs: the
         * same minima over the same products */
        const rotor_dim *dim = &x->dims[d];
        if (d > 0 && dim_constant(e, dim)) continue;
        int k = dim->nterms == 1 ? 0 : window_term(e, dim);
        if (k >= 0) {
            for (int i = 0; i < nd; i++) ks->ext[i] = dim_extent_at(e, dim, k, fop, div[i]);
        } else {
            int a0 = dim->axis[0], a1 = dim->axis[1];
            for (int i = 0; i < nd; i++) ks->ext[i] = INFINITY;
            for (int p = 0; p < lat->npairs; p++) {
                int64_t u = div[lat->pi[p]], v = div[lat->pk[p]];
                int64_t l[2] = {(e->extent[a0] + fop[a0] * u - 1) / (fop[a0] * u),
                                (e->extent[a1] + fop[a1] * v - 1) / (fop[a1] * v)};
                double x1 = (double)rotor_dim_extent(dim, l);
                if (x1 < ks->ext[lat->pj[p]]) ks->ext[lat->pj[p]] = x1;
            }
        }
        for (int j = 0; j < nd; j++) ks->ng[j] = INFINITY;
        for (int p = 0; p < lat->npairs; p++) {
            double v = ks->g[lat->pk[p]] * ks->ext[lat->pi[p]];
            if (v < ks->ng[lat->pj[p]]) ks->ng[lat->pj[p]] = v;
        }
        memcpy(ks->g, ks->ng, (size_t)nd * sizeof *ks->g);
    }
    for (int d = 0; !lat && d < x->ndims; d++) {
        const rotor_dim *dim = &x->dims[d];
        if (d > 0 && dim_constant(e, dim)) continue;
        /* ext[i]: least extent of this dimension when its factors multiply to div[i] */
        int k = dim->nterms == 1 ? 0 : window_term(e, dim);
        for (int i = 0; i < nd; i++) {
            int64_t q = div[i];
            if (k >= 0) {
                ks->ext[i] = dim_extent_at(e, dim, k, fop, q);
                continue;
            }
            double best = INFINITY;
            int a0 = dim->axis[0], a1 = dim->axis[1];
            for (int u = 0; u <= i; u++) {
                if (q % div[u]) continue;
                int64_t l[2] = {(e->extent[a0] + fop[a0] * div[u] - 1) / (fop[a0] * div[u]),
                                (e->extent[a1] + fop[a1] * (q / div[u]) - 1) / (fop[a1] * (q / div[u]))};
                double v = (double)rotor_dim_extent(dim, l);
                if (v < best) best = v;
            }
            ks->ext[i] = best;
        }
        for (int j = 0; j < nd; j++) {
            double best = INFINITY;
            for (int i = 0; i <= j; i++) {
                if (div[j] % div[i]) continue;
                double v = ks->g[div_index(div, nd, div[j] / div[i])] * ks->ext[i];
                if (v < best) best = v;
            }
            ks->ng[j] = best;
        }
        memcpy(ks->g, ks->ng, (size_t)nd * sizeof *ks->g);
    }
    int n = 0;
    double least = INFINITY;
    for (int j = 0; j < nd; j++) {
        double b = ks->g[j] * (double)c->chip->element_bytes;
        if (b < least) least = b;
        if (!(b <= (double)cap)) continue;
        int64_t bytes = (int64_t)b;
        ks->opt[t][n].bytes = bytes;
        ks->opt[t][n].time = c->m->tensor_bound(c->m, e, c->chip, t, bytes, div[j], share / div[j]);
        n++;
    }
    ks->nopt[t] = knap_front(ks->opt[t], n);
    ks->po[t] = ks->opt[t];
    return least > 9e15 ? (int64_t)9e15 : (int64_t)least;
}

/* The memo slot of (t, the extents L_a = ceil(E_a / F_a) of t's axes,
 * share); *key gets those extents (0 on the axes t lacks).  NULL when an
 * extent does not fit the key's 32 bits.
 *
 * Keyed by L_a, not F_a (issue 45): tensor_options_run reads a factor F_a
 * only as ceil(E_a / (F_a u)) for a ring split u (dim_extent_at, the
 * window's pairs, fop_tensor_floor's walk), which is ceil(L_a / u) for
 * positive integers, the same integer: the F_op whose factors differ but
 * whose partitions' extents are the same have the same options, bit for
 * bit.  Pass 2 of a session's capped searches meets many such F_op (the
 * large factors: F_h 14..27 of a 28-row image all give L_h = 2); keyed by
 * the factors the memo missed 94 % of its lookups on DenseNet-121 at batch
 * 128 (docs/performance.md, "thirty-fourth session: pass 2's bounds"). */
void search_tensor_desc(const ctx *c, int t, tensor_desc *d) {
    const rotor_tensor *x = &c->e->tensors[t];
    memset(d, 0, sizeof *d);
    d->out = t == 0;
    d->ndims = x->ndims;
    for (int k = 0; k < x->ndims; k++) {
        d->nterms[k] = x->dims[k].nterms;
        for (int j = 0; j < x->dims[k].nterms; j++) {
            d->axis[k][j] = x->dims[k].axis[j];
            d->coef[k][j] = x->dims[k].coef[j];
            d->extent[k][j] = c->e->extent[x->dims[k].axis[j]];
        }
    }
    d->model = c->m;
    /* v1's tensor_bound reads the chip, the bytes, the ring sizes and
     * whether t is the output (cost.c, v1_tensor_bound), nothing else of
     * the expression */
    d->own = c->m == rotor_cost_model_find("v1") ? 0 : c->id;
    memcpy(&d->chip, c->chip, sizeof d->chip);
}

/* ceil(E_a / F_a) of every axis of the F_op: the memo's keys (once per
 * F_op, not once per tensor and axis) */
static void fop_lens(const ctx *c, const int64_t *fop, int64_t *len) {
    for (int a = 0; a < c->e->naxes; a++) len[a] = (c->e->extent[a] + fop[a] - 1) / fop[a];
}

/* Tensor t's memo slot and key (its axes' ceil(E_a / F_a) from len), NULL
 * when an extent does not fit the key. */
static opt_memo *memo_slot(const ctx *c, knap_scratch *ks, int t, const int64_t *len, int64_t share,
                           int32_t *key) {
    uint64_t h = (uint64_t)c->tclass[t] * 0x9e3779b97f4a7c15u ^ (uint64_t)share * 0xff51afd7ed558ccdu;
    for (int a = 0; a < ROTOR_MAX_AXES; a++) {
        int64_t l = a < c->e->naxes && c->e->tensors[t].has_axis[a] ? len[a] : 0;
        if (l > INT32_MAX) return NULL;
        key[a] = (int32_t)l;
        h = (h ^ (uint64_t)(int64_t)key[a]) * 0x100000001b3u;
    }
    return &ks->memo[(h ^ h >> 29) % MEMO_SLOTS];
}

/* tensor_options_run under c->cap through the worker's memo.  Exact: the
 * options are a function of (t, its axes' extents L_a, share: memo_slot)
 * within one ctx (one expression, chip and model; tensor_options_run reads
 * nothing else), and the cap enters only as the filter bytes <= cap before
 * knap_front, whose scan by bytes ascending keeps an entry or not by the
 * entries before it alone: the front under cap is the prefix of the
 * uncapped front with bytes <= cap (every b is an integer below 2^53, so
 * the double and integer comparisons agree).  The uncapped front is run
 * with cap = MEMO_BYTES_MAX, far above any core's SRAM, and used only when
 * c->cap is below it; `least` does not depend on the cap.  A front longer
 * than MEMO_OPTS, a factor above 2^30 or an extent L_a above 2^31 - 1 (the
 * key holds 32 bits), or a test's no_memo: computed afresh.  docs/cost-model.md, "The exact search" (T10 §4.3's bound is
 * unchanged, only not recomputed). */
/* Whether tensor t's options of this F_op go through the memo at all. */
static bool memo_used(const ctx *c, const knap_scratch *ks, int t, const int64_t *fop) {
    bool small = true;
    for (int a = 0; a < c->e->naxes; a++) small &= fop[a] <= ((int64_t)1 << 30);
    return !ks->no_memo && c->cap <= MEMO_BYTES_MAX && small && c->tclass[t] > 0;
}

/* tensor_options with its slot m and key found (memo_slot; m NULL: no
 * memo) */
static int64_t tensor_options_at(const ctx *c, knap_scratch *ks, int t, const int64_t *fop, int64_t share,
                                 opt_memo *m, const int32_t *key) {
    if (!m) return tensor_options_run(c, ks, t, fop, share, c->cap);
    int16_t cls = c->tclass[t];
    knap_opt *o = m->opt;
    uint8_t *on = &ks->memo_on[m - ks->memo];
    if (!(*on && m->t == cls && m->share == share && memcmp(m->fop, key, sizeof m->fop) == 0)) {
        /* another tensor reading this slot in place keeps its options */
        for (int u = 0; u < c->e->ntensors; u++)
            if (u != t && ks->po[u] == o) {
                memcpy(ks->opt[u], o, (size_t)ks->nopt[u] * sizeof *o);
                ks->po[u] = ks->opt[u];
            }
        int64_t least = tensor_options_run(c, ks, t, fop, share, MEMO_BYTES_MAX);
        if (ks->nopt[t] > MEMO_OPTS) {
            int n = 0;
            while (n < ks->nopt[t] && ks->opt[t][n].bytes <= c->cap) n++;
            ks->nopt[t] = n;
            return least;
        }
        *on = 1;
        m->t = cls;
        m->share = share;
        memcpy(m->fop, key, sizeof m->fop);
        m->least = least;
        m->n = (int16_t)ks->nopt[t];
        memcpy(o, ks->opt[t], (size_t)m->n * sizeof *ks->opt[t]);
    }
    int n = 0;
    while (n < m->n && o[n].bytes <= c->cap) n++;
    ks->po[t] = o; /* read in place: a prefix of the memo's front */
    ks->nopt[t] = n;
    return m->least;
}

static int64_t tensor_options(const ctx *c, knap_scratch *ks, int t, const int64_t *fop, int64_t share) {
    int32_t key[ROTOR_MAX_AXES];
    int64_t len[ROTOR_MAX_AXES];
    opt_memo *m = NULL;
    if (memo_used(c, ks, t, fop)) {
        fop_lens(c, fop, len);
        m = memo_slot(c, ks, t, len, share, key);
    }
    return tensor_options_at(c, ks, t, fop, share, m, key);
}

/* The least sum over tensors of an option's time, the options' bytes
 * summing to at most budget (INFINITY: no choice fits).  Tensor by tensor,
 * the partial sums are kept as a Pareto front; the last tensor takes its
 * fastest option that fits.  A front outgrowing the scratch gives up with
 * 0 (no bound, still valid). */
static double knap_least_time(knap_scratch *ks, int nt, int64_t budget) {
    int64_t rest[ROTOR_MAX_TENSORS + 1]; /* least bytes of tensors t.. */
    rest[nt] = 0;
    for (int t = nt - 1; t >= 0; t--) {
        if (ks->nopt[t] == 0) return INFINITY;
        rest[t] = rest[t + 1] + ks->po[t][0].bytes;
    }
    if (rest[0] > budget) return INFINITY;
    int ncur = 1;
    ks->cur[0].bytes = 0;
    ks->cur[0].time = 0;
    for (int t = 0; t + 1 < nt; t++) {
        int n = 0;
        for (int i = 0; i < ncur; i++)
            for (int j = 0; j < ks->nopt[t]; j++) {
                int64_t b = ks->cur[i].bytes + ks->po[t][j].bytes;
                if (b + rest[t + 1] > budget) break; /* options by bytes ascending */
                if (n == KNAP_MAX) return 0;
                ks->next[n].bytes = b;
                ks->next[n].time = ks->cur[i].time + ks->po[t][j].time;
                n++;
            }
        ncur = knap_front(ks->next, n);
        memcpy(ks->cur, ks->next, (size_t)ncur * sizeof *ks->cur);
    }
    const knap_opt *last = ks->po[nt - 1];
    int nlast = ks->nopt[nt - 1];
    double best = INFINITY;
    for (int i = 0; i < ncur; i++) {
        int64_t room = budget - ks->cur[i].bytes;
        /* the last option with bytes <= room is the fastest that fits */
        int lo = 0, hi = nlast;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (last[mid].bytes <= room) lo = mid + 1;
            else hi = mid;
        }
        if (lo > 0 && ks->cur[i].time + last[lo - 1].time < best) best = ks->cur[i].time + last[lo - 1].time;
    }
    return best;
}

/* The strong memory floor of an F_op: the least bytes of every tensor (the
 * floors of fop_tensor_floor, computed by tensor_options, which also leaves
 * each tensor's options in ks: *ready says so), plus the shift buffer when
 * the one plan that does not rotate (every f_t = 1, so every S_a = 1) does
 * not fit: then every plan of this F_op rotates. */
int64_t search_fop_strong_floor(const ctx *c, knap_scratch *ks, const int64_t *fop, int64_t index,
                         bool *ready) {
    const rotor_expr *e = c->e;
    fop_rec *r = fop_rec_at(&c->fc, index); /* made before pass 2 (search.c) */
    int32_t *cached = r ? &r->floor : NULL;
    int64_t mem = 0;
    *ready = false;
    if (cached && *cached > 0) {
        mem = *cached;
    } else {
        for (int t = 0; t < e->ntensors; t++) {
            int64_t share = 1;
            for (int a = 0; a < e->naxes; a++)
                if (!e->tensors[t].has_axis[a]) share *= fop[a];
            mem += tensor_options(c, ks, t, fop, share);
        }
        *ready = true;
        if (cached) *cached = mem < INT32_MAX ? (int32_t)mem : INT32_MAX;
    }
    if (all_ones_bytes(c, fop) > (double)c->cap) mem += c->chip->shift_buffer_bytes;
    return mem;
}

/* The cheap floor under search_cap_time_floor (issue 45): the sum over
 * tensors 0..n-1, in tensor order, of each one's fastest option under the
 * cap (the last of its prefix: options by bytes ascending, time strictly
 * falling), its options in ks; INFINITY when one has none.  Every choice
 * the knapsack weighs takes an option of each tensor with bytes <= cap -
 * B_buf <= cap, so no faster than that tensor's fastest; the plan without
 * rotation (when it fits) takes per tensor a time at least that of its
 * Q = 1 option, whose bytes b_X(1) are at most the all-ones bytes (the same
 * extents at f = 1, the minimum over splits at most the (1, 1) split) and
 * so under the cap (tensor_bound does not decrease in bytes).  The sums
 * add in the same order as knap_least_time's and the all-ones sum, and a
 * rounded sum does not decrease when a term grows: so with every time >= 0
 * the partial sums are floors of either branch, and of their minimum.  A
 * tensor without an option under the cap leaves the knapsack nothing and
 * the plan without rotation nothing (its Q = 1 option would be there). */
static double least_time_add(double part, const knap_scratch *ks, int t) {
    return ks->nopt[t] ? part + ks->po[t][ks->nopt[t] - 1].time : INFINITY;
}

double search_cap_time_sum_floor(const knap_scratch *ks, int n) {
    double part = 0;
    for (int t = 0; t < n; t++) part = least_time_add(part, ks, t);
    return part;
}

/* Pass 2's bounds of an F_op tensor by tensor (issue 45): each tensor's
 * options into w->knap as search_fop_strong_floor leaves them, and after
 * each, the cut: compute plus the sum floor so far (search_cap_time_sum_floor),
 * a floor of the F_op's time floor under the cap, pruned with the F_op's
 * cheap memory floor mem (the full bounds' final test prunes a larger time
 * and memory: search_prune only prunes more as either grows).  True when
 * cut, *part then the floor that cut it; else every tensor's options are
 * in w->knap and *least is their least bytes' sum (search_fop_strong_floor's
 * before the shift buffer).  Of 1.07 M F_op whose full bounds pass 2 of
 * DenseNet-121 at batch 128 computed, 1.00 M fell to the time floor and
 * 0.81 M of them to the first tensor's fastest option alone: the others'
 * options and the knapsack are then not computed.  A time below 0 (no
 * model gives one) turns the cut off. */
bool search_fop_options_cut(worker *w, const int64_t *fop, double compute, int64_t mem, double *part,
                            int64_t *least) {
    const ctx *c = w->c;
    const rotor_expr *e = c->e;
    double sum = 0;
    bool on = true;
    *least = 0;
    /* every tensor's memo slot found first and fetched ahead (issue 45:
     * the slot's cache miss was most of tensor_options' own time, and the
     * tensors' misses now overlap), the lengths computed once */
    int64_t len[ROTOR_MAX_AXES], share[ROTOR_MAX_TENSORS];
    int32_t key[ROTOR_MAX_TENSORS][ROTOR_MAX_AXES];
    opt_memo *slot[ROTOR_MAX_TENSORS];
    fop_lens(c, fop, len);
    for (int t = 0; t < e->ntensors; t++) {
        share[t] = 1;
        for (int a = 0; a < e->naxes; a++)
            if (!e->tensors[t].has_axis[a]) share[t] *= fop[a];
        slot[t] = memo_used(c, w->knap, t, fop) ? memo_slot(c, w->knap, t, len, share[t], key[t]) : NULL;
        if (slot[t]) {
            __builtin_prefetch(slot[t]);
            __builtin_prefetch(slot[t]->opt);
        }
    }
    for (int t = 0; t < e->ntensors; t++) {
        *least += tensor_options_at(c, w->knap, t, fop, share[t], slot[t], key[t]);
        if (!on) continue;
        if (w->knap->nopt[t] && !(w->knap->po[t][w->knap->nopt[t] - 1].time >= 0)) {
            on = false;
            continue;
        }
        sum = least_time_add(sum, w->knap, t);
        *part = compute + sum;
        if (sum == INFINITY || search_prune(w, *part, mem)) return true;
    }
    return false;
}

/* A floor on the tensors' share of the time (beyond step_bound) of every
 * plan with this F_op that fits c->cap (see above): added to the compute
 * floor of any steps, it bounds the plans with those steps, so the step
 * search uses it too (*steps, without the rotation's latency: it adds
 * (T - 1) of them for the steps it chooses).  A plan other than the
 * all-ones one has some f_t > 1, so some S_a > 1 and T >= 2: at least one
 * latency where search_rotation_latency says none hides (ctx.rot_lat).  INFINITY: no
 * plan fits. */
double search_cap_time_floor(const ctx *c, knap_scratch *ks, const int64_t *fop, bool ready, double *steps) {
    const rotor_expr *e = c->e;
    int64_t share[ROTOR_MAX_TENSORS];
    for (int t = 0; t < e->ntensors; t++) {
        share[t] = 1;
        for (int a = 0; a < e->naxes; a++)
            if (!e->tensors[t].has_axis[a]) share[t] *= fop[a];
        if (!ready) tensor_options(c, ks, t, fop, share[t]);
    }
    double best = INFINITY;
    /* no rotation: the all-ones plan, every Q_X = 1, no shift buffer */
    double ones = all_ones_bytes(c, fop);
    if (ones <= (double)c->cap) {
        double t1 = 0;
        for (int t = 0; t < e->ntensors; t++) {
            int64_t b = (int64_t)(search_all_ones_bytes_of(c, fop, t));
            t1 += c->m->tensor_bound(c->m, e, c->chip, t, b, 1, share[t]);
        }
        best = t1;
    }
    /* rotation: the shift buffer, any Q_X (Q_X = 1 included: a relaxation) */
    int64_t budget = c->cap - c->chip->shift_buffer_bytes;
    double any = best;
    if (budget >= 0) {
        double r = knap_least_time(ks, e->ntensors, budget);
        if (r < any) any = r;
        r += c->rot_lat;
        if (r < best) best = r;
    }
    if (steps) *steps = any;
    return best;
}
