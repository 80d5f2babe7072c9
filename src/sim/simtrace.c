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
    const sim_task *t = &s->tasks[id];
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
        if (t->amount > 0) fprintf(f, ",\"flops\":%" PRId64, t->amount);
    } else {
        fprintf(f, ",\"src\":%d,\"dst\":%d", (int)t->a, (int)t->b);
        if (t->mcast) fprintf(f, ",\"receivers\":%d", (int)s->mcast[t->mcast - 1].ndsts);
        fprintf(f, ",\"bytes\":%" PRId64, t->amount);
    }
    fputs(",\"wait_us\":", f);
    put_us(f, t->start - t->ready);
    fputs("}}", f);
}

/* ---- the filter --------------------------------------------------------------- */

typedef struct trace_sel {
    const rotor_sim_trace_filter *f;
    bool *op_kept;   /* per operator 0..max_op, with an operator filter */
    bool *core_kept; /* per node, with a core filter */
} trace_sel;

/* Does `pattern` name op `name` ("l0.*" is a prefix)? */
static bool op_matches(const char *pattern, const char *name) {
    size_t n = strlen(pattern);
    if (n > 0 && pattern[n - 1] == '*') return strncmp(pattern, name, n - 1) == 0;
    return strcmp(pattern, name) == 0;
}

static rotor_status sel_init(const rotor_sim *s, const rotor_sim_trace_filter *f, trace_sel *sel, rotor_error *err) {
    *sel = (trace_sel){.f = f};
    if (!f) return ROTOR_OK;
    if (f->to_ps > 0 && f->from_ps >= f->to_ps)
        return rotor_fail(err, ROTOR_ERR_INPUT, "trace window: %lld:%lld ps is empty (start must come before end)",
                          (long long)f->from_ps, (long long)f->to_ps);
    if (f->nops > 0) {
        sel->op_kept = calloc((size_t)s->max_op + 2, sizeof *sel->op_kept);
        if (!sel->op_kept) return rotor_nomem(err);
        for (int k = 0; k < f->nops; k++) {
            bool any = false;
            for (int32_t op = 0; op <= s->max_op; op++) {
                const char *name = op < s->nop_names ? s->op_names[op] : NULL;
                if (name && op_matches(f->ops[k], name)) any = sel->op_kept[op] = true;
            }
            if (!any)
                return rotor_fail(err, ROTOR_ERR_INPUT, "trace operators: no operator is named '%s'", f->ops[k]);
        }
    }
    if (f->ncores > 0) {
        sel->core_kept = calloc((size_t)s->nodes, sizeof *sel->core_kept);
        if (!sel->core_kept) return rotor_nomem(err);
        for (int64_t k = 0; k < f->ncores; k++) {
            if (f->cores[k] < 0 || f->cores[k] >= s->cores)
                return rotor_fail(err, ROTOR_ERR_INPUT, "trace cores: core %lld does not exist (cores 0..%lld)",
                                  (long long)f->cores[k], (long long)s->cores - 1);
            sel->core_kept[f->cores[k]] = true;
        }
    }
    return ROTOR_OK;
}

static void sel_free(trace_sel *sel) {
    free(sel->op_kept);
    free(sel->core_kept);
}

/* A task is kept when it passes every filter given: its operator is named,
 * it overlaps the window (a zero-time task: lies in it), and it runs on a
 * named core or moves data from or to one. */
static bool sel_keep(const rotor_sim *s, const trace_sel *sel, const sim_task *t) {
    const rotor_sim_trace_filter *f = sel->f;
    if (!f) return true;
    if (sel->op_kept && (t->op < 0 || !sel->op_kept[t->op])) return false;
    if (f->to_ps > 0) {
        int64_t end = t->end > t->start ? t->end : t->start + 1;
        if (t->start >= f->to_ps || end <= f->from_ps) return false;
    }
    if (sel->core_kept) {
        if (t->kind == SIM_KIND_COMPUTE || !t->mcast) return sel->core_kept[t->a] || (t->b >= 0 && sel->core_kept[t->b]);
        if (sel->core_kept[t->a]) return true;
        const sim_mcast *mc = &s->mcast[t->mcast - 1];
        for (int32_t k = 0; k < mc->ndsts; k++)
            if (sel->core_kept[s->mdst[mc->doff + k]]) return true;
        return false;
    }
    return true;
}

/* ---- counters ------------------------------------------------------------------- */

/* Adds amount `rate` per ps over [a, b), clipped to [t0, t1), to buckets of
 * width w from t0 (partial buckets get their share; whole ones through the
 * difference array d, which has nb + 1 entries). */
static void spread(double *v, double *d, int64_t t0, int64_t t1, int64_t w, int64_t a, int64_t b, double rate) {
    if (a < t0) a = t0;
    if (b > t1) b = t1;
    if (b <= a) return;
    int64_t lo = (a - t0) / w, hi = (b - 1 - t0) / w;
    if (lo == hi) {
        v[lo] += rate * (double)(b - a);
        return;
    }
    v[lo] += rate * (double)(t0 + (lo + 1) * w - a);
    v[hi] += rate * (double)(b - (t0 + hi * w));
    d[lo + 1] += rate * (double)w;
    d[hi] -= rate * (double)w;
}

enum { CTR_TRANSFERS, CTR_LINKS, CTR_HBM, NCTR };

/* The counter tracks over [t0, t1) in nb buckets, from every task (the
 * counters describe the chip, whatever the filter keeps). */
static rotor_status put_counters(const rotor_sim *s, int64_t t0, int64_t t1, int64_t nb, int64_t pid, FILE *f,
                                 bool *first, rotor_error *err) {
    if (t1 <= t0) return ROTOR_OK;
    int64_t w = (t1 - t0 + nb - 1) / nb;
    nb = (t1 - t0 + w - 1) / w;
    double *v = calloc((size_t)(NCTR * (2 * nb + 1)), sizeof *v);
    if (!v) return rotor_nomem(err);
    for (int64_t i = 0; i < s->ntasks; i++) {
        const sim_task *t = &s->tasks[i];
        if (t->kind != SIM_KIND_TRANSFER || t->dur == 0) continue;
        int64_t links = 0;
        if (t->mcast) {
            const sim_mcast *mc = &s->mcast[t->mcast - 1];
            for (int32_t k = 0; k < mc->n; k++) links += s->res[s->mres[mc->off + k]].kind != SIM_RES_INTERCHIP &&
                                                         s->res[s->mres[mc->off + k]].kind != SIM_RES_HBM;
        } else {
            sim_route r;
            sim_net_route(s, t->a, t->b, &r);
            for (int64_t k = 0; k < r.n; k++)
                links += s->res[r.res[k]].kind != SIM_RES_INTERCHIP && s->res[r.res[k]].kind != SIM_RES_HBM;
        }
        double *c = v;
        spread(c, c + nb, t0, t1, w, t->start, t->end, 1.0);
        c += 2 * nb + 1;
        spread(c, c + nb, t0, t1, w, t->start, t->end, (double)links);
        c += 2 * nb + 1;
        if (t->flags & SIM_F_HBM) spread(c, c + nb, t0, t1, w, t->start, t->end, (double)t->amount / (double)t->dur);
    }
    static const char *const name[NCTR] = {"transfers in flight", "links busy", "HBM GB/s"};
    static const char *const arg[NCTR] = {"transfers", "links", "GB/s"};
    for (int k = 0; k < NCTR; k++) {
        double *c = v + k * (2 * nb + 1), *d = c + nb, run = 0;
        /* mean over the bucket: ps-weighted sum / width; bytes per ps * 1000 = GB/s */
        double scale = k == CTR_HBM ? 1000.0 : 1.0;
        for (int64_t b = 0; b < nb; b++) {
            run += d[b];
            int64_t from = t0 + b * w, width = (from + w < t1 ? w : t1 - from);
            double mean = (c[b] + run) / (double)width * scale;
            put_sep(f, first);
            fprintf(f, "{\"name\":\"%s\",\"ph\":\"C\",\"ts\":", name[k]);
            put_us(f, from);
            fprintf(f, ",\"pid\":%" PRId64 ",\"args\":{\"%s\":%.6g}}", pid, arg[k], mean);
        }
    }
    free(v);
    return ROTOR_OK;
}

/* ---- the trace -------------------------------------------------------------------- */

rotor_status rotor_sim_trace_write(const rotor_sim *s, const rotor_sim_trace_filter *filter, FILE *out,
                                   rotor_sim_trace_summary *sum, rotor_error *err) {
    rotor_sim_trace_summary local;
    if (!sum) sum = &local;
    memset(sum, 0, sizeof *sum);
    if (!s->ran) return rotor_fail(err, ROTOR_ERR_INPUT, "sim: no trace before a successful run");
    if (s->base > 0)
        return rotor_fail(err, ROTOR_ERR_INPUT, "sim: no trace of a stream that retired tasks (0..%lld are gone)",
                          (long long)s->base - 1);
    trace_sel sel;
    rotor_status st = sel_init(s, filter, &sel, err);
    int64_t nused = 2 * s->cores + s->nres + s->nlanes;
    bool *used = st ? NULL : calloc((size_t)nused, sizeof *used);
    if (!st && !used) st = rotor_nomem(err);
    if (st) {
        sel_free(&sel);
        rotor_error_prefix(err, "sim");
        return st;
    }
    sum->tasks = s->ntasks;
    for (int64_t i = 0; i < s->ntasks; i++) {
        if (!sel_keep(s, &sel, &s->tasks[i])) continue;
        int64_t key;
        track_of(s, &s->tasks[i], &key);
        used[key] = true;
        sum->kept++;
    }
    long start = ftell(out);
    bool first = true;
    fputs("{\"traceEvents\": [", out);
    put_metadata(s, used, out, &first);
    for (int64_t i = 0; i < s->ntasks; i++)
        if (sel_keep(s, &sel, &s->tasks[i])) put_task(s, i, out, &first);
    int64_t t0 = 0, t1 = s->run.now;
    if (filter && filter->to_ps > 0) {
        t0 = filter->from_ps > 0 ? filter->from_ps : 0;
        t1 = filter->to_ps < t1 ? filter->to_ps : t1;
    }
    int64_t pid = 1 + ngroups(s) + NCLASSES;
    if (t1 > t0) put_meta(out, &first, "process_name", pid, -1, "chip counters");
    int64_t nb = filter && filter->counter_buckets > 0 ? filter->counter_buckets : 1000;
    st = put_counters(s, t0, t1, nb, pid, out, &first, err);
    fputs("\n],\n\"displayTimeUnit\": \"ns\",\n\"otherData\": {\"format\":\"rotor-sim-trace\",\"version\":1,\"chip\":", out);
    put_str(out, s->chip.name);
    fprintf(out, ",\"topology\":\"%s\",\"cores\":%" PRId64 ",\"tasks\":%" PRId64 ",\"tasks_written\":%" PRId64
                 ",\"makespan_us\":",
            s->topo->name, s->cores, s->ntasks, sum->kept);
    put_us(out, s->run.now);
    if (filter && (filter->nops > 0 || filter->to_ps > 0 || filter->ncores > 0)) {
        fputs(",\"filter\":{", out);
        bool f1 = true;
        if (filter->nops > 0) {
            fputs("\"ops\":[", out);
            for (int k = 0; k < filter->nops; k++) {
                if (k) fputc(',', out);
                put_str(out, filter->ops[k]);
            }
            fputc(']', out);
            f1 = false;
        }
        if (filter->to_ps > 0) {
            fputs(f1 ? "\"window_us\":[" : ",\"window_us\":[", out);
            put_us(out, filter->from_ps > 0 ? filter->from_ps : 0);
            fputc(',', out);
            put_us(out, filter->to_ps);
            fputc(']', out);
            f1 = false;
        }
        if (filter->ncores > 0) fprintf(out, "%s\"cores\":%lld", f1 ? "" : ",", (long long)filter->ncores);
        fprintf(out, ",\"left_out\":\"%" PRId64 " of %" PRId64 " tasks are not in this trace\"}", s->ntasks - sum->kept,
                s->ntasks);
    }
    fputs("}}\n", out);
    free(used);
    sel_free(&sel);
    if (st) return st;
    if (ferror(out)) return rotor_fail(err, ROTOR_ERR_IO, "sim: the trace could not be written");
    long end = ftell(out);
    sum->bytes = start >= 0 && end >= start ? end - start : 0;
    return ROTOR_OK;
}

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
