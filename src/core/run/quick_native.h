/* quick_native.h -- quick mode without Lua per request: the requests and
 * client options made once from the flags, and a VU's native iteration
 * (quick_native.c). */
#ifndef LL_QUICK_NATIVE_H
#define LL_QUICK_NATIVE_H

#include <stddef.h>

#include "quick.h"
#include "vu.h"

typedef struct ll_config ll_config;
typedef struct ll_quick_plan ll_quick_plan;

/* Whether the flags can run natively (none needs Lua per request). */
int ll_quick_native_ok(const ll_quick *q);
/* The plan of cfg's quick run; NULL with a one-line reason in err. */
ll_quick_plan *ll_quick_plan_new(const ll_config *cfg, char *err, size_t errlen);
void ll_quick_plan_free(ll_quick_plan *p);
/* Starts vu's iteration: the next URL's request (round-robin), then the
 * think time; ends it with ll_vu_native_done. */
void ll_quick_native_start(ll_vu *vu);

#endif
