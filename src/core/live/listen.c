/* listen.c -- listening sockets and one-request reads for the run's small
 * HTTP servers (api.c, dashboard.c); http-parser reads the requests. */
#include "listen.h"

#include <errno.h>
#include <http_parser.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "addr.h"

static int parse_address(const char *s, const char *default_host, struct sockaddr_storage *ss, socklen_t *len) {
    const char *colon = strrchr(s, ':');
    char host[64];
    snprintf(host, sizeof(host), "%s", default_host);
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

int ll_listen_open(const char *address, const char *default_host, const char *what, char *err, size_t errlen) {
    struct sockaddr_storage addr;
    socklen_t addrlen;
    if (parse_address(address, default_host, &addr, &addrlen) != 0) {
        snprintf(err, errlen, "%s '%s': expected host:port with an IP address, e.g. 127.0.0.1:6565", what, address);
        return -1;
    }
    int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;
    if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (fd < 0 || bind(fd, (struct sockaddr *)&addr, addrlen) != 0 || listen(fd, 16) != 0) {
        snprintf(err, errlen, "%s %s: cannot listen: %s", what, address, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    return fd;
}

static int on_url(http_parser *p, const char *at, size_t n) {
    ll_listen_req *r = p->data;
    size_t have = strlen(r->url);
    if (have + n >= sizeof(r->url)) return 1;
    memcpy(r->url + have, at, n);
    r->url[have + n] = 0;
    return 0;
}

static int on_body(http_parser *p, const char *at, size_t n) {
    ll_listen_req *r = p->data;
    if (r->body_len + n >= sizeof(r->body)) return 1;
    memcpy(r->body + r->body_len, at, n);
    r->body_len += n;
    r->body[r->body_len] = 0;
    return 0;
}

static int on_complete(http_parser *p) {
    ll_listen_req *r = p->data;
    r->done = 1;
    r->method = (int)p->method;
    return 1; /* one request: stop here */
}

static const http_parser_settings SETTINGS = {.on_url = on_url, .on_body = on_body, .on_message_complete = on_complete};

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void ll_listen_read(int fd, int ms, atomic_int *stop, ll_listen_req *r) {
    memset(r, 0, sizeof(*r));
    http_parser p;
    http_parser_init(&p, HTTP_REQUEST);
    p.data = r;
    char buf[4096];
    long long deadline = now_ms() + ms;
    for (ssize_t got = 1; !r->done && got != 0 && !atomic_load(stop);) {
        long long left = deadline - now_ms();
        struct pollfd pfd = {fd, POLLIN, 0};
        if (left <= 0 || poll(&pfd, 1, (int)left) <= 0) break;
        got = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (got < 0 && errno != EAGAIN && errno != EINTR) break;
        if (got > 0 && http_parser_execute(&p, &SETTINGS, buf, (size_t)got) != (size_t)got && !r->done) break;
    }
}

int ll_listen_parse(const char *p, size_t n, ll_listen_req *r) {
    memset(r, 0, sizeof(*r));
    http_parser hp;
    http_parser_init(&hp, HTTP_REQUEST);
    hp.data = r;
    size_t used = http_parser_execute(&hp, &SETTINGS, p, n);
    if (r->done) return 1;
    return used == n && HTTP_PARSER_ERRNO(&hp) == HPE_OK ? 0 : -1;
}
