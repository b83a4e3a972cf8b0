/* curl_request.c -- a request's easy handle on the libcurl transport: the
 * options it keeps for its whole life (callbacks, the User-Agent and the
 * lines every request sends, TLS versions and ciphers, DNS and the source
 * address, the client's timeouts), then, only when the VU sends a different
 * request than last time, the URL, the header list, the method and body (in
 * memory as POSTFIELDS, a form as a curl_mime read through callbacks, a
 * file region or generator streamed through the read callback), the
 * timeout and the body limit. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#ifdef LL_HAVE_GNUTLS
#include <gnutls/gnutls.h>
#endif

#include "curl_internal.h"
#include "form.h"

/* A streamed body (file region or generator), read as libcurl sends it. */
static size_t on_read(char *buf, size_t size, size_t n, void *ud) {
    curl_transfer *x = ud;
    ssize_t r = ll_body_read(&x->base.req->body, x->body_pos, buf, size * n);
    if (r < 0) return CURL_READFUNC_ABORT;
    x->body_pos += (uint64_t)r;
    return (size_t)r;
}

/* A form part, read as libcurl sends it (pread for a file region: many
 * transfers send one file at once). */
static size_t on_mime_read(char *buf, size_t size, size_t n, void *arg) {
    mime_cursor *c = arg;
    ssize_t r = ll_body_read(c->data, c->pos, buf, size * n);
    if (r < 0) return CURL_READFUNC_ABORT;
    c->pos += (uint64_t)r;
    return (size_t)r;
}

static int on_mime_seek(void *arg, curl_off_t offset, int origin) {
    mime_cursor *c = arg;
    if (origin != SEEK_SET || offset < 0 || (uint64_t)offset > c->data->len) return CURL_SEEKFUNC_FAIL;
    c->pos = (uint64_t)offset;
    return CURL_SEEKFUNC_OK;
}

static void mime_drop(curl_transfer *x) {
    if (!x->mime) return;
    curl_easy_setopt(x->easy, CURLOPT_MIMEPOST, NULL);
    curl_mime_free(x->mime);
    x->mime = NULL;
}

/* The form f as the handle's MIMEPOST: parts named, with their filename
 * and type, their data read through callbacks. -1 when out of memory. */
static int mime_build(curl_transfer *x, const ll_form *f) {
    mime_drop(x);
    if (f->n > x->ncursors) {
        mime_cursor *c = realloc(x->cursors, (size_t)f->n * sizeof(*c));
        if (!c) return -1;
        x->cursors = c;
        x->ncursors = f->n;
    }
    x->mime = curl_mime_init(x->easy);
    if (!x->mime) return -1;
    for (int i = 0; i < f->n; i++) {
        const ll_form_part *p = &f->parts[i];
        curl_mimepart *mp = curl_mime_addpart(x->mime);
        x->cursors[i].data = &p->data;
        x->cursors[i].pos = 0;
        if (!mp || curl_mime_name(mp, p->name) != CURLE_OK ||
            (p->filename && curl_mime_filename(mp, p->filename) != CURLE_OK) ||
            (p->content_type && curl_mime_type(mp, p->content_type) != CURLE_OK) ||
            curl_mime_data_cb(mp, (curl_off_t)p->data.len, on_mime_read, on_mime_seek, NULL, &x->cursors[i]) != CURLE_OK)
            return -1;
    }
    return curl_easy_setopt(x->easy, CURLOPT_MIMEPOST, x->mime) == CURLE_OK ? 0 : -1;
}

/* libcurl rewinds a streamed body to send it again (a redirect, a retry on
 * a connection that was closed under it). */
static int on_seek(void *ud, curl_off_t offset, int origin) {
    curl_transfer *x = ud;
    if (origin != SEEK_SET || offset < 0 || (uint64_t)offset > x->base.req->body.len) return CURL_SEEKFUNC_FAIL;
    x->body_pos = (uint64_t)offset;
    return CURL_SEEKFUNC_OK;
}

/* The cipher list: IANA names (k6's tlsCipherSuites) become a GnuTLS
 * priority string when libcurl uses GnuTLS (the union of their key
 * exchanges, ciphers and MACs; GnuTLS has no list of whole suites);
 * anything else goes to the TLS library as is. */
static void set_ciphers(curl_transfer *x, const char *list) {
    char prio[2048] = "";
#ifdef LL_HAVE_GNUTLS
    const curl_version_info_data *d = curl_version_info(CURLVERSION_NOW);
    if (strncmp(list, "TLS_", 4) == 0 && d->ssl_version && strncmp(d->ssl_version, "GnuTLS", 6) == 0) {
        size_t n = (size_t)snprintf(prio, sizeof(prio), "NORMAL:-CIPHER-ALL:-MAC-ALL:-KX-ALL");
        char name[128];
        for (const char *p = list; *p && n < sizeof(prio);) {
            size_t len = strcspn(p, ":");
            if (len >= sizeof(name) - 8) len = sizeof(name) - 8;
            memcpy(name, p, len);
            name[len] = 0;
            p += len + (p[len] == ':');
            char *with = strstr(name, "_WITH_"); /* TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 -> GnuTLS's name */
            if (with) memmove(with, with + 5, strlen(with + 5) + 1);
            size_t nl = strlen(name);
            if (nl > 4 && strcmp(name + nl - 4, "_SHA") == 0) strcat(name, "1");
            for (size_t i = 0;; i++) {
                unsigned char id[2];
                gnutls_kx_algorithm_t kx;
                gnutls_cipher_algorithm_t c;
                gnutls_mac_algorithm_t mac;
                gnutls_protocol_t ver;
                const char *gn = gnutls_cipher_suite_info(i, id, &kx, &c, &mac, &ver);
                if (!gn) break;
                if (strcmp(gn, name) != 0) continue;
                const char *kn = gnutls_kx_get_name(kx);
                n += (size_t)snprintf(prio + n, sizeof(prio) - n, ":+%s:+%s%s%s", gnutls_cipher_get_name(c),
                                      gnutls_mac_get_name(mac), kn ? ":+" : "", kn ? kn : "");
                break;
            }
        }
        if (n >= sizeof(prio)) prio[0] = 0;
    }
#endif
    curl_easy_setopt(x->easy, CURLOPT_SSL_CIPHER_LIST, prio[0] ? prio : list);
}

/* TLS versions for CURLOPT_SSLVERSION: the lowest and highest allowed. */
static long ssl_version(int min, int max) {
    long lo = min == 13 ? CURL_SSLVERSION_TLSv1_3 : min == 12 ? CURL_SSLVERSION_TLSv1_2
            : min == 11 ? CURL_SSLVERSION_TLSv1_1 : min == 10 ? CURL_SSLVERSION_TLSv1_0 : CURL_SSLVERSION_DEFAULT;
    long hi = max == 13 ? CURL_SSLVERSION_MAX_TLSv1_3 : max == 12 ? CURL_SSLVERSION_MAX_TLSv1_2
            : max == 11 ? CURL_SSLVERSION_MAX_TLSv1_1 : max == 10 ? CURL_SSLVERSION_MAX_TLSv1_0
            : CURL_SSLVERSION_MAX_DEFAULT;
    return lo | hi;
}

/* The dns option as far as libcurl has it: its cache's ttl (in whole
 * seconds), onlyIPv4 / onlyIPv6, and random or roundRobin as shuffled
 * addresses (libcurl has no round robin); prefer* leave the order to the
 * system's resolver and libcurl's Happy Eyeballs. And the VU's source
 * address (--local-ips). */
static void set_dns(curl_transfer *x, const ll_dns_config *dns, const ll_addr *local) {
    if (dns) {
        int64_t ms = ll_dns_ttl_ms(dns);
        curl_easy_setopt(x->easy, CURLOPT_DNS_CACHE_TIMEOUT, ms < 0 ? -1L : (long)((ms + 999) / 1000));
        if (dns->policy == LL_DNS_ONLY_IPV4) curl_easy_setopt(x->easy, CURLOPT_IPRESOLVE, (long)CURL_IPRESOLVE_V4);
        if (dns->policy == LL_DNS_ONLY_IPV6) curl_easy_setopt(x->easy, CURLOPT_IPRESOLVE, (long)CURL_IPRESOLVE_V6);
        if (dns->select != LL_DNS_SELECT_FIRST) curl_easy_setopt(x->easy, CURLOPT_DNS_SHUFFLE_ADDRESSES, 1L);
    }
    if (!local || !local->len) return;
    char ip[INET6_ADDRSTRLEN], iface[INET6_ADDRSTRLEN + 8];
    const void *a = local->ss.ss_family == AF_INET ? (const void *)&((const struct sockaddr_in *)&local->ss)->sin_addr
                                                  : (const void *)&((const struct sockaddr_in6 *)&local->ss)->sin6_addr;
    if (!inet_ntop(local->ss.ss_family, a, ip, sizeof(ip))) return;
    snprintf(iface, sizeof(iface), "host!%s", ip); /* an address, never an interface name */
    curl_easy_setopt(x->easy, CURLOPT_INTERFACE, iface);
}

int curl_request_init(curl_transfer *x, const ll_client_opts *o, const ll_dns_config *dns) {
    CURL *e = x->easy;
    curl_easy_setopt(e, CURLOPT_PRIVATE, x);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, curl_response_on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, curl_response_on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(e, CURLOPT_READFUNCTION, on_read);
    curl_easy_setopt(e, CURLOPT_READDATA, x);
    curl_easy_setopt(e, CURLOPT_SEEKFUNCTION, on_seek);
    curl_easy_setopt(e, CURLOPT_SEEKDATA, x);
    curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, curl_response_on_prereq);
    curl_easy_setopt(e, CURLOPT_PREREQDATA, x);
    curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, curl_pool_on_close);
    curl_easy_setopt(e, CURLOPT_CLOSESOCKETDATA, x->mc->tp);
    curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
    /* no proxy from http_proxy & co. (a load test goes where it is told;
     * it also saves libcurl's environment lookups on every request) */
    curl_easy_setopt(e, CURLOPT_PROXY, o->proxy ? o->proxy : "");
    /* The User-Agent goes in the header list: CURLOPT_USERAGENT makes
     * libcurl format it anew for every request (~6k instructions, 7% of a
     * request measured with callgrind). */
    char ua[512];
    snprintf(ua, sizeof(ua), "User-Agent: %s", o->user_agent ? o->user_agent : "luaload/" LUALOAD_VERSION);
    /* "Expect:" keeps libcurl from sending Expect: 100-continue with a body
     * over 1 MiB and waiting a second for the server, as k6 does not;
     * "Accept-Encoding:" keeps the header that ACCEPT_ENCODING would add
     * off the wire (k6 sends it only when the script does) while libcurl
     * still decodes what comes compressed. */
    x->ua = curl_slist_append(NULL, ua);
    x->http_debug = o->http_debug;
    struct curl_slist *l = x->ua ? curl_slist_append(x->ua, "Accept-Encoding:") : NULL;
    x->ua_body = l ? curl_slist_append(NULL, ua) : NULL;
    l = x->ua_body ? curl_slist_append(x->ua_body, "Accept-Encoding:") : NULL;
    l = l ? curl_slist_append(l, "Expect:") : NULL;
    l = l ? curl_slist_append(l, "Content-Type:") : NULL;
    for (int i = 0; l && o->connect_to && o->connect_to[i]; i++) {
        l = curl_slist_append(x->connect_to, o->connect_to[i]);
        if (l) x->connect_to = l;
    }
    if (!l) return -1;
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L); /* the http module follows, one sample per hop */
    if (x->connect_to) curl_easy_setopt(e, CURLOPT_CONNECT_TO, x->connect_to);
    if (o->multiplex) curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    if (o->tls_min || o->tls_max) curl_easy_setopt(e, CURLOPT_SSLVERSION, ssl_version(o->tls_min, o->tls_max));
    if (o->ciphers) set_ciphers(x, o->ciphers);
    if (o->server_name && !(x->server_name = strdup(o->server_name))) return -1;
    set_dns(x, dns, o->local_addr);
    if (o->dial_timeout_ms > 0) curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, o->dial_timeout_ms);
    if (o->max_conn_duration_s > 0) curl_easy_setopt(e, CURLOPT_MAXLIFETIME_CONN, o->max_conn_duration_s);
    if (o->insecure_skip_verify) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (o->ca) curl_easy_setopt(e, CURLOPT_CAINFO, o->ca);
    if (o->certificate) curl_easy_setopt(e, CURLOPT_SSLCERT, o->certificate);
    if (o->private_key) curl_easy_setopt(e, CURLOPT_SSLKEY, o->private_key);
    x->version_default = o->http_version;
    x->no_reuse = o->disable_keep_alive;
    x->discard = o->discard_bodies;
    x->timeout_default = o->timeout_ms;
    x->limit_default = o->max_response_body > 0 ? o->max_response_body : LL_MAX_RESPONSE_BODY_DEFAULT;
    return 0;
}
/* Appends line to x->hlist; -1 when out of memory. */
static int add_line(curl_transfer *x, const char *line) {
    struct curl_slist *l = curl_slist_append(x->hlist, line);
    if (!l) return -1;
    x->hlist = l;
    return 0;
}

/* Appends "name: value" (value2 after "; " when given) to x->hlist;
 * "Name;" sends an empty value, which "Name:" would remove. -1 when out of
 * memory. */
static int add_header(curl_transfer *x, const char *name, const char *value, const char *value2) {
    char line[1024];
    size_t nl = strlen(name), vl = strlen(value), v2 = value2 ? strlen(value2) : 0, n = nl + vl + v2 + 5;
    char *s = n <= sizeof(line) ? line : malloc(n);
    if (!s) return -1;
    if (vl || v2)
        snprintf(s, n, "%s: %s%s%s", name, value, vl && v2 ? "; " : "", v2 ? value2 : "");
    else
        snprintf(s, n, "%s;", name);
    int rc = add_line(x, s);
    if (s != line) free(s);
    return rc;
}

/* The header list to send: the request's, with the client's User-Agent,
 * "Accept-Encoding:" and (with a body) "Expect:" unless the request sets
 * them, and the jar's cookies after the request's own Cookie header; the
 * transfer's prebuilt list of those, when there is nothing else. NULL when
 * out of memory. */
static struct curl_slist *build_headers(curl_transfer *x, const ll_http_req *req, const char *cookie) {
    curl_slist_free_all(x->hlist);
    x->hlist = NULL;
    x->dyn_node = NULL;
    int has_body = req->body.kind != LL_BODY_NONE, form = req->body.kind == LL_BODY_FORM;
    if (req->nheaders == 0 && !cookie && !x->server_name && !form) return has_body ? x->ua_body : x->ua;
    int has_ua = 0, has_expect = 0, has_ae = 0, has_cookie = 0, has_host = 0, has_type = 0;
    for (int i = 0; i < req->nheaders; i++) {
        const ll_header *h = &req->headers[i];
        has_host |= strcasecmp(h->name, "Host") == 0;
        has_type |= strcasecmp(h->name, "Content-Type") == 0;
        has_ua |= strcasecmp(h->name, "User-Agent") == 0;
        has_expect |= strcasecmp(h->name, "Expect") == 0;
        has_ae |= strcasecmp(h->name, "Accept-Encoding") == 0;
        int is_cookie = strcasecmp(h->name, "Cookie") == 0;
        if (add_header(x, h->name, h->value, is_cookie && !has_cookie ? cookie : NULL) < 0) return NULL;
        has_cookie |= is_cookie;
    }
    if (cookie && !has_cookie && add_header(x, "Cookie", cookie, NULL) < 0) return NULL;
    if (!has_ua && add_line(x, x->ua->data) < 0) return NULL;
    if (!has_expect && has_body && add_line(x, "Expect:") < 0) return NULL;
    /* a form's multipart type is libcurl's to set, with its boundary */
    if (!has_type && has_body && !form && add_line(x, "Content-Type:") < 0) return NULL;
    if (!has_ae && add_line(x, "Accept-Encoding:") < 0) return NULL;
    if (x->server_name && !has_host && add_line(x, x->sni_host) < 0) return NULL;
    /* the request's headers are the list's first lines, in order */
    x->dyn_node = NULL;
    if (req->dyn_header >= 0 && req->dyn_header < req->nheaders) {
        x->dyn_node = x->hlist;
        for (int i = 0; i < req->dyn_header && x->dyn_node; i++) x->dyn_node = x->dyn_node->next;
        x->dyn_gen = req->dyn_gen;
    }
    return x->hlist;
}

/* The request's dyn_header changed since it was applied: its line alone
 * is written again (libcurl reads the list at each transfer). -1 when out
 * of memory. */
int curl_request_update_dyn(curl_transfer *x, const ll_http_req *req) {
    const ll_header *h = &req->headers[req->dyn_header];
    size_t n = strlen(h->name) + strlen(h->value) + 3;
    char *line = malloc(n);
    if (!line) return -1;
    snprintf(line, n, "%s: %s", h->name, h->value);
    free(x->dyn_node->data); /* curl_slist_append's strdup: the same allocator */
    x->dyn_node->data = line;
    x->dyn_gen = req->dyn_gen;
    return 0;
}

/* CURLOPT_HTTP_VERSION of an LL_HTTP_* version */
static long curl_version_of(int v) {
    return v == LL_HTTP_1_1 ? CURL_HTTP_VERSION_1_1
         : v == LL_HTTP_2 ? CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE /* h2c on http://, ALPN h2 on https:// */
         : v == LL_HTTP_3 ? CURL_HTTP_VERSION_3ONLY
         : CURL_HTTP_VERSION_2TLS;
}

/* tls.server_name: the request goes to server_name (the TLS name, SNI and
 * the certificate's) while libcurl connects to the URL's host and port
 * (CONNECT_TO) and the Host header keeps the URL's. -1: out of memory or
 * a URL libcurl cannot take apart. */
static int route_server_name(curl_transfer *x, const char *url) {
    CURLU *u = curl_url();
    char *host = NULL, *port = NULL;
    int rc = -1;
    if (!u || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK) goto done;
    if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) goto done;
    if (curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK) goto done;
    char *explicit_port = NULL;
    int has_port = curl_url_get(u, CURLUPART_PORT, &explicit_port, 0) == CURLUE_OK;
    curl_free(explicit_port);
    if (curl_url_set(u, CURLUPART_HOST, x->server_name, 0) != CURLUE_OK) goto done;
    curl_free(x->sni_url);
    x->sni_url = NULL;
    if (curl_url_get(u, CURLUPART_URL, &x->sni_url, 0) != CURLUE_OK) goto done;
    char line[600];
    snprintf(line, sizeof(line), "Host: %s%s%s", host, has_port ? ":" : "", has_port ? port : "");
    free(x->sni_host);
    if (!(x->sni_host = strdup(line))) goto done;
    snprintf(line, sizeof(line), "%s:%s:%s:%s", x->server_name, port, host, port);
    curl_slist_free_all(x->sni_route);
    x->sni_route = curl_slist_append(NULL, line);
    for (struct curl_slist *c = x->connect_to; x->sni_route && c; c = c->next)
        if (!curl_slist_append(x->sni_route, c->data)) goto done;
    if (x->sni_route) rc = 0;
done:
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
    return rc;
}

/* Applies the options of req and the jar's cookie to the easy handle (only
 * when they changed). */
int curl_request_apply(curl_transfer *x, const ll_http_req *req, const char *m, const char *cookie) {
    CURL *e = x->easy;
    if (x->server_name && route_server_name(x, req->url) < 0) return -1;
    int head = strcmp(m, "HEAD") == 0, post = strcmp(m, "POST") == 0;
    int has_body = req->body.kind != LL_BODY_NONE;
    int plain_get = strcmp(m, "GET") == 0 && !has_body;
    int chunked = 0; /* the script's Transfer-Encoding: chunked */
    for (int i = 0; i < req->nheaders; i++)
        chunked |= strcasecmp(req->headers[i].name, "Transfer-Encoding") == 0 && strcasestr(req->headers[i].value, "chunked");
    struct curl_slist *headers = build_headers(x, req, cookie);
    if (!headers) return -1;
    free(x->cookie_applied);
    x->cookie_applied = cookie ? strdup(cookie) : NULL;
    if (cookie && !x->cookie_applied) return -1;
    curl_easy_setopt(e, CURLOPT_URL, x->server_name ? x->sni_url : req->url);
    if (x->server_name) curl_easy_setopt(e, CURLOPT_CONNECT_TO, x->sni_route);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
    /* params.auth = "ntlm": libcurl holds the handshake on the connection
     * (Basic and Digest are headers and hops of the http module) */
    int ntlm = req->auth == LL_AUTH_NTLM && req->user;
    curl_easy_setopt(e, CURLOPT_HTTPAUTH, ntlm ? CURLAUTH_NTLM : CURLAUTH_BASIC);
    curl_easy_setopt(e, CURLOPT_USERNAME, ntlm ? req->user : NULL);
    curl_easy_setopt(e, CURLOPT_PASSWORD, ntlm ? req->password : NULL);
    curl_easy_setopt(e, CURLOPT_HTTPGET, 1L); /* resets body and NOBODY */
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, NULL);
    x->streamed = 0;
    if (x->mime && req->body.kind != LL_BODY_FORM) mime_drop(x);
    if (head) {
        curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    } else if ((req->body.kind == LL_BODY_MEMORY && !chunked) || (post && !has_body)) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body.len);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, req->body.mem ? req->body.mem : "");
    } else if (req->body.kind == LL_BODY_FORM) {
        if (mime_build(x, req->body.form) < 0) return -1;
    } else if (has_body) { /* a file region or a generator (or chunked): streamed */
        curl_easy_setopt(e, CURLOPT_POST, 1L);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, NULL);
        /* without a size libcurl sends the body chunked over HTTP/1.1 */
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, chunked ? (curl_off_t)-1 : (curl_off_t)req->body.len);
        x->streamed = 1;
    }
    /* any other method, and a GET that carries a body */
    if (!head && !post && !plain_get) curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, m);
    long t = req->timeout_ms > 0 ? req->timeout_ms : x->timeout_default;
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, t > 0 ? t : 0L);
    curl_easy_setopt(e, CURLOPT_FORBID_REUSE, req->disable_keep_alive || x->no_reuse ? 1L : 0L);
    int v = req->http_version >= 0 ? req->http_version : x->version_default;
    if (v != x->version_applied) curl_easy_setopt(e, CURLOPT_HTTP_VERSION, curl_version_of(v));
    x->version_applied = v;
    /* a body is kept up to its limit; libcurl fails one whose length is
     * known to be over it before reading it */
    int none = !req->on_chunk && (req->response_type == LL_RESPONSE_NONE ||
                                  (req->response_type == LL_RESPONSE_DEFAULT && x->discard));
    x->body_limit = none ? 0
                  : req->max_response_body > 0 ? req->max_response_body : x->limit_default;
    /* a streamed body (on_chunk) is not kept: its limit is a chunk's */
    curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)(req->on_chunk ? 0 : x->body_limit));
    x->req_id = req->id;
    x->applied_method = m;
    return 0;
}
