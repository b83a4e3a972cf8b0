/* api.c -- k6's REST status API (see api.h): a listening socket served by
 * one thread, one request per connection (http-parser reads it, cJSON its
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

#include "addr.h"
#include "xmalloc.h"

#define API_MAX_REQUEST 65536

struct ll_api {
    int fd;
    ll_run *run;
    pthread_t thread;
    atomic_int stop;
    atomic_int paused;
    atomic_int status;
    atomic_llong vus_max;
};

/* ---- one request ---- */

typedef struct api_req {
    char url[256];
    char body[API_MAX_REQUEST];
    size_t body_len;
    int done;
} api_req;

static int on_url(http_parser *p, const char *at, size_t n) {
    api_req *r = p->data;
    size_t have = strlen(r->url);
    if (have + n >= sizeof(r->url)) return 1;
    memcpy(r->url + have, at, n);
    r->url[have + n] = 0;
    return 0;
}

static int on_body(http_parser *p, const char *at, size_t n) {
    api_req *r = p->data;
    if (r->body_len + n >= sizeof(r->body)) return 1;
    memcpy(r->body + r->body_len, at, n);
    r->body_len += n;
    r->body[r->body_len] = 0;
    return 0;
}

static int on_complete(http_parser *p) {
    ((api_req *)p->data)->done = 1;
    return 0;
}

static const http_parser_settings SETTINGS = {.on_url = on_url, .on_body = on_body, .on_message_complete = on_complete};

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
             atomic_load(&a->run->marked_failed) ? "true" : "false");
    respond(fd, 200, "OK", json);
}

/* PATCH /v1/status: {"data":{"attributes":{"paused":false}}} resumes. */
static void patch_status(ll_api *a, int fd, const api_req *r) {
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

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void serve_one(ll_api *a, int fd) {
    api_req *r = ll_xcalloc(1, sizeof(*r));
    http_parser p;
    http_parser_init(&p, HTTP_REQUEST);
    p.data = r;
    char buf[4096];
    int64_t deadline = now_ms() + API_REQUEST_MS;
    for (ssize_t got = 1; !r->done && got != 0 && !atomic_load(&a->stop);) {
        int64_t left = deadline - now_ms();
        struct pollfd pfd = {fd, POLLIN, 0};
        if (left <= 0 || poll(&pfd, 1, (int)left) <= 0) break;
        got = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (got < 0 && errno != EAGAIN && errno != EINTR) break;
        if (got > 0 && http_parser_execute(&p, &SETTINGS, buf, (size_t)got) != (size_t)got) break;
    }
    if (!r->done) respond_error(fd, 400, "Bad Request", "not an HTTP request");
    else if (strcmp(r->url, "/v1/status") != 0) respond_error(fd, 404, "Not Found", "not found");
    else if (p.method == HTTP_GET) respond_status(a, fd);
    else if (p.method == HTTP_PATCH) patch_status(a, fd, r);
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

/* "host:port", "port" or ":port" (host 127.0.0.1), "[::1]:port" into ss;
 * 0 or -1. */
static int parse_address(const char *s, struct sockaddr_storage *ss, socklen_t *len) {
    const char *colon = strrchr(s, ':');
    char host[64] = "127.0.0.1";
    const char *port = colon ? colon + 1 : s;
    if (colon && colon > s) {
        if ((size_t)(colon - s) >= sizeof(host)) return -1;
        memcpy(host, s, (size_t)(colon - s));
        host[colon - s] = 0;
    }
    char *end;
    long p = strtol(port, &end, 10);
    if (!*port || *end || p < 0 || p > 65535) return -1;
    return ll_addr_parse(host, (uint16_t)p, ss, len);
}

ll_api *ll_api_start(const char *address, ll_run *run, int paused, char *err, size_t errlen) {
    struct sockaddr_storage addr;
    socklen_t addrlen;
    if (parse_address(address, &addr, &addrlen) != 0) {
        snprintf(err, errlen, "--address '%s': expected host:port with an IP address, e.g. 127.0.0.1:6565", address);
        return NULL;
    }
    int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;
    if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (fd < 0 || bind(fd, (struct sockaddr *)&addr, addrlen) != 0 || listen(fd, 16) != 0) {
        snprintf(err, errlen, "--address %s: cannot listen: %s", address, strerror(errno));
        if (fd >= 0) close(fd);
        return NULL;
    }
    ll_api *a = ll_xcalloc(1, sizeof(*a));
    a->fd = fd;
    a->run = run;
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
        if (atomic_load(&a->run->interrupt)) return -1;
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
