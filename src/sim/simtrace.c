/* simtrace.c — the simulator's Chrome trace-event JSON (issue 6 "Outputs",
 * issue 23 "Traces a person can open"; the format is Google's "Trace Event
 * Format", which Perfetto and chrome://tracing open).
 *
 * Layout (docs/simulator.md, "Trace"):
 *  - every task kept by the filter is one complete event ("ph": "X") with ts
 *    and dur in microseconds (printed exactly from picoseconds), its
 *    operator's name (or its category) as name, and the task id, operator,
 *    bytes or flops, endpoints and wait in args;
 *  - compute runs on the core's track; cores are grouped 64 to a process
 *    so Perfetto can fold them;
 *  - a transfer runs on one track of its link class: HBM controller lanes,
 *    inter-chip lanes, else the sender's out port (all-to-all) or the first
 *    link of its route (mesh).  Each such track is a FIFO, so its events never
 *    overlap;
 *  - a multicast is one event on its sender's track; args give its first
 *    receiver as dst and the number of receivers;
 *  - counter tracks ("ph": "C") over the whole chip, in equal time buckets:
 *    transfers in flight, links busy, HBM GB/s;
 *  - metadata events name every process and thread used; otherData holds
 *    the run (chip, topology, cores, tasks, makespan) and what the filter
 *    left out.
 * It is printed straight to a stream, event by event (no JSON tree), and is
 * byte-identical for the same run and filter. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/base/version.h"
#include "simint.h"

#define CORES_PER_GROUP 64

enum { CLASS_EXCHANGE, CLASS_MESH, CLASS_INTERCHIP, CLASS_HBM, NCLASSES };
static const char *const CLASS_NAME[NCLASSES] = {"exchange (out ports)", "mesh links", "inter-chip",
                                                 "HBM controllers"};

typedef struct trace_track {
    int64_t pid, tid;
} trace_track;

static int64_t ngroups(const rotor_sim *s) { return (s->cores + CORES_PER_GROUP - 1) / CORES_PER_GROUP; }

static int transfer_class(const rotor_sim *s, const sim_task *t) {
    if (t->flags & SIM_F_HBM) return CLASS_HBM;
    if (t->flags & SIM_F_INTERCHIP) return CLASS_INTERCHIP;
    return s->chip.topology == ROTOR_TOPO_MESH ? CLASS_MESH : CLASS_EXCHANGE;
}

/* The track of task t and, in *key, an index into the `used` table. */
static trace_track track_of(const rotor_sim *s, const sim_task *t, int64_t *key) {
    if (t->kind == SIM_KIND_COMPUTE) {
        *key = t->a;
        return (trace_track){1 + t->a / CORES_PER_GROUP, t->a};
    }
    int cls = transfer_class(s, t);
    int64_t pid = 1 + ngroups(s) + cls, tid;
    if (cls == CLASS_EXCHANGE) tid = t->a;
    else if (cls == CLASS_MESH) {
        sim_route r;
        sim_net_route(s, t->a, t->b, &r);
        tid = r.res[0];
    } else {
        int64_t res = cls == CLASS_INTERCHIP ? s->res_interchip
                                             : s->res_hbm0 + ((sim_node_is_hbm(s, t->a) ? t->a : t->b) - s->cores);
        tid = s->res[res].lane0 + t->lane; /* a global lane index */
    }
    /* used[]: cores, then exchange ports, then mesh links, then lanes */
    int64_t base = s->cores;
    if (cls == CLASS_EXCHANGE) *key = base + tid;
    else if (cls == CLASS_MESH) *key = base + s->cores + tid;
    else *key = base + s->cores + s->nres + tid;
    return (trace_track){pid, tid};
}

/* Which resource or lane a track is, by name ("core c0.5", "out c0.5", ...). */
static void track_name(const rotor_sim *s, int cls, int64_t tid, char *buf, size_t size) {
    char res[96];
    if (cls < 0) {
        snprintf(buf, size, "core c%lld.%lld", (long long)(tid / s->cpc), (long long)(tid % s->cpc));
        return;
    }
    if (cls == CLASS_EXCHANGE) rotor_sim_resource_name(s, 2 * tid, buf, size);
    else if (cls == CLASS_MESH) rotor_sim_resource_name(s, tid, buf, size);
    else {
        int64_t r = cls == CLASS_INTERCHIP ? s->res_interchip : s->res_hbm0;
        while (s->res[r].lane0 + s->res[r].nlanes <= tid) r++; /* controllers' lanes are consecutive */
        rotor_sim_resource_name(s, r, res, sizeof res);
        snprintf(buf, size, "%s lane %lld", res, (long long)(tid - s->res[r].lane0));
    }
}

/* ---- printing ---------------------------------------------------------------- */

/* A JSON string: quotes, backslashes and control characters escaped. */
static void put_str(FILE *f, const char *v) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

/* Picoseconds as microseconds, exactly and without trailing zeros (times
 * are >= 0): 1500000 -> "1.5", 0 -> "0". */
static void put_us(FILE *f, int64_t ps) {
    int64_t frac = ps % 1000000;
    if (frac == 0) {
        fprintf(f, "%" PRId64, ps / 1000000);
        return;
    }
    int digits = 6;
    while (frac % 10 == 0) frac /= 10, digits--;
    fprintf(f, "%" PRId64 ".%0*" PRId64, ps / 1000000, digits, frac);
}

static void put_sep(FILE *f, bool *first) {
    fputs(*first ? "\n" : ",\n", f);
    *first = false;
}

static void put_meta(FILE *f, bool *first, const char *what, int64_t pid, int64_t tid, const char *name) {
    put_sep(f, first);
    fprintf(f, "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%" PRId64, what, pid);
    if (tid >= 0) fprintf(f, ",\"tid\":%" PRId64, tid);
    fputs(",\"args\":{\"name\":", f);
    put_str(f, name);
    fputs("}}", f);
}

/* Metadata for every process and track that has events. */
static void put_metadata(const rotor_sim *s, const bool *used, FILE *f, bool *first) {
    char name[160];
    int64_t groups = ngroups(s);
    for (int64_t g = 0; g < groups; g++) {
        bool any = false;
        for (int64_t c = g * CORES_PER_GROUP; c < s->cores && c < (g + 1) * CORES_PER_GROUP; c++) any |= used[c];
        if (!any) continue;
        int64_t last = (g + 1) * CORES_PER_GROUP < s->cores ? (g + 1) * CORES_PER_GROUP : s->cores;
        snprintf(name, sizeof name, "cores %lld-%lld", (long long)(g * CORES_PER_GROUP), (long long)last - 1);
        put_meta(f, first, "process_name", 1 + g, -1, name);
        for (int64_t c = g * CORES_PER_GROUP; c < last; c++)
            if (used[c]) {
                track_name(s, -1, c, name, sizeof name);
                put_meta(f, first, "thread_name", 1 + g, c, name);
            }
    }
    int64_t lo[NCLASSES] = {s->cores, 2 * s->cores, 2 * s->cores + s->nres, 2 * s->cores + s->nres};
    int64_t n[NCLASSES] = {s->cores, s->nres, s->nlanes, s->nlanes};
    for (int cls = 0; cls < NCLASSES; cls++) {
        bool named = false;
        for (int64_t tid = 0; tid < n[cls]; tid++) {
            if (!used[lo[cls] + tid]) continue;
            /* inter-chip and HBM share the lane range: a lane belongs to one pool */
            bool is_ic = s->res_interchip >= 0 && tid >= s->res[s->res_interchip].lane0 &&
                         tid < s->res[s->res_interchip].lane0 + s->res[s->res_interchip].nlanes;
            if ((cls == CLASS_INTERCHIP && !is_ic) || (cls == CLASS_HBM && is_ic)) continue;
            if (!named) put_meta(f, first, "process_name", 1 + groups + cls, -1, CLASS_NAME[cls]);
            named = true;
            track_name(s, cls, tid, name, sizeof name);
            put_meta(f, first, "thread_name", 1 + groups + cls, tid, name);
        }
    }
}

static void put_task(const rotor_sim *s, int64_t id, FILE *f, bool *first) {
    const sim_task *t = &s->tasks[id - s->base];
    int64_t key;
    trace_track tr = track_of(s, t, &key);
    const char *opname = t->op >= 0 && t->op < s->nop_names ? s->op_names[t->op] : NULL;
    char fallback[32];
    if (!opname && t->op >= 0) snprintf(fallback, sizeof fallback, "op %d", (int)t->op);
    put_sep(f, first);
    fputs("{\"name\":", f);
    put_str(f, opname ? opname : t->op >= 0 ? fallback : rotor_sim_category_name(t->cat));
    fprintf(f, ",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":", rotor_sim_category_name(t->cat));
    put_us(f, t->start);
    fputs(",\"dur\":", f);
    put_us(f, t->dur);
    fprintf(f, ",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"args\":{\"task\":%" PRId64 ",\"op\":%d", tr.pid, tr.tid,
            id, (int)t->op);
    if (opname) {
        fputs(",\"operator\":", f);
        put_str(f, opname);
    }
    if (t->kind == SIM_KIND_COMPUTE) {
        fprintf(f, ",\"core\":%d", (int)t->a);
        if (sim_task_amount(s, t) > 0) fprintf(f, ",\"flops\":%" PRId64, sim_task_amount(s, t));
    } else {
        fprintf(f, ",\"src\":%d,\"dst\":%d", (int)t->a, (int)t->b);
        if (t->mcast) fprintf(f, ",\"receivers\":%d", (int)s->mcast[t->mcast - 1].ndsts);
        fprintf(f, ",\"bytes\":%" PRId64, sim_task_amount(s, t));
    }
    fputs(",\"wait_us\":", f);
    put_us(f, t->start - t->ready);
    fputs("}}", f);
}

/* ---- the tracer ------------------------------------------------------------------ */

/* A trace being written: the filter, the tracks used, the counters, and
 * what was kept.  A whole run feeds it every task at once; a stream feeds it
 * each task as it retires (rotor_sim_retire) and the rest at the end. */
enum { CTR_TRANSFERS, CTR_LINKS, CTR_HBM, NCTR };

struct sim_tracer {
    FILE *out;
    rotor_sim_trace_filter f;   /* the caller's arrays, which outlive the trace */
    bool *core_kept;            /* per node, with a core filter */
    int8_t *op_state;           /* per operator: 0 not yet seen, 1 kept, -1 not */
    int64_t nop_state;
    bool *pattern_used;         /* per f.ops entry: some operator matched it */
    bool *used;                 /* per track key (track_of) */
    bool first;
    int64_t kept, seen;
    /* counters: nb buckets of width w from t0, clipped at t1; without a
     * window the width doubles (pairs merge) whenever a task ends past them */
    double *ctr;                /* NCTR x nb */
    int64_t nb, w, t0, t1;
    bool fixed;
    long start_pos;
    rotor_status st;            /* the first failure, kept to the end */
};

/* Does `pattern` name op `name` ("l0.*" is a prefix)? */
static bool op_matches(const char *pattern, const char *name) {
    size_t n = strlen(pattern);
    if (n > 0 && pattern[n - 1] == '*') return strncmp(pattern, name, n - 1) == 0;
    return strcmp(pattern, name) == 0;
}

/* Whether operator op passes the operator filter, decided when first seen
 * (a stream names operators as it goes). */
static bool op_kept(sim_tracer *tr, const rotor_sim *s, int32_t op) {
    if (op < 0) return false;
    if (op >= tr->nop_state) {
        int64_t n = tr->nop_state ? tr->nop_state : 64;
        while (n <= op) n *= 2;
        int8_t *q = realloc(tr->op_state, (size_t)n);
        if (!q) {
            tr->st = ROTOR_ERR_NOMEM;
            return false;
        }
        memset(q + tr->nop_state, 0, (size_t)(n - tr->nop_state));
        tr->op_state = q;
        tr->nop_state = n;
    }
    if (tr->op_state[op] == 0) {
        const char *name = op < s->nop_names ? s->op_names[op] : NULL;
        tr->op_state[op] = -1;
        for (int k = 0; name && k < tr->f.nops; k++)
            if (op_matches(tr->f.ops[k], name)) {
                tr->op_state[op] = 1;
                tr->pattern_used[k] = true;
            }
    }
    return tr->op_state[op] > 0;
}

/* A task is kept when it passes every filter given: its operator is named,
 * it overlaps the window (a zero-time task: lies in it), and it runs on a
 * named core or moves data from or to one. */
static bool keep(sim_tracer *tr, const rotor_sim *s, const sim_task *t) {
    const rotor_sim_trace_filter *f = &tr->f;
    if (f->nops > 0 && !op_kept(tr, s, t->op)) return false;
    if (f->to_ps > 0) {
        int64_t end = sim_task_end(t) > t->start ? sim_task_end(t) : t->start + 1;
        if (t->start >= f->to_ps || end <= f->from_ps) return false;
    }
    if (tr->core_kept) {
        if (t->kind == SIM_KIND_COMPUTE || !t->mcast) return tr->core_kept[t->a] || (t->b >= 0 && tr->core_kept[t->b]);
        if (tr->core_kept[t->a]) return true;
        const sim_mcast *mc = &s->mcast[t->mcast - 1];
        for (int32_t k = 0; k < mc->ndsts; k++)
            if (tr->core_kept[s->mdst[mc->doff + k]]) return true;
        return false;
    }
    return true;
}

/* Adds `rate` per ps over [a, b), clipped to the buckets, to counter c. */
static void spread(sim_tracer *tr, int c, int64_t a, int64_t b, double rate) {
    if (a < tr->t0) a = tr->t0;
    if (b > tr->t1) b = tr->t1;
    if (b <= a) return;
    double *v = tr->ctr + (int64_t)c * tr->nb;
    for (int64_t k = (a - tr->t0) / tr->w; k < tr->nb && tr->t0 + k * tr->w < b; k++) {
        int64_t lo = tr->t0 + k * tr->w, hi = lo + tr->w;
        v[k] += rate * (double)((b < hi ? b : hi) - (a > lo ? a : lo));
    }
}

/* Every task, kept or not, feeds the counters (they describe the chip). */
/* Whether resource res is a link or port (the links counter), not a pool. */
static bool is_link(const rotor_sim *s, int64_t res) {
    uint8_t k = s->res[res].kind;
    return k != SIM_RES_INTERCHIP && k != SIM_RES_HBM && k != SIM_RES_GB;
}

static void count(sim_tracer *tr, const rotor_sim *s, const sim_task *t) {
    if (t->kind != SIM_KIND_TRANSFER || t->dur == 0) return;
    while (!tr->fixed && sim_task_end(t) > tr->t0 + tr->nb * tr->w) { /* merge pairs: the width doubles */
        for (int c = 0; c < NCTR; c++) {
            double *v = tr->ctr + (int64_t)c * tr->nb;
            for (int64_t k = 0; k < tr->nb / 2; k++) v[k] = v[2 * k] + v[2 * k + 1];
            for (int64_t k = tr->nb / 2; k < tr->nb; k++) v[k] = 0;
        }
        tr->w *= 2;
    }
    int64_t links = 0;
    if (t->mcast) {
        const sim_mcast *mc = &s->mcast[t->mcast - 1];
        for (int32_t k = 0; k < mc->n; k++)
            links += is_link(s, s->mres[mc->off + k]);
    } else {
        sim_route r;
        sim_net_route(s, t->a, t->b, &r);
        for (int64_t k = 0; k < r.n; k++)
            links += is_link(s, r.res[k]);
    }
    spread(tr, CTR_TRANSFERS, t->start, sim_task_end(t), 1.0);
    spread(tr, CTR_LINKS, t->start, sim_task_end(t), (double)links);
    if (t->flags & SIM_F_HBM) spread(tr, CTR_HBM, t->start, sim_task_end(t), (double)sim_task_amount(s, t) / (double)t->dur);
}

void sim_tracer_task(sim_tracer *tr, const rotor_sim *s, int64_t id) {
    const sim_task *t = &s->tasks[id - s->base];
    tr->seen++;
    count(tr, s, t);
    if (!keep(tr, s, t)) return;
    int64_t key;
    track_of(s, t, &key);
    tr->used[key] = true;
    tr->kept++;
    put_task(s, id, tr->out, &tr->first);
}

/* span > 0: the run's makespan is known (a whole run), the buckets fixed. */
static rotor_status tracer_new(const rotor_sim *s, const rotor_sim_trace_filter *f, FILE *out, int64_t span,
                               sim_tracer **out_tr, rotor_error *err) {
    *out_tr = NULL;
    rotor_sim_trace_filter none = {0};
    if (!f) f = &none;
    if (f->to_ps > 0 && f->from_ps >= f->to_ps)
        return rotor_fail(err, ROTOR_ERR_INPUT, "trace window: %lld:%lld ps is empty (start must come before end)",
                          (long long)f->from_ps, (long long)f->to_ps);
    for (int64_t k = 0; k < f->ncores; k++)
        if (f->cores[k] < 0 || f->cores[k] >= s->cores)
            return rotor_fail(err, ROTOR_ERR_INPUT, "trace cores: core %lld does not exist (cores 0..%lld)",
                              (long long)f->cores[k], (long long)s->cores - 1);
    sim_tracer *tr = calloc(1, sizeof *tr);
    if (!tr) return rotor_nomem(err);
    *tr = (sim_tracer){.out = out, .f = *f, .first = true};
    tr->nb = f->counter_buckets > 0 ? f->counter_buckets : 1000;
    if (f->to_ps > 0) { /* the window's buckets */
        tr->t0 = f->from_ps > 0 ? f->from_ps : 0;
        tr->t1 = span > 0 && span < f->to_ps ? span : f->to_ps;
        tr->fixed = true;
    } else if (span > 0) {
        tr->t1 = span;
        tr->fixed = true;
    } else {
        tr->t1 = INT64_MAX;
        tr->nb += tr->nb % 2; /* pairs merge */
    }
    tr->w = tr->fixed ? (tr->t1 - tr->t0 + tr->nb - 1) / tr->nb : 1000;
    if (tr->w < 1) tr->w = 1;
    if (tr->fixed) tr->nb = (tr->t1 - tr->t0 + tr->w - 1) / tr->w;
    if (tr->nb < 1) tr->nb = 1;
    tr->ctr = calloc((size_t)(NCTR * tr->nb), sizeof *tr->ctr);
    tr->used = calloc((size_t)(2 * s->cores + s->nres + s->nlanes), sizeof *tr->used);
    tr->pattern_used = calloc((size_t)(f->nops > 0 ? f->nops : 1), sizeof *tr->pattern_used);
    if (f->ncores > 0 && (tr->core_kept = calloc((size_t)s->nodes, sizeof *tr->core_kept)))
        for (int64_t k = 0; k < f->ncores; k++) tr->core_kept[f->cores[k]] = true;
    if (!tr->ctr || !tr->used || !tr->pattern_used || (f->ncores > 0 && !tr->core_kept)) {
        sim_tracer_free(tr);
        return rotor_nomem(err);
    }
    tr->start_pos = ftell(out);
    fputs("{\"traceEvents\": [", out);
    *out_tr = tr;
    return ROTOR_OK;
}

void sim_tracer_free(sim_tracer *tr) {
    if (!tr) return;
    free(tr->core_kept);
    free(tr->op_state);
    free(tr->pattern_used);
    free(tr->used);
    free(tr->ctr);
    free(tr);
}

/* Metadata, counters and otherData after the last task; frees tr. */
rotor_status sim_tracer_end(sim_tracer *tr, const rotor_sim *s, rotor_sim_trace_summary *sum, rotor_error *err) {
    FILE *out = tr->out;
    rotor_status st = tr->st == ROTOR_ERR_NOMEM ? rotor_nomem(err) : ROTOR_OK;
    for (int k = 0; !st && k < tr->f.nops; k++)
        if (!tr->pattern_used[k])
            st = rotor_fail(err, ROTOR_ERR_INPUT, "trace operators: no operator is named '%s'", tr->f.ops[k]);
    put_metadata(s, tr->used, out, &tr->first);
    int64_t end = s->run.now < tr->t1 ? s->run.now : tr->t1;
    int64_t pid = 1 + ngroups(s) + NCLASSES;
    if (end > tr->t0) {
        put_meta(out, &tr->first, "process_name", pid, -1, "chip counters");
        static const char *const name[NCTR] = {"transfers in flight", "links busy", "HBM GB/s"};
        static const char *const arg[NCTR] = {"transfers", "links", "GB/s"};
        for (int c = 0; c < NCTR; c++)
            for (int64_t k = 0; k < tr->nb && tr->t0 + k * tr->w < end; k++) {
                int64_t from = tr->t0 + k * tr->w, width = from + tr->w < end ? tr->w : end - from;
                /* the mean over the bucket; bytes per ps * 1000 = GB/s */
                double mean = tr->ctr[(int64_t)c * tr->nb + k] / (double)width * (c == CTR_HBM ? 1000.0 : 1.0);
                put_sep(out, &tr->first);
                fprintf(out, "{\"name\":\"%s\",\"ph\":\"C\",\"ts\":", name[c]);
                put_us(out, from);
                fprintf(out, ",\"pid\":%" PRId64 ",\"args\":{\"%s\":%.6g}}", pid, arg[c], mean);
            }
    }
    const rotor_sim_trace_filter *f = &tr->f;
    fputs("\n],\n\"displayTimeUnit\": \"ns\",\n\"otherData\": {\"format\":\"rotor-sim-trace\",\"version\":1,"
          "\"rotor_version\":\"" ROTOR_VERSION "\",\"chip\":", out);
    put_str(out, s->chip.name);
    fprintf(out, ",\"topology\":\"%s\",\"cores\":%" PRId64 ",\"tasks\":%" PRId64 ",\"tasks_written\":%" PRId64
                 ",\"makespan_us\":",
            s->geo->name, s->cores, s->ntasks, tr->kept);
    put_us(out, s->run.now);
    if (f->nops > 0 || f->to_ps > 0 || f->ncores > 0) {
        fputs(",\"filter\":{", out);
        const char *sep = "";
        if (f->nops > 0) {
            fputs("\"ops\":[", out);
            for (int k = 0; k < f->nops; k++) {
                if (k) fputc(',', out);
                put_str(out, f->ops[k]);
            }
            fputc(']', out);
            sep = ",";
        }
        if (f->to_ps > 0) {
            fprintf(out, "%s\"window_us\":[", sep);
            put_us(out, f->from_ps > 0 ? f->from_ps : 0);
            fputc(',', out);
            put_us(out, f->to_ps);
            fputc(']', out);
            sep = ",";
        }
        if (f->ncores > 0) fprintf(out, "%s\"cores\":%lld", sep, (long long)f->ncores);
        fprintf(out, ",\"left_out\":\"%" PRId64 " of %" PRId64 " tasks are not in this trace\"}", s->ntasks - tr->kept,
                s->ntasks);
    }
    fputs("}}\n", out);
    if (sum) {
        long pos = ftell(out);
        *sum = (rotor_sim_trace_summary){.tasks = s->ntasks, .kept = tr->kept,
                                         .bytes = tr->start_pos >= 0 && pos >= tr->start_pos ? pos - tr->start_pos : 0};
    }
    sim_tracer_free(tr);
    if (!st && ferror(out)) st = rotor_fail(err, ROTOR_ERR_IO, "the trace could not be written");
    if (st) rotor_error_prefix(err, "sim");
    return st;
}

/* ---- the two ways in -------------------------------------------------------------- */

rotor_status rotor_sim_trace_write(const rotor_sim *s, const rotor_sim_trace_filter *filter, FILE *out,
                                   rotor_sim_trace_summary *sum, rotor_error *err) {
    if (sum) memset(sum, 0, sizeof *sum);
    if (!s->ran) return rotor_fail(err, ROTOR_ERR_INPUT, "sim: no trace before a successful run");
    if (s->base > 0)
        return rotor_fail(err, ROTOR_ERR_INPUT, "sim: no trace of a stream that retired tasks (0..%lld are gone; "
                          "rotor_sim_trace_stream writes them as they go)", (long long)s->base - 1);
    sim_tracer *tr;
    rotor_status st = tracer_new(s, filter, out, s->run.now > 0 ? s->run.now : 1, &tr, err);
    if (st) {
        rotor_error_prefix(err, "sim");
        return st;
    }
    for (int64_t i = 0; i < s->ntasks; i++) sim_tracer_task(tr, s, i);
    return sim_tracer_end(tr, s, sum, err);
}

rotor_status rotor_sim_trace_stream(rotor_sim *s, const rotor_sim_trace_filter *filter, FILE *out, rotor_error *err) {
    if (!s->streaming || s->ntasks > 0 || s->tracer)
        return rotor_fail(err, ROTOR_ERR_INPUT, "sim: a streamed trace starts right after rotor_sim_stream_begin, "
                          "before any task");
    rotor_status st = tracer_new(s, filter, out, 0, &s->tracer, err);
    if (st) rotor_error_prefix(err, "sim");
    return st;
}

rotor_sim_trace_summary rotor_sim_trace_summary_of(const rotor_sim *s) { return s->trace_sum; }

char *rotor_sim_trace_json(const rotor_sim *s, rotor_error *err) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        rotor_nomem(err);
        return NULL;
    }
    rotor_status st = rotor_sim_trace_write(s, NULL, f, NULL, err);
    if (fclose(f) != 0 && st == ROTOR_OK) st = rotor_nomem(err);
    if (st) {
        free(text);
        return NULL;
    }
    return text;
}
