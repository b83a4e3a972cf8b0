/* token_ring.c -- a bounded ring of tokens filled by signing threads: each
 * thread signs a small batch outside the lock, then copies it in, waiting
 * while the ring is full; consumers copy the oldest token out under the
 * same mutex, and count the times they found the ring empty. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "token_ring.h"

#define TOKEN_RING_BATCH 16

struct ll_token_ring {
    ll_jwt_gen *g;
    size_t slot;        /* bytes per token slot */
    size_t cap;         /* slots */
    char *slots;
    size_t *lens;
    size_t head, count; /* under mu */
    int stop;           /* under mu */
    pthread_mutex_t mu;
    pthread_cond_t not_full;
    pthread_t *tids;
    int nthreads;
    _Atomic uint64_t fell_behind;
};

/* Copies the n tokens of batch into the ring, waiting for room; returns
 * -1 when the ring is stopping. */
static int token_ring_push(ll_token_ring *r, const char *batch, const size_t *lens, int n) {
    int rc = 0;
    pthread_mutex_lock(&r->mu);
    for (int i = 0; i < n && rc == 0; i++) {
        while (r->count == r->cap && !r->stop) pthread_cond_wait(&r->not_full, &r->mu);
        if (r->stop) {
            rc = -1;
            break;
        }
        size_t at = (r->head + r->count) % r->cap;
        memcpy(r->slots + at * r->slot, batch + (size_t)i * r->slot, lens[i]);
        r->lens[at] = lens[i];
        r->count++;
    }
    pthread_mutex_unlock(&r->mu);
    return rc;
}

static void *token_ring_thread(void *arg) {
    ll_token_ring *r = arg;
    ll_jwt_signer *s = ll_jwt_signer_new(r->g);
    char *batch = malloc(TOKEN_RING_BATCH * r->slot);
    size_t lens[TOKEN_RING_BATCH];
    int ok = s && batch;
    while (ok) {
        for (int i = 0; i < TOKEN_RING_BATCH && ok; i++) {
            int n = ll_jwt_signer_sign(s, batch + (size_t)i * r->slot, r->slot);
            lens[i] = n > 0 ? (size_t)n : 0;
            ok = n > 0;
        }
        ok = ok && token_ring_push(r, batch, lens, TOKEN_RING_BATCH) == 0;
    }
    free(batch); /* on a failure, the consumers sign for themselves from now on */
    ll_jwt_signer_free(s);
    return NULL;
}

ll_token_ring *ll_token_ring_new(ll_jwt_gen *g, size_t capacity, int threads, char *err, size_t errlen) {
    ll_token_ring *r = calloc(1, sizeof(*r));
    if (capacity < TOKEN_RING_BATCH) capacity = TOKEN_RING_BATCH;
    if (threads < 1) threads = 1;
    if (r) {
        r->g = ll_jwt_gen_ref(g);
        r->slot = ll_jwt_gen_max_len(g);
        r->cap = capacity;
        r->slots = malloc(capacity * r->slot);
        r->lens = calloc(capacity, sizeof(*r->lens));
        r->tids = calloc((size_t)threads, sizeof(*r->tids));
        pthread_mutex_init(&r->mu, NULL);
        pthread_cond_init(&r->not_full, NULL);
    }
    while (r && r->slots && r->lens && r->tids && r->nthreads < threads &&
           pthread_create(&r->tids[r->nthreads], NULL, token_ring_thread, r) == 0)
        r->nthreads++;
    if (r && r->nthreads > 0) return r;
    snprintf(err, errlen, "cannot start a token signing thread");
    ll_token_ring_free(r);
    return NULL;
}

void ll_token_ring_free(ll_token_ring *r) {
    if (!r) return;
    pthread_mutex_lock(&r->mu);
    r->stop = 1;
    pthread_cond_broadcast(&r->not_full);
    pthread_mutex_unlock(&r->mu);
    for (int i = 0; i < r->nthreads; i++) pthread_join(r->tids[i], NULL);
    pthread_cond_destroy(&r->not_full);
    pthread_mutex_destroy(&r->mu);
    ll_jwt_gen_free(r->g);
    free(r->tids);
    free(r->slots);
    free(r->lens);
    free(r);
}

size_t ll_token_ring_pop(ll_token_ring *r, char *out) {
    size_t n = 0;
    pthread_mutex_lock(&r->mu);
    if (r->count > 0) {
        n = r->lens[r->head];
        memcpy(out, r->slots + r->head * r->slot, n);
        r->head = (r->head + 1) % r->cap;
        r->count--;
        pthread_cond_signal(&r->not_full);
    }
    pthread_mutex_unlock(&r->mu);
    if (n == 0) atomic_fetch_add(&r->fell_behind, 1);
    return n;
}

uint64_t ll_token_ring_fell_behind(const ll_token_ring *r) {
    return atomic_load(&((ll_token_ring *)r)->fell_behind);
}
