/* net.h -- a client connection of the native transports as a table of
 * operations (wrk's net.h): plain TCP (net.c) and TLS on OpenSSL
 * (net_tls.c) answer the same calls, non-blocking, and say which readiness
 * they wait for. The transport above them never sees a socket option or an
 * SSL call. */
#ifndef LL_NET_H
#define LL_NET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

typedef enum {
    LL_NET_OK,        /* done (a handshake), or some bytes moved */
    LL_NET_WANT_READ, /* call again once readable */
    LL_NET_WANT_WRITE,/* call again once writable */
    LL_NET_EOF,       /* the peer closed the connection (reads only) */
    LL_NET_ERROR      /* see ll_net_conn.err / ll_net_conn.os_errno */
} ll_net_status;

typedef struct ll_tls_ctx ll_tls_ctx;
typedef struct ll_net_conn ll_net_conn;

typedef struct ll_net_ops {
    /* Finishes what connecting needs after the TCP connect (the TLS handshake). */
    ll_net_status (*handshake)(ll_net_conn *c);
    ll_net_status (*read)(ll_net_conn *c, char *buf, size_t n, size_t *got);
    ll_net_status (*write)(ll_net_conn *c, const char *buf, size_t n, size_t *wrote);
    void (*close)(ll_net_conn *c);
} ll_net_ops;

/* TLS errors as k6 tells them apart */
#define LL_TLS_ERR_HANDSHAKE 1 /* 1300 */
#define LL_TLS_ERR_VERIFY 2    /* 1310: the certificate is not trusted or not the host's */

struct ll_net_conn {
    const ll_net_ops *ops;
    int fd;                 /* -1: closed */
    void *ssl;              /* SSL *, TLS connections only */
    int os_errno;           /* of the failed call */
    int tls_error;          /* LL_TLS_ERR_* of a failed handshake */
    int tls_reason;         /* OpenSSL's reason code of the last failure, 0: none */
    int reused_session;     /* the handshake resumed a TLS session */
    const char *err;        /* static description of the failure */
    char errbuf[200];       /* or a formatted one, err pointing here */
};

/* Starts a non-blocking TCP connection to addr (TCP_NODELAY set), from
 * the source address local when local_len > 0 (its port chosen at connect
 * time, so that one source address reaches many destinations). Returns 0
 * with c->fd open (the connect may still be in progress: wait until
 * writable, then ll_net_connected), or -1 (c->os_errno, c->err). */
int ll_net_open(ll_net_conn *c, const struct sockaddr *addr, socklen_t len, const struct sockaddr *local,
                socklen_t local_len);
/* How many sockets ll_net_open could not make for want of descriptors
 * (EMFILE, ENFILE), in the whole process so far. */
int64_t ll_net_fd_refusals(void);
/* After the socket became writable: 0 when the TCP connection is up, -1
 * when it failed (c->os_errno: ECONNREFUSED, ETIMEDOUT, ...). */
int ll_net_connected(ll_net_conn *c);
/* Makes c a TLS connection of ctx to verify_name (SNI unless it is an IP
 * address; the certificate must carry it unless the context skips
 * verification), offering ALPN "h2" before "http/1.1" when h2, resuming
 * the session cached under session_key ("host:port", a string that
 * outlives c). Returns 0, or -1 when out of memory. */
int ll_net_tls_start(ll_net_conn *c, ll_tls_ctx *ctx, const char *verify_name, const char *session_key, int h2);
/* The negotiated TLS version ("tls1.3", ...; k6's names) and cipher suite
 * (IANA name); "" on a plain connection. */
const char *ll_net_tls_version(const ll_net_conn *c);
const char *ll_net_tls_cipher(const ll_net_conn *c);
/* 1 when a TLS connection holds bytes read from the socket that it has
 * not handed out yet (decrypted or not). */
int ll_net_pending(const ll_net_conn *c);
/* 1 when ALPN chose "h2" */
int ll_net_alpn_h2(const ll_net_conn *c);

extern const ll_net_ops ll_net_plain, ll_net_tls;

#endif
