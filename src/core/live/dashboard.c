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
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>

#include "buf.h"
#include "duration.h"
#include "flags.h"
#include "listen.h"
#include "report.h"
#include "xmalloc.h"

#define MAX_CLIENTS 64
#define REQUEST_MS 1000

enum { CLIENT_REQUEST, CLIENT_ANSWER, CLIENT_STREAM }; /* reading its request; sending, then closing; events */

typedef struct client {
    int fd, kind;
    ll_buf in;                  /* the request so far */
    ll_buf out;                 /* what is left to send is out.p + off */
    size_t off;
    uint64_t version;           /* the data the stream has (or is getting) */
    long long deadline_ms;      /* for the request */
} client;

struct ll_dashboard {
    int fd, port;
    pthread_t thread;
    atomic_int stop;
    pthread_mutex_t mu;         /* guards data, text, version */
    cJSON *data;                /* the latest data, for GET / */
    char *text;                 /* the same as JSON, for the events */
    uint64_t version;
    client clients[MAX_CLIENTS]; /* the thread's */
    int nclients;
};

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

int ll_dashboard_read_settings(char *const *outputs, int noutputs, ll_dashboard_settings *s, char *err,
                               size_t errlen) {
    memset(s, 0, sizeof(*s));
    const char *spec = NULL;
    for (int i = 0; i < noutputs; i++)
        if (!strncmp(outputs[i], "web-dashboard", 13) && (!outputs[i][13] || outputs[i][13] == '='))
            spec = outputs[i];
    const char *env = getenv("K6_WEB_DASHBOARD");
    if (!spec && env && *env && ll_flag_bool(env) < 0) {
        snprintf(err, errlen, "K6_WEB_DASHBOARD: '%s' is not a boolean (true or false)", env);
        return -1;
    }
    if (!spec && ll_flag_bool(env) != 1) return 0;
    s->on = 1;
    const char *params = spec && spec[13] == '=' ? spec + 14 : NULL;
    char buf[1024];
    const char *v = param(params, "host", buf, sizeof(buf));
    snprintf(s->host, sizeof(s->host), "%s", v ? v : getenv("K6_WEB_DASHBOARD_HOST") ? getenv("K6_WEB_DASHBOARD_HOST")
                                                                                     : "127.0.0.1");
    if (!strcmp(s->host, "localhost") || !s->host[0]) snprintf(s->host, sizeof(s->host), "127.0.0.1");
    v = param(params, "port", buf, sizeof(buf));
    const char *from = "-o web-dashboard=port"; /* where a bad value came from, for the error */
    if (!v && (v = getenv("K6_WEB_DASHBOARD_PORT"))) from = "K6_WEB_DASHBOARD_PORT";
    char *end = NULL;
    errno = 0;
    long port = v ? strtol(v, &end, 10) : 5665;
    if (v && (!*v || *end || errno || port < -1 || port > 65535)) {
        snprintf(err, errlen, "%s: '%s' is not a port number from 0 to 65535 (-1: no server, only the export)", from,
                 v);
        return -1;
    }
    s->port = (int)port;
    v = param(params, "period", buf, sizeof(buf));
    from = "-o web-dashboard=period";
    if (!v && (v = getenv("K6_WEB_DASHBOARD_PERIOD"))) from = "K6_WEB_DASHBOARD_PERIOD";
    uint64_t us = 10000000;
    if (v && (ll_duration_parse(v, &us) != 0 || us < 1000000)) {
        snprintf(err, errlen, "%s: '%s' is not a duration of 1s or more, such as 10s", from, v);
        return -1;
    }
    s->period_us = us;
    v = param(params, "export", buf, sizeof(buf));
    if (!v) v = getenv("K6_WEB_DASHBOARD_EXPORT");
    snprintf(s->export_file, sizeof(s->export_file), "%s", v ? v : "");
    return 0;
}

/* ---- the server: one poll loop, no send that blocks ---- */

#define REQUEST_MAX 16384

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void answer(client *c, int code, const char *reason, const char *type, const char *body, size_t len) {
    char head[256];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nCache-Control: no-store\r\n"
                     "%sConnection: close\r\n\r\n",
                     code, reason, type, len, code == 503 ? "Retry-After: 5\r\n" : "");
    ll_buf_append(&c->out, head, (size_t)n);
    ll_buf_append(&c->out, body, len);
    c->kind = CLIENT_ANSWER;
}

static void add_event(ll_buf *b, const char *event, const char *data) {
    ll_buf_puts(b, "event: ");
    ll_buf_puts(b, event);
    ll_buf_puts(b, "\ndata: ");
    ll_buf_puts(b, data);
    ll_buf_puts(b, "\n\n");
}

static void drop(ll_dashboard *d, int i) {
    client *c = &d->clients[i];
    close(c->fd);
    ll_buf_free(&c->in);
    ll_buf_free(&c->out);
    d->clients[i] = d->clients[--d->nclients];
}

/* A whole request came: what to send back. */
static void route(ll_dashboard *d, client *c, const ll_listen_req *r) {
    char err[256];
    if (r->method != HTTP_GET) {
        answer(c, 405, "Method Not Allowed", "text/plain", "GET only\n", 9);
    } else if (!strcmp(r->url, "/") || !strcmp(r->url, "/index.html")) {
        ll_buf page = {0};
        pthread_mutex_lock(&d->mu);
        int rc = ll_report_page(&page, d->data, err, sizeof(err));
        pthread_mutex_unlock(&d->mu);
        if (rc == 0) answer(c, 200, "OK", "text/html; charset=utf-8", page.p, page.len);
        else answer(c, 500, "Internal Server Error", "text/plain", err, strlen(err));
        ll_buf_free(&page);
    } else if (!strcmp(r->url, "/events")) {
        ll_buf_puts(&c->out, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n"
                             "Connection: keep-alive\r\n\r\n");
        c->kind = CLIENT_STREAM;
        c->version = 0; /* the current data follows at once */
    } else {
        answer(c, 404, "Not Found", "text/plain", "not found\n", 10);
    }
}

/* Sends what c has pending, as far as its socket takes it now. 0, or -1
 * when c is done with (closed or failed). */
static int flush_client(client *c) {
    while (c->off < c->out.len) {
        ssize_t w = send(c->fd, c->out.p + c->off, c->out.len - c->off, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
        if (w <= 0) return -1;
        c->off += (size_t)w;
    }
    c->out.len = c->off = 0;
    return c->kind == CLIENT_ANSWER ? -1 : 0;
}

/* Reads what c sent: the request, or (a stream) nothing but its close. */
static int read_client(ll_dashboard *d, client *c) {
    char buf[4096];
    ssize_t got = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) return -1;
    if (got < 0 || c->kind != CLIENT_REQUEST) return 0;
    if (c->in.len + (size_t)got > REQUEST_MAX || ll_buf_append(&c->in, buf, (size_t)got) < 0) return -1;
    ll_listen_req *r = ll_xmalloc(sizeof(*r));
    int whole = ll_listen_parse(c->in.p, c->in.len, r);
    if (whole > 0) route(d, c, r);
    else if (whole < 0) answer(c, 400, "Bad Request", "text/plain", "not an HTTP request\n", 20);
    free(r);
    return 0;
}

/* Streams that have sent what they had get the newest data (a stream
 * still busy with an older one skips to the newest when it is done:
 * every snapshot is whole). */
static void refresh_streams(ll_dashboard *d, const char *last_event) {
    pthread_mutex_lock(&d->mu);
    for (int i = 0; i < d->nclients; i++) {
        client *c = &d->clients[i];
        if (c->kind != CLIENT_STREAM || c->out.len || (c->version == d->version && !last_event)) continue;
        add_event(&c->out, "snapshot", d->text ? d->text : "{}");
        if (last_event) add_event(&c->out, last_event, "{}");
        c->version = d->version;
    }
    pthread_mutex_unlock(&d->mu);
}

static void accept_clients(ll_dashboard *d) {
    for (;;) {
        int fd = accept4(d->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE) usleep(100000); /* no fd now: do not spin */
            return;
        }
        if (d->nclients == MAX_CLIENTS) { /* busy: said once, as far as the socket takes it */
            static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\nContent-Length: 0\r\n"
                                       "Connection: close\r\n\r\n";
            ssize_t w = send(fd, busy, sizeof(busy) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
            (void)w;
            close(fd);
            continue;
        }
        client *c = &d->clients[d->nclients++];
        memset(c, 0, sizeof(*c));
        c->fd = fd;
        c->kind = CLIENT_REQUEST;
        c->deadline_ms = now_ms() + REQUEST_MS;
    }
}

static void *dashboard_main(void *ud) {
    ll_dashboard *d = ud;
    struct pollfd pfd[MAX_CLIENTS + 1];
    long long stop_by = 0;
    for (;;) {
        int stopping = atomic_load(&d->stop);
        if (stopping && !stop_by) {
            refresh_streams(d, "stop"); /* the last data, then the end of every stream */
            stop_by = now_ms() + 1000;
            for (int i = d->nclients - 1; i >= 0; i--)
                if (d->clients[i].kind == CLIENT_STREAM) d->clients[i].kind = CLIENT_ANSWER;
                else drop(d, i);
        }
        if (stopping && (d->nclients == 0 || now_ms() >= stop_by)) break;
        if (!stopping) refresh_streams(d, NULL);
        int n = 0;
        pfd[n++] = (struct pollfd){stopping ? -1 : d->fd, POLLIN, 0};
        for (int i = 0; i < d->nclients; i++)
            pfd[n++] = (struct pollfd){d->clients[i].fd, (short)(POLLIN | (d->clients[i].out.len ? POLLOUT : 0)), 0};
        if (poll(pfd, (nfds_t)n, 100) < 0 && errno != EINTR) break;
        if (pfd[0].revents & POLLIN) accept_clients(d);
        long long now = now_ms();
        for (int i = d->nclients - 1; i >= 0; i--) {
            client *c = &d->clients[i];
            short ev = i + 1 < n ? pfd[i + 1].revents : 0;
            int gone = (ev & POLLIN) && read_client(d, c) != 0;
            if (!gone && (ev & (POLLERR | POLLHUP))) gone = 1;
            if (!gone && c->out.len) gone = flush_client(c) != 0;
            if (!gone && c->kind == CLIENT_REQUEST && now >= c->deadline_ms) gone = 1; /* no request: no answer */
            if (gone) drop(d, i);
        }
    }
    while (d->nclients) drop(d, d->nclients - 1);
    return NULL;
}

ll_dashboard *ll_dashboard_start(const ll_dashboard_settings *s, char *err, size_t errlen) {
    char address[300];
    snprintf(address, sizeof(address), strchr(s->host, ':') ? "[%s]:%d" : "%s:%d", s->host, s->port);
    int fd = ll_listen_open(address, "127.0.0.1", "web-dashboard", err, errlen);
    if (fd < 0) return NULL;
    ll_dashboard *d = ll_xcalloc(1, sizeof(*d));
    d->fd = fd;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    d->port = s->port;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
        d->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                 : ((struct sockaddr_in *)&ss)->sin_port);
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

int ll_dashboard_port(const ll_dashboard *d) { return d ? d->port : -1; }

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
