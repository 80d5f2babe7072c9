/* plancache.c — the persistent plan cache (compile/plancache.h; docs/
 * compile.md, "Plan cache").
 *
 * Decisions:
 *  - The file is text: one line per candidate, integers in decimal and
 *    doubles in C99 hex float (%a), which strtod reads back bit for bit, so
 *    a hit gives exactly the candidates the search returned.  Every field
 *    of a candidate is written (plan, derived info, cost), none recomputed.
 *  - The key's chip part is every field of rotor_chip but its name and its
 *    energy coefficients: the energy model prices a program after its plans
 *    are chosen (docs/energy.md), and a name does not cost anything.  The
 *    rest is kept even where no cost reads it today (HBM, clusters): a
 *    field in the key by mistake costs a miss, one left out a wrong hit.
 *  - Eviction runs after a compile's writes, by modification time (a rewrite after
 *    new answers refreshes it): least recently learned first.  A hit does
 *    not touch the file (a reader never writes). */
#include "rotor/compile/plancache.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/textbuf.h"
#include "compile/sealed.h"
#include "rotor/base/hash.h"
#include "rotor/base/readfile.h"

/* ---- key ----------------------------------------------------------------- */

static uint64_t fnv1a(const char *s, size_t n) { return rotor_fnv1a_bytes(ROTOR_FNV1A_SEED, s, n); }

/* Every chip field the costs read, on one line (the module comment). */
static void chip_line(rotor_textbuf *b, const rotor_chip *c) {
    rotor_textbuf_printf(b, "chip cores_per_chip=%lld chips=%lld sram_bytes=%lld link_gbps=%a link_latency_ns=%a",
                         (long long)c->cores_per_chip, (long long)c->chips, (long long)c->sram_bytes, c->link_gbps,
                         c->link_latency_ns);
    rotor_textbuf_printf(b, " matrix_tflops=%a int8_tops=%a vector_tflops=%a systolic_rows=%lld systolic_cols=%lld",
                         c->matrix_tflops, c->int8_tops, c->vector_tflops, (long long)c->systolic_rows,
                         (long long)c->systolic_cols);
    rotor_textbuf_printf(b,
                         " shift_buffer_bytes=%lld element_bytes=%lld compute_overlap=%lld topology=%d mesh=%lldx%lld",
                         (long long)c->shift_buffer_bytes, (long long)c->element_bytes, (long long)c->compute_overlap,
                         (int)c->topology, (long long)c->mesh_width, (long long)c->mesh_height);
    rotor_textbuf_printf(b, " interchip_gbps=%a hbm_bytes=%lld hbm_gbps=%a hbm_controllers=%lld offchip=%d",
                         c->interchip_gbps, (long long)c->hbm_bytes, c->hbm_gbps, (long long)c->hbm_controllers,
                         (int)c->offchip);
    rotor_textbuf_printf(b, " clusters=%lld cores_per_cluster=%lld compute_units=%lld gb_bytes=%lld gb_gbps=%a\n",
                         (long long)c->clusters, (long long)c->cores_per_cluster, (long long)c->compute_units,
                         (long long)c->gb_bytes, c->gb_gbps);
}

char *rotor_plancache_chip_text(const rotor_chip *c) {
    rotor_textbuf b = ROTOR_TEXTBUF_INIT;
    chip_line(&b, c);
    return rotor_textbuf_take(&b);
}

char *rotor_plancache_key(const char *shape, const rotor_chip *c, rotor_solver solver, double ratio) {
    rotor_textbuf b = ROTOR_TEXTBUF_INIT;
    rotor_textbuf_printf(&b, "%s %d\ncost-model %d\nsearch %d\nsolver %s\nratio %a\nshape %s\n",
                         ROTOR_PLANCACHE_FORMAT, ROTOR_PLANCACHE_VERSION, ROTOR_COST_MODEL_VERSION,
                         ROTOR_SEARCH_VERSION, rotor_solver_name(solver), ratio, shape);
    chip_line(&b, c);
    return rotor_textbuf_take(&b);
}

char *rotor_plancache_path(const char *dir, const char *key) { return rotor_plancache_path_ext(dir, key, "rpc"); }

char *rotor_plancache_path_ext(const char *dir, const char *key, const char *ext) {
    size_t n = strlen(dir) + strlen(ext) + 24;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%016llx.%s", dir, (unsigned long long)fnv1a(key, strlen(key)), ext);
    return p;
}

/* ---- the codec: one walk over the fields, writing or reading ------------- */

typedef struct codec {
    rotor_textbuf *out; /* writing */
    const char *p;      /* reading: the next character (the text is NUL-terminated) */
    bool bad;           /* reading: something did not parse */
} codec;

static void c_i64(codec *c, int64_t *v) {
    if (c->out) {
        rotor_textbuf_printf(c->out, " %lld", (long long)*v);
        return;
    }
    if (c->bad) return;
    if (!compile_parse_i64(&c->p, v)) c->bad = true;
}

static void c_int(codec *c, int *v, int lo, int hi) {
    int64_t x = *v;
    c_i64(c, &x);
    if (!c->out && !c->bad && (x < lo || x > hi)) c->bad = true;
    if (!c->out && !c->bad) *v = (int)x;
}

static void c_bool(codec *c, bool *v) {
    int x = *v;
    c_int(c, &x, 0, 1);
    *v = x;
}

static void c_f64(codec *c, double *v) {
    if (c->out) {
        rotor_textbuf_printf(c->out, " %a", *v);
        return;
    }
    if (c->bad) return;
    char *end;
    double x = strtod(c->p, &end);
    if (end == c->p) c->bad = true;
    else *v = x, c->p = end;
}

/* A word on writing; on reading, the same word must come next. */
static void c_word(codec *c, const char *w) {
    if (c->out) {
        rotor_textbuf_printf(c->out, "%s%s", c->out->n && c->out->p[c->out->n - 1] != '\n' ? "\n" : "", w);
        return;
    }
    while (*c->p == ' ' || *c->p == '\n') c->p++;
    size_t n = strlen(w);
    if (c->bad || strncmp(c->p, w, n) != 0) c->bad = true;
    else c->p += n;
}

static void c_i64s(codec *c, int64_t *v, int n) {
    for (int i = 0; i < n; i++) c_i64(c, &v[i]);
}

/* Every field of a candidate, in a fixed order. */
static void c_cand(codec *c, rotor_candidate *x) {
    enum { T = ROTOR_MAX_TENSORS, A = ROTOR_MAX_AXES, D = ROTOR_MAX_DIMS };
    rotor_plan *p = &x->plan;
    rotor_plan_info *f = &x->info;
    c_word(c, "c");
    c_i64s(c, p->fop, A);
    for (int t = 0; t < T; t++) c_i64s(c, p->ft[t], A);
    for (int a = 0; a < A; a++) c_int(c, &p->order[a], 0, A - 1);
    c_bool(c, &p->overlap);
    c_i64(c, &f->cores);
    c_i64s(c, f->sharing, T);
    c_i64s(c, f->ring_size, T);
    c_i64s(c, f->rings, T);
    c_i64s(c, f->steps, A);
    c_i64(c, &f->total_steps);
    c_i64s(c, f->padded, A);
    c_i64s(c, f->sub_op, A);
    c_i64s(c, f->sub_task, A);
    for (int t = 0; t < T; t++) c_i64s(c, f->part[t], D);
    c_i64s(c, f->bytes, T);
    c_i64(c, &f->memory);
    c_i64s(c, f->shifts, T);
    c_bool(c, &f->rotates);
    c_bool(c, &f->overlap);
    c_f64(c, &f->padding_ratio);
    c_f64(c, &x->cost.compute);
    c_f64(c, &x->cost.comm);
    c_f64(c, &x->cost.reduction);
    c_f64(c, &x->cost.total);
    c_f64(c, &x->cost.hidden);
}

/* n candidates at *v: written, or read into a new array (n checked). */
static void c_cands(codec *c, rotor_candidate **v, int n) {
    if (!c->out && !c->bad) {
        *v = n ? calloc((size_t)n, sizeof **v) : NULL;
        if (n && !*v) c->bad = true;
    }
    for (int i = 0; i < n && !c->bad; i++) c_cand(c, &(*v)[i]);
}

/* The entry after its key: the first search and the answers.  A count
 * above what the file could hold is damage, not an allocation. */
static void c_body(codec *c, rotor_plancache_entry *e, size_t len) {
    int lim = (int)(len / 64 < 1000000 ? len / 64 : 1000000);
    c_word(c, "first");
    c_bool(c, &e->has_first);
    c_bool(c, &e->first_truncated);
    c_f64(c, &e->first_tcut);
    c_int(c, &e->nfirst, 0, lim);
    c_cands(c, &e->first, e->nfirst);
    c_word(c, "answers");
    c_int(c, &e->nanswers, 0, lim);
    if (!c->out && !c->bad && e->nanswers && !(e->answers = calloc((size_t)e->nanswers, sizeof *e->answers)))
        c->bad = true;
    for (int i = 0; i < e->nanswers && !c->bad; i++) {
        rotor_plancache_answer *a = &e->answers[i];
        int kind = (int)a->kind;
        c_word(c, "a");
        c_int(c, &kind, ROTOR_PLANCACHE_POINT, ROTOR_PLANCACHE_SLOW);
        a->kind = (rotor_plancache_kind)kind;
        c_i64(c, &a->cap);
        if (a->kind == ROTOR_PLANCACHE_SLOW) c_f64(c, &a->tmax);
        c_int(c, &a->n, 0, lim);
        if (!c->out && !c->bad && a->kind != ROTOR_PLANCACHE_TAIL && a->n != (a->kind == ROTOR_PLANCACHE_POINT))
            c->bad = true;
        c_cands(c, &a->v, a->n);
    }
}

#define CHECKSUM_LINE 26 /* "checksum " + 16 hex digits + "\n" */

char *rotor_plancache_encode(const rotor_plancache_entry *e, size_t *len) {
    rotor_textbuf b = ROTOR_TEXTBUF_INIT;
    rotor_textbuf_printf(&b, "%s %d\nkey %zu\n%s\n", ROTOR_PLANCACHE_FORMAT, ROTOR_PLANCACHE_VERSION, strlen(e->key),
                         e->key);
    codec c = {.out = &b};
    c_body(&c, (rotor_plancache_entry *)e, 0);
    rotor_textbuf_printf(&b, "\n");
    if (b.ok) rotor_textbuf_printf(&b, "checksum %016llx\n", (unsigned long long)fnv1a(b.p, b.n));
    if (!b.ok) {
        free(b.p);
        return NULL;
    }
    *len = b.n;
    return b.p;
}

static void answers_free(rotor_plancache_answer *a, int n) {
    for (int i = 0; i < n; i++) free(a[i].v);
    free(a);
}

/* Empties e but for its key. */
static void entry_clear(rotor_plancache_entry *e) {
    char *key = e->key;
    free(e->first);
    answers_free(e->answers, e->nanswers);
    *e = (rotor_plancache_entry){.key = key};
}

void rotor_plancache_entry_free(rotor_plancache_entry *e) {
    if (!e) return;
    entry_clear(e);
    free(e->key);
    e->key = NULL;
}

/* The key's text in the file: "key LEN\n" and LEN bytes, then "\n".  Its
 * end, or NULL when the file is not one of ours. */
static const char *header_key(const char *text, size_t len, const char **key, size_t *klen) {
    char head[64];
    int hn = snprintf(head, sizeof head, "%s %d\nkey ", ROTOR_PLANCACHE_FORMAT, ROTOR_PLANCACHE_VERSION);
    if (len < (size_t)hn || memcmp(text, head, (size_t)hn) != 0) return NULL;
    char *end;
    errno = 0;
    unsigned long long k = strtoull(text + hn, &end, 10);
    if (errno || end == text + hn || *end != '\n' || k > len - (size_t)(end + 1 - text)) return NULL;
    *key = end + 1;
    *klen = (size_t)k;
    return *key + k;
}

rotor_status rotor_plancache_decode(const char *text, size_t len, const char *key, rotor_plancache_entry *e,
                                    rotor_plancache_read *how, rotor_error *err) {
    entry_clear(e);
    *how = ROTOR_PLANCACHE_DAMAGED;
    const char *fkey, *after;
    size_t fklen;
    if (len < CHECKSUM_LINE || !(after = header_key(text, len, &fkey, &fklen))) return ROTOR_OK;
    if (fklen != strlen(key) || memcmp(fkey, key, fklen) != 0) {
        *how = ROTOR_PLANCACHE_MISS; /* another key's entry: the hash collided */
        return ROTOR_OK;
    }
    const char *sum = text + len - CHECKSUM_LINE;
    char want[CHECKSUM_LINE + 1];
    snprintf(want, sizeof want, "checksum %016llx\n", (unsigned long long)fnv1a(text, (size_t)(sum - text)));
    if (sum < after || memcmp(sum, want, CHECKSUM_LINE) != 0) return ROTOR_OK;
    /* the body is parsed from a copy ending where the checksum starts */
    size_t blen = (size_t)(sum - after);
    char *body = malloc(blen + 1);
    if (!body) return rotor_nomem(err);
    memcpy(body, after, blen);
    body[blen] = '\0';
    codec c = {.p = body};
    c_body(&c, e, blen);
    while (!c.bad && (*c.p == '\n' || *c.p == ' ')) c.p++;
    bool ok = !c.bad && !*c.p;
    free(body);
    if (!ok) {
        entry_clear(e);
        return ROTOR_OK;
    }
    *how = ROTOR_PLANCACHE_HIT;
    return ROTOR_OK;
}

rotor_status rotor_plancache_load(const char *dir, const char *key, rotor_plancache_entry *e,
                                  rotor_plancache_read *how, rotor_error *err) {
    *e = (rotor_plancache_entry){0};
    *how = ROTOR_PLANCACHE_MISS;
    if (!(e->key = strdup(key))) return rotor_nomem(err);
    char *path = rotor_plancache_path(dir, key);
    if (!path) return rotor_nomem(err);
    char *text = NULL;
    size_t len = 0;
    rotor_error rerr = {{0}};
    /* a file that is not there is a miss; one over the whole cache's
     * default limit cannot be ours */
    rotor_status st = rotor_read_file(path, ROTOR_PLANCACHE_DEFAULT_LIMIT, &text, &len, &rerr);
    free(path);
    if (st) return ROTOR_OK;
    st = rotor_plancache_decode(text, len, key, e, how, err);
    free(text);
    return st;
}

/* ---- answers ------------------------------------------------------------- */

static rotor_candidate *cands_dup(const rotor_candidate *v, int n) {
    rotor_candidate *d = malloc((size_t)(n ? n : 1) * sizeof *d);
    if (d && n) memcpy(d, v, (size_t)n * sizeof *d);
    return d;
}

rotor_status rotor_plancache_set_first(rotor_plancache_entry *e, const rotor_candidate *v, int n, bool truncated,
                                       double tcut, rotor_error *err) {
    rotor_candidate *d = cands_dup(v, n);
    if (!d) return rotor_nomem(err);
    free(e->first);
    e->first = d;
    e->nfirst = n;
    e->has_first = true;
    e->first_truncated = truncated;
    e->first_tcut = tcut;
    e->dirty = true;
    return ROTOR_OK;
}

int rotor_plancache_point(const rotor_plancache_entry *e, int64_t cap, rotor_candidate *out) {
    for (int i = 0; i < e->nanswers; i++) {
        const rotor_plancache_answer *a = &e->answers[i];
        if (a->kind == ROTOR_PLANCACHE_NONE && cap <= a->cap) return 0;
        if (a->kind == ROTOR_PLANCACHE_POINT && cap <= a->cap && cap >= a->v[0].info.memory) {
            *out = a->v[0];
            return 1;
        }
    }
    return -1;
}

static rotor_status answer_add(rotor_plancache_entry *e, rotor_plancache_kind kind, int64_t cap,
                               const rotor_candidate *v, int n, rotor_error *err) {
    rotor_plancache_answer *na = realloc(e->answers, (size_t)(e->nanswers + 1) * sizeof *na);
    if (!na) return rotor_nomem(err);
    e->answers = na;
    rotor_candidate *d = cands_dup(v, n);
    if (!d) return rotor_nomem(err);
    na[e->nanswers++] = (rotor_plancache_answer){.kind = kind, .cap = cap, .n = n, .v = d};
    e->dirty = true;
    return ROTOR_OK;
}

rotor_status rotor_plancache_note_point(rotor_plancache_entry *e, int64_t cap, const rotor_candidate *found,
                                        rotor_error *err) {
    rotor_candidate known;
    if (rotor_plancache_point(e, cap, &known) >= 0) return ROTOR_OK;
    return answer_add(e, found ? ROTOR_PLANCACHE_POINT : ROTOR_PLANCACHE_NONE, cap, found, found ? 1 : 0, err);
}

bool rotor_plancache_slow(const rotor_plancache_entry *e, int64_t cap, double tmax) {
    for (int i = 0; i < e->nanswers; i++) {
        const rotor_plancache_answer *a = &e->answers[i];
        if (a->kind == ROTOR_PLANCACHE_SLOW && cap <= a->cap && tmax <= a->tmax) return true;
    }
    return false;
}

rotor_status rotor_plancache_note_slow(rotor_plancache_entry *e, int64_t cap, double tmax, rotor_error *err) {
    if (rotor_plancache_slow(e, cap, tmax)) return ROTOR_OK;
    rotor_status st = answer_add(e, ROTOR_PLANCACHE_SLOW, cap, NULL, 0, err);
    if (!st) e->answers[e->nanswers - 1].tmax = tmax;
    return st;
}

bool rotor_plancache_tail(const rotor_plancache_entry *e, int64_t cap, rotor_candidate **v, int *n) {
    for (int i = 0; i < e->nanswers; i++) {
        const rotor_plancache_answer *a = &e->answers[i];
        if (a->kind != ROTOR_PLANCACHE_TAIL || cap > a->cap) continue;
        int k = 0;
        while (k < a->n && a->v[k].info.memory > cap) k++; /* by memory descending */
        *n = a->n - k;
        *v = *n ? cands_dup(a->v + k, *n) : NULL;
        if (*n && !*v) *n = -1;
        return *n >= 0;
    }
    *v = NULL;
    *n = 0;
    return false;
}

rotor_status rotor_plancache_note_tail(rotor_plancache_entry *e, int64_t cap, const rotor_candidate *v, int n,
                                       rotor_error *err) {
    for (int i = 0; i < e->nanswers; i++)
        if (e->answers[i].kind == ROTOR_PLANCACHE_TAIL && cap <= e->answers[i].cap) return ROTOR_OK;
    return answer_add(e, ROTOR_PLANCACHE_TAIL, cap, v, n, err);
}

/* ---- the directory ------------------------------------------------------- */

/* mkdir -p dir, best effort. */
static void make_dirs(const char *dir) {
    char *p = strdup(dir);
    if (!p) return;
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0777);
            *s = '/';
        }
    mkdir(p, 0777);
    free(p);
}

bool rotor_plancache_store(const char *dir, const rotor_plancache_entry *e) {
    size_t len;
    char *text = rotor_plancache_encode(e, &len);
    char *path = rotor_plancache_path(dir, e->key);
    bool ok = text && path && rotor_plancache_write(dir, path, text, len);
    free(text);
    free(path);
    return ok;
}

bool rotor_plancache_write(const char *dir, const char *path, const char *text, size_t len) {
    size_t tn = strlen(dir) + 32;
    char *tmp = malloc(tn);
    bool ok = tmp;
    int fd = -1;
    if (ok) {
        make_dirs(dir);
        snprintf(tmp, tn, "%s/.tmp-XXXXXX", dir);
        ok = (fd = mkstemp(tmp)) >= 0;
    }
    for (size_t done = 0; ok && done < len;) {
        ssize_t w = write(fd, text + done, len - done);
        if (w < 0 && errno == EINTR) continue;
        ok = w > 0;
        if (ok) done += (size_t)w;
    }
    /* mkstemp makes the file 0600; an entry is as readable as the directory allows */
    if (ok) ok = fchmod(fd, 0644) == 0;
    if (fd >= 0 && close(fd) != 0) ok = false;
    if (ok) ok = rename(tmp, path) == 0;
    if (!ok && fd >= 0) unlink(tmp);
    free(tmp);
    return ok;
}

typedef struct cache_file {
    char *name;
    int64_t size;
    struct timespec mtime;
} cache_file;

static int by_age(const void *pa, const void *pb) {
    const cache_file *a = pa, *b = pb;
    if (a->mtime.tv_sec != b->mtime.tv_sec) return a->mtime.tv_sec < b->mtime.tv_sec ? -1 : 1;
    if (a->mtime.tv_nsec != b->mtime.tv_nsec) return a->mtime.tv_nsec < b->mtime.tv_nsec ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* Whether a directory entry is the cache's: a plan cache entry (.rpc), a
 * hand-off memo (.rho, compile/handoffcache.c) or the energy model's counts
 * (.ren, compile/energystore.c); all count against the limit and age
 * alike. */
static bool ours(const char *name) {
    size_t len = strlen(name);
    const char *x = name + len - 4;
    return len >= 5 && (strcmp(x, ".rpc") == 0 || strcmp(x, ".rho") == 0 || strcmp(x, ".ren") == 0);
}

/* dir's entries (ours) with their sizes and times; *total their sum.
 * NULL with *n 0 when the directory does not list (or out of memory). */
static cache_file *list_entries(const char *dir, int *n, int64_t *total) {
    *n = 0;
    *total = 0;
    DIR *d = opendir(dir);
    if (!d) return NULL;
    cache_file *v = NULL;
    int cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (!ours(de->d_name)) continue;
        size_t pn = strlen(dir) + len + 2;
        char *path = malloc(pn);
        struct stat sb;
        if (!path) break;
        snprintf(path, pn, "%s/%s", dir, de->d_name);
        if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) {
            free(path);
            continue;
        }
        if (*n == cap) {
            cache_file *nv = realloc(v, (size_t)(cap ? 2 * cap : 64) * sizeof *nv);
            if (!nv) {
                free(path);
                break;
            }
            v = nv;
            cap = cap ? 2 * cap : 64;
        }
        v[(*n)++] = (cache_file){.name = path, .size = (int64_t)sb.st_size, .mtime = sb.st_mtim};
        *total += (int64_t)sb.st_size;
    }
    closedir(d);
    return v;
}

int rotor_plancache_evict(const char *dir, int64_t limit) {
    if (limit <= 0) limit = ROTOR_PLANCACHE_DEFAULT_LIMIT;
    int n, removed = 0;
    int64_t total;
    cache_file *v = list_entries(dir, &n, &total);
    if (total > limit) qsort(v, (size_t)n, sizeof *v, by_age);
    /* another writer may have removed one first: its bytes are gone either way */
    for (int i = 0; i < n && total > limit; i++) {
        if (unlink(v[i].name) == 0) removed++;
        total -= v[i].size;
    }
    for (int i = 0; i < n; i++) free(v[i].name);
    free(v);
    return removed;
}
