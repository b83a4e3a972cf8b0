/* tls_ctx.h -- the OpenSSL client context of one http.Client for the native
 * transports: trust (the system's CAs, or tls.ca), verification on or off,
 * the client certificate and key (mTLS), the TLS versions and cipher
 * suites allowed, and a cache of the last
 * session per host and port so a new connection resumes instead of a full
 * handshake. */
#ifndef LL_TLS_CTX_H
#define LL_TLS_CTX_H

#include <stddef.h>

#include "transport.h"

typedef struct ll_tls_ctx ll_tls_ctx;

/* A context for the client options o (each connection says which ALPN
 * protocols it offers). NULL with a message in err (a CA file,
 * certificate or key that cannot be read, a cipher list OpenSSL
 * rejects). */
ll_tls_ctx *ll_tls_ctx_new(const ll_client_opts *o, char *err, size_t errlen);
void ll_tls_ctx_free(ll_tls_ctx *t);
/* 1 when name, an IANA cipher suite name ("TLS_AES_128_GCM_SHA256",
 * "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"), is one OpenSSL has; 0 when not
 * (k6 takes such a list and negotiates one it has: the caller warns and
 * leaves the unknown ones out). */
int ll_tls_ctx_cipher_known(const char *name);
/* The OpenSSL SSL_CTX (SSL_CTX *) */
void *ll_tls_ctx_ssl(ll_tls_ctx *t);
/* 1 when the certificate is not checked (insecure_skip_verify) */
int ll_tls_ctx_insecure(const ll_tls_ctx *t);
/* The session to resume under key ("host:port"; SSL_SESSION *, a
 * reference for the caller), or NULL. */
void *ll_tls_ctx_session(ll_tls_ctx *t, const char *key);
/* The SSL ex_data slot where a connection keeps the host (a string that
 * outlives it) whose session it caches. */
int ll_tls_ctx_host_index(void);

#endif
