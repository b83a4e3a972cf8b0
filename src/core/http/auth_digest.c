/* auth_digest.c -- the client's side of HTTP Digest authentication (see
 * auth_digest.h): a challenge's parameters read, RFC 7616's response
 * computed with OpenSSL's digests. The challenge and credentials are
 * user-sized, so out of memory is reported, not fatal. */
#include "auth_digest.h"

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "redirect.h"
#include "url.h"

/* the longest parameter value kept; a longer one makes the challenge unusable */
#define DIGEST_VALUE_MAX 512

typedef struct digest_challenge {
    char realm[DIGEST_VALUE_MAX], nonce[DIGEST_VALUE_MAX], opaque[DIGEST_VALUE_MAX];
    char qop[DIGEST_VALUE_MAX], algorithm[DIGEST_VALUE_MAX];
    int has_opaque;
} digest_challenge;

static int is_space(char c) { return c == ' ' || c == '\t'; }

const char *ll_auth_digest_challenge(const char *headers, size_t headers_len, size_t *len) {
    size_t pos = 0, vlen = 0;
    const char *v;
    while ((v = ll_http_header_next(headers, headers_len, "WWW-Authenticate", &pos, &vlen))) {
        if (vlen > 6 && strncasecmp(v, "Digest", 6) == 0 && is_space(v[6])) {
            *len = vlen;
            return v;
        }
    }
    return NULL;
}

/* Copies the value at *p (quoted with backslash escapes, or a token up to
 * a comma) into out. Returns 0, or -1 when it is too long or unterminated. */
static int read_value(const char **p, const char *end, char *out) {
    const char *s = *p;
    size_t n = 0;
    if (s < end && *s == '"') {
        for (s++; s < end && *s != '"'; s++) {
            if (*s == '\\' && s + 1 < end) s++;
            if (n + 1 >= DIGEST_VALUE_MAX) return -1;
            out[n++] = *s;
        }
        if (s >= end) return -1;
        s++;
    } else {
        for (; s < end && *s != ',' && !is_space(*s); s++) {
            if (n + 1 >= DIGEST_VALUE_MAX) return -1;
            out[n++] = *s;
        }
    }
    out[n] = 0;
    *p = s;
    return 0;
}

/* Reads the parameters after "Digest". Returns 0, or -1 when the challenge
 * is malformed or has no nonce. */
static int parse(const char *v, size_t len, digest_challenge *c) {
    const char *p = v + 6, *end = v + len;
    char skip[DIGEST_VALUE_MAX];
    memset(c, 0, sizeof(*c));
    while (p < end) {
        while (p < end && (is_space(*p) || *p == ',')) p++;
        if (p >= end) break;
        const char *name = p;
        while (p < end && *p != '=' && !is_space(*p) && *p != ',') p++;
        size_t nlen = (size_t)(p - name);
        while (p < end && is_space(*p)) p++;
        if (p >= end || *p != '=') return -1;
        p++;
        while (p < end && is_space(*p)) p++;
        char *out = skip;
        if (nlen == 5 && strncasecmp(name, "realm", 5) == 0) out = c->realm;
        else if (nlen == 5 && strncasecmp(name, "nonce", 5) == 0) out = c->nonce;
        else if (nlen == 6 && strncasecmp(name, "opaque", 6) == 0) out = c->opaque, c->has_opaque = 1;
        else if (nlen == 3 && strncasecmp(name, "qop", 3) == 0) out = c->qop;
        else if (nlen == 9 && strncasecmp(name, "algorithm", 9) == 0) out = c->algorithm;
        if (read_value(&p, end, out) < 0) return -1;
    }
    return c->nonce[0] ? 0 : -1;
}

/* 1 when the comma-separated list has the token want */
static int list_has(const char *list, const char *want) {
    size_t w = strlen(want);
    for (const char *p = list; *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',') p++;
        size_t n = strcspn(p, ", \t");
        if (n == w && strncasecmp(p, want, w) == 0) return 1;
        p += n;
    }
    return 0;
}

/* hex of md's digest of the len bytes at s into out (2 * 32 + 1 bytes) */
static int hash_hex(const EVP_MD *md, const char *s, size_t len, char *out) {
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (!EVP_Digest(s, len, d, &n, md, NULL)) return -1;
    for (unsigned i = 0; i < n; i++) snprintf(out + 2 * i, 3, "%02x", d[i]);
    return 0;
}

/* hex of md's digest of the pieces joined by ':' (NULL-ended) */
static int hash_join(const EVP_MD *md, char *out, const char *const *pieces) {
    ll_buf b = {0};
    for (int i = 0; pieces[i]; i++) {
        if (i) ll_buf_append(&b, ":", 1);
        ll_buf_puts(&b, pieces[i]);
    }
    int rc = b.failed ? -1 : hash_hex(md, b.p ? b.p : "", b.len, out);
    ll_buf_free(&b);
    return rc;
}

/* Appends s quoted, with '"' and '\' escaped. */
static void put_quoted(ll_buf *b, const char *s) {
    ll_buf_append(b, "\"", 1);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') ll_buf_append(b, "\\", 1);
        ll_buf_append(b, s, 1);
    }
    ll_buf_append(b, "\"", 1);
}

char *ll_auth_digest_answer(const char *challenge, size_t len, const char *method, const char *uri, const char *user,
                            const char *password, const char *cnonce, unsigned nc) {
    digest_challenge c;
    if (len < 6 || parse(challenge, len, &c) < 0) return NULL;
    const char *alg = c.algorithm[0] ? c.algorithm : "MD5";
    size_t alen = strlen(alg);
    int sess = alen > 5 && strcasecmp(alg + alen - 5, "-sess") == 0;
    size_t base = sess ? alen - 5 : alen; /* the name without "-sess" */
    const EVP_MD *md = NULL;
    if (base == 3 && strncasecmp(alg, "MD5", 3) == 0) md = EVP_md5();
    else if (base == 7 && strncasecmp(alg, "SHA-256", 7) == 0) md = EVP_sha256();
    if (!md) return NULL;
    int qop = c.qop[0] != 0;
    if (qop && !list_has(c.qop, "auth")) return NULL; /* auth-int only: the body would be hashed */
    char ha1[2 * EVP_MAX_MD_SIZE + 1], ha2[2 * EVP_MAX_MD_SIZE + 1], resp[2 * EVP_MAX_MD_SIZE + 1];
    char ncs[9];
    snprintf(ncs, sizeof(ncs), "%08x", nc);
    const char *a1[] = {user, c.realm, password, NULL};
    const char *a2[] = {method, uri, NULL};
    if (hash_join(md, ha1, a1) < 0 || hash_join(md, ha2, a2) < 0) return NULL;
    if (sess) {
        const char *s1[] = {ha1, c.nonce, cnonce, NULL};
        char h[sizeof(ha1)];
        if (hash_join(md, h, s1) < 0) return NULL;
        memcpy(ha1, h, sizeof(h));
    }
    const char *with_qop[] = {ha1, c.nonce, ncs, cnonce, "auth", ha2, NULL};
    const char *without[] = {ha1, c.nonce, ha2, NULL};
    if (hash_join(md, resp, qop ? with_qop : without) < 0) return NULL;
    ll_buf b = {0};
    ll_buf_puts(&b, "Digest username=");
    put_quoted(&b, user);
    ll_buf_puts(&b, ", realm=");
    put_quoted(&b, c.realm);
    ll_buf_puts(&b, ", nonce=");
    put_quoted(&b, c.nonce);
    ll_buf_puts(&b, ", uri=");
    put_quoted(&b, uri);
    if (c.algorithm[0]) {
        ll_buf_puts(&b, ", algorithm=");
        ll_buf_puts(&b, c.algorithm);
    }
    ll_buf_puts(&b, ", response=\"");
    ll_buf_puts(&b, resp);
    ll_buf_puts(&b, "\"");
    if (qop) {
        ll_buf_puts(&b, ", qop=auth, nc=");
        ll_buf_puts(&b, ncs);
        ll_buf_puts(&b, ", cnonce=");
        put_quoted(&b, cnonce);
    }
    if (c.has_opaque) {
        ll_buf_puts(&b, ", opaque=");
        put_quoted(&b, c.opaque);
    }
    if (b.failed) {
        ll_buf_free(&b);
        return NULL;
    }
    return b.p;
}

char *ll_auth_digest_for(const ll_http_req *req, const char *method, const char *challenge, size_t len) {
    if (!req->user) return NULL;
    ll_url u;
    if (ll_url_parse(&u, req->url) < 0) return NULL;
    ll_buf uri = {0};
    ll_buf_puts(&uri, u.path);
    if (u.query) {
        ll_buf_append(&uri, "?", 1);
        ll_buf_puts(&uri, u.query);
    }
    ll_url_free(&u);
    unsigned char r[16];
    char cnonce[2 * sizeof(r) + 1];
    char *v = NULL;
    if (!uri.failed && RAND_bytes(r, (int)sizeof(r)) == 1) {
        for (size_t i = 0; i < sizeof(r); i++) snprintf(cnonce + 2 * i, 3, "%02x", r[i]);
        v = ll_auth_digest_answer(challenge, len, method, uri.p, req->user, req->password ? req->password : "",
                                  cnonce, 1);
    }
    ll_buf_free(&uri);
    return v;
}
