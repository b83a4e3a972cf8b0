/* tagset.h -- interning of sample tag sets for the outputs.
 *
 * Outputs need every tag of every sample; instead of copying them per
 * sample, each distinct tag set gets an id once. Tag sets live in one table
 * shared by the workers: a mutex guards additions, a hash index finds a set
 * in O(1), and each worker keeps a private cache from serialized tags to
 * id, so a known tag set costs one hash lookup and no lock. A set never
 * changes or moves once added (the table is allocated at its full size), so
 * the output thread reads the sets of the ids it drains without the lock.
 *
 * The table is bounded. Past max distinct sets (a URL with an id in it and
 * no name tag makes one per request), a new set is folded: its url and name
 * tags become "(other)" and that set is used, while the folded sets fit in
 * max_folded more; past those too (the many values are in another tag),
 * the sample gets the one "other" set: name and url "(other)" and the
 * registry's tags. Folded sets have ids >= max. The first fold prints a
 * one-time warning naming the set and telling to give such requests a
 * name tag; the outputs count the folded samples (output.c). */
#ifndef LL_TAGSET_H
#define LL_TAGSET_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "hashidx.h"
#include "metrics.h"

#define LL_TAGSETS_MAX 10000       /* distinct sets kept as they are */
#define LL_TAGSETS_MAX_FOLDED 1000 /* and folded ones (url and name "(other)") */
#define LL_TAGSETS_OTHER "(other)"

typedef struct ll_tagset {
    char *data;   /* "key\0value\0key\0value\0" */
    size_t len;
    int ntags;
} ll_tagset;

typedef struct ll_tagsets {
    pthread_mutex_t mu;
    ll_tagset *sets;   /* max + max_folded + 1 slots, made on first use */
    _Atomic int n;     /* sets made (stored with release after the set) */
    ll_hashidx index;  /* serialized tags -> id */
    int max, max_folded; /* LL_TAGSETS_MAX*; a test may lower them before the first intern */
    int other;         /* the last-resort set, -1 until needed */
    int warned;
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
 * already set; t may be NULL. Folded past the bound (see above); the
 * worker's cache c keeps only ids of sets that were not folded, so it is
 * bounded too. -1 when out of memory. */
int ll_tagsets_intern(ll_tagsets *ts, ll_tagset_cache *c, const ll_registry *reg, ll_tag_source *t);

/* Calls fn for each tag of set id (an id interning returned; no lock). */
void ll_tagset_each(const ll_tagsets *ts, int id, ll_tag_fn *fn, void *ud);

#endif
