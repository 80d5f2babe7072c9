/* simtrace.c — the simulator's Chrome trace-event JSON (issue 6 "Outputs";
 * the format is Google's "Trace Event Format", which Perfetto and
 * chrome://tracing open).
 *
 * Layout (docs/simulator.md, "Trace"):
 *  - every task is one complete event ("ph": "X") with ts and dur in
 *    microseconds, its operator's name (or its category) as name, and the
 *    task id, operator, bytes or flops, endpoints and wait in args;
 *  - compute runs on the core's track; cores are grouped 64 to a process
 *    so Perfetto can fold them;
 *  - a transfer runs on one track of its link class: HBM controller lanes,
 *    inter-chip lanes, else the sender's out port (all-to-all) or the first
 *    link of its route (mesh).  Each such track is a FIFO, so its events never
 *    overlap;
 *  - a multicast is one event on its sender's track; args give its first
 *    receiver as dst and the number of receivers;
 *  - metadata events name every process and thread used.
 * Each event is built as a cJSON object, printed and freed, so memory stays
 * proportional to the text, not to a tree of millions of nodes.  Output is
 * byte-identical for the same run. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simint.h"

#define CORES_PER_GROUP 64

enum { CLASS_EXCHANGE, CLASS_MESH, CLASS_INTERCHIP, CLASS_HBM, NCLASSES };
static const char *const CLASS_NAME[NCLASSES] = {"exchange (out ports)", "mesh links", "inter-chip",
                                                 "HBM controllers"};

typedef struct trace_buf {
    char *text;
    size_t len, cap;
    bool failed;
} trace_buf;

static void put(trace_buf *b, const char *s) {
    size_t n = strlen(s);
    if (b->failed) return;
    if (b->len + n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 1 << 16;
        while (c < b->len + n + 1) c *= 2;
        char *q = realloc(b->text, c);
        if (!q) {
            b->failed = true;
            return;
        }
        b->text = q;
        b->cap = c;
    }
    memcpy(b->text + b->len, s, n + 1);
    b->len += n;
}

/* Appends the object (and frees it), comma-separated from the previous one. */
static void put_event(trace_buf *b, cJSON *ev, bool *first) {
    char *s = ev ? cJSON_PrintUnformatted(ev) : NULL;
    cJSON_Delete(ev);
    if (!s) {
        b->failed = true;
        return;
    }
    put(b, *first ? "\n" : ",\n");
    put(b, s);
    free(s);
    *first = false;
}

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

static cJSON *meta(const char *what, int64_t pid, int64_t tid, const char *name) {
    cJSON *ev = cJSON_CreateObject(), *args = cJSON_CreateObject();
    cJSON_AddStringToObject(ev, "name", what);
    cJSON_AddStringToObject(ev, "ph", "M");
    cJSON_AddNumberToObject(ev, "pid", (double)pid);
    if (tid >= 0) cJSON_AddNumberToObject(ev, "tid", (double)tid);
    cJSON_AddStringToObject(args, "name", name);
    cJSON_AddItemToObject(ev, "args", args);
    return ev;
}

/* Metadata for every process and track that has events. */
static void put_metadata(const rotor_sim *s, const bool *used, trace_buf *b, bool *first) {
    char name[160];
    int64_t groups = ngroups(s);
    for (int64_t g = 0; g < groups; g++) {
        bool any = false;
        for (int64_t c = g * CORES_PER_GROUP; c < s->cores && c < (g + 1) * CORES_PER_GROUP; c++) any |= used[c];
        if (!any) continue;
        int64_t last = (g + 1) * CORES_PER_GROUP < s->cores ? (g + 1) * CORES_PER_GROUP : s->cores;
        snprintf(name, sizeof name, "cores %lld-%lld", (long long)(g * CORES_PER_GROUP), (long long)last - 1);
        put_event(b, meta("process_name", 1 + g, -1, name), first);
        for (int64_t c = g * CORES_PER_GROUP; c < last; c++)
            if (used[c]) {
                track_name(s, -1, c, name, sizeof name);
                put_event(b, meta("thread_name", 1 + g, c, name), first);
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
            if (!named) put_event(b, meta("process_name", 1 + groups + cls, -1, CLASS_NAME[cls]), first);
            named = true;
            track_name(s, cls, tid, name, sizeof name);
            put_event(b, meta("thread_name", 1 + groups + cls, tid, name), first);
        }
    }
}

static cJSON *task_event(const rotor_sim *s, int64_t id) {
    const sim_task *t = &s->tasks[id];
    int64_t key;
    trace_track tr = track_of(s, t, &key);
    const char *opname = t->op >= 0 && t->op < s->nop_names ? s->op_names[t->op] : NULL;
    char fallback[32];
    if (!opname && t->op >= 0) snprintf(fallback, sizeof fallback, "op %d", (int)t->op);
    cJSON *ev = cJSON_CreateObject(), *args = cJSON_CreateObject();
    cJSON_AddStringToObject(ev, "name", opname ? opname : t->op >= 0 ? fallback : rotor_sim_category_name(t->cat));
    cJSON_AddStringToObject(ev, "cat", rotor_sim_category_name(t->cat));
    cJSON_AddStringToObject(ev, "ph", "X");
    cJSON_AddNumberToObject(ev, "ts", (double)t->start / 1e6);
    cJSON_AddNumberToObject(ev, "dur", (double)t->dur / 1e6);
    cJSON_AddNumberToObject(ev, "pid", (double)tr.pid);
    cJSON_AddNumberToObject(ev, "tid", (double)tr.tid);
    cJSON_AddNumberToObject(args, "task", (double)id);
    cJSON_AddNumberToObject(args, "op", t->op);
    if (opname) cJSON_AddStringToObject(args, "operator", opname);
    if (t->kind == SIM_KIND_COMPUTE) {
        cJSON_AddNumberToObject(args, "core", t->a);
        if (t->amount > 0) cJSON_AddNumberToObject(args, "flops", (double)t->amount);
    } else {
        cJSON_AddNumberToObject(args, "src", t->a);
        cJSON_AddNumberToObject(args, "dst", t->b);
        if (t->mcast) cJSON_AddNumberToObject(args, "receivers", s->mcast[t->mcast - 1].ndsts);
        cJSON_AddNumberToObject(args, "bytes", (double)t->amount);
    }
    cJSON_AddNumberToObject(args, "wait_us", (double)(t->start - t->ready) / 1e6);
    cJSON_AddItemToObject(ev, "args", args);
    return ev;
}

char *rotor_sim_trace_json(const rotor_sim *s, rotor_error *err) {
    if (!s->ran) {
        rotor_fail(err, ROTOR_ERR_INPUT, "sim: no trace before a successful run");
        return NULL;
    }
    if (s->base > 0) {
        rotor_fail(err, ROTOR_ERR_INPUT, "sim: no trace of a stream that retired tasks (0..%lld are gone)",
                   (long long)s->base - 1);
        return NULL;
    }
    int64_t nused = 2 * s->cores + s->nres + s->nlanes;
    bool *used = calloc((size_t)nused, sizeof *used);
    trace_buf b = {0};
    if (!used) b.failed = true;
    for (int64_t i = 0; i < s->ntasks && used; i++) {
        int64_t key;
        track_of(s, &s->tasks[i], &key);
        used[key] = true;
    }
    bool first = true;
    put(&b, "{\"traceEvents\": [");
    if (used) put_metadata(s, used, &b, &first);
    for (int64_t i = 0; i < s->ntasks && !b.failed; i++) put_event(&b, task_event(s, i), &first);
    put(&b, "\n],\n\"displayTimeUnit\": \"ns\",\n\"otherData\": ");
    cJSON *other = cJSON_CreateObject();
    cJSON_AddStringToObject(other, "format", "rotor-sim-trace");
    cJSON_AddNumberToObject(other, "version", 1);
    cJSON_AddStringToObject(other, "chip", s->chip.name);
    cJSON_AddNumberToObject(other, "tasks", (double)s->ntasks);
    char *o = cJSON_PrintUnformatted(other);
    cJSON_Delete(other);
    if (!o) b.failed = true;
    else put(&b, o);
    free(o);
    put(&b, "}\n");
    free(used);
    if (b.failed) {
        free(b.text);
        rotor_nomem(err);
        return NULL;
    }
    return b.text;
}
