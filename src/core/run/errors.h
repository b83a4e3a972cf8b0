/* errors.h -- error messages counted by message: a worker's script errors
 * (so the engine prints each distinct message once with its count) and its
 * failed HTTP requests (a bounded table: at most max distinct messages,
 * then only a count of the others), and their merge across workers. */
#ifndef LL_ERRORS_H
#define LL_ERRORS_H

#include <stddef.h>
#include <stdint.h>

typedef struct ll_error_count {
    char *msg;
    int64_t count;
} ll_error_count;

typedef struct ll_errors {
    ll_error_count *items;
    int n, cap;
    int64_t other;              /* counted past the bound, message not kept */
} ll_errors;

/* Counts msg, keeping at most max distinct messages; returns the stored
 * copy of it, or NULL when the table is full (then it counts in e->other). */
const char *ll_errors_add(ll_errors *e, const char *msg, int max);
/* Counts msg n times, keeping at most max distinct messages: once the
 * table is full, a new message only adds to e->other. */
void ll_errors_count(ll_errors *e, const char *msg, int64_t n, int max);
/* Adds src's counts (its other included) into dst, unbounded. */
void ll_errors_merge(ll_errors *dst, const ll_errors *src);
/* Orders the messages by count, highest first (ties by message). */
void ll_errors_sort(ll_errors *e);
void ll_errors_free(ll_errors *e);

#endif
