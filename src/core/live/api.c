/* api.c -- k6's REST status API (see api.h): a listening socket served by
 * one thread, one request per connection (listen.c reads it, cJSON its
 * body), answered in k6's JSON:API shape and closed. */
#include "api.h"

#include <cJSON.h>
#include <errno.h>
#include <http_parser.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "listen.h"
#include "xmalloc.h"


struct ll_api {
    int fd;
    const atomic_int *interrupt; /* the run's: a signal came */
    const atomic_int *marked_failed; /* the run's: test.fail() was called */
    pthread_t thread;
    atomic_int stop;
    atomic_int paused;
    atomic_int status;
    atomic_llong vus_max;
};

/* ---- one request ---- */

static void respond(int fd, int code, const char *reason, const char *json) {
    char head[256];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d %s\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n",
                     code, reason, strlen(json));
    if (send(fd, head, (size_t)n, MSG_NOSIGNAL) == n) (void)send(fd, json, strlen(json), MSG_NOSIGNAL);
}

/* k6's error document: {"errors":[{"status":"404","title":"..."}]} */
static void respond_error(int fd, int code, const char *reason, const char *title) {
    char json[512];
    snprintf(json, sizeof(json), "{\"errors\":[{\"status\":\"%d\",\"title\":\"%s\"}]}", code, title);
    respond(fd, code, reason, json);
}

static void respond_status(ll_api *a, int fd) {
    int status = atomic_load(&a->status), paused = atomic_load(&a->paused);
    int running = status == LL_API_STATUS_RUNNING || status == LL_API_STATUS_SETUP ||
                  status == LL_API_STATUS_TEARDOWN;
    long long max = atomic_load(&a->vus_max);
    char json[512];
    snprintf(json, sizeof(json),
             "{\"data\":{\"type\":\"status\",\"id\":\"default\",\"attributes\":{\"status\":%d,\"paused\":%s,"
             "\"vus\":%lld,\"vus-max\":%lld,\"stopped\":%s,\"running\":%s,\"tainted\":%s}}}",
             status, paused ? "true" : "false", running ? max : 0, max,
             status >= LL_API_STATUS_ENDED ? "true" : "false", running ? "true" : "false",
             atomic_load(a->marked_failed) ? "true" : "false");
    respond(fd, 200, "OK", json);
}

/* PATCH /v1/status: {"data":{"attributes":{"paused":false}}} resumes. */
static void patch_status(ll_api *a, int fd, const ll_listen_req *r) {
    cJSON *doc = cJSON_Parse(r->body);
    const cJSON *attrs = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "data"), "attributes");
    const cJSON *paused = cJSON_GetObjectItem(attrs, "paused");
    if (!doc || !cJSON_IsObject(attrs)) {
        cJSON_Delete(doc);
        respond_error(fd, 400, "Bad Request", "expected {\\\"data\\\":{\\\"attributes\\\":{\\\"paused\\\":false}}}");
        return;
    }
    if (cJSON_IsTrue(paused) && !atomic_load(&a->paused)) {
        cJSON_Delete(doc);
        respond_error(fd, 400, "Bad Request", "pausing a test that runs is not supported");
        return;
    }
    if (cJSON_IsFalse(paused)) atomic_store(&a->paused, 0);
    cJSON_Delete(doc);
    respond_status(a, fd);
}

/* the most a client may take to send its request: one that stalls or
 * trickles does not hold the API (nor the run's exit, which joins it) */
#define API_REQUEST_MS 1000


static void serve_one(ll_api *a, int fd) {
    ll_listen_req *r = ll_xmalloc(sizeof(*r));
    ll_listen_read(fd, API_REQUEST_MS, &a->stop, r);
    if (!r->done) respond_error(fd, 400, "Bad Request", "not an HTTP request");
    else if (strcmp(r->url, "/v1/status") != 0) respond_error(fd, 404, "Not Found", "not found");
    else if (r->method == HTTP_GET) respond_status(a, fd);
    else if (r->method == HTTP_PATCH) patch_status(a, fd, r);
    else respond_error(fd, 405, "Method Not Allowed", "GET or PATCH");
    free(r);
    close(fd);
}

static void *api_main(void *ud) {
    ll_api *a = ud;
    while (!atomic_load(&a->stop)) {
        struct pollfd pfd = {a->fd, POLLIN, 0};
        if (poll(&pfd, 1, 100) <= 0) continue;
        int c = accept4(a->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c >= 0) serve_one(a, c);
    }
    return NULL;
}

/* ---- the server ---- */

ll_api *ll_api_start(const char *address, const atomic_int *interrupt, const atomic_int *marked_failed, int paused,
                     char *err, size_t errlen) {
    int fd = ll_listen_open(address, "127.0.0.1", "--address", err, errlen);
    if (fd < 0) return NULL;
    ll_api *a = ll_xcalloc(1, sizeof(*a));
    a->fd = fd;
    a->interrupt = interrupt;
    a->marked_failed = marked_failed;
    atomic_store(&a->paused, paused);
    atomic_store(&a->status, paused ? LL_API_STATUS_PAUSED_BEFORE_RUN : LL_API_STATUS_INIT_DONE);
    if (pthread_create(&a->thread, NULL, api_main, a) != 0) {
        snprintf(err, errlen, "--address %s: cannot start the API thread", address);
        close(fd);
        free(a);
        return NULL;
    }
    return a;
}

int ll_api_wait_resume(ll_api *a) {
    while (atomic_load(&a->paused)) {
        if (atomic_load(a->interrupt)) return -1;
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

void ll_api_set_status(ll_api *a, int status) {
    if (a) atomic_store(&a->status, status);
}

void ll_api_set_vus_max(ll_api *a, long long vus) {
    if (a) atomic_store(&a->vus_max, vus);
}

void ll_api_stop(ll_api *a) {
    if (!a) return;
    atomic_store(&a->stop, 1);
    pthread_join(a->thread, NULL);
    close(a->fd);
    free(a);
}
