/* body.c -- request body sources (see body.h). */
#include "body.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void ll_body_clear(ll_body *b) {
    if (b->kind == LL_BODY_MEMORY) free(b->mem);
    memset(b, 0, sizeof(*b));
    b->fd = -1;
}

int ll_body_set_memory(ll_body *b, const char *p, size_t n) {
    ll_body_clear(b);
    char *m = malloc(n + 1);
    if (!m) return -1;
    memcpy(m, p, n);
    m[n] = 0;
    b->kind = LL_BODY_MEMORY;
    b->mem = m;
    b->len = n;
    return 0;
}

void ll_body_set_file(ll_body *b, int fd, uint64_t offset, uint64_t len) {
    ll_body_clear(b);
    b->kind = LL_BODY_FILE;
    b->fd = fd;
    b->offset = offset;
    b->len = len;
}

void ll_body_set_generator(ll_body *b, ll_body_gen_fn *gen, void *gen_ud, uint64_t len) {
    ll_body_clear(b);
    b->kind = LL_BODY_GENERATOR;
    b->gen = gen;
    b->gen_ud = gen_ud;
    b->len = len;
}

void ll_body_set_form(ll_body *b, const struct ll_form *f) {
    ll_body_clear(b);
    b->kind = LL_BODY_FORM;
    b->form = f;
}

int ll_body_copy(ll_body *dst, const ll_body *src) {
    if (src->kind == LL_BODY_MEMORY) return ll_body_set_memory(dst, src->mem, (size_t)src->len);
    ll_body_clear(dst);
    *dst = *src;
    return 0;
}

ssize_t ll_body_read(const ll_body *b, uint64_t pos, char *buf, size_t n) {
    if (pos >= b->len) return 0;
    if (n > b->len - pos) n = (size_t)(b->len - pos);
    switch (b->kind) {
    case LL_BODY_MEMORY:
        memcpy(buf, b->mem + pos, n);
        return (ssize_t)n;
    case LL_BODY_FILE: {
        ssize_t r;
        do r = pread(b->fd, buf, n, (off_t)(b->offset + pos));
        while (r < 0 && errno == EINTR);
        if (r == 0) { /* the file is shorter than the region it was opened with */
            errno = EIO;
            return -1;
        }
        return r;
    }
    case LL_BODY_GENERATOR: return b->gen(b->gen_ud, pos, buf, n);
    default: return 0;
    }
}
