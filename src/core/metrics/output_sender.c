/* output_sender.c -- a thread that POSTs an output's bodies in the order
 * they were queued (see output_sender.h). */
#include "output_sender.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xmalloc.h"

struct ll_sender {
    const ll_output_http *http;
    void *conn;
    char *url;
    ll_output_post to;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t changed; /* a body queued or sent, or stop */
    ll_buf queue[LL_SENDER_QUEUE + 1]; /* the last body of a run may go past the limit */
    int head, n; /* queue[head] is the next to send; n queued */
    int stop;
    int ending;              /* the run is over: waits end at deadline */
    struct timespec deadline; /* CLOCK_REALTIME, pthread_cond_timedwait's clock */
    long unsent;             /* bodies given up at the end */
    long failures;
    char why[200];
};

/* Milliseconds until the end's deadline; the caller holds mu. */
static long ms_left(const ll_sender *s) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (long)(s->deadline.tv_sec - now.tv_sec) * 1000 + (s->deadline.tv_nsec - now.tv_nsec) / 1000000;
}

static void *sender_main(void *arg) {
    ll_sender *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->n && !s->stop) pthread_cond_wait(&s->changed, &s->mu);
        if (!s->n) break; /* stopped with nothing left */
        ll_buf body = s->queue[s->head];
        memset(&s->queue[s->head], 0, sizeof(body));
        s->head = (s->head + 1) % (LL_SENDER_QUEUE + 1);
        s->n--;
        ll_output_post to = s->to;
        if (s->ending && (to.timeout_ms = ms_left(s)) <= 0) { /* past the end's deadline */
            s->unsent++;
            ll_buf_free(&body);
            pthread_cond_broadcast(&s->changed);
            continue;
        }
        pthread_mutex_unlock(&s->mu);
        char why[200] = "";
        long status = s->http->post(s->conn, &to, body.p, body.len, why, sizeof(why));
        ll_buf_free(&body);
        pthread_mutex_lock(&s->mu);
        if (status / 100 != 2 && s->ending && ms_left(s) <= 0) {
            s->unsent++; /* cut at the end's deadline */
        } else if (status / 100 != 2) {
            s->failures++;
            snprintf(s->why, sizeof(s->why), "%s", why);
        }
        pthread_cond_broadcast(&s->changed);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

ll_sender *ll_sender_open(const ll_output_http *http, const ll_output_post *to) {
    ll_sender *s = ll_xcalloc(1, sizeof(*s));
    s->http = http;
    s->url = ll_xstrdup(to->url);
    s->to = *to; /* the sink keeps headers and userpwd while s lives */
    s->to.url = s->url;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->changed, NULL);
    s->conn = http->open();
    if (s->conn && pthread_create(&s->thread, NULL, sender_main, s) == 0) return s;
    if (s->conn) http->close(s->conn);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->changed);
    free(s->url);
    free(s);
    return NULL;
}

/* Puts body at the end of the queue; the caller holds mu and made room. */
static void enqueue(ll_sender *s, ll_buf *body) {
    s->queue[(s->head + s->n) % (LL_SENDER_QUEUE + 1)] = *body;
    s->n++;
    memset(body, 0, sizeof(*body));
    pthread_cond_broadcast(&s->changed);
}

/* Starts the end's clock; the caller holds mu. */
static void start_end(ll_sender *s) {
    if (s->ending) return;
    s->ending = 1;
    clock_gettime(CLOCK_REALTIME, &s->deadline);
    s->deadline.tv_sec += LL_SENDER_DRAIN_S;
}

/* Waits for a change; 0 once the end's deadline has passed. The caller
 * holds mu. */
static int wait_change(ll_sender *s) {
    if (!s->ending) return pthread_cond_wait(&s->changed, &s->mu), 1;
    return pthread_cond_timedwait(&s->changed, &s->mu, &s->deadline) != ETIMEDOUT;
}

void ll_sender_end(ll_sender *s) {
    pthread_mutex_lock(&s->mu);
    start_end(s);
    pthread_cond_broadcast(&s->changed); /* a post waiting now waits until the deadline */
    pthread_mutex_unlock(&s->mu);
}

int ll_sender_post(ll_sender *s, ll_buf *body, int wait) {
    if (!body->len) return 0;
    pthread_mutex_lock(&s->mu);
    int in_time = 1;
    while (wait && in_time && s->n >= LL_SENDER_QUEUE) in_time = wait_change(s);
    int queued = s->n < LL_SENDER_QUEUE;
    if (queued) enqueue(s, body);
    if (!queued && !in_time) { /* past the end's deadline: given up */
        s->unsent++;
        ll_buf_free(body);
    }
    pthread_mutex_unlock(&s->mu);
    return queued ? 0 : -1;
}

long ll_sender_failures(ll_sender *s, char *why, size_t len) {
    pthread_mutex_lock(&s->mu);
    long n = s->failures;
    snprintf(why, len, "%s", s->why);
    pthread_mutex_unlock(&s->mu);
    return n;
}

long ll_sender_close(ll_sender *s, ll_buf *last, char *why, size_t len) {
    pthread_mutex_lock(&s->mu);
    start_end(s);
    if (last->len) enqueue(s, last);
    s->stop = 1;
    pthread_cond_broadcast(&s->changed);
    while (s->n && wait_change(s)) continue;
    /* a target this slow: what waits is given up */
    for (; s->n; s->n--, s->head = (s->head + 1) % (LL_SENDER_QUEUE + 1)) {
        ll_buf_free(&s->queue[s->head]);
        s->unsent++;
    }
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->thread, NULL);
    if (s->unsent) {
        s->failures += s->unsent;
        snprintf(s->why, sizeof(s->why), "%ld batch(es) not sent within %d s of the end of the run", s->unsent,
                 LL_SENDER_DRAIN_S);
    }
    long failures = s->failures;
    snprintf(why, len, "%s", s->why);
    s->http->close(s->conn);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->changed);
    free(s->url);
    free(s);
    return failures;
}
