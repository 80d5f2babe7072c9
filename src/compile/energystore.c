/* energystore.c — the energy model's per-operator counts kept in the plan
 * cache's directory (compile/energystore.h; issue 45; docs/compile.md,
 * "Plan cache").
 *
 * A warm compile answers every search and hand-off price from the cache,
 * and then spent most of its time in the energy model (GoogLeNet 544 M of
 * 696 M instructions), walking the hand-offs of the distinct operators
 * again (rotor_handoff_walk through rotor_setup_pieces_visit_of).  An
 * operator's counts are a function of its key (energy.c, op_key) and the
 * chip alone, so they are kept as they were counted: a hit gives the same
 * integers, and the document the same bytes.
 *
 * Decisions (the design of the hand-off memo's .rho files, handoffstore.c):
 *  - One file per (model name, chip), named as plan cache entries are
 *    (FNV-1a 64 of the key) with the extension .ren.  The key holds this
 *    format's version, the cost model's and the search's versions and the
 *    chip's line (rotor_plancache_chip_text); the file holds its whole key,
 *    so a collision reads as a miss.  The model name only groups records:
 *    a record's own key decides a hit, so sharing a file between batch
 *    sizes of one model is safe.
 *  - A record is one line: "r", the op key's length in bytes, the key in
 *    hexadecimal (it holds binary integers), and the seven counts in
 *    rotor_energy_counts order.  Changing what the model counts must bump
 *    STORE_VERSION, so that old files read as another key's.
 *  - The same safety as plan cache entries: text with a checksum, written
 *    to a temporary name and renamed (rotor_plancache_write); a file that
 *    does not read back is counted damaged (the CLI warns in one line),
 *    ignored, and rewritten with what this count learns; the directory's
 *    size limit counts these files too (rotor_plancache_evict). */
#include "compile/energystore.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/sealed.h"
#include "rotor/base/hashtab.h"
#include "rotor/compile/plancache.h"
#include "rotor/op/cost.h"

#define STORE_FORMAT "rotor-energycache"
#define STORE_VERSION 2 /* 2: an operator over quantized integers counts its own element size (2026-12-02) */
#define KEY_BYTES_MAX (1 << 20) /* no op key is longer (energy.c's OP_KEY_MAX is far below) */

struct energy_store {
    char *dir, *key;
    rotor_hashtab *tab; /* op key -> rotor_energy_counts (base/hashtab.c) */
    bool dirty;
};

void compile_energy_store_free(energy_store *s) {
    if (!s) return;
    rotor_hashtab_free(s->tab);
    free(s->dir);
    free(s->key);
    free(s);
}

/* ---- the file ------------------------------------------------------------ */

static int hexval(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* " HEX" of n bytes into k. */
static void r_hex(compile_reader *r, unsigned char *k, size_t n) {
    if (r->bad || *r->p != ' ') {
        r->bad = true;
        return;
    }
    r->p++;
    for (size_t i = 0; i < n && !r->bad; i++) {
        int hi = hexval(r->p[0]), lo = hi < 0 ? -1 : hexval(r->p[1]);
        if (lo < 0) r->bad = true;
        else {
            k[i] = (unsigned char)(hi << 4 | lo);
            r->p += 2;
        }
    }
}

/* Parses body (NUL-terminated, len bytes) into s: false when damaged. */
static bool parse_body(energy_store *s, const char *body, size_t len) {
    compile_reader r = {.p = body};
    compile_reader_word(&r, "records");
    int64_t nrec = compile_reader_i64(&r);
    if (r.bad || nrec < 0 || nrec > (int64_t)len / 2 + 1) return false;
    unsigned char *k = NULL;
    for (int64_t i = 0; i < nrec && !r.bad; i++) {
        compile_reader_word(&r, "r");
        int64_t n = compile_reader_i64(&r);
        /* the hex alone takes 2n characters of the body */
        if (n < 1 || n > KEY_BYTES_MAX || n > (int64_t)len / 2) r.bad = true;
        unsigned char *nk = r.bad ? NULL : realloc(k, (size_t)n);
        if (nk) k = nk;
        else r.bad = true;
        r_hex(&r, k, (size_t)n);
        int64_t v[7];
        for (int j = 0; j < 7; j++) {
            v[j] = compile_reader_i64(&r);
            if (v[j] < 0) r.bad = true; /* every count is a sum of nonnegative terms */
        }
        rotor_energy_counts c = {v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
        if (!r.bad && rotor_hashtab_add(s->tab, k, n, &c, NULL, NULL, NULL)) r.bad = true;
    }
    free(k);
    while (!r.bad && (*r.p == '\n' || *r.p == ' ')) r.p++;
    return !r.bad && !*r.p;
}

/* Reads s's file: 1 read (or none there), 0 damaged (s emptied, to be
 * rewritten). */
static int load(energy_store *s) {
    char *body = NULL;
    size_t len = 0;
    int got = compile_sealed_read(s->dir, "ren", STORE_FORMAT, STORE_VERSION, s->key, &body, &len);
    bool ok = got >= 0 && (got == 0 || parse_body(s, body, len));
    free(body);
    if (ok) return 1;
    rotor_hashtab_clear(s->tab);
    s->dirty = true;
    return 0;
}

bool compile_energy_store_save(energy_store *s) {
    if (!s || !s->dirty || !rotor_hashtab_count(s->tab)) return false;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return false;
    fprintf(f, "records %lld\n", (long long)rotor_hashtab_count(s->tab));
    const void *key;
    int64_t n, pos = 0;
    void *v;
    while (rotor_hashtab_next(s->tab, &pos, &key, &n, &v)) { /* slot order: the file as the table holds it */
        const unsigned char *k = key;
        const rotor_energy_counts *c = v;
        fprintf(f, "r %lld ", (long long)n);
        for (int64_t j = 0; j < n; j++) fprintf(f, "%02x", k[j]);
        fprintf(f, " %lld %lld %lld %lld %lld %lld %lld\n", (long long)c->matrix_flops, (long long)c->vector_flops,
                (long long)c->sram_read_bytes, (long long)c->sram_write_bytes, (long long)c->byte_hops,
                (long long)c->hbm_bytes, (long long)c->interchip_bytes);
    }
    bool ok = !ferror(f);
    if (fclose(f) != 0) ok = false;
    ok = ok && compile_sealed_write(s->dir, "ren", STORE_FORMAT, STORE_VERSION, s->key, text, len);
    if (ok) s->dirty = false;
    free(text);
    return ok;
}

/* ---- the store ----------------------------------------------------------- */

rotor_status compile_energy_store_open(const char *dir, const char *model, const rotor_chip *chip, energy_store **out,
                               int *damaged, rotor_error *err) {
    *out = NULL;
    *damaged = 0;
    energy_store *s = calloc(1, sizeof *s);
    char *c = rotor_plancache_chip_text(chip);
    /* 64 slots at the first record, FNV-1a 64 of the key's bytes */
    bool ok = s && c && (s->dir = strdup(dir)) &&
              !rotor_hashtab_new(sizeof(rotor_energy_counts), 64, NULL, &s->tab, NULL);
    if (ok)
        ok = asprintf(&s->key, "%s %d\ncost-model %d\nsearch %d\nmodel %s\n%s", STORE_FORMAT, STORE_VERSION,
                      ROTOR_COST_MODEL_VERSION, ROTOR_SEARCH_VERSION, model, c) >= 0;
    if (s && !ok) s->key = NULL;
    free(c);
    if (!ok) {
        compile_energy_store_free(s);
        return rotor_nomem(err);
    }
    *damaged = !load(s);
    *out = s;
    return ROTOR_OK;
}

bool compile_energy_store_find(const energy_store *s, const void *key, size_t n, rotor_energy_counts *c) {
    const rotor_energy_counts *x = rotor_hashtab_find(s->tab, key, (int64_t)n);
    if (x) *c = *x;
    return x;
}

bool compile_energy_store_add(energy_store *s, const void *key, size_t n, const rotor_energy_counts *c) {
    bool added;
    if (rotor_hashtab_add(s->tab, key, (int64_t)n, c, NULL, &added, NULL)) return false;
    s->dirty |= added;
    return true;
}
