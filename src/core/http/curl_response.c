/* curl_response.c -- reading a response on the libcurl transport: the
 * body kept up to its limit, the header block (the last one after redirects
 * and 100-continue), the TLS version and cipher of the connection, and, when
 * the transfer is done, the result: status, timings from our clock, bytes,
 * and k6's error codes for libcurl's failures. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <openssl/ssl.h>
#ifdef LL_HAVE_GNUTLS
#include <gnutls/gnutls.h>
#endif

#include "body_decode.h"
#include "curl_internal.h"
#include "http_error.h"

static int64_t clamp_diff(curl_off_t a, curl_off_t b) { return a > b ? (int64_t)(a - b) : 0; }

/* k6's error codes (k6 lib/netext/httpext/error_codes.go). connected: the
 * request got a connection (a timeout before that is a dial timeout); tls:
 * an https:// URL. */
static int map_error(CURLcode rc, long os_errno, int connected, int tls) {
    switch (rc) {
    case CURLE_OPERATION_TIMEDOUT: return connected ? 1050 : 1211;
    case CURLE_URL_MALFORMAT: return 1020;
    case CURLE_COULDNT_RESOLVE_HOST: return 1100;
    case CURLE_COULDNT_CONNECT:
        if (os_errno == ECONNREFUSED) return 1212;
        if (os_errno == ETIMEDOUT) return 1211;
        return 1210;
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
        if (os_errno == ECONNRESET) return 1220;
        return connected || !tls ? 1200 : 1300; /* a QUIC handshake that failed */
    case CURLE_PEER_FAILED_VERIFICATION: return 1310;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE: return 1300;
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM: return 1600;
    default: return 1000;
    }
}

void curl_response_fill(curl_transfer *x, CURLcode rc, uint64_t t_end) {
    CURL *e = x->easy;
    ll_http_res *r = &x->res;
    long status = 0, version = 0, os_errno = 0, req_size = 0;
    if (x->chunk_done && rc == CURLE_WRITE_ERROR) rc = CURLE_OK; /* the abort was on_chunk's clean stop */
    curl_off_t dns = 0, conn = 0, tls = 0, pre = 0, post = 0, wire_body = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(e, CURLINFO_HTTP_VERSION, &version);
    curl_easy_getinfo(e, CURLINFO_NAMELOOKUP_TIME_T, &dns);
    curl_easy_getinfo(e, CURLINFO_CONNECT_TIME_T, &conn);
    curl_easy_getinfo(e, CURLINFO_APPCONNECT_TIME_T, &tls);
    curl_easy_getinfo(e, CURLINFO_PRETRANSFER_TIME_T, &pre);
    curl_easy_getinfo(e, CURLINFO_POSTTRANSFER_TIME_T, &post);
    curl_easy_getinfo(e, CURLINFO_REQUEST_SIZE, &req_size);
    curl_easy_getinfo(e, CURLINFO_SIZE_DOWNLOAD_T, &wire_body); /* before content decoding */
    curl_easy_getinfo(e, CURLINFO_EFFECTIVE_URL, &r->effective_url);
    if (x->server_name) r->effective_url = x->base.req->url; /* not the rewritten one */

    /* libcurl's timestamps are cached per socket_action call and can lag
     * the wire by the whole round trip under load, so the request's own
     * phases come from our clock (submit, prereq callback, first header
     * byte, completion); only the connect and TLS handshake, which span
     * several calls, and the tiny send phase come from libcurl. */
    if (rc == CURLE_OK && x->t_last && x->t_last < t_end) t_end = x->t_last; /* a failure ends when noticed */
    uint64_t t_pre = x->t_pre ? x->t_pre : t_end;
    uint64_t t_first = x->t_first ? x->t_first : t_end;
    if (t_first < t_pre) t_first = t_pre;
    int fresh = conn > 0;
    r->t.connecting = fresh ? clamp_diff(conn, dns) : 0;
    r->t.tls_handshaking = fresh && tls > 0 ? clamp_diff(tls, conn) : 0;
    /* k6's blocked runs from asking for a connection to getting one: it
     * includes DNS, connecting and the TLS handshake of a new connection. */
    r->t.blocked = (int64_t)(t_pre - x->t_start) / 1000;
    int64_t to_first = (int64_t)(t_first - t_pre) / 1000;
    r->t.sending = clamp_diff(post, pre);
    if (r->t.sending > to_first) r->t.sending = to_first;
    r->t.waiting = to_first - r->t.sending;
    r->t.receiving = (int64_t)(t_end - t_first) / 1000;
    r->t.duration = r->t.sending + r->t.waiting + r->t.receiving;

    r->status = rc == CURLE_OK && !x->too_big && !x->head_open && !x->chunk_stopped ? (int)status : 0;
    r->proto = r->status == 0 ? ""
             : version == CURL_HTTP_VERSION_3 ? "HTTP/3.0"
             : version == CURL_HTTP_VERSION_2_0 ? "HTTP/2.0"
             : version == CURL_HTTP_VERSION_1_0 ? "HTTP/1.0" : "HTTP/1.1";
    r->stopped = r->status && x->chunk_done;
    r->body = x->body.p ? x->body.p : "";
    r->body_len = r->status ? x->body.len : 0; /* a failed request has no body, as in k6 */
    r->headers = x->hdrs.p ? x->hdrs.p : "";
    r->headers_len = x->hdrs.len;
    /* everything libcurl wrote for the request: headers and the body,
     * whether in memory, streamed or a form (measured against what serve
     * received: bench/uploads.sh) */
    r->bytes_sent = req_size;
    /* on the wire: a compressed body counts compressed */
    r->bytes_received = x->header_bytes + (wire_body > 0 ? (int64_t)wire_body : x->body_bytes);
    r->error_code = 0;
    r->error = "";
    r->tls_version = r->status && version == CURL_HTTP_VERSION_3 && !*x->tls_version ? "tls1.3" : x->tls_version;
    r->tls_cipher_suite = x->tls_cipher;
    /* over QUIC libcurl only sends again after finding the connection dead
     * (closed or draining, e.g. refused after the handshake): the server
     * processed nothing on it, so that attempt is not a request */
    r->retries = x->attempts > 1 && x->version_applied != LL_HTTP_3 ? x->attempts - 1 : 0;
    if (rc == CURLE_OK && x->head_open) {
        r->error_code = 1000;
        r->error = "the server closed the connection in the middle of the response headers";
    } else if (x->too_big || rc == CURLE_FILESIZE_EXCEEDED) {
        snprintf(x->errbuf, sizeof(x->errbuf), "the response body is over max_response_body (%lld bytes)",
                 (long long)x->body_limit);
        r->error_code = 1000;
        r->error = x->errbuf;
    } else if (x->chunk_stopped) {
        r->error_code = 1000;
        r->error = x->chunk_stopped;
    } else if (rc != CURLE_OK) {
        curl_easy_getinfo(e, CURLINFO_OS_ERRNO, &os_errno);
        r->error_code = map_error(rc, os_errno, x->t_pre != 0, strncasecmp(x->base.req->url, "https:", 6) == 0);
        /* libcurl fails a head over its limit as a receive error; k6 (and the
         * native transport) count an oversized response as 1000 */
        if (rc == CURLE_RECV_ERROR && strncmp(x->errbuf, "Too large response headers", 26) == 0) r->error_code = 1000;
        r->error = x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc);
        int v = x->base.req->http_version >= 0 ? x->base.req->http_version : x->version_default;
        const char *common =
            ll_http_error_text(r->error_code, x->base.req->url, v == LL_HTTP_3, x->errbuf, sizeof(x->errbuf));
        if (common) r->error = common;
        /* a body cut short in the native transport's words (libcurl: "end of response with N bytes missing") */
        if (rc == CURLE_PARTIAL_FILE) r->error = "the server closed the connection in the middle of the response body";
    } else if (status >= 400) {
        r->error_code = 1000 + (int)status;
    }
}

size_t curl_response_on_body(char *p, size_t size, size_t n, void *ud) {
    curl_transfer *x = ud;
    size_t len = size * n;
    x->body_bytes += (int64_t)len;
    x->t_last = ll_loop_now_ns();
    if (x->body_limit == 0) return len;
    if ((int64_t)(x->body.len + len) > x->body_limit) { /* fails the transfer */
        x->too_big = 1;
        return 0;
    }
    if (ll_buf_append(&x->body, p, len) < 0) return 0;
    const ll_http_req *req = x->base.req;
    const char *err = NULL;
    long status = 0;
    if (req->on_chunk) curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
    int rc = ll_body_chunk_out(req->on_chunk, req->chunk_ud, (int)status, &x->body, &err);
    if (rc == 1) x->chunk_done = 1; /* aborts the transfer, a clean end (curl_response_fill) */
    else if (rc != 0) x->chunk_stopped = err;
    return rc == 0 ? len : 0;
}

size_t curl_response_on_header(char *p, size_t size, size_t n, void *ud) {
    curl_transfer *x = ud;
    size_t len = size * n;
    x->header_bytes += (int64_t)len;
    /* a new status line starts a new header block (redirects, 100-continue) */
    if (len > 5 && memcmp(p, "HTTP/", 5) == 0) {
        x->hdrs.len = 0;
        x->t_first = ll_loop_now_ns();
        x->head_open = 1;
    } else if ((len == 2 && p[0] == '\r' && p[1] == '\n') || (len == 1 && p[0] == '\n')) {
        x->head_open = 0;
    }
    return ll_buf_append(&x->hdrs, p, len) < 0 ? 0 : len;
}

/* The TLS version and cipher suite of the transfer's connection, with k6's
 * names, from the TLS library libcurl uses (GnuTLS in Debian's build). */
static void tls_info(curl_transfer *x) {
    struct curl_tlssessioninfo *ti = NULL;
    x->tls_version = x->tls_cipher = "";
    if (curl_easy_getinfo(x->easy, CURLINFO_TLS_SSL_PTR, &ti) != CURLE_OK || !ti || !ti->internals) return;
    int v = 0;
    const char *cipher = NULL;
#ifdef LL_HAVE_GNUTLS
    if (ti->backend == CURLSSLBACKEND_GNUTLS) {
        gnutls_session_t gs = ti->internals;
        gnutls_protocol_t p = gnutls_protocol_get_version(gs);
        v = p == GNUTLS_TLS1_3 ? 13 : p == GNUTLS_TLS1_2 ? 12 : p == GNUTLS_TLS1_1 ? 11 : p == GNUTLS_TLS1_0 ? 10 : 0;
        cipher = gnutls_ciphersuite_get(gs);
    }
#endif
    if (ti->backend == CURLSSLBACKEND_OPENSSL) {
        SSL *ssl = ti->internals;
        int p = SSL_version(ssl);
        v = p == TLS1_3_VERSION ? 13 : p == TLS1_2_VERSION ? 12 : p == TLS1_1_VERSION ? 11 : p == TLS1_VERSION ? 10 : 0;
        const SSL_CIPHER *c = SSL_get_current_cipher(ssl);
        cipher = c ? SSL_CIPHER_standard_name(c) : NULL;
    }
    x->tls_version = v == 13 ? "tls1.3" : v == 12 ? "tls1.2" : v == 11 ? "tls1.1" : v == 10 ? "tls1.0" : "";
    x->tls_cipher = cipher ? cipher : "";
}

/* Called right before the request goes out on a new or reused connection. */
int curl_response_on_prereq(void *ud, char *conn_primary_ip, char *conn_local_ip, int conn_primary_port,
                     int conn_local_port) {
    (void)conn_primary_ip;
    (void)conn_local_ip;
    (void)conn_primary_port;
    (void)conn_local_port;
    curl_transfer *x = ud;
    x->t_pre = ll_loop_now_ns();
    x->t_first = x->t_last = 0;
    x->attempts++;
    x->body.len = x->hdrs.len = 0; /* a retry starts over */
    if (strncasecmp(x->base.req->url, "https:", 6) == 0) tls_info(x);
    return CURL_PREREQFUNC_OK;
}
