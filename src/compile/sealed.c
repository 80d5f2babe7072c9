/* sealed.c — a keyed text file sealed by a checksum (sealed.h):
 *
 *   FORMAT VERSION\nkey LEN\nKEY BODY checksum HEX16\n
 *
 * The key is the file's whole identity: its name is only the key's hash
 * (rotor_plancache_path_ext), so a file holding another key is a collision,
 * read as a miss.  The checksum (FNV-1a, base/hash.h) covers every byte
 * before it, so a truncated or edited file is damaged and never misread;
 * the caller ignores it, says so in one line and writes it again (issue 45).
 * The hand-off and energy stores (handoffstore.c, energystore.c) differ only
 * in their bodies. */
#include "compile/sealed.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rotor/base/hash.h"
#include "rotor/base/readfile.h"
#include "rotor/compile/plancache.h"

#define CHECKSUM_LINE 26 /* "checksum " + 16 hex digits + "\n" */

/* "checksum HEX16\n" of text[0..n) into out (CHECKSUM_LINE + 1 bytes). */
static void checksum_line(char *out, const char *text, size_t n) {
    snprintf(out, CHECKSUM_LINE + 1, "checksum %016llx\n",
             (unsigned long long)rotor_fnv1a_bytes(ROTOR_FNV1A_SEED, text, n));
}

int compile_sealed_read(const char *dir, const char *ext, const char *format, int version, const char *key,
                        char **body, size_t *blen) {
    *body = NULL;
    *blen = 0;
    char *path = rotor_plancache_path_ext(dir, key, ext);
    char *text = NULL;
    size_t len = 0;
    rotor_error rerr = {{0}};
    rotor_status st = path ? rotor_read_file(path, ROTOR_PLANCACHE_DEFAULT_LIMIT, &text, &len, &rerr) : ROTOR_ERR_IO;
    free(path);
    if (st) return 0; /* not there: a miss */
    char head[128];
    size_t klen = strlen(key);
    int hn = snprintf(head, sizeof head, "%s %d\nkey %zu\n", format, version, klen);
    bool ok = hn > 0 && (size_t)hn < sizeof head && len >= (size_t)hn + klen + CHECKSUM_LINE &&
              !memcmp(text, head, (size_t)hn);
    if (ok && memcmp(text + hn, key, klen) != 0) { /* another key's file: the hash collided */
        free(text);
        return 0;
    }
    size_t sealed = ok ? len - CHECKSUM_LINE : 0; /* the bytes the checksum covers */
    if (ok) {
        char want[CHECKSUM_LINE + 1];
        checksum_line(want, text, sealed);
        ok = memcmp(text + sealed, want, CHECKSUM_LINE) == 0;
    }
    if (!ok) {
        free(text);
        return -1;
    }
    /* the body moves to the front and ends where the checksum started */
    size_t n = sealed - (size_t)hn - klen;
    memmove(text, text + hn + klen, n);
    text[n] = '\0';
    *body = text;
    *blen = n;
    return 1;
}

bool compile_sealed_write(const char *dir, const char *ext, const char *format, int version, const char *key,
                          const char *body, size_t blen) {
    char *head = NULL;
    int hn = asprintf(&head, "%s %d\nkey %zu\n%s", format, version, strlen(key), key);
    if (hn < 0) return false;
    char *path = rotor_plancache_path_ext(dir, key, ext);
    size_t n = (size_t)hn + blen;
    char *all = path ? malloc(n + CHECKSUM_LINE + 1) : NULL;
    bool ok = all;
    if (ok) {
        memcpy(all, head, (size_t)hn);
        memcpy(all + hn, body, blen);
        checksum_line(all + n, all, n);
        ok = rotor_plancache_write(dir, path, all, n + CHECKSUM_LINE);
    }
    free(all);
    free(path);
    free(head);
    return ok;
}

bool compile_parse_i64(const char **pp, int64_t *v) {
    const unsigned char *p = (const unsigned char *)*pp;
    while (*p == ' ' || (*p >= '\t' && *p <= '\r')) p++; /* isspace in the C locale */
    bool neg = *p == '-';
    if (*p == '-' || *p == '+') p++;
    if (*p < '0' || *p > '9') return false;
    uint64_t x = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (x > (lim - d) / 10) return false;
        x = x * 10 + d;
    }
    *v = !neg ? (int64_t)x : x == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)x;
    *pp = (const char *)p;
    return true;
}

int64_t compile_reader_i64(compile_reader *r) {
    int64_t x = 0;
    if (!r->bad && !compile_parse_i64(&r->p, &x)) r->bad = true;
    return x;
}

void compile_reader_word(compile_reader *r, const char *w) {
    while (*r->p == ' ' || *r->p == '\n') r->p++;
    size_t n = strlen(w);
    if (r->bad || strncmp(r->p, w, n) != 0) r->bad = true;
    else r->p += n;
}
