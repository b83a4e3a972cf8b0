/* xmalloc.c -- allocation that cannot fail: out of memory prints one line
 * and aborts (see xmalloc.h for which allocations use it). */
#include "xmalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void out_of_memory(size_t n) {
    fprintf(stderr, "luaload: out of memory allocating %zu bytes\n", n);
    fflush(stderr);
    abort();
}

void *ll_xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) out_of_memory(n);
    return p;
}

void *ll_xcalloc(size_t count, size_t size) {
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) out_of_memory(count * size);
    return p;
}

void *ll_xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) out_of_memory(n);
    return q;
}

char *ll_xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = ll_xmalloc(n);
    memcpy(p, s, n);
    return p;
}

char *ll_xstrndup(const char *s, size_t n) {
    size_t len = strnlen(s, n);
    char *p = ll_xmalloc(len + 1);
    memcpy(p, s, len);
    p[len] = 0;
    return p;
}

void ll_xgrow(void **p, int *cap, int need, size_t elem) {
    if (need <= *cap) return;
    int n = *cap ? *cap : 8;
    while (n < need) n *= 2;
    *p = ll_xrealloc(*p, (size_t)n * elem);
    *cap = n;
}
