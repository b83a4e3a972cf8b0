/* xmalloc.h -- the one out-of-memory policy for internal structures (as
 * Redis's zmalloc): ll_xmalloc and friends print "luaload: out of memory"
 * and abort: the loop, registry, shards, executors, workers, transports,
 * VU tables, configuration and plans. Allocations whose size the user
 * picks (request and response bodies, scripts, data files, headers, tags)
 * use plain malloc and fail gracefully instead: the request or the call
 * fails with "out of memory" and the run goes on. */
#ifndef LL_XMALLOC_H
#define LL_XMALLOC_H

#include <stddef.h>

void *ll_xmalloc(size_t n);
void *ll_xcalloc(size_t count, size_t size);
void *ll_xrealloc(void *p, size_t n);
char *ll_xstrdup(const char *s);
char *ll_xstrndup(const char *s, size_t n); /* at most n bytes of s, terminated */
/* Grows *p (an array of *cap elements of size elem) to hold at least need. */
void ll_xgrow(void **p, int *cap, int need, size_t elem);

#endif
