/* errors.c -- error messages counted by message (see errors.h): the
 * table, its bounded counting, merging and ordering, and the messages
 * made comparable. */
#include "errors.h"

#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

static ll_error_count *errors_find(const ll_errors *e, const char *msg) {
    for (int i = 0; i < e->n; i++)
        if (strcmp(e->items[i].msg, msg) == 0) return &e->items[i];
    return NULL;
}

static ll_error_count *errors_append(ll_errors *e, const char *msg) {
    ll_xgrow((void **)&e->items, &e->cap, e->n + 1, sizeof(*e->items));
    ll_error_count *c = &e->items[e->n++];
    c->msg = ll_xstrdup(msg);
    c->count = 0;
    return c;
}

const char *ll_errors_add(ll_errors *e, const char *msg, int max) {
    ll_error_count *c = errors_find(e, msg);
    if (!c && e->n >= max) {
        e->other++;
        return NULL;
    }
    if (!c) c = errors_append(e, msg);
    c->count++;
    return c->msg;
}

void ll_errors_count(ll_errors *e, const char *msg, int64_t n, int max) {
    ll_error_count *c = errors_find(e, msg);
    if (!c && e->n >= max) {
        e->other += n;
        return;
    }
    if (!c) c = errors_append(e, msg);
    c->count += n;
}

void ll_errors_merge(ll_errors *dst, const ll_errors *src) {
    for (int i = 0; i < src->n; i++) {
        ll_error_count *c = errors_find(dst, src->items[i].msg);
        if (!c) c = errors_append(dst, src->items[i].msg);
        c->count += src->items[i].count;
    }
    dst->other += src->other;
}

static int errors_by_count(const void *a, const void *b) {
    const ll_error_count *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return strcmp(x->msg, y->msg);
}

void ll_errors_sort(ll_errors *e) {
    if (e->n > 1) qsort(e->items, (size_t)e->n, sizeof(*e->items), errors_by_count);
}

void ll_errors_free(ll_errors *e) {
    for (int i = 0; i < e->n; i++) free(e->items[i].msg);
    free(e->items);
    memset(e, 0, sizeof(*e));
}
