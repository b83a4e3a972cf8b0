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
    long failures;
    char why[200];
};

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
        pthread_mutex_unlock(&s->mu);
        char why[200] = "";
        long status = s->http->post(s->conn, &s->to, body.p, body.len, why, sizeof(why));
        ll_buf_free(&body);
        pthread_mutex_lock(&s->mu);
        if (status / 100 != 2) {
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

int ll_sender_post(ll_sender *s, ll_buf *body, int wait) {
    if (!body->len) return 0;
    pthread_mutex_lock(&s->mu);
    while (wait && s->n >= LL_SENDER_QUEUE) pthread_cond_wait(&s->changed, &s->mu);
    int queued = s->n < LL_SENDER_QUEUE;
    if (queued) enqueue(s, body);
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
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline); /* pthread_cond_timedwait's clock */
    deadline.tv_sec += LL_SENDER_DRAIN_S;
    pthread_mutex_lock(&s->mu);
    if (last->len) enqueue(s, last);
    s->stop = 1;
    pthread_cond_broadcast(&s->changed);
    while (s->n && pthread_cond_timedwait(&s->changed, &s->mu, &deadline) != ETIMEDOUT) continue;
    if (s->n) { /* a target this slow: what waits is given up */
        s->failures += s->n;
        snprintf(s->why, sizeof(s->why), "%d batch(es) still queued %d s after the run were not sent", s->n,
                 LL_SENDER_DRAIN_S);
        for (; s->n; s->n--, s->head = (s->head + 1) % (LL_SENDER_QUEUE + 1)) ll_buf_free(&s->queue[s->head]);
    }
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->thread, NULL);
    long failures = s->failures;
    snprintf(why, len, "%s", s->why);
    s->http->close(s->conn);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->changed);
    free(s->url);
    free(s);
    return failures;
}
