/* buf.c -- growable byte buffers (see buf.h). */
#include "buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ll_buf_reserve(ll_buf *b, size_t n) {
    if (b->len + n + 1 <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1) cap *= 2;
    char *q = realloc(b->p, cap);
    if (!q) {
        b->failed = 1;
        return -1;
    }
    b->p = q;
    b->cap = cap;
    return 0;
}

int ll_buf_append(ll_buf *b, const void *p, size_t n) {
    if (ll_buf_reserve(b, n) < 0) return -1;
    memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = 0;
    return 0;
}

int ll_buf_puts(ll_buf *b, const char *s) { return ll_buf_append(b, s, strlen(s)); }

int ll_buf_printf(ll_buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || ll_buf_reserve(b, (size_t)n) < 0) return -1;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

int ll_buf_read_file(ll_buf *b, const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    char chunk[4096];
    size_t n;
    int rc = 0;
    while (rc == 0 && (n = fread(chunk, 1, sizeof(chunk), f)) > 0) rc = ll_buf_append(b, chunk, n);
    int err = rc ? ENOMEM : ferror(f) ? errno : 0;
    fclose(f);
    if (!err) return 0;
    errno = err;
    return -1;
}

void ll_buf_free(ll_buf *b) {
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
    b->failed = 0;
}
