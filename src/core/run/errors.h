/* errors.h -- a worker's script errors counted by message, so the engine
 * prints each distinct message once with its count. */
#ifndef LL_ERRORS_H
#define LL_ERRORS_H

#include <stdint.h>

typedef struct ll_error_count {
    char *msg;
    int64_t count;
} ll_error_count;

typedef struct ll_errors {
    ll_error_count *items;
    int n, cap;
} ll_errors;

/* Counts msg; returns the stored copy of it. */
const char *ll_errors_add(ll_errors *e, const char *msg);
void ll_errors_free(ll_errors *e);

#endif
