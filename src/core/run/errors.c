/* errors.c -- script errors counted by message (see errors.h). */
#include "errors.h"

#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

const char *ll_errors_add(ll_errors *e, const char *msg) {
    for (int i = 0; i < e->n; i++) {
        if (strcmp(e->items[i].msg, msg) != 0) continue;
        e->items[i].count++;
        return e->items[i].msg;
    }
    ll_xgrow((void **)&e->items, &e->cap, e->n + 1, sizeof(*e->items));
    e->items[e->n].msg = ll_xstrdup(msg);
    e->items[e->n].count = 1;
    return e->items[e->n++].msg;
}

void ll_errors_free(ll_errors *e) {
    for (int i = 0; i < e->n; i++) free(e->items[i].msg);
    free(e->items);
    memset(e, 0, sizeof(*e));
}
