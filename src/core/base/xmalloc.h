/* alloc.h -- the one out-of-memory policy for internal structures (as
 * Redis's zmalloc): ll_xmalloc and friends print "luaload: out of memory"
 * and abort. Allocations whose size the user picks (bodies, scripts, data
 * files) use plain malloc and fail gracefully instead. */
#ifndef LL_ALLOC_H
#define LL_ALLOC_H

#include <stddef.h>

void *ll_xmalloc(size_t n);
void *ll_xcalloc(size_t count, size_t size);
void *ll_xrealloc(void *p, size_t n);
char *ll_xstrdup(const char *s);
/* Grows *p (an array of *cap elements of size elem) to hold at least need. */
void ll_xgrow(void **p, int *cap, int need, size_t elem);

#endif
