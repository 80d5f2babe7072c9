/* suggest.c — see include/rotor/base/suggest.h. */
#include "rotor/base/suggest.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define SUGGEST_MAX 64 /* longer words are compared on their first 64 characters */

static int fold(int ch) {
    if (ch == '_' || ch == '.') return '-';
    return tolower((unsigned char)ch);
}

/* Optimal string alignment distance of a[0..n) and b[0..m), folded. */
static int distance(const char *a, int n, const char *b, int m) {
    int d[SUGGEST_MAX + 1][SUGGEST_MAX + 1];
    for (int i = 0; i <= n; i++) d[i][0] = i;
    for (int j = 0; j <= m; j++) d[0][j] = j;
    for (int i = 1; i <= n; i++)
        for (int j = 1; j <= m; j++) {
            int cost = fold(a[i - 1]) != fold(b[j - 1]);
            int v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v) v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) && fold(a[i - 2]) == fold(b[j - 1]) &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[n][m];
}

const char *rotor_suggest(const char *word, const char *const *names, int n) {
    if (!word || !*word) return NULL;
    int wl = (int)strnlen(word, SUGGEST_MAX);
    const char *best = NULL;
    int best_d = 0;
    for (int i = 0; i < n; i++) {
        if (!names[i]) continue;
        int nl = (int)strnlen(names[i], SUGGEST_MAX);
        int longer = wl > nl ? wl : nl, limit = longer / 4;
        if (limit < 1) limit = 1;
        if (limit > 2) limit = 2;
        int d = distance(word, wl, names[i], nl);
        if (d <= limit && (!best || d < best_d)) {
            best = names[i];
            best_d = d;
        }
    }
    return best;
}

const char *rotor_suggest_phrase(const char *word, const char *const *names, int n, char *buf, int cap) {
    const char *s = rotor_suggest(word, names, n);
    if (cap > 0) buf[0] = '\0';
    if (s && cap > 0) snprintf(buf, (size_t)cap, " (did you mean '%s'?)", s);
    return buf;
}
