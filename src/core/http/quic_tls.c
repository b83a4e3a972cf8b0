/* quic_tls.c -- GnuTLS credentials and sessions for QUIC (see quic_tls.h).
 * TLS 1.3 only, as QUIC has it; the priority string is ngtcp2's example
 * client's (its AEADs and groups, no middlebox compatibility mode). */
#include "quic_tls.h"

#include <arpa/inet.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

#define SESSIONS_MAX 16

typedef struct kept {
    char *key;                 /* "name:port" */
    gnutls_datum_t data;       /* gnutls_session_get_data2's */
    uint8_t tp[LL_QUIC_TP_MAX]; /* the server's transport parameters then, for 0-RTT */
    size_t tplen;              /* 0: none */
} kept;

struct ll_quic_tls {
    gnutls_certificate_credentials_t cred;
    int insecure;
    kept sessions[SESSIONS_MAX];
    int nsessions;
};

static const char PRIORITY[] = "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:"
                               "+CHACHA20-POLY1305:+AES-128-CCM:-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:"
                               "+GROUP-SECP384R1:+GROUP-SECP521R1:%DISABLE_TLS13_COMPAT_MODE";

ll_quic_tls *ll_quic_tls_new(const ll_client_opts *o, char *err, size_t errlen) {
    ll_quic_tls *t = ll_xcalloc(1, sizeof(*t));
    t->insecure = o->insecure_skip_verify;
    int rv = gnutls_certificate_allocate_credentials(&t->cred);
    const char *what = "cannot make the TLS credentials", *file = NULL;
    if (rv >= 0 && o->ca) {
        rv = gnutls_certificate_set_x509_trust_file(t->cred, o->ca, GNUTLS_X509_FMT_PEM);
        what = "cannot read the CA file", file = o->ca;
        if (rv == 0) rv = GNUTLS_E_BASE64_DECODING_ERROR; /* no certificate in it */
    } else if (rv >= 0 && !t->insecure) {
        rv = gnutls_certificate_set_x509_system_trust(t->cred);
        what = "cannot read the system's CA certificates";
    }
    if (rv >= 0 && o->certificate && o->private_key) {
        rv = gnutls_certificate_set_x509_key_file(t->cred, o->certificate, o->private_key, GNUTLS_X509_FMT_PEM);
        what = "cannot read the client certificate or key", file = o->certificate;
    }
    if (rv < 0) {
        snprintf(err, errlen, "%s%s%s: %s", what, file ? " " : "", file ? file : "", gnutls_strerror(rv));
        ll_quic_tls_free(t);
        return NULL;
    }
    return t;
}

void ll_quic_tls_free(ll_quic_tls *t) {
    if (!t) return;
    for (int i = 0; i < t->nsessions; i++) {
        free(t->sessions[i].key);
        gnutls_free(t->sessions[i].data.data);
    }
    if (t->cred) gnutls_certificate_free_credentials(t->cred);
    free(t);
}

static int is_ip(const char *name) {
    unsigned char a[16];
    return inet_pton(AF_INET, name, a) == 1 || inet_pton(AF_INET6, name, a) == 1;
}

static kept *kept_of(ll_quic_tls *t, const char *key) {
    for (int i = 0; i < t->nsessions; i++)
        if (strcmp(t->sessions[i].key, key) == 0) return &t->sessions[i];
    return NULL;
}

void ll_quic_tls_keep(ll_quic_tls *t, const char *key, void *session, const uint8_t *tp, size_t tplen) {
    gnutls_datum_t d = {0};
    if (gnutls_session_get_data2(session, &d) < 0) return;
    kept *k = kept_of(t, key);
    if (!k && t->nsessions == SESSIONS_MAX) {
        gnutls_free(d.data);
        return;
    }
    if (!k) {
        k = &t->sessions[t->nsessions++];
        k->key = ll_xstrdup(key);
    } else {
        gnutls_free(k->data.data);
    }
    k->data = d;
    k->tplen = tp && tplen <= sizeof(k->tp) ? tplen : 0;
    if (k->tplen) memcpy(k->tp, tp, tplen);
}

void *ll_quic_tls_session(ll_quic_tls *t, const char *name, const char *key, int early, uint8_t *tp, size_t *tplen,
                          char *err, size_t errlen) {
    gnutls_session_t s = NULL;
    static const gnutls_datum_t alpn = {(unsigned char *)"h3", 2};
    kept *k = kept_of(t, key);
    early = early && k && k->tplen;
    *tplen = 0;
    int rv = gnutls_init(&s, GNUTLS_CLIENT | GNUTLS_NO_END_OF_EARLY_DATA | (early ? GNUTLS_ENABLE_EARLY_DATA : 0));
    if (rv == 0 && ngtcp2_crypto_gnutls_configure_client_session(s) != 0) rv = GNUTLS_E_INTERNAL_ERROR;
    if (rv == 0) rv = gnutls_priority_set_direct(s, PRIORITY, NULL);
    if (rv == 0) rv = gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, t->cred);
    if (rv == 0) rv = gnutls_alpn_set_protocols(s, &alpn, 1, GNUTLS_ALPN_MANDATORY);
    if (rv == 0 && !is_ip(name)) rv = gnutls_server_name_set(s, GNUTLS_NAME_DNS, name, strlen(name));
    if (rv < 0) {
        snprintf(err, errlen, "cannot start TLS: %s", gnutls_strerror(rv));
        if (s) gnutls_deinit(s);
        return NULL;
    }
    if (!t->insecure) gnutls_session_set_verify_cert(s, name, 0); /* the handshake fails on a bad one */
    if (k) gnutls_session_set_data(s, k->data.data, k->data.size); /* a stale one: a full handshake */
    if (early) {
        memcpy(tp, k->tp, k->tplen);
        *tplen = k->tplen;
    }
    return s;
}
