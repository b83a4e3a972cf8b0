/* test_jwt.c -- the JWT C API: generators (errors, alg inference, an ES256
 * signature checked by OpenSSL's verify after turning r||s back into DER),
 * token streams (four threads drain a 200,000-line file with CRLF, blanks
 * and ragged lengths: each token exactly once; a too-long line; the same
 * file shared), the live ring (unique tokens, fell-behind counted), and
 * the cache (generate, reuse, grow, clear) in a temporary directory. */
/* links: ll_token */
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jwt.h"
#include "jwt_cache.h"
#include "test_util.h"
#include "token_stream.h"

#define NLINES 200000

static char tmpdir[] = "/tmp/luaload-test-jwt.XXXXXX";

static char *pem_of(EVP_PKEY *k) {
    BIO *b = BIO_new(BIO_s_mem());
    PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL);
    char *p;
    long n = BIO_get_mem_data(b, &p);
    char *s = strndup(p, (size_t)n);
    BIO_free(b);
    return s;
}

static size_t b64url_dec(const char *s, size_t n, unsigned char *out) {
    static const char *a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    unsigned acc = 0, bits = 0;
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        acc = acc << 6 | (unsigned)(strchr(a, s[i]) - a);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[len++] = (unsigned char)(acc >> bits);
        }
    }
    return len;
}

static void test_gen(void) {
    char err[256];
    EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    char *pem = pem_of(k);
    ll_jwt_settings s = {.key = pem, .kid = "k", .exp_in = 60, .claims = "{\"a\":1}"};
    ll_jwt_gen *g = ll_jwt_gen_new(&s, err, sizeof(err));
    tu_check(g && strcmp(ll_jwt_gen_alg(g), "ES256") == 0, "P-256 infers ES256 (%s)", g ? "" : err);
    char tok[1024];
    int n = ll_jwt_gen_sign(g, tok, sizeof(tok));
    tu_check(n > 0 && (size_t)n < ll_jwt_gen_max_len(g) && (size_t)n == strlen(tok), "signs within max_len");
    tu_check(ll_jwt_gen_sign(g, tok, 10) == -1, "a short buffer is refused");
    char *d2 = strrchr(tok, '.');
    unsigned char sig[128];
    size_t slen = b64url_dec(d2 + 1, strlen(d2 + 1), sig);
    ECDSA_SIG *es = ECDSA_SIG_new();
    ECDSA_SIG_set0(es, BN_bin2bn(sig, 32, NULL), BN_bin2bn(sig + 32, 32, NULL));
    unsigned char *der = NULL;
    int dlen = i2d_ECDSA_SIG(es, &der);
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    int ok = slen == 64 && EVP_DigestVerifyInit(c, NULL, EVP_sha256(), NULL, k) == 1 &&
             EVP_DigestVerify(c, der, (size_t)dlen, (unsigned char *)tok, (size_t)(d2 - tok)) == 1;
    tu_check(ok, "OpenSSL verifies the ES256 token");
    EVP_MD_CTX_free(c);
    OPENSSL_free(der);
    ECDSA_SIG_free(es);

    ll_jwt_settings same = s;
    ll_jwt_gen *g2 = ll_jwt_gen_new(&same, err, sizeof(err));
    same.kid = "other";
    ll_jwt_gen *g3 = ll_jwt_gen_new(&same, err, sizeof(err));
    tu_check(strcmp(ll_jwt_gen_fingerprint(g), ll_jwt_gen_fingerprint(g2)) == 0 &&
                 strcmp(ll_jwt_gen_fingerprint(g), ll_jwt_gen_fingerprint(g3)) != 0,
             "fingerprint: the same settings agree, another kid differs");
    ll_jwt_gen_free(g2);
    ll_jwt_gen_free(g3);
    ll_jwt_gen_free(g);

    struct {
        ll_jwt_settings s;
        const char *want;
    } bad[] = {
        {{.key = pem, .alg = "none"}, "unknown alg 'none'"},
        {{.key = pem, .alg = "ES512"}, "alg ES512 needs an EC P-521 key, '(PEM text)' is EC P-256"},
        {{.key = pem, .alg = "HS256"}, "alg HS256 takes a secret, not a key"},
        {{.secret = "x", .secret_len = 1, .alg = "EdDSA"}, "alg EdDSA needs a key"},
        {{.secret = "", .secret_len = 0}, "the secret is empty"},
        {{.secret = "x", .secret_len = 1, .claims = "[1]"}, "claims: expected a JSON object, got '[1]'"},
        {{.secret = "x", .secret_len = 1, .exp_in = -1}, "exp_in: expected 0 or more seconds"},
        {{0}, "expected a key"},
        {{.key = "/nonexistent.pem"}, "cannot read key '/nonexistent.pem': No such file or directory"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        ll_jwt_gen *b = ll_jwt_gen_new(&bad[i].s, err, sizeof(err));
        tu_check(!b && strstr(err, bad[i].want) == err, "error: %s", err);
        ll_jwt_gen_free(b);
    }
    free(pem);
    EVP_PKEY_free(k);
}

typedef struct drain {
    ll_token_stream *ts;
    unsigned char *seen; /* per line number */
    int bad;
    long got;
} drain;

static void *drain_thread(void *arg) {
    drain *d = arg;
    ll_token_cursor *c = ll_token_stream_cursor(d->ts);
    const char *t;
    size_t len;
    char err[256];
    int rc;
    while ((rc = ll_token_stream_next(c, &t, &len, err, sizeof(err))) == 1) {
        int i = atoi(t + 3); /* "tok<i>-xxx" */
        if (len < 4 || memcmp(t, "tok", 3) != 0 || i < 0 || i >= NLINES || t[len - 1] != 'x') d->bad++;
        else __atomic_fetch_add(&d->seen[i], 1, __ATOMIC_RELAXED);
        d->got++;
    }
    if (rc != 0) d->bad++;
    ll_token_stream_cursor_free(c);
    return NULL;
}

static void test_stream(void) {
    char path[256], err[256];
    snprintf(path, sizeof(path), "%s/tokens.txt", tmpdir);
    FILE *f = fopen(path, "w");
    for (int i = 0; i < NLINES; i++) {
        fprintf(f, "%stok%d-%.*s%s", i % 7 == 0 ? "  " : "", i, (int)(tu_rand() % 300) + 1,
                "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                i == NLINES - 1 ? "" : i % 3 == 0 ? "\r\n" : "\n"); /* the last line has no newline */
        if (i % 1000 == 0) fputs("\n\r\n", f);
    }
    fclose(f);

    ll_token_stream *ts = ll_token_stream_open(path, err, sizeof(err));
    ll_token_stream *again = ll_token_stream_open(path, err, sizeof(err));
    tu_check(ts && ts == again, "the same file opened twice is one stream");
    ll_token_stream_close(again);
    drain d = {ts, calloc(NLINES, 1), 0, 0};
    drain ds[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        ds[i] = d;
        pthread_create(&th[i], NULL, drain_thread, &ds[i]);
    }
    long total = 0;
    int bad = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        total += ds[i].got;
        bad += ds[i].bad;
    }
    int once = 1;
    for (int i = 0; i < NLINES; i++) once &= d.seen[i] == 1;
    tu_check(bad == 0 && total == NLINES && once, "4 threads drain %d tokens, each exactly once (got %ld, %d bad)",
             NLINES, total, bad);
    tu_check(ll_token_stream_handed(ts) == NLINES, "handed counts them");
    ll_token_cursor *c = ll_token_stream_cursor(ts);
    const char *t;
    size_t len;
    tu_check(ll_token_stream_next(c, &t, &len, err, sizeof(err)) == 0, "used up: 0, from then on");
    ll_token_stream_cursor_free(c);
    ll_token_stream_close(ts);
    free(d.seen);

    snprintf(path, sizeof(path), "%s/long.txt", tmpdir);
    f = fopen(path, "w");
    fputs("short\n", f);
    for (int i = 0; i < 200000; i++) fputc('y', f);
    fputs("\nafter\n", f);
    fclose(f);
    ts = ll_token_stream_open(path, err, sizeof(err));
    c = ll_token_stream_cursor(ts);
    int r1 = ll_token_stream_next(c, &t, &len, err, sizeof(err));
    int r2 = ll_token_stream_next(c, &t, &len, err, sizeof(err));
    tu_check(r1 == 1 && r2 == -1 && strstr(err, "longer than 64 KiB"), "a line over 64 KiB: %s", err);
    ll_token_stream_cursor_free(c);
    ll_token_stream_close(ts);

    snprintf(path, sizeof(path), "%s/empty.txt", tmpdir);
    fclose(fopen(path, "w"));
    tu_check(!ll_token_stream_open(path, err, sizeof(err)) && strstr(err, "the file is empty"), "%s", err);
}

static void *live_thread(void *arg) {
    void **a = arg;
    ll_token_cursor *c = ll_token_stream_cursor(a[0]);
    char(*out)[40] = a[1];
    const char *t;
    size_t len;
    char err[256];
    for (int i = 0; i < 1000; i++) {
        if (ll_token_stream_next(c, &t, &len, err, sizeof(err)) < 1) break;
        snprintf(out[i], sizeof(out[i]), "%.*s", 32, t + len - 32); /* the HMAC's end: distinct per token */
    }
    ll_token_stream_cursor_free(c);
    return NULL;
}

static int cmp40(const void *a, const void *b) { return strcmp(a, b); }

static void test_live(void) {
    char err[256];
    ll_jwt_settings s = {.secret = "k", .secret_len = 1};
    ll_jwt_gen *g = ll_jwt_gen_new(&s, err, sizeof(err));
    ll_token_stream *ts = ll_token_stream_live(g, 16, 1, err, sizeof(err));
    ll_token_stream *again = ll_token_stream_live(g, 99, 3, err, sizeof(err));
    tu_check(ts && ts == again, "live: the same settings share one stream");
    ll_token_stream_close(again);
    char(*out)[40] = calloc(2000, 40);
    void *a0[] = {ts, out}, *a1[] = {ts, out + 1000};
    pthread_t t0, t1;
    pthread_create(&t0, NULL, live_thread, a0);
    pthread_create(&t1, NULL, live_thread, a1);
    pthread_join(t0, NULL);
    pthread_join(t1, NULL);
    qsort(out, 2000, 40, cmp40);
    int distinct = out[0][0] != 0;
    for (int i = 1; i < 2000; i++) distinct &= strcmp(out[i - 1], out[i]) != 0;
    tu_check(distinct && ll_token_stream_handed(ts) == 2000, "live: 2000 distinct tokens to two threads");
    printf("     (fell behind %llu times)\n", (unsigned long long)ll_token_stream_fell_behind(ts));
    ll_token_stream_close(ts);
    ll_jwt_gen_free(g);
    free(out);
}

static long lines_of(const char *path) {
    FILE *f = fopen(path, "r");
    long n = 0;
    for (int ch; f && (ch = fgetc(f)) != EOF;) n += ch == '\n';
    if (f) fclose(f);
    return n;
}

static void test_cache(void) {
    char err[256], dir[256], p1[4096], p2[4096], p3[4096];
    snprintf(dir, sizeof(dir), "%s/cache/jwt", tmpdir);
    ll_jwt_settings s = {.secret = "k", .secret_len = 1, .exp_in = 3600};
    ll_jwt_gen *g = ll_jwt_gen_new(&s, err, sizeof(err));
    ll_jwt_cache_opts o = {dir, 2, 1, NULL};
    int rc = ll_jwt_cache_ensure(g, 1000, &o, p1, sizeof(p1), err, sizeof(err));
    tu_check(rc == 0 && lines_of(p1) == 1000, "cache: 1000 tokens generated (%s)", rc ? err : p1);
    struct stat st;
    tu_check(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700, "cache: the directory is 0700");
    rc = ll_jwt_cache_ensure(g, 500, &o, p2, sizeof(p2), err, sizeof(err));
    tu_check(rc == 0 && strcmp(p1, p2) == 0, "cache: reused for fewer");
    rc = ll_jwt_cache_ensure(g, 1500, &o, p3, sizeof(p3), err, sizeof(err));
    tu_check(rc == 0 && strcmp(p1, p3) != 0 && lines_of(p3) == 1500 && access(p1, F_OK) != 0,
             "cache: regenerated for more, the smaller file removed");
    tu_check(ll_jwt_cache_ensure(g, 0, &o, p3, sizeof(p3), err, sizeof(err)) == -1, "cache: 0 tokens refused");
    tu_check(ll_jwt_cache_clear(dir, err, sizeof(err)) == 2 && access(dir, F_OK) != 0,
             "cache: clear removes the file and the lock, then the directory");
    tu_check(ll_jwt_cache_clear(dir, err, sizeof(err)) == 0, "cache: clearing nothing is 0");
    ll_jwt_gen_free(g);
}

int main(void) {
    if (!mkdtemp(tmpdir)) return 1;
    test_gen();
    test_stream();
    test_live();
    test_cache();
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", tmpdir);
    return tu_summary();
}
