/* quick_native.h -- quick mode without Lua per request: the requests and
 * client options made once from the flags, and a VU's native iteration
 * (quick_native.c). */
#ifndef LL_QUICK_NATIVE_H
#define LL_QUICK_NATIVE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>

#include "quick.h"
#include "vu.h"

typedef struct ll_config ll_config;
typedef struct ll_quick_plan ll_quick_plan;

/* The plan of cfg's quick run (with its JWTs: made ahead now, into the
 * cache, when their count is known; stop interrupts that); NULL with a
 * one-line reason in err. */
ll_quick_plan *ll_quick_plan_new(const ll_config *cfg, const atomic_int *stop, char *err, size_t errlen);
/* A line on the JWTs sent (from a file, the cache, or signed during the
 * run, and whether the signer fell behind); nothing without JWTs. */
void ll_quick_plan_report(const ll_quick_plan *p, FILE *f);
void ll_quick_plan_free(ll_quick_plan *p);
/* Starts vu's iteration: the next URL's request (round-robin), then the
 * think time; ends it with ll_vu_native_done. */
void ll_quick_native_start(ll_vu *vu);
/* What a VU and a worker kept for the JWTs (vu->mode_data: its request
 * with a token; w->mode_data: the thread's cursor of the tokens). */
void ll_quick_native_vu_free(ll_vu *vu);
void ll_quick_native_worker_free(ll_worker *w);

#endif
