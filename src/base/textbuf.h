/* textbuf.h — internal: a text that grows as it is printed into, for keys
 * and files built piece by piece (compile/plancache.c's entries,
 * compile/gticca.c's instance keys).  On out of memory it stays failed
 * (ok false) and later prints do nothing, so a caller checks once at the
 * end.  Not public API. */
#ifndef ROTOR_TEXTBUF_H
#define ROTOR_TEXTBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct rotor_textbuf {
    char *p; /* NUL-terminated once anything is printed; the caller frees it */
    size_t n, cap;
    bool ok;
} rotor_textbuf;

#define ROTOR_TEXTBUF_INIT {.p = NULL, .n = 0, .cap = 0, .ok = true}

void rotor_textbuf_printf(rotor_textbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The text, handed over (NULL, and freed, when a print failed or nothing
 * was printed). */
char *rotor_textbuf_take(rotor_textbuf *b);

#endif
