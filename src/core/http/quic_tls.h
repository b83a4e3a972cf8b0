/* quic_tls.h -- the TLS of an http.Client's QUIC connections, on GnuTLS
 * (ngtcp2's crypto helper for it; Debian 12's OpenSSL 3.0 has no QUIC
 * API): the client's credentials (CA, client certificate and key) made
 * once per Client and worker, and a client session per connection that
 * offers ALPN h3, sends SNI and verifies the server's certificate against
 * the name, as the TCP transports' TLS does; and, like tls_ctx.c's cache,
 * the last session ticket of each host, which its next connection resumes. */
#ifndef LL_QUIC_TLS_H
#define LL_QUIC_TLS_H

#include <stddef.h>
#include <stdint.h>

#include "transport.h"

typedef struct ll_quic_tls ll_quic_tls;

/* The most bytes of a server's transport parameters kept for 0-RTT. */
#define LL_QUIC_TP_MAX 256

/* The credentials of o's TLS fields (ca, certificate, private_key,
 * insecure_skip_verify). NULL with err. */
ll_quic_tls *ll_quic_tls_new(const ll_client_opts *o, char *err, size_t errlen);
void ll_quic_tls_free(ll_quic_tls *t);
/* A gnutls_session_t for a connection to name (SNI unless name is an IP
 * address; the certificate must carry it unless verification is off),
 * configured for QUIC, resuming the session kept under key ("name:port")
 * when there is one. With early, and a session kept with the server's
 * transport parameters, early data is enabled and the parameters are
 * copied to tp (LL_QUIC_TP_MAX bytes) with *tplen; else *tplen is 0.
 * NULL with err. */
void *ll_quic_tls_session(ll_quic_tls *t, const char *name, const char *key, int early, uint8_t *tp, size_t *tplen,
                          char *err, size_t errlen);
/* Keeps session's ticket (a gnutls_session_t that just received one)
 * under key, for the next connection to that host, with the server's
 * transport parameters (tp, tplen; NULL: none) for a 0-RTT there. */
void ll_quic_tls_keep(ll_quic_tls *t, const char *key, void *session, const uint8_t *tp, size_t tplen);

#endif
