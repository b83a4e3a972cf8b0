/* net.c -- plain TCP connections of the native transports (see net.h):
 * non-blocking connect, read and write straight on the socket. */
#include "net.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int fail(ll_net_conn *c, int e, const char *what) {
    c->os_errno = e;
    c->err = what;
    return -1;
}

static _Atomic int64_t no_fd; /* sockets refused for want of descriptors */

int64_t ll_net_fd_refusals(void) { return atomic_load_explicit(&no_fd, memory_order_relaxed); }

int ll_net_open(ll_net_conn *c, const struct sockaddr *addr, socklen_t len, const struct sockaddr *local,
                socklen_t local_len) {
    memset(c, 0, sizeof(*c));
    c->ops = &ll_net_plain;
    c->fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
    if (c->fd < 0 && (errno == EMFILE || errno == ENFILE)) {
        atomic_fetch_add_explicit(&no_fd, 1, memory_order_relaxed);
        return fail(c, errno, errno == EMFILE ? "cannot make a socket: too many open files"
                                              : "cannot make a socket: too many open files in the system");
    }
    if (c->fd < 0) return fail(c, errno, "cannot make a socket");
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (local_len > 0) {
        /* the port comes with connect(), per destination: a bind() alone would
         * take one of the ~28k ephemeral ports for good */
        setsockopt(c->fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
        if (bind(c->fd, local, local_len) < 0) {
            int e = errno;
            close(c->fd);
            c->fd = -1;
            snprintf(c->errbuf, sizeof(c->errbuf), "bind to the local address: %s", strerror(e));
            return fail(c, e, c->errbuf);
        }
    }
    if (connect(c->fd, addr, len) == 0 || errno == EINPROGRESS) return 0;
    int e = errno;
    close(c->fd);
    c->fd = -1;
    return fail(c, e, strerror(e));
}

int ll_net_connected(ll_net_conn *c) {
    int e = 0;
    socklen_t n = sizeof(e);
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &n) < 0) e = errno;
    return e ? fail(c, e, strerror(e)) : 0;
}

static ll_net_status plain_handshake(ll_net_conn *c) {
    (void)c;
    return LL_NET_OK;
}

static ll_net_status plain_read(ll_net_conn *c, char *buf, size_t n, size_t *got) {
    ssize_t r = recv(c->fd, buf, n, 0);
    *got = r > 0 ? (size_t)r : 0;
    if (r > 0) return LL_NET_OK;
    if (r == 0) return LL_NET_EOF;
    if (errno == EAGAIN || errno == EINTR) return LL_NET_WANT_READ;
    fail(c, errno, strerror(errno));
    return LL_NET_ERROR;
}

static ll_net_status plain_write(ll_net_conn *c, const char *buf, size_t n, size_t *wrote) {
    ssize_t r = send(c->fd, buf, n, MSG_NOSIGNAL);
    *wrote = r > 0 ? (size_t)r : 0;
    if (r >= 0) return LL_NET_OK;
    if (errno == EAGAIN || errno == EINTR) return LL_NET_WANT_WRITE;
    fail(c, errno, strerror(errno));
    return LL_NET_ERROR;
}

static void plain_close(ll_net_conn *c) {
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
}

const ll_net_ops ll_net_plain = {
    .handshake = plain_handshake,
    .read = plain_read,
    .write = plain_write,
    .close = plain_close,
};
