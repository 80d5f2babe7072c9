/* error.c — one-line error messages that travel up to the CLI. */
#include "rotor/base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Control characters from the input a message quotes (a key name with a
 * newline in a chip file, a tab in an option) are written as \n, \t or
 * \xHH, so that every error stays one line of plain text. */
static void one_line(char *msg, size_t size) {
    char tmp[ROTOR_ERROR_MAX];
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)msg; *p && o + 5 < sizeof tmp; p++) {
        if (*p >= 0x20 && *p != 0x7f) {
            tmp[o++] = (char)*p;
        } else if (*p == '\n' || *p == '\t' || *p == '\r') {
            tmp[o++] = '\\';
            tmp[o++] = *p == '\n' ? 'n' : *p == '\t' ? 't' : 'r';
        } else {
            o += (size_t)snprintf(tmp + o, sizeof tmp - o, "\\x%02x", *p);
        }
    }
    tmp[o] = '\0';
    snprintf(msg, size, "%s", tmp);
}

rotor_status rotor_fail(rotor_error *err, rotor_status code, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        one_line(err->msg, sizeof err->msg);
    }
    return code;
}

rotor_status rotor_nomem(rotor_error *err) { return rotor_fail(err, ROTOR_ERR_NOMEM, "out of memory"); }

void rotor_error_prefix(rotor_error *err, const char *prefix) {
    if (!err) return;
    /* "--dim" before "dims: ..." names the same thing twice: the option
     * replaces the word, singular or plural ("--dim: m: ...", not
     * "--dim: dims: m: ...") */
    const char *word = prefix;
    while (*word == '-') word++;
    size_t wl = strlen(word);
    if (word != prefix && wl && !strncmp(err->msg, word, wl)) {
        size_t k = wl + (err->msg[wl] == 's');
        if (err->msg[k] == ':' && err->msg[k + 1] == ' ') memmove(err->msg, err->msg + k + 2, strlen(err->msg + k + 2) + 1);
    }
    char tmp[ROTOR_ERROR_MAX];
    size_t n = strlen(prefix);
    if (n > ROTOR_ERROR_MAX / 2) n = ROTOR_ERROR_MAX / 2; /* keep room for the message */
    memcpy(tmp, prefix, n);
    tmp[n] = ':';
    tmp[n + 1] = ' ';
    size_t room = sizeof tmp - n - 3;
    size_t m = strnlen(err->msg, room);
    memcpy(tmp + n + 2, err->msg, m);
    tmp[n + 2 + m] = '\0';
    memcpy(err->msg, tmp, sizeof tmp);
    one_line(err->msg, sizeof err->msg);
}

const char *rotor_status_name(rotor_status s) {
    switch (s) {
    case ROTOR_OK: return "ok";
    case ROTOR_ERR_INPUT: return "bad input";
    case ROTOR_ERR_NOFIT: return "no plan fits";
    case ROTOR_ERR_NOMEM: return "out of memory";
    case ROTOR_ERR_IO: return "i/o error";
    }
    return "unknown error";
}
