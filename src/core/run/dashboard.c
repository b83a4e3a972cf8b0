/* dashboard.c -- k6's `-o web-dashboard`: the HTML report's page served
 * live while the test runs (see dashboard.h).
 *
 * Owns: its settings (K6_WEB_DASHBOARD_HOST, _PORT, _PERIOD, _EXPORT, and
 * the output's host=&port=&period=&export= parameters, which win), and one
 * server thread: GET / answers the page with the latest data built in, GET
 * /events keeps the connection as a server-sent event stream and gets an
 * "snapshot" event with each new data, and "stop" at the end. The engine's
 * watcher hands new data over under a mutex; the thread never blocks on a
 * client: one that cannot take an event whole is dropped (EventSource
 * reconnects by itself). VUs never wait for any of it. */
#include "dashboard.h"

#include <cJSON.h>
#include <errno.h>
#include <http_parser.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "buf.h"
#include "duration.h"
#include "listen.h"
#include "report.h"
#include "xmalloc.h"

#define MAX_CLIENTS 64
#define REQUEST_MS 1000

struct ll_dashboard {
    int fd;
    pthread_t thread;
    atomic_int stop;
    pthread_mutex_t mu;         /* guards data, text, version */
    cJSON *data;                /* the latest data, for GET / */
    char *text;                 /* the same as JSON, for the events */
    uint64_t version;
    int clients[MAX_CLIENTS];   /* event streams (the thread's) */
    int nclients;
    uint64_t sent;              /* the version the streams have */
};

static int is_true(const char *v) {
    return v && (!strcmp(v, "1") || !strcasecmp(v, "true") || !strcmp(v, "t"));
}

/* value of key in "a=1&b=2" (copied into out), or NULL. */
static const char *param(const char *params, const char *key, char *out, size_t len) {
    size_t kn = strlen(key);
    for (const char *p = params; p && *p;) {
        const char *amp = strchr(p, '&'), *end = amp ? amp : p + strlen(p);
        if ((size_t)(end - p) > kn && !strncmp(p, key, kn) && p[kn] == '=') {
            snprintf(out, len, "%.*s", (int)(end - p - (long)kn - 1), p + kn + 1);
            return out;
        }
        p = amp ? amp + 1 : end;
    }
    return NULL;
}

int ll_dashboard_read_settings(const ll_config *cfg, ll_dashboard_settings *s, char *err, size_t errlen) {
    memset(s, 0, sizeof(*s));
    const char *spec = NULL;
    for (int i = 0; i < cfg->noutputs; i++)
        if (!strncmp(cfg->outputs[i], "web-dashboard", 13) && (!cfg->outputs[i][13] || cfg->outputs[i][13] == '='))
            spec = cfg->outputs[i];
    if (!spec && !is_true(getenv("K6_WEB_DASHBOARD"))) return 0;
    s->on = 1;
    const char *params = spec && spec[13] == '=' ? spec + 14 : NULL;
    char buf[1024];
    const char *v = param(params, "host", buf, sizeof(buf));
    snprintf(s->host, sizeof(s->host), "%s", v ? v : getenv("K6_WEB_DASHBOARD_HOST") ? getenv("K6_WEB_DASHBOARD_HOST")
                                                                                     : "127.0.0.1");
    if (!strcmp(s->host, "localhost") || !s->host[0]) snprintf(s->host, sizeof(s->host), "127.0.0.1");
    v = param(params, "port", buf, sizeof(buf));
    if (!v) v = getenv("K6_WEB_DASHBOARD_PORT");
    char *end = NULL;
    long port = v ? strtol(v, &end, 10) : 5665;
    if (v && (!*v || *end || port < -1 || port > 65535)) {
        snprintf(err, errlen, "web-dashboard: port '%s' is not a port number (-1: no server, only the export)", v);
        return -1;
    }
    s->port = (int)port;
    v = param(params, "period", buf, sizeof(buf));
    if (!v) v = getenv("K6_WEB_DASHBOARD_PERIOD");
    uint64_t us = 10000000;
    if (v && (ll_duration_parse(v, &us) != 0 || us < 1000000)) {
        snprintf(err, errlen, "web-dashboard: period '%s' is not a duration of 1s or more, such as 10s", v);
        return -1;
    }
    s->period_us = us;
    v = param(params, "export", buf, sizeof(buf));
    if (!v) v = getenv("K6_WEB_DASHBOARD_EXPORT");
    snprintf(s->export_file, sizeof(s->export_file), "%s", v ? v : "");
    return 0;
}

/* ---- the server ---- */

static int send_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void respond(int fd, int code, const char *reason, const char *type, const char *body, size_t len) {
    char head[256];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nCache-Control: no-store\r\n"
                     "Connection: close\r\n\r\n",
                     code, reason, type, len);
    if (send_all(fd, head, (size_t)n) == 0) send_all(fd, body, len);
}

/* An event to a stream, whole or not at all: a client that cannot take it
 * now is dropped. */
static int send_event(int fd, const char *event, const char *data) {
    ll_buf b = {0};
    ll_buf_puts(&b, "event: ");
    ll_buf_puts(&b, event);
    ll_buf_puts(&b, "\ndata: ");
    ll_buf_puts(&b, data);
    ll_buf_puts(&b, "\n\n");
    ssize_t w = b.failed ? -1 : send(fd, b.p, b.len, MSG_DONTWAIT | MSG_NOSIGNAL);
    int ok = w == (ssize_t)b.len;
    ll_buf_free(&b);
    return ok ? 0 : -1;
}

static void drop_client(ll_dashboard *d, int i) {
    close(d->clients[i]);
    d->clients[i] = d->clients[--d->nclients];
}

static void serve_page(ll_dashboard *d, int fd) {
    char err[256];
    ll_buf page = {0};
    pthread_mutex_lock(&d->mu);
    int rc = ll_report_page(&page, d->data, err, sizeof(err));
    pthread_mutex_unlock(&d->mu);
    if (rc == 0) respond(fd, 200, "OK", "text/html; charset=utf-8", page.p, page.len);
    else respond(fd, 500, "Internal Server Error", "text/plain", err, strlen(err));
    ll_buf_free(&page);
}

static void serve_one(ll_dashboard *d, int fd) {
    ll_listen_req *r = ll_xmalloc(sizeof(*r));
    ll_listen_read(fd, REQUEST_MS, &d->stop, r);
    int keep = 0;
    if (!r->done) {
        respond(fd, 400, "Bad Request", "text/plain", "not an HTTP request\n", 20);
    } else if (r->method != HTTP_GET) {
        respond(fd, 405, "Method Not Allowed", "text/plain", "GET only\n", 9);
    } else if (!strcmp(r->url, "/") || !strcmp(r->url, "/index.html")) {
        serve_page(d, fd);
    } else if (!strcmp(r->url, "/events") && d->nclients < MAX_CLIENTS) {
        static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n"
                                   "Connection: keep-alive\r\n\r\n";
        pthread_mutex_lock(&d->mu);
        int ok = send_all(fd, head, sizeof(head) - 1) == 0 && (!d->text || send_event(fd, "snapshot", d->text) == 0);
        pthread_mutex_unlock(&d->mu);
        if (ok) {
            d->clients[d->nclients++] = fd;
            keep = 1;
        }
    } else {
        respond(fd, 404, "Not Found", "text/plain", "not found\n", 10);
    }
    free(r);
    if (!keep) close(fd);
}

/* New data to every stream. */
static void broadcast(ll_dashboard *d, const char *event) {
    pthread_mutex_lock(&d->mu);
    const char *text = d->text ? d->text : "{}";
    for (int i = d->nclients - 1; i >= 0; i--)
        if (send_event(d->clients[i], event, text) != 0) drop_client(d, i);
    d->sent = d->version;
    pthread_mutex_unlock(&d->mu);
}

static void *dashboard_main(void *ud) {
    ll_dashboard *d = ud;
    while (!atomic_load(&d->stop)) {
        struct pollfd pfd = {d->fd, POLLIN, 0};
        if (poll(&pfd, 1, 100) > 0) {
            int c = accept4(d->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (c >= 0) serve_one(d, c);
        }
        pthread_mutex_lock(&d->mu);
        int fresh = d->version != d->sent;
        pthread_mutex_unlock(&d->mu);
        if (fresh) broadcast(d, "snapshot");
    }
    broadcast(d, "snapshot");
    broadcast(d, "stop");
    while (d->nclients) drop_client(d, d->nclients - 1);
    return NULL;
}

ll_dashboard *ll_dashboard_start(const ll_dashboard_settings *s, char *err, size_t errlen) {
    char address[300];
    snprintf(address, sizeof(address), strchr(s->host, ':') ? "[%s]:%d" : "%s:%d", s->host, s->port);
    int fd = ll_listen_open(address, "127.0.0.1", "web-dashboard", err, errlen);
    if (fd < 0) return NULL;
    ll_dashboard *d = ll_xcalloc(1, sizeof(*d));
    d->fd = fd;
    pthread_mutex_init(&d->mu, NULL);
    if (pthread_create(&d->thread, NULL, dashboard_main, d) != 0) {
        snprintf(err, errlen, "web-dashboard: cannot start its thread");
        close(fd);
        pthread_mutex_destroy(&d->mu);
        free(d);
        return NULL;
    }
    return d;
}

void ll_dashboard_update(ll_dashboard *d, cJSON *data) {
    if (!d) {
        cJSON_Delete(data);
        return;
    }
    char *text = data ? cJSON_PrintUnformatted(data) : NULL;
    pthread_mutex_lock(&d->mu);
    cJSON_Delete(d->data);
    free(d->text);
    d->data = data;
    d->text = text;
    d->version++;
    pthread_mutex_unlock(&d->mu);
}

void ll_dashboard_stop(ll_dashboard *d) {
    if (!d) return;
    atomic_store(&d->stop, 1);
    pthread_join(d->thread, NULL);
    close(d->fd);
    cJSON_Delete(d->data);
    free(d->text);
    pthread_mutex_destroy(&d->mu);
    free(d);
}
