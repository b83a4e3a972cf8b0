/* tagset.h -- interning of sample tag sets for the outputs.
 *
 * Outputs need every tag of every sample; instead of copying them per
 * sample, each distinct tag set gets an id once. Tag sets live in one table
 * shared by the workers (a mutex guards additions and reads); each worker
 * keeps a private cache from serialized tags to id, so a known tag set costs
 * one hash lookup and no lock. */
#ifndef LL_TAGSET_H
#define LL_TAGSET_H

#include <pthread.h>
#include <stddef.h>

#include "metrics.h"

typedef struct ll_tagset {
    char *data;   /* "key\0value\0key\0value\0" */
    size_t len;
    int ntags;
} ll_tagset;

typedef struct ll_tagsets {
    pthread_mutex_t mu;
    ll_tagset *sets;
    int n, cap;
} ll_tagsets;

typedef struct ll_tagset_cache {
    char **keys;   /* serialized tag sets (owned), open addressing */
    int *ids;
    size_t *lens;  /* serialized lengths */
    int cap, used;
} ll_tagset_cache;

void ll_tagsets_init(ll_tagsets *ts);
void ll_tagsets_free(ll_tagsets *ts);
void ll_tagset_cache_free(ll_tagset_cache *c);

/* The id of t's tags plus the registry's (options.tags, scenario) not
 * already set; t may be NULL. -1 when out of memory. */
int ll_tagsets_intern(ll_tagsets *ts, ll_tagset_cache *c, const ll_registry *reg, ll_tag_source *t);

/* Calls fn for each tag of set id. Call with ts->mu held. */
void ll_tagset_each(const ll_tagsets *ts, int id, ll_tag_fn *fn, void *ud);

#endif
