/* net_tls.c -- TLS connections of the native transports on OpenSSL (see
 * net.h): SNI, the host name check, session resumption from the client's
 * context, ALPN, and non-blocking handshake, read and write. */
#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tls_ctx.h"
#include "tls_ocsp.h"

static int is_ip(const char *host) {
    unsigned char b[16];
    return inet_pton(AF_INET, host, b) == 1 || inet_pton(AF_INET6, host, b) == 1;
}

int ll_net_tls_start(ll_net_conn *c, ll_tls_ctx *ctx, const char *verify_name, const char *session_key, int h2) {
    static const unsigned char both[] = "\x02h2\x08http/1.1", h1[] = "\x08http/1.1";
    SSL *ssl = SSL_new(ll_tls_ctx_ssl(ctx));
    if (!ssl) return -1;
    SSL_set_alpn_protos(ssl, h2 ? both : h1, h2 ? sizeof(both) - 1 : sizeof(h1) - 1);
    SSL_set_fd(ssl, c->fd);
    ll_tls_ocsp_request(ssl); /* k6 (Go) always asks for a stapled OCSP response */
    SSL_set_ex_data(ssl, ll_tls_ctx_host_index(), (void *)session_key);
    if (!is_ip(verify_name)) SSL_set_tlsext_host_name(ssl, verify_name);
    if (!ll_tls_ctx_insecure(ctx)) {
        SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        if (!SSL_set1_host(ssl, verify_name)) {
            SSL_free(ssl);
            return -1;
        }
    }
    SSL_SESSION *s = ll_tls_ctx_session(ctx, session_key);
    if (s) {
        SSL_set_session(ssl, s);
        SSL_SESSION_free(s);
    }
    SSL_set_connect_state(ssl);
    c->ssl = ssl;
    c->ops = &ll_net_tls;
    return 0;
}

/* The status of an SSL call that returned r <= 0. */
static ll_net_status ssl_status(ll_net_conn *c, int r, int reading) {
    SSL *ssl = c->ssl;
    int e = SSL_get_error(ssl, r);
    if (e == SSL_ERROR_WANT_READ) return LL_NET_WANT_READ;
    if (e == SSL_ERROR_WANT_WRITE) return LL_NET_WANT_WRITE;
    if ((e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && errno == 0)) && reading) {
        ERR_clear_error();
        return LL_NET_EOF;
    }
    c->os_errno = e == SSL_ERROR_SYSCALL ? errno : 0;
    unsigned long code = ERR_get_error();
    c->tls_reason = code ? ERR_GET_REASON(code) : 0;
    if (c->os_errno) snprintf(c->errbuf, sizeof(c->errbuf), "%s", strerror(c->os_errno));
    else if (code) ERR_error_string_n(code, c->errbuf, sizeof(c->errbuf));
    else snprintf(c->errbuf, sizeof(c->errbuf), "the TLS connection failed");
    ERR_clear_error();
    c->err = c->errbuf;
    return LL_NET_ERROR;
}

static ll_net_status tls_handshake(ll_net_conn *c) {
    SSL *ssl = c->ssl;
    ERR_clear_error();
    int r = SSL_connect(ssl);
    if (r == 1) {
        c->reused_session = SSL_session_reused(ssl);
        return LL_NET_OK;
    }
    ll_net_status st = ssl_status(c, r, 0);
    if (st != LL_NET_ERROR) return st;
    /* a failed verification, when there was one (with verification off, a
     * session offered for resumption still carries its old result) */
    long v = SSL_get_verify_result(ssl);
    if (v != X509_V_OK && SSL_get_verify_mode(ssl) != SSL_VERIFY_NONE) {
        c->tls_error = LL_TLS_ERR_VERIFY;
        snprintf(c->errbuf, sizeof(c->errbuf), "tls: failed to verify certificate: %s", X509_verify_cert_error_string(v));
    } else if (c->tls_reason == SSL_R_WRONG_VERSION_NUMBER || c->tls_reason == SSL_R_PACKET_LENGTH_TOO_LONG) {
        /* the server answered in something other than TLS (plain HTTP's
         * 400): Go's words, which k6 shows */
        c->tls_error = LL_TLS_ERR_HANDSHAKE;
        snprintf(c->errbuf, sizeof(c->errbuf), "tls: first record does not look like a TLS handshake");
    } else {
        c->tls_error = LL_TLS_ERR_HANDSHAKE;
        char why[sizeof(c->errbuf) - 32];
        snprintf(why, sizeof(why), "%.*s", (int)sizeof(why) - 1, c->errbuf);
        snprintf(c->errbuf, sizeof(c->errbuf), "tls: handshake failed: %s", why);
    }
    c->err = c->errbuf;
    return LL_NET_ERROR;
}

/* The error queue is emptied after every failure (ssl_status), so reads
 * and writes need not clear it first (SSL_get_error reads it). */
static ll_net_status tls_read(ll_net_conn *c, char *buf, size_t n, size_t *got) {
    int r = SSL_read(c->ssl, buf, n > 0x7fffffff ? 0x7fffffff : (int)n);
    *got = r > 0 ? (size_t)r : 0;
    return r > 0 ? LL_NET_OK : ssl_status(c, r, 1);
}

static ll_net_status tls_write(ll_net_conn *c, const char *buf, size_t n, size_t *wrote) {
    int r = SSL_write(c->ssl, buf, n > 0x7fffffff ? 0x7fffffff : (int)n);
    *wrote = r > 0 ? (size_t)r : 0;
    return r > 0 ? LL_NET_OK : ssl_status(c, r, 0);
}

static void tls_close(ll_net_conn *c) {
    /* a quiet shutdown sends no close_notify (the socket goes now) but
     * keeps the session resumable: freed without one, OpenSSL would mark
     * it bad */
    if (SSL_is_init_finished(c->ssl)) {
        SSL_set_quiet_shutdown(c->ssl, 1);
        SSL_shutdown(c->ssl);
    }
    SSL_free(c->ssl);
    c->ssl = NULL;
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
}

const char *ll_net_tls_version(const ll_net_conn *c) {
    if (!c->ssl) return "";
    int p = SSL_version(c->ssl);
    return p == TLS1_3_VERSION ? "tls1.3" : p == TLS1_2_VERSION ? "tls1.2" : p == TLS1_1_VERSION ? "tls1.1"
         : p == TLS1_VERSION ? "tls1.0" : "";
}

const char *ll_net_tls_cipher(const ll_net_conn *c) {
    const SSL_CIPHER *ci = c->ssl ? SSL_get_current_cipher(c->ssl) : NULL;
    const char *name = ci ? SSL_CIPHER_standard_name(ci) : NULL;
    return name ? name : "";
}

/* with read-ahead, records already read from the socket but not yet
 * decrypted count too */
int ll_net_pending(const ll_net_conn *c) { return c->ssl ? SSL_has_pending(c->ssl) : 0; }

int ll_net_alpn_h2(const ll_net_conn *c) {
    const unsigned char *p = NULL;
    unsigned int n = 0;
    if (c->ssl) SSL_get0_alpn_selected(c->ssl, &p, &n);
    return n == 2 && memcmp(p, "h2", 2) == 0;
}

const ll_net_ops ll_net_tls = {
    .handshake = tls_handshake,
    .read = tls_read,
    .write = tls_write,
    .close = tls_close,
};
