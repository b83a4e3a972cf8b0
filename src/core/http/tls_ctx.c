/* tls_ctx.c -- an http.Client's OpenSSL client context (see tls_ctx.h).
 * The session cache keeps one session per host, in the context's own
 * list: OpenSSL hands new sessions to on_new_session (TLS 1.3 sends them
 * after the handshake), and a new connection to that host resumes it. */
#include "tls_ctx.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TLS_SESSIONS_MAX 16

typedef struct tls_session {
    char *host;
    SSL_SESSION *sess;
} tls_session;

struct ll_tls_ctx {
    SSL_CTX *ctx;
    int insecure;
    tls_session sessions[TLS_SESSIONS_MAX];
    int nsessions;
};

static int ex_index = -1; /* an SSL's ex_data slot: the host it resumes for */
static int ctx_index = -1; /* an SSL_CTX's: its ll_tls_ctx */

static void indexes(void) {
    ex_index = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
    ctx_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, NULL);
}

static int on_new_session(SSL *ssl, SSL_SESSION *sess) {
    ll_tls_ctx *t = SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), ctx_index);
    const char *host = SSL_get_ex_data(ssl, ex_index);
    if (!t || !host) return 0;
    for (int i = 0; i < t->nsessions; i++) {
        if (strcmp(t->sessions[i].host, host) != 0) continue;
        SSL_SESSION_free(t->sessions[i].sess);
        t->sessions[i].sess = sess;
        return 1; /* the reference is ours now */
    }
    if (t->nsessions == TLS_SESSIONS_MAX) return 0;
    char *h = strdup(host);
    if (!h) return 0;
    t->sessions[t->nsessions].host = h;
    t->sessions[t->nsessions++].sess = sess;
    return 1;
}

void *ll_tls_ctx_session(ll_tls_ctx *t, const char *host) {
    for (int i = 0; i < t->nsessions; i++) {
        if (strcmp(t->sessions[i].host, host) != 0) continue;
        SSL_SESSION *s = t->sessions[i].sess;
        if (!SSL_SESSION_is_resumable(s)) return NULL;
        SSL_SESSION_up_ref(s);
        return s;
    }
    return NULL;
}

static int proto_version(int v) {
    return v == 13 ? TLS1_3_VERSION : v == 12 ? TLS1_2_VERSION : v == 11 ? TLS1_1_VERSION : v == 10 ? TLS1_VERSION : 0;
}

int ll_tls_ctx_cipher_known(const char *name) {
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    SSL *ssl = NULL;
    int found = 0;
    /* every suite the library has, whatever its defaults enable */
    if (ctx && SSL_CTX_set_cipher_list(ctx, "ALL:COMPLEMENTOFALL:@SECLEVEL=0")) ssl = SSL_new(ctx);
    STACK_OF(SSL_CIPHER) *all = ssl ? SSL_get_ciphers(ssl) : NULL;
    for (int i = 0; all && !found && i < sk_SSL_CIPHER_num(all); i++) {
        const char *std = SSL_CIPHER_standard_name(sk_SSL_CIPHER_value(all, i));
        found = std && strcmp(std, name) == 0;
    }
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    ERR_clear_error();
    return found;
}

/* k6's tlsCipherSuites are IANA names: TLS 1.3 suites go to the 1.3 list,
 * the others are translated to OpenSSL's names, the ones OpenSSL lacks are
 * left out (the Lua side warned of them); a list that is not IANA names
 * goes to OpenSSL as it is. */
static int set_ciphers(SSL_CTX *ctx, const char *list) {
    if (strncmp(list, "TLS_", 4) != 0) return SSL_CTX_set_cipher_list(ctx, list);
    char v12[2048] = "", v13[1024] = "";
    char name[128];
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ":");
        if (len >= sizeof(name)) return 0;
        memcpy(name, p, len);
        name[len] = 0;
        p += len + (p[len] == ':');
        int is13 = strstr(name, "_WITH_") == NULL;
        const char *ossl = is13 ? name : OPENSSL_cipher_name(name);
        if (!ossl || strcmp(ossl, "(NONE)") == 0) continue; /* the list was filtered at init (ll_tls_ctx_cipher_known) */
        char *dst = is13 ? v13 : v12;
        size_t cap = is13 ? sizeof(v13) : sizeof(v12), used = strlen(dst);
        if ((size_t)snprintf(dst + used, cap - used, "%s%s", used ? ":" : "", ossl) >= cap - used) return 0;
    }
    if (v13[0] && !SSL_CTX_set_ciphersuites(ctx, v13)) return 0;
    return !v12[0] || SSL_CTX_set_cipher_list(ctx, v12);
}

static void ssl_error(char *err, size_t errlen, const char *what, const char *path) {
    unsigned long e = ERR_get_error();
    char reason[160];
    ERR_error_string_n(e, reason, sizeof(reason));
    snprintf(err, errlen, "%s%s%s: %s", what, path ? " " : "", path ? path : "", e ? reason : "rejected");
    ERR_clear_error();
}

ll_tls_ctx *ll_tls_ctx_new(const ll_client_opts *o, char *err, size_t errlen) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, indexes);
    ll_tls_ctx *t = calloc(1, sizeof(*t));
    SSL_CTX *ctx = t ? SSL_CTX_new(TLS_client_method()) : NULL;
    if (!ctx) {
        free(t);
        snprintf(err, errlen, "out of memory making a TLS context");
        return NULL;
    }
    t->ctx = ctx;
    t->insecure = o->insecure_skip_verify;
    SSL_CTX_set_ex_data(ctx, ctx_index, t);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
    /* one read(2) takes every record the socket has (without it OpenSSL
     * reads each record's header and body apart: two calls per record) */
    SSL_CTX_set_read_ahead(ctx, 1);
    SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF); /* many servers close without close_notify */
    SSL_CTX_set_verify(ctx, o->insecure_skip_verify ? SSL_VERIFY_NONE : SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(ctx, on_new_session);
    if (o->tls_min) SSL_CTX_set_min_proto_version(ctx, proto_version(o->tls_min));
    if (o->tls_max) SSL_CTX_set_max_proto_version(ctx, proto_version(o->tls_max));
    if (o->tls_min && o->tls_min < 12) SSL_CTX_set_security_level(ctx, 0); /* TLS 1.0/1.1 need SHA-1 */
    /* the system's CA bundle only when something verifies against it:
     * reading it is ~250M instructions, a tenth of a second per context */
    int load_system = !o->ca && !o->insecure_skip_verify;
    if (o->ca ? !SSL_CTX_load_verify_locations(ctx, o->ca, NULL) : load_system && !SSL_CTX_set_default_verify_paths(ctx)) {
        ssl_error(err, errlen, "cannot read the CA file", o->ca);
        goto fail;
    }
    if (o->certificate && !SSL_CTX_use_certificate_chain_file(ctx, o->certificate)) {
        ssl_error(err, errlen, "cannot read the client certificate", o->certificate);
        goto fail;
    }
    if (o->private_key && !SSL_CTX_use_PrivateKey_file(ctx, o->private_key, SSL_FILETYPE_PEM)) {
        ssl_error(err, errlen, "cannot read the client private key", o->private_key);
        goto fail;
    }
    if (o->ciphers && !set_ciphers(ctx, o->ciphers)) {
        ssl_error(err, errlen, "the cipher suites are not ones OpenSSL has:", o->ciphers);
        goto fail;
    }
    return t;
fail:
    ll_tls_ctx_free(t);
    return NULL;
}

void ll_tls_ctx_free(ll_tls_ctx *t) {
    if (!t) return;
    for (int i = 0; i < t->nsessions; i++) {
        SSL_SESSION_free(t->sessions[i].sess);
        free(t->sessions[i].host);
    }
    SSL_CTX_free(t->ctx);
    free(t);
}

void *ll_tls_ctx_ssl(ll_tls_ctx *t) { return t->ctx; }
int ll_tls_ctx_insecure(const ll_tls_ctx *t) { return t->insecure; }
int ll_tls_ctx_host_index(void) { return ex_index; }
