/* buf.h -- a growable byte buffer, always NUL-terminated after len. */
#ifndef LL_BUF_H
#define LL_BUF_H

#include <stddef.h>

typedef struct ll_buf {
    char *p;
    size_t len, cap;
    int failed; /* an append ran out of memory (the buffer kept what it had) */
} ll_buf;

/* Appends n bytes. Returns 0, or -1 (and sets failed) when out of memory. */
int ll_buf_append(ll_buf *b, const void *p, size_t n);
/* Makes room for n more bytes and the NUL after them, for a caller that
 * writes several pieces at b->p + b->len at once. 0, or -1 (and sets
 * failed) when out of memory. */
int ll_buf_reserve(ll_buf *b, size_t n);
int ll_buf_puts(ll_buf *b, const char *s);
/* Appends printf's text of fmt. 0, or -1 (and sets failed) when out of
 * memory. */
int ll_buf_printf(ll_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends the whole file at path. Returns 0, or -1 with errno set when it
 * cannot be opened or read (a directory, say) or memory ran out. */
int ll_buf_read_file(ll_buf *b, const char *path);
void ll_buf_free(ll_buf *b);

#endif
