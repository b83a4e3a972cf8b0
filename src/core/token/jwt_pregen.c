/* jwt_pregen.c -- signs n tokens on several threads into a file: each
 * thread claims a chunk of JWT_PREGEN_CHUNK tokens with an atomic counter,
 * signs it into a buffer of its own with its own signer, and writes the
 * buffer under a mutex (one write per chunk). The calling thread waits,
 * redrawing the progress line when asked. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jwt_pregen.h"

#define JWT_PREGEN_CHUNK 256

typedef struct jwt_pregen_job {
    ll_jwt_gen *g;
    uint64_t n;
    int fd;
    const atomic_int *stop;
    _Atomic uint64_t next;  /* tokens claimed */
    _Atomic uint64_t done;  /* tokens written */
    atomic_int finished;    /* threads returned */
    atomic_int failed;      /* 0, or the first failure: 1 signing, 2 writing, 3 stopped */
    int write_errno;
    pthread_mutex_t mu;     /* one chunk written at a time */
} jwt_pregen_job;

static double jwt_pregen_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void jwt_pregen_fail(jwt_pregen_job *j, int why) {
    int none = 0;
    atomic_compare_exchange_strong(&j->failed, &none, why);
}

static int jwt_pregen_write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Signs k tokens into buf, each followed by '\n'; returns the bytes or -1. */
static ssize_t jwt_pregen_chunk(ll_jwt_signer *s, char *buf, size_t maxlen, uint64_t k) {
    size_t len = 0;
    for (uint64_t i = 0; i < k; i++) {
        int t = ll_jwt_signer_sign(s, buf + len, maxlen);
        if (t < 0) return -1;
        len += (size_t)t;
        buf[len++] = '\n';
    }
    return (ssize_t)len;
}

static void *jwt_pregen_thread(void *arg) {
    jwt_pregen_job *j = arg;
    size_t maxlen = ll_jwt_gen_max_len(j->g);
    ll_jwt_signer *s = ll_jwt_signer_new(j->g);
    char *buf = malloc(JWT_PREGEN_CHUNK * (maxlen + 1));
    if (!s || !buf) jwt_pregen_fail(j, 1);
    while (!atomic_load(&j->failed)) {
        if (j->stop && atomic_load(j->stop)) {
            jwt_pregen_fail(j, 3);
            break;
        }
        uint64_t first = atomic_fetch_add(&j->next, JWT_PREGEN_CHUNK);
        if (first >= j->n) break;
        uint64_t k = j->n - first < JWT_PREGEN_CHUNK ? j->n - first : JWT_PREGEN_CHUNK;
        ssize_t len = jwt_pregen_chunk(s, buf, maxlen, k);
        if (len < 0) {
            jwt_pregen_fail(j, 1);
            break;
        }
        pthread_mutex_lock(&j->mu);
        int rc = jwt_pregen_write_all(j->fd, buf, (size_t)len);
        if (rc != 0 && !j->write_errno) j->write_errno = errno ? errno : EIO;
        pthread_mutex_unlock(&j->mu);
        if (rc != 0) jwt_pregen_fail(j, 2);
        else atomic_fetch_add(&j->done, k);
    }
    free(buf);
    ll_jwt_signer_free(s);
    atomic_fetch_add(&j->finished, 1);
    return NULL;
}

static void jwt_pregen_progress(jwt_pregen_job *j, double t0, int last) {
    uint64_t done = atomic_load(&j->done);
    double secs = jwt_pregen_now() - t0;
    fprintf(stderr, "\rluaload: jwt: generating %s tokens: %llu/%llu (%3.0f%%, %.0f/s)%s", ll_jwt_gen_alg(j->g),
            (unsigned long long)done, (unsigned long long)j->n, 100.0 * (double)done / (double)j->n,
            secs > 0 ? (double)done / secs : 0.0, last ? "\n" : "");
    fflush(stderr);
}

int ll_jwt_pregen_write(ll_jwt_gen *g, uint64_t n, int fd, int threads, int progress, const atomic_int *stop,
                        char *err, size_t errlen) {
    jwt_pregen_job j = {.g = g, .n = n, .fd = fd, .stop = stop};
    pthread_mutex_init(&j.mu, NULL);
    if (threads < 1) threads = 1;
    if ((uint64_t)threads > n / JWT_PREGEN_CHUNK + 1) threads = (int)(n / JWT_PREGEN_CHUNK + 1);
    pthread_t *tids = calloc((size_t)threads, sizeof(*tids));
    int started = 0;
    while (tids && started < threads && pthread_create(&tids[started], NULL, jwt_pregen_thread, &j) == 0) started++;
    if (started == 0) jwt_pregen_thread(&j); /* no thread: sign here */
    double t0 = jwt_pregen_now(), shown = t0;
    while (started && atomic_load(&j.finished) < started) {
        struct timespec pause = {0, 50 * 1000 * 1000};
        nanosleep(&pause, NULL);
        if (progress && jwt_pregen_now() - shown >= 0.25) {
            jwt_pregen_progress(&j, t0, 0);
            shown = jwt_pregen_now();
        }
    }
    for (int i = 0; i < started; i++) pthread_join(tids[i], NULL);
    free(tids);
    if (progress) jwt_pregen_progress(&j, t0, 1);
    pthread_mutex_destroy(&j.mu);
    int failed = atomic_load(&j.failed);
    if (failed == 1) snprintf(err, errlen, "signing a %s token failed", ll_jwt_gen_alg(g));
    else if (failed == 2) snprintf(err, errlen, "cannot write the tokens: %s", strerror(j.write_errno));
    else if (failed == 3) snprintf(err, errlen, "generating the tokens was interrupted");
    return failed ? -1 : 0;
}
