/* textbuf.c — a text that grows as it is printed into (textbuf.h). */
#include "textbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void rotor_textbuf_printf(rotor_textbuf *b, const char *fmt, ...) {
    if (!b->ok) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->ok = false;
            return;
        }
        if (b->p && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        size_t cap = b->cap ? b->cap : 4096;
        while (cap <= b->n + (size_t)k) cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np) {
            b->ok = false;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
}

char *rotor_textbuf_take(rotor_textbuf *b) {
    char *p = b->ok ? b->p : NULL;
    if (!b->ok) free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
    return p;
}
