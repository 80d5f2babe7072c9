/* searchint.h — what the files of the exact plan search share (private to
 * src/op; docs/cost-model.md, "The search"):
 *
 *   search.c  the driver: one search (search_once: pass 1 over F_op, pass 2
 *             in parallel), rotor_search, sessions, constraints
 *   fopwalk.c pass 1: the walk over every F_op with its bounds (level 1)
 *   bound.c   the bounds of an F_op: memory floors and the time floor under
 *             the memory cap (a multiple-choice knapsack)
 *   steps.c   levels 2 and 3 under one F_op: the steps S_a and each
 *             tensor's temporal factors f_t, depth first, and the leaves
 *   pareto.c  the Pareto frontier: the archive, the single-pass front, the
 *             epsilon-constraint walk
 *   kapla.c   the fast solver (KAPLA §IV-C), which shares pareto.c's front
 *
 * The search context (ctx) lives from rotor_search's or a session's start
 * to its end.  Its caches are allocated on first use by search_once
 * (ctx_caches, workers_ready, worker_pool) and freed together by ctx_free:
 * cf, fc (fop_cache: floors, lb, weak, ones) and counts (per F_op of the
 * walk), and spare (the Pareto loop's archive); the per-thread buffers (bufs:
 * the knaps and the workers, each with its archive `own`) are the ctx's own
 * or borrowed from a pool for each search (search_bufs).  Functions returning bool
 * return false when out of memory. */
#ifndef ROTOR_OP_SEARCHINT_H
#define ROTOR_OP_SEARCHINT_H

#include "rotor/base/divisors.h"
#include <math.h>
#include <stddef.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/op/search.h"

#define SLACK 1e-9
/* Most divisors of any n < 2^31 (1,344 for 2,095,133,040); N <= 2^30. */
#define MAX_DIVISORS ROTOR_MAX_DIVISORS /* base/divisors.h: any n <= 2^32 */
#define MAX_STEP_CHOICES (MAX_DIVISORS * ROTOR_MAX_TENSORS)

/* pass 2's order: a kept F_op's bound and its place in the keep list */
typedef struct fop_key {
    double bound;
    int64_t pos; /* in the keep list */
} fop_key;

typedef struct fop_entry {
    int64_t fop[ROTOR_MAX_AXES];
    double bound;
    double compute;  /* the model's op_bound (step_bound with any steps) */
    int64_t mem_bound;
    int64_t index; /* in the walk of pass 1 (the floors' cache key) */
} fop_entry;

/* A small Pareto archive of (memory, time) over the plans a search costed:
 * entries by memory ascending, so by time descending.  It only seeds the
 * next search of the Pareto loop with a plan that fits its tighter cap (an
 * incumbent to prune against); which plans it keeps never changes a result,
 * because every search is exact on its own. */
#define ARCHIVE_MAX 256
typedef struct archive {
    int n, cap;
    bool dropped; /* a plan was turned away for room: it no longer covers all */
    /* grown by doubling up to ARCHIVE_MAX (issue 45: 256 entries at once are
     * 370 KB, allocated per session and per worker though a session's
     * archive ends with 3 to 19 entries; under transparent huge pages the
     * untouched rest was resident too, 24 MB of DenseNet-121's 230) */
    rotor_candidate *v;
} archive;

/* A Pareto front of (memory, time) over plans, for the single-pass frontier
 * search: entries by memory ascending and so time strictly descending; of
 * two plans with equal time and memory the one first in plan order stays.
 * Such a front, read from its fastest end, is exactly the frontier the
 * epsilon-constraint loop finds (fastest plan, then the fastest with less
 * memory than the last, ...). */
typedef struct front {
    int n, cap;
    bool oom;
    rotor_candidate *v;
} front;

/* The shared log of a single-pass frontier search's pass 2 (pareto.c):
 * every plan that joined some worker's front, in the order they joined,
 * with the worker that found it, behind a lock. */
typedef struct front_log {
    omp_lock_t lock;
    rotor_candidate *v;
    int *who;
    int64_t n, cap;
    bool oom;
} front_log;

/* The values a search keeps per F_op of its walk (ctx.fc), by the F_op's
 * index in pass 1's walk: the strong memory floor (the tensor floors'
 * sum), and in a session (full) also the weak memory floor, the all-ones
 * bytes and the time floor under the last cap it was computed for.  Each
 * is a floor, clamped or rounded down (still a floor), or 0: not yet.
 *   floor   search_fop_strong_floor without the shift buffer (cap-free)
 *   weak    the weak memory floor (at least one element's bytes per tensor)
 *   ones    the all-ones plan's bytes
 *   lb      search_cap_time_floor under cap lb_cap: a floor under any
 *           smaller cap too (fewer plans fit; lb_cap = 0, below any cap:
 *           not yet)
 * A walk writes these for the F_op that pass its compute floor, a tenth of
 * a convolution's lattice, scattered over it: as five arrays as long as the
 * walk, a few entries in every page faulted whole pages in, about 20 bytes
 * per F_op of the lattice per session, held for the compile (the sessions
 * of DenseNet-121 at batch 128 kept 290 MB, two thirds of its peak; docs/
 * performance.md, "compile memory").  So they are kept sparse: records in
 * blocks of FOPC_B consecutive F_op, made on first write in chunks of
 * FOPC_CHUNK blocks, and a directory of 4 bytes per block.  Only pass 1,
 * which is serial, makes records (the scan or walk for a session's cheap
 * values, and after the walk one for each F_op kept for pass 2); pass 2's
 * threads only write the records of their own F_op. */
typedef struct fop_rec {
    int32_t weak, ones, floor, lb_cap; /* clamped to INT32_MAX: still floors (true for lb_cap) */
    float lb;                          /* rounded down: still a floor */
} fop_rec;

#define FOPC_SHIFT 2 /* FOPC_B = 4 F_op per block */
#define FOPC_B (1 << FOPC_SHIFT)
#define FOPC_CHUNK_SHIFT 10 /* FOPC_CHUNK = 1,024 blocks (80 KB) per chunk */
#define FOPC_CHUNK (1 << FOPC_CHUNK_SHIFT)
typedef struct fop_cache {
    int64_t n;         /* F_op indices it may hold, [0, n); 0: off */
    bool full;         /* a session's: weak, ones and lb kept too */
    uint32_t *dir;     /* per block of FOPC_B F_op: 1 + its number, 0: none yet */
    fop_rec **chunks;  /* block b's records at chunks[b / FOPC_CHUNK][(b % FOPC_CHUNK) * FOPC_B] */
    int64_t nblocks;   /* blocks made */
} fop_cache;

/* A float rounded down from a floor tb >= 0 (still a floor): the next
 * float below when rounding went up, as nextafterf toward -INFINITY gives
 * for every positive float (+INFINITY included): the bits less one. */
static inline float float_down(double tb) {
    float f = (float)tb;
    if ((double)f > tb && f > 0) {
        uint32_t b;
        memcpy(&b, &f, sizeof b);
        b--;
        memcpy(&f, &b, sizeof f);
    } else if ((double)f > tb) {
        f = nextafterf(f, -INFINITY);
    }
    return f;
}

/* A floor tb >= 0 rounded down to a float of CF_COARSE_BITS mantissa bits
 * (the low bits cleared: toward zero).  A session's table of distinct
 * floors (ctx.cf_val) holds at most CF_VALUES: compute floors are few
 * (3,551 at most in a session of the zoo's largest batches), but with the
 * output's floor added nearly every F_op has its own, and AlexNet's conv1
 * at batch 1,024 overflowed the table, which turns the scan off (issue 45).
 * Eight bits keep at most 256 a binade, each at most 0.4 % below the sum. */
#define CF_COARSE_BITS 8
static inline float float_coarse(double tb) {
    float f = float_down(tb);
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    b &= ~((UINT32_C(1) << (23 - CF_COARSE_BITS)) - 1);
    memcpy(&f, &b, sizeof f);
    return f;
}

/* The output's floor (bound.c, "The output's floor") of an output tile of
 * `elems` elements split over s cores along its reduction axes, k its
 * seconds per element: search_output_floor and the walk's v1_floor_out
 * compute it by this one expression, so the two agree bit for bit. */
static inline double search_output_floor_of(double elems, double s, double k) {
    return s > 1 ? (1 - 1 / s) * elems * k : 0;
}

/* The compute floor read back from a session's floor `stored` (ctx.cf: the
 * compute floor plus the output's floor `out`, rounded down): the stored
 * sum less out, at most the compute floor the walk computed. */
static inline double cf_compute(double stored, double out) { return out > 0 ? fmax(0, stored - out) : stored; }

/* cf's codes (ctx.cf): below CF_VALUES, a place in ctx.cf_val */
#define CF_NOT_YET 0xFFFF
#define CF_BROKEN 0xFFFE
#define CF_VALUES 0xFFFE
/* F_op per block of the scan's summary (ctx.cf_bmin): a multiple of the scan's 16 */
#define CF_SUM_BLOCK 256

/* F_op index's record, NULL when none was made (its values: not yet). */
static inline fop_rec *fop_rec_at(const fop_cache *fc, int64_t index) {
    if (index < 0 || index >= fc->n) return NULL;
    uint32_t b = fc->dir[index >> FOPC_SHIFT];
    if (!b) return NULL;
    b--;
    return &fc->chunks[b >> FOPC_CHUNK_SHIFT][((int64_t)(b & (FOPC_CHUNK - 1)) << FOPC_SHIFT) +
                                              (index & (FOPC_B - 1))];
}
/* ... made if need be, its values 0 (not yet); NULL when the cache is off,
 * index outside it, or out of memory (then the values are recomputed).
 * Serial: pass 1 only (search.c). */
fop_rec *search_fop_rec_make(fop_cache *fc, int64_t index);
/* An empty cache for F_op [0, n) (false, and off, when out of memory);
 * its records and directory freed. */
bool search_fop_cache_init(fop_cache *fc, int64_t n, bool full);
void search_fop_cache_free(fop_cache *fc);

struct ctx;
/* F_op index's compute floor f (a float >= 0) into c->cf: false when the
 * table of distinct floors is full (then it stays CF_NOT_YET and
 * c->cf_lost is set) or out of memory. */
bool search_cf_put(struct ctx *c, int64_t index, float f);
/* The codes of c->cf renumbered in the order of their floors (cf_val
 * ascending), so that a floor is at most a limit exactly when its code is
 * below the number of floors at most the limit: false when out of memory
 * (the codes are then as they were). */
bool search_cf_order(struct ctx *c);

/* The per-search-thread buffers of a search: the seed worker and one per
 * search thread (a worker's scratch is most of a megabyte, not worth
 * clearing each time: each search resets what it reads), and each search
 * thread's knapsack scratch (about 4 MB, with the tensor-options memo and
 * the lattices).  A ctx keeps its own set across its searches; with a pool
 * (rotor_search_pool, search.c) the ctx of a compile borrow sets from it
 * for each search, so that their pages are allocated and faulted in once
 * per compile, not once per session.  The memo's and lattices' contents
 * are a ctx's (one expression, chip and model): a set handed to another
 * ctx than `owner` is first reset to exactly a fresh set's state
 * (search_bufs_reset), so that no answer depends on what it held. */
typedef struct search_bufs {
    struct worker *pool;
    int npool;
    /* pass 1's keep list and pass 2's order over it, kept at their largest
     * for the next search (a capped search that no plan fits keeps hundreds
     * of thousands of F_op: growing them afresh each time was most of a
     * large-batch compile's page faults) */
    struct fop_entry *keep;
    int64_t keep_cap;
    struct fop_key *order; /* order_cap keys, then as many for keys_sort's scratch */
    int64_t order_cap;
    struct knap_scratch **knaps;
    int nknaps;
    uint64_t owner; /* the ctx (ctx.id) whose memo the knaps hold; 0: none */
} search_bufs;

/* What tensor_options_run reads of a ctx for tensor t (bound.c): its
 * dimensions with their axes (ids and extents) and coefficients, whether
 * it is the output (v1's reduction), the chip and the model.  Two
 * ctx whose tensors describe alike, byte for byte (zeroed first), compute
 * the same options from the same (factors' extents, share), so a pool's
 * memo serves them both (search.c, pool_class). */
typedef struct tensor_desc {
    int32_t out, ndims;
    int32_t nterms[ROTOR_MAX_DIMS], axis[ROTOR_MAX_DIMS][2];
    int64_t coef[ROTOR_MAX_DIMS][2], extent[ROTOR_MAX_DIMS][2];
    const void *model;
    uint64_t own; /* 0 under cost model v1; else the ctx's id (ctx.id): another
                   * model's tensor_bound may read the whole expression */
    rotor_chip chip;
} tensor_desc;

typedef struct ctx {
    const rotor_expr *e;
    const rotor_chip *chip;
    const rotor_cost_model *m;
    rotor_constraints cons;
    int64_t cores;  /* N */
    int64_t cap;    /* memory cap per core */
    void (*progress)(void *ctx, int done, int total); /* rotor_search_options.progress */
    void *progress_ctx;
    int last_tensor[ROTOR_MAX_AXES]; /* last tensor carrying each axis */
    /* each tensor's axes, ascending (the f_t search's levels, dfs_axis) */
    int8_t tax[ROTOR_MAX_TENSORS][ROTOR_MAX_AXES];
    int ntax[ROTOR_MAX_TENSORS];
    _Atomic uint64_t incumbent;      /* bits of the best time so far (positive doubles order as integers) */
    /* The values kept per F_op of the walk (fop_cache, above): the tensor
     * floors (cap-independent, so the Pareto loop's and a session's
     * repeated searches compute each once) and a session's time floors
     * under the cap and cheap values.  Off (fc.n = 0) when the walk is too
     * long to keep: then they are recomputed.  Each F_op's compute floor
     * (rounded down to a float) is kept apart and dense: a session keeps it
     * for every F_op from its first search on, nfops long.  A lattice's
     * F_op share few floors (at most 3,551 distinct in a session of the
     * zoo's largest batches, over up to 878,280 F_op): cf holds each F_op's
     * place in the table cf_val of the distinct floors (CF_NOT_YET,
     * CF_BROKEN: breaks a constraint), 2 bytes per F_op instead of the
     * float's 4, and the same float read back (search_cf_put). */
    fop_cache fc;
    uint16_t *cf;
    float *cf_val;     /* the distinct floors, in the order the walk met them */
    uint16_t *cf_hash; /* open addressing over cf_val by the float's bits: 1 + place, 0: empty */
    int32_t ncf_val, cf_val_cap, cf_hash_size;
    bool cf_lost;      /* a floor found no room in cf_val (left not yet): no scan */
    /* The last floor put and its code + 1 (0: none; search_cf_put): a walk
     * meets the same floor many times in a row (along the last axis the
     * compute of a padded tile repeats), and a code changes only when the
     * codes are ordered (search_cf_order, which forgets it), so a repeat
     * skips the hash (issue 45). */
    uint32_t cf_last_bits;
    int32_t cf_last;
    /* The scan's summary of cf (search_pass1_scan), per block of
     * CF_SUM_BLOCK F_op: the least code (the codes ordered: the least known
     * floor's; CF_BROKEN or CF_NOT_YET: none known) and how many floors are
     * known; built by the first scan after any floor is put (cf_sum_ok),
     * so a block whose least floor exceeds the scan's limit is passed over
     * with one test (issue 45). */
    uint16_t *cf_bmin;
    int32_t *cf_bknown;
    bool cf_sum_ok;
    /* ... and per block of the scan's 16 F_op its least code, built with
     * cf_bmin (issue 45) */
    uint16_t *cf_bmin16;
    int64_t nfops;  /* F_op vectors the walk of pass 1 visits (-1: not yet counted) */
    int64_t *counts; /* a session's search_fop_count table by axis and room, or NULL */
    bool cf_filled;  /* a walk has filled the compute floors: later searches scan them (search_pass1_scan) */
    /* every F_op the last walk left CF_NOT_YET has a compute floor above
     * this (fopwalk.c, "The walk's cut"); INFINITY: none was left */
    double cf_above;
    archive *spare; /* plans earlier searches costed, for the next seed; may be NULL */
    bool frontier;  /* single-pass frontier search: prune by dominance, keep a front */
    double time_cap; /* plans slower than this are not wanted (INFINITY: all) */
    /* the caller's flag that gives the search up (rotor_search_session_until;
     * NULL: none), read between F_op */
    const _Atomic bool *stop;
    bool session;    /* a rotor_search_session's: keeps cf and a full fc */
    /* the per-thread buffers of its searches: its own (kept across its
     * searches), or with a pool (rotor_search_options.pool) borrowed from
     * it for each search (search_bufs) */
    search_bufs *bufs;
    search_bufs own;
    rotor_search_pool *shared; /* NULL: no pool */
    uint64_t id;               /* in the pool: whose memo a set holds (search_bufs.owner) */
    int64_t full_cap; /* a session's cap without a memory_cap: no arrays until below it */
    /* each tensor's memo class (search.c, ctx_classes; 0: no memo), set
     * by the first search */
    int16_t tclass[ROTOR_MAX_TENSORS];
    front_log *flog;  /* a single-pass frontier search's pass 2 with 2+ threads, else NULL */
    /* search_output_floor's seconds per element of the output's tile (0:
     * that floor does not hold here), set by ctx_init */
    double out_floor_k;
    /* search_rotation_latency's seconds, set by ctx_init */
    double rot_lat;
} ctx;

/* Candidate steps per axis: divisors of the P_X of tensors carrying the axis. */
typedef struct step_choices {
    int64_t v[ROTOR_MAX_AXES][MAX_STEP_CHOICES];
    int n[ROTOR_MAX_AXES];
} step_choices;

/* Per-thread state: the current partial plan, counters and best plan. */
typedef struct worker {
    ctx *c;
    rotor_plan plan;
    int64_t steps[ROTOR_MAX_AXES];
    int64_t len[ROTOR_MAX_AXES];  /* L_a */
    int64_t sub[ROTOR_MAX_AXES];  /* s_a */
    int64_t share[ROTOR_MAX_TENSORS];
    int64_t bytes[ROTOR_MAX_TENSORS];
    int64_t tpart[ROTOR_MAX_TENSORS][ROTOR_MAX_AXES]; /* L_a / f_t[a] as dfs_axis chose f_t */
    int64_t min_bytes[ROTOR_MAX_TENSORS]; /* bytes(X) with every f_t = S: a floor */
    int64_t divs[ROTOR_MAX_AXES][MAX_DIVISORS]; /* divisors of S_a */
    int ndivs[ROTOR_MAX_AXES];
    int64_t divs_of[ROTOR_MAX_AXES]; /* the S_a whose divisors divs[a] holds (0: none) */
    double compute;
    bool have_best;
    rotor_candidate best;
    rotor_search_stats st;
    step_choices sc;
    int64_t scratch[MAX_DIVISORS];
    archive *seen; /* the plans this worker costed (Pareto loop only), or NULL */
    archive *own;  /* the archive it owns for that (kept with the worker) */
    int64_t weak[ROTOR_MAX_TENSORS]; /* per-tensor memory floor of the F_op */
    int64_t smax[ROTOR_MAX_AXES];    /* largest S_a on offer */
    front front;                     /* the frontier search's plans */
    struct knap_scratch *knap;       /* search_cap_time_floor's lists (pass 2) */
    double comm_floor;               /* search_cap_time_floor of the F_op being searched */
    /* the least time floor of the F_op's plans under the cap met so far
     * by search_fop (search_floor_note; fopwalk.c, "The searched floor") */
    double fop_min;
    /* step_floor_upto(t, a) of the current steps prefix, by level a: a
     * tensor without axis a keeps the value of level a - 1 */
    int64_t sfl[ROTOR_MAX_AXES][ROTOR_MAX_TENSORS];
    int64_t sgcd[ROTOR_MAX_AXES][ROTOR_MAX_TENSORS]; /* ... and its ring gcd */
    /* per F_op (search_fop), for step_floor_upto's axes not yet chosen:
     * ceil(E_a / F_a), ceil(E_a / (F_a Smax_a)), and the product of the
     * Smax_b of X's axes b after a prefix (growing only while below P_X) */
    int64_t len_any[ROTOR_MAX_AXES], sub_any[ROTOR_MAX_AXES];
    /* the step levels' s_a, each axis after the current level at S = 1
     * (len_any): steps_prefix_time's compute reads it */
    int64_t psub[ROTOR_MAX_AXES];
    int64_t rest[ROTOR_MAX_TENSORS][ROTOR_MAX_AXES + 1];
    /* the joint floor of a frontier search (steps.c, "The joint floor"):
     * on for this F_op, its price of a byte, the divisors of each P_X */
    bool joint;
    double lam;
    int64_t pdiv[ROTOR_MAX_TENSORS][MAX_DIVISORS];
    int npdiv[ROTOR_MAX_TENSORS];
    int64_t jmemo_u[ROTOR_MAX_TENSORS], jmemo_g[ROTOR_MAX_TENSORS]; /* joint_tensor's last (u, g) ... */
    double jmemo_h[ROTOR_MAX_TENSORS];                              /* ... and h_X (u = 0: none) */
    int64_t pdiv_fop[ROTOR_MAX_AXES]; /* the F_op whose shares and pdiv are set */
    bool pdiv_set;
    int tid;          /* its place among pass 2's workers (front_log.who) */
    int64_t log_seen; /* entries of the ctx's front_log it has read */
} worker;

typedef struct fop_list {
    fop_entry *v;
    int64_t n, cap;
    int64_t soft; /* compacted when n reaches it (fopwalk.c, search_keep_push) */
    bool oom;
} fop_list;
#define KEEP_SOFT_MIN 1024

typedef struct knap_opt {
    int64_t bytes;
    double time;
} knap_opt;

/* The divisor lattice of a ring size P: its divisors ascending and every
 * triple (j, i, k) with div[i] * div[k] = div[j], by j then i.  The dynamic
 * program of tensor_options walks these pairs once per dimension; finding
 * them costs a division per pair of divisors, so each worker keeps the
 * lattices of the last P it met in a small direct-mapped cache (they depend
 * on P alone).  P with more divisors or pairs than fit take the loops. */
#define LAT_DIV 256
#define LAT_PAIRS 1024
#define LAT_SLOTS 64
typedef struct lattice {
    int64_t share; /* 0: empty */
    int nd, npairs;
    int64_t div[LAT_DIV];
    uint16_t pj[LAT_PAIRS], pi[LAT_PAIRS], pk[LAT_PAIRS];
} lattice;

/* Tensor t's options do not depend on the whole F_op: only on the factors
 * of t's own axes and on the product `share` of the others (tensor_options
 * reads nothing else), and on the cap only through the filter bytes <= cap,
 * which keeps a prefix of the front by bytes.  Each worker keeps the
 * uncapped fronts it computed in a direct-mapped memo (bound.c,
 * "opt_memo"), so the F_op that share them, and the later capped searches
 * of a session, copy a prefix instead of rerunning the dynamic program. */
#define MEMO_SLOTS 8192
#define MEMO_OPTS 16
#define MEMO_BYTES_MAX ((int64_t)1 << 40) /* options above it are never kept */
/* A slot: its key and front in one place, the key on one cache line and
 * the front on the next (issue 45: a lookup touched the flag, the key and
 * the front in three arrays, and pass 2's bounds waited on each).  The key's
 * factors are F_a <= N <= 2^30 (tensor_options checks). */
typedef struct opt_memo {
    int16_t t; /* the tensor's class (ctx.tclass); valid only where knap_scratch.memo_on says so */
    int16_t n;
    int32_t fop[ROTOR_MAX_AXES]; /* t's axes' extents ceil(E_a / F_a), 0 on the others (memo_slot) */
    int64_t share, least;
    knap_opt opt[MEMO_OPTS];
} opt_memo;
_Static_assert(offsetof(opt_memo, opt) == 64, "a memo slot's key fills one cache line");

#define KNAP_MAX 8192
typedef struct knap_scratch {
    lattice lat[LAT_SLOTS];
    /* memo_on[k]: slot k holds a front (8 KB set to 0 when the scratch is
     * made: the 3 MB of slots are then touched only where the search writes,
     * not faulted in for each of the sessions a compile opens) */
    uint8_t memo_on[MEMO_SLOTS];
    _Alignas(64) opt_memo memo[MEMO_SLOTS]; /* the scratch is made by aligned_alloc */
    bool no_memo; /* tests: every tensor's options computed afresh */
    knap_opt opt[ROTOR_MAX_TENSORS][MAX_DIVISORS]; /* per tensor, by bytes, time falling */
    /* per tensor, its options: opt[t] or, from the memo, a prefix of its
     * memo slot's front read in place (tensor_options; a slot rewritten while
     * another tensor reads it is copied to that tensor's opt first) */
    const knap_opt *po[ROTOR_MAX_TENSORS];
    int nopt[ROTOR_MAX_TENSORS];
    knap_opt cur[KNAP_MAX], next[KNAP_MAX];
    int64_t div[MAX_DIVISORS];
    double g[MAX_DIVISORS], ng[MAX_DIVISORS], ext[MAX_DIVISORS];
} knap_scratch;

/* Cost model v1's compute floor (cost.c, v1_step_bound with no steps: the
 * sub-task of s_a = ceil(E_a / F_a) priced by rotor_cost_v1_subtask),
 * carried down pass 1's walk: at axis a, cur holds the group products
 * (batch, Mg, Ng, Kg; a vector op's points in cur[0]) over axes 0..a-1,
 * multiplied in axis order as rotor_cost_v1_subtask multiplies them, so
 * each node multiplies in its own axis's s_a only and each leaf repeats
 * the last axis's factor and the one pad it changes.  The same doubles by
 * the same operations in the same order: the walk's floor is bit-identical
 * to the model's (tests/test_searchbig.c checks every F_op of several
 * lattices).  Used only when the search's model is v1 itself. */
/* The last axis's sub-task extents ceil(E / f) the walk's leaves read,
 * kept for f below this (a walk's init fills them; larger f divide). */
#define V1_LQ 2048
typedef struct v1_floor {
    bool on;          /* the model is v1 and the expression has an axis */
    bool contraction; /* the matrix class (else points * flops_per_point) */
    int last;         /* naxes - 1 */
    int8_t group[ROTOR_MAX_AXES];
    int64_t ext[ROTOR_MAX_AXES], rows, cols;
    double rate, fpp;
    double cur[4];
    double pad[4]; /* at the last axis: cur's batch product and padded Mg, Ng, Kg */
    /* lq[f] = ceil(ext[last] / f) as a double for 1 <= f < nlq (issue 45:
     * the leaves' integer division was a third of the walk's time) */
    int64_t nlq;
    double lq[V1_LQ];
    /* the output's floor (search_output_floor) carried too, contractions
     * only: its factor (0: off) and the product of the factors of the axes
     * before the last that the output lacks (group 3) */
    double out_k, red;
} v1_floor;
void search_v1_floor_init(v1_floor *v, const rotor_cost_model *m, const rotor_expr *e, const rotor_chip *chip);


/* cur's padded groups, as rotor_cost_v1_subtask pads them */
static inline void v1_floor_pads(v1_floor *v) {
    v->pad[0] = v->cur[0];
    v->pad[1] = (double)rotor_cost_pad_to((int64_t)v->cur[1], v->rows);
    v->pad[2] = (double)rotor_cost_pad_to((int64_t)v->cur[2], v->cols);
    v->pad[3] = (double)rotor_cost_pad_to((int64_t)v->cur[3], v->rows);
}

/* Axis a (< last) takes factor f; base is its group's product over the
 * axes before a (v1_floor_base before the axis's loop, restored after it
 * by v1_floor_restore), and red the product of the reduction axes' (group
 * 3) factors before a, which a group-3 axis multiplies by its own. */
static inline double v1_floor_base(const v1_floor *v, int a) { return v->cur[v->group[a]]; }
static inline void v1_floor_axis(v1_floor *v, int a, int64_t f, double base, double red) {
    v->cur[v->group[a]] = base * (double)((v->ext[a] + f - 1) / f);
    if (v->group[a] == 3) v->red = red * (double)f;
    if (a + 1 == v->last && v->contraction) v1_floor_pads(v);
}
static inline void v1_floor_restore(v1_floor *v, int a, double base, double red) {
    v->cur[v->group[a]] = base;
    v->red = red;
}

/* The last axis's group product at its factor f: the carried product of
 * the axes before it times ceil(E / f). */
static inline double v1_floor_x(const v1_floor *v, int64_t f) {
    int last = v->last;
    return v->cur[v->group[last]] * (f < v->nlq ? v->lq[f] : (double)((v->ext[last] + f - 1) / f));
}

/* The floor's numerator (its flops) of the F_op whose axes before the last
 * are as carried and whose last axis takes factor f: v1_floor_leaf without
 * the division by the rate. */
static inline double v1_floor_num(const v1_floor *v, int64_t f) {
    int gr = v->group[v->last];
    double x = v1_floor_x(v, f);
    if (!v->contraction) return v->fpp * x;
    double p[4] = {v->pad[0], v->pad[1], v->pad[2], v->pad[3]};
    if (gr == 0) p[0] = x;
    else p[gr] = (double)rotor_cost_pad_to((int64_t)x, gr == 2 ? v->cols : v->rows);
    return 2.0 * p[0] * p[1] * p[3] * p[2];
}

/* The floor of the F_op whose axes before the last are as carried and whose
 * last axis takes factor f. */
static inline double v1_floor_leaf(const v1_floor *v, int64_t f) { return v1_floor_num(v, f) / v->rate; }

/* The output's floor (search_output_floor) of the F_op whose axes before
 * the last are as carried and whose last axis takes factor f: the same
 * products of the same integers (exact in doubles), so the same value. */
static inline double v1_floor_out(const v1_floor *v, int64_t f) {
    if (!(v->out_k > 0)) return 0;
    int gr = v->group[v->last];
    double x = v1_floor_x(v, f);
    double s = gr == 3 ? v->red * (double)f : v->red;
    double elems = (gr == 0 ? x : v->cur[0]) * (gr == 1 ? x : v->cur[1]) * (gr == 2 ? x : v->cur[2]);
    return search_output_floor_of(elems, s, v->out_k);
}

#define PROBE_MAX 4
/* sessions on chips up to this many cores keep a table of subtree sizes */
#define COUNTS_MAX_CORES 16384
typedef struct pass1 {
    ctx *c;
    worker *w;       /* seeds the incumbent with all-ones plans */
    fop_list *keep;
    int64_t index;   /* F_op vectors visited so far (the floors cache key) */
    int64_t fop[ROTOR_MAX_AXES];
    /* F_op searched in full before the walk (search_probe_archive): not kept */
    int64_t probed[PROBE_MAX][ROTOR_MAX_AXES];
    int nprobed;
    v1_floor sb; /* the walk's compute floor, carried by axis (search_pass1_walk) */
    /* the walk passes over the leaves whose compute floor is above cut_k
     * times its limit (0: none; fopwalk.c, "The walk's cut") */
    double cut_k;
} pass1;
/* a session's cut_k: its later searches scan the floors below it */
#define WALK_CUT 4.0
/* the limit below which every F_op the walk just ended cut is pruned
 * (INFINITY: it cut none) */
double search_walk_cut_above(const pass1 *p);

/* A session's search context (tests: what its walks left, fopwalk.c,
 * "The walk's cut"). */
ctx *search_session_ctx(rotor_search_session *s);

/* ---- the incumbent, shared by the threads of one search ---- */

/* Has the caller given the search up (ctx.stop)? */
static inline bool search_stopped(const ctx *c) {
    return c->stop && atomic_load_explicit(c->stop, memory_order_relaxed);
}

static inline double incumbent(ctx *c) {
    uint64_t bits = atomic_load_explicit(&c->incumbent, memory_order_relaxed);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* The time above which a single-plan search prunes with no memory at all
 * (search_prune's two time tests): the scan's limit, and the one that
 * decides whether a session's later search may scan (fopwalk.c, "The
 * walk's cut"). */
static inline double search_limit(ctx *c) {
    return fmin(c->time_cap * (1 + SLACK), incumbent(c) * (1 + SLACK));
}

static inline void offer_incumbent(ctx *c, double t) {
    uint64_t bits;
    memcpy(&bits, &t, sizeof bits);
    uint64_t cur = atomic_load_explicit(&c->incumbent, memory_order_relaxed);
    while (bits < cur &&
           !atomic_compare_exchange_weak_explicit(&c->incumbent, &cur, bits, memory_order_relaxed,
                                                  memory_order_relaxed)) {
    }
}

/* ---- the front (pareto.c) ---- */

/* Entries with memory <= m: their count (binary search). */
static inline int front_upto(const front *f, int64_t m) {
    int lo = 0, hi = f->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (f->v[mid].info.memory <= m) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Is every plan with time >= t and memory >= m beaten by an entry that is
 * strictly faster (beyond the slack) with no more memory? */
static inline bool front_dominates(const front *f, double t, int64_t m) {
    int k = front_upto(f, m);
    return k > 0 && f->v[k - 1].cost.total * (1 + SLACK) < t;
}

/* Is every plan of a region beaten by an entry of w's front, or over the
 * time cap?  The region: memory M in [m, cap], time at least t and at least
 * k - lam M (steps.c, "The joint floor"). */
bool search_front_dominates_joint(const struct worker *w, double t, int64_t m, double lam, double k);

/* Adds cand to the front unless an entry beats it; drops what it beats
 * (sets f->oom when out of memory).  True when cand joined the front. */
bool search_front_add(const rotor_expr *e, front *f, const rotor_candidate *cand);
/* The plans that joined a pass-2 worker's front, shared with the other
 * workers of a single-pass frontier search (pareto.c, "The shared log"). */
bool search_front_log_init(front_log *g);
void search_front_log_free(front_log *g);
void search_front_log_push(worker *w, const rotor_candidate *cand);
void search_front_log_pull(worker *w);
/* Adds cand to the archive unless an entry is no slower with no more memory. */
void search_archive_add(archive *ar, const rotor_candidate *cand);
/* An empty archive (NULL: out of memory), and its end (NULL: nothing). */
archive *search_archive_new(void);
void search_archive_free(archive *ar);
/* The frontier by the epsilon-constraint method into out->pareto, from
 * out->best. */
rotor_status search_pareto_epsilon(ctx *c, int nthreads, rotor_search_result *out, rotor_search_stats *st,
                            rotor_error *err);

/* ---- the fast solver (kapla.c) ---- */

/* rotor_search with opt->solver == ROTOR_SOLVER_FAST. */
rotor_status kapla_search(const rotor_expr *e, const rotor_chip *chip, const rotor_search_options *opt,
                          rotor_search_result *out, rotor_error *err);

/* rotor_search with opt->solver == ROTOR_SOLVER_RANDOM or ROTOR_SOLVER_ML
 * (kaplabase.c). */
rotor_status kapla_base_search(const rotor_expr *e, const rotor_chip *chip, const rotor_search_options *opt,
                              rotor_search_result *out, rotor_error *err);

/* ---- one search (search.c) ---- */

/* One exact branch and bound for the fastest plan under c->cap (the front
 * too, into *out_front, in a single-pass frontier search).  False when out
 * of memory; *have says whether any plan fits. */
bool search_once(ctx *c, int nthreads, rotor_candidate *best, bool *have, rotor_search_stats *st,
                 front *out_front);

/* ---- levels 2 and 3 (steps.c) ---- */

/* Would a plan with time >= t and memory >= m be pruned?  Inline: pass 1
 * and pass 2 ask it of every F_op they keep or drop (issue 45: 2 % of a
 * DenseNet-121 compile as a call). */
static inline bool search_prune(worker *w, double t, int64_t m) {
    if (m > w->c->cap) return true;
    if (t > w->c->time_cap * (1 + SLACK)) return true;
    if (w->c->frontier) return front_dominates(&w->front, t, m);
    return t > incumbent(w->c) * (1 + SLACK);
}
/* A part of the F_op's plans that search_fop leaves, or one plan it
 * costs: each of its plans runs in at least t and holds at least m bytes.
 * Those over the cap are not the cap's, nor any smaller cap's; the rest
 * lower w->fop_min (fopwalk.c, "The searched floor"). */
static inline void search_floor_note(worker *w, double t, int64_t m) {
    if (m <= w->c->cap && t < w->fop_min) w->fop_min = t;
}
/* After search_fop of the entry f: its searched floor kept (a session's). */
void search_fop_searched(worker *w, const fop_entry *f);
/* A costed plan: the worker's best, the incumbent, the archive, the front. */
void search_offer(worker *w, const rotor_candidate *cand);
/* The plan in w->plan, derived, costed and offered. */
void search_leaf(worker *w);
/* The divisors of n, ascending, into out (*count of them). */
void search_divisors(int64_t n, int64_t *out, int *count);
/* The F_op's joint floor (steps.c) before its full bounds: true when the
 * front covers every plan of the F_op (a frontier search only). */
bool search_fop_joint_cut(worker *w, const int64_t *fop, double t, double compute, int64_t m);
/* The joint floor's k of an F_op with steps[0..upto] chosen (tests). */
double search_joint_floor(worker *w, const int64_t *fop, const int64_t *steps, int upto);
/* step_floor_upto of tensor t with steps[0..upto] chosen (tests/test_searchcap.c). */
int64_t search_step_floor(worker *w, const int64_t *fop, const int64_t *steps, int upto, int t);
int64_t search_tensor_least(worker *w, const int64_t *fop, const int64_t *steps, int upto, int t, int64_t limit);
/* Every plan of one F_op: steps, then f_t per tensor, depth first. */
void search_fop(worker *w, const int64_t *fop);

/* ---- the bounds of an F_op (bound.c) ---- */

/* A floor on tensor t's bytes under any plan with this F_op. */
int64_t search_tensor_weak_floor(const ctx *c, int t, const int64_t *fop);
/* Tensor t's description (tensor_desc), zeroed first. */
void search_tensor_desc(const ctx *c, int t, tensor_desc *d);
/* The sum of search_tensor_weak_floor over the tensors. */
int64_t search_fop_mem_bound(const ctx *c, const int64_t *fop);
/* Bytes of tensor t in the all-ones plan of this F_op. */
double search_all_ones_bytes_of(const ctx *c, const int64_t *fop, int t);
/* The all-ones plan's bytes, summed over the tensors. */
double search_fop_all_ones_bytes(const ctx *c, const int64_t *fop);
/* The cheap memory floor *mb and all-ones bytes *ones of an F_op. */
void search_fop_cheap_mem(const ctx *c, const int64_t *fop, int64_t *mb, double *ones);
/* The strong memory floor of the F_op at walk index `index` (cached); it
 * leaves each tensor's options in ks, and *ready says so. */
int64_t search_fop_strong_floor(const ctx *c, knap_scratch *ks, const int64_t *fop, int64_t index, bool *ready);
/* The time floor of an F_op under the memory cap (the knapsack); ready:
 * the caller has filled ks for this F_op.  *steps (may be NULL) gets the
 * same floor without the latency a rotating plan's second step pays
 * (search_rotation_latency), for the step search, which adds the (T - 1)
 * latencies of the steps it chooses. */
double search_cap_time_floor(const ctx *c, knap_scratch *ks, const int64_t *fop, bool ready, double *steps);
/* The latency every step after the first pays whatever moves
 * (cost-model-v1.md's (T - 1) alpha) where no plan hides it: the v1 model
 * on a chip whose shifts do not overlap compute, all-to-all or a mesh
 * (whose boundaries pay hops * alpha; docs/cost-model.md, "Bounds"); else 0.  Scaled down by 1e-9, as the
 * output's floor: the model rounds its sums, a floor must not exceed them. */
double search_rotation_latency(const rotor_cost_model *m, const rotor_chip *chip);

/* The sum over tensors 0..n-1 of each one's fastest option in ks: a floor
 * of search_cap_time_floor (INFINITY: a tensor has none). */
double search_cap_time_sum_floor(const knap_scratch *ks, int n);
/* A floor of the output tensor's share of every plan's time with F_op
 * fop, under any cap (bound.c, "The output's floor"); 0 where it does not
 * hold (c->out_floor_k = 0) or the output is not split over reduction
 * axes.  search_output_floor_k gives c->out_floor_k. */
double search_output_floor(const ctx *c, const int64_t *fop);
double search_output_floor_k(const rotor_cost_model *m, const rotor_expr *e, const rotor_chip *chip);
/* Every tensor's options into w->knap, unless compute plus the sum floor
 * of those so far is pruned first (true: cut, *part that floor); *least
 * their least bytes' sum. */
bool search_fop_options_cut(worker *w, const int64_t *fop, double compute, int64_t mem, double *part,
                            int64_t *least);

/* ---- pass 1 over F_op (fopwalk.c) ---- */

/* The all-ones plan of an F_op, costed when it might beat the incumbent. */
void search_seed_all_ones(worker *w, const int64_t *fop, double tb);
/* Whether F_op f survives its full bounds (time floor under the cap). */
bool search_fop_full_bounds(worker *w, fop_entry *f);
/* The F_op of archived plans just above the cap, searched in full first. */
void search_probe_archive(ctx *c, worker *ws, int nthreads, pass1 *p);
/* The walk over every F_op from axis a with `room` cores left. */
void search_pass1_walk(pass1 *p, int a, int64_t room);
void search_pass1_seed(pass1 *p);
bool search_keep_push(worker *w, fop_list *l, const fop_entry *f);
/* F_op vectors of the walk from axis a with `room` cores left. */
int64_t search_fop_count(ctx *c, int a, int64_t room);
/* A scan's last decoded F_op (search_fop_decode): per axis its factor, the
 * room before it, and the first index and size of its prefix's subtree. */
typedef struct fop_cursor {
    int n; /* axes decoded; 0: none yet */
    int64_t fop[ROTOR_MAX_AXES], room[ROTOR_MAX_AXES], base[ROTOR_MAX_AXES], size[ROTOR_MAX_AXES];
} fop_cursor;
void search_fop_decode(const ctx *c, fop_cursor *d, int64_t index, int64_t *fop);
/* The walk over the caches a previous walk filled, instead of the F_op. */
void search_pass1_scan(pass1 *p);

#endif
