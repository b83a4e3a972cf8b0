/* token_ring.h -- the live token source behind token_stream.h: threads
 * that sign ahead of use into a bounded ring (token_ring.c). */
#ifndef LL_TOKEN_RING_H
#define LL_TOKEN_RING_H

#include <stddef.h>
#include <stdint.h>

#include "jwt.h"

typedef struct ll_token_ring ll_token_ring;

/* Starts `threads` threads signing g's tokens into a ring of `capacity`
 * (each with its own signer; they wait while it is full). NULL with err
 * set when no thread starts. */
ll_token_ring *ll_token_ring_new(ll_jwt_gen *g, size_t capacity, int threads, char *err, size_t errlen);
/* Stops and joins the threads, frees the ring. */
void ll_token_ring_free(ll_token_ring *r);
/* Copies the oldest token into out (room for ll_jwt_gen_max_len bytes)
 * and returns its length; 0 when the ring is empty, which it counts. */
size_t ll_token_ring_pop(ll_token_ring *r, char *out);
/* Times ll_token_ring_pop found the ring empty. */
uint64_t ll_token_ring_fell_behind(const ll_token_ring *r);

#endif
