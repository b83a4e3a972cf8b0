/* headers.c -- `luaload serve --echo-header NAME`: counting named request
 * headers.
 *
 * Owns: the --echo-header names (validated as HTTP tokens, kept lowercase,
 * at most HEADERS_MAX), spotting them while request.c parses a head (the
 * first line of each name in a request counts: its value is hashed into
 * the connection's hdr_hash while the line is still in rbuf), and, once
 * the request is complete and counted (conn.c's account, never /stats),
 * the per-thread requests/missing counters and the shared distinct set of
 * each name (distinct.c); and the "headers" object of /stats. Without the
 * flag nothing here runs per request. */
#include "serve_internal.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- flags ---- */

int ll_headers_add_name(serve_cfg *cfg, const char *name, char *why, size_t whylen) {
    size_t n = strlen(name);
    if (n == 0) return -1; /* serve.c's "expected ..." says it */
    if (n > HEADER_NAME_MAX) {
        snprintf(why, whylen, "header name longer than %d bytes", HEADER_NAME_MAX);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (ll_request_is_tchar((unsigned char)name[i])) continue;
        snprintf(why, whylen, "'%s' is not a header name (letters, digits and !#$%%&'*+-.^_`|~ only)", name);
        return -1;
    }
    for (int k = 0; k < cfg->nhdr; k++) {
        if (cfg->hdr_lens[k] != n || strncasecmp(cfg->hdr_names[k], name, n) != 0) continue;
        snprintf(why, whylen, "'%s' given twice", name);
        return -1;
    }
    if (cfg->nhdr == HEADERS_MAX) {
        snprintf(why, whylen, "at most %d header names", HEADERS_MAX);
        return -1;
    }
    char *dst = cfg->hdr_names[cfg->nhdr];
    for (size_t i = 0; i < n; i++) dst[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] - 'A' + 'a' : name[i]);
    dst[n] = '\0';
    cfg->hdr_lens[cfg->nhdr++] = n;
    return 0;
}

int ll_headers_init(serve_cfg *cfg) {
    for (int k = 0; k < cfg->nhdr; k++) {
        cfg->hdr_sets[k] = ll_distinct_new(cfg->hdr_limit);
        if (cfg->hdr_sets[k]) continue;
        fprintf(stderr, "luaload serve: out of memory for --echo-header\n");
        return -1;
    }
    return 0;
}

void ll_headers_free(serve_cfg *cfg) {
    for (int k = 0; k < cfg->nhdr; k++) {
        ll_distinct_free(cfg->hdr_sets[k]);
        cfg->hdr_sets[k] = NULL;
    }
}

/* ---- per request ---- */

void ll_headers_seen(conn *c, const char *name, size_t nlen, const char *v, size_t vlen) {
    const serve_cfg *cfg = c->w->cfg;
    for (int k = 0; k < cfg->nhdr; k++) {
        unsigned bit = 1u << k;
        if (cfg->hdr_lens[k] != nlen || (c->req.hdr_seen & bit)) continue;
        if (strncasecmp(name, cfg->hdr_names[k], nlen) != 0) continue;
        c->req.hdr_seen |= bit;
        ll_distinct_hash(v, vlen, c->hdr_hash[k]);
    }
}

void ll_headers_account(conn *c) {
    const serve_cfg *cfg = c->w->cfg;
    serve_stats *st = &c->w->stats;
    for (int k = 0; k < cfg->nhdr; k++) {
        if (!(c->req.hdr_seen & (1u << k))) {
            ll_stats_add(&st->hdr_missing[k], 1);
            continue;
        }
        ll_stats_add(&st->hdr_requests[k], 1);
        ll_distinct_add(cfg->hdr_sets[k], c->hdr_hash[k]);
    }
}

/* ---- /stats ---- */

static void put_u64(ll_buf *b, const char *key, uint64_t v) {
    char num[48];
    snprintf(num, sizeof(num), "\"%s\":%" PRIu64, key, v);
    ll_buf_puts(b, num);
}

void ll_headers_json(ll_buf *b, const worker *ws, int n) {
    const serve_cfg *cfg = n > 0 ? ws[0].cfg : NULL;
    ll_buf_puts(b, "{");
    for (int k = 0; cfg && k < cfg->nhdr; k++) {
        uint64_t requests = 0, missing = 0;
        int exact;
        for (int i = 0; i < n; i++) {
            requests += atomic_load_explicit(&ws[i].stats.hdr_requests[k], memory_order_relaxed);
            missing += atomic_load_explicit(&ws[i].stats.hdr_missing[k], memory_order_relaxed);
        }
        uint64_t distinct = ll_distinct_count(cfg->hdr_sets[k], &exact);
        if (k > 0) ll_buf_puts(b, ",");
        ll_buf_puts(b, "\"");
        ll_buf_puts(b, cfg->hdr_names[k]); /* a token: nothing to escape */
        ll_buf_puts(b, "\":{");
        put_u64(b, "requests", requests);
        ll_buf_puts(b, ",");
        put_u64(b, "distinct", distinct);
        ll_buf_puts(b, ",");
        put_u64(b, "missing", missing);
        ll_buf_puts(b, exact ? ",\"distinct_exact\":true}" : ",\"distinct_exact\":false}");
    }
    ll_buf_puts(b, "}");
}
