/* fake_transport.c -- the canned-response transport of fake_transport.h. */
#include "fake_transport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

fake_stats fake_transport_stats;

typedef struct fake_transfer {
    ll_transfer base;
    ll_timer timer;
    ll_transfer_done_fn *fn;
    void *ud;
    int active;
    ll_buf body, hdrs;
    ll_http_res res;
} fake_transfer;

static ll_transport *fake_new(ll_loop *loop, const ll_dns_config *dns) {
    (void)dns;
    ll_transport *tp = calloc(1, sizeof(*tp));
    tp->ops = &fake_transport_ops;
    tp->loop = loop;
    fake_transport_stats.transports++;
    return tp;
}

static void fake_free(ll_transport *tp) { free(tp); }

/* Frees the buffers after each response, so a test sees that the callback
 * copied what it needed before releasing them. */
static void fake_release(ll_transfer *base) {
    fake_transfer *x = (fake_transfer *)base;
    ll_buf_free(&x->body);
    ll_buf_free(&x->hdrs);
}

static int fake_cancel(ll_transfer *base, int64_t *bytes_sent) {
    fake_transfer *x = (fake_transfer *)base;
    *bytes_sent = 0;
    if (!x->active) return 0;
    ll_loop_timer_stop(base->tp->loop, &x->timer);
    x->active = 0;
    fake_transport_stats.cancels++;
    return 1; /* a fake request is out as soon as it starts */
}

static void fill(fake_transfer *x) {
    const ll_http_req *req = x->base.req;
    const char *path = strstr(req->url, "://");
    path = path ? strchr(path + 3, '/') : NULL;
    if (!path) path = "/";
    ll_http_res *r = &x->res;
    memset(r, 0, sizeof(*r));
    x->body.len = x->hdrs.len = 0;
    r->t.blocked = 1000;
    r->t.sending = 100;
    r->t.waiting = 2000;
    r->t.receiving = 300;
    r->t.duration = FAKE_DURATION_US;
    r->error = "";
    r->effective_url = req->url;
    r->tls_version = r->tls_cipher_suite = "";
    if (strncmp(path, "/fail", 5) == 0) {
        r->proto = "";
        r->error = "connection refused";
        r->error_code = 1212;
        r->body = r->headers = "";
        return;
    }
    r->status = strncmp(path, "/status/", 8) == 0 ? atoi(path + 8) : 200;
    r->proto = "HTTP/1.1";
    if (r->status >= 400) r->error_code = 1000 + r->status;
    char line[256];
    snprintf(line, sizeof(line), "HTTP/1.1 %d X\r\nContent-Type: text/plain\r\nX-Fake: 1\r\nx-fake: 2\r\n\r\n", r->status);
    ll_buf_puts(&x->hdrs, line);
    if (strncmp(path, "/json", 5) == 0) {
        ll_buf_puts(&x->body, "{\"a\":[1,2,{\"b\":\"c\"}],\"n\":null}");
    } else { /* echo */
        ll_buf_puts(&x->body, x->base.method);
        ll_buf_puts(&x->body, " ");
        ll_buf_puts(&x->body, req->url);
        ll_buf_puts(&x->body, "\n");
        for (int i = 0; i < req->nheaders; i++) {
            ll_buf_puts(&x->body, req->headers[i].name);
            ll_buf_puts(&x->body, ": ");
            ll_buf_puts(&x->body, req->headers[i].value);
            ll_buf_puts(&x->body, "\n");
        }
        ll_buf_puts(&x->body, "\n");
        char chunk[7]; /* small reads, to go through the source several times */
        for (uint64_t pos = 0;;) {
            ssize_t n = ll_body_read(&req->body, pos, chunk, sizeof(chunk));
            if (n <= 0) break;
            ll_buf_append(&x->body, chunk, (size_t)n);
            pos += (uint64_t)n;
        }
    }
    r->body = x->body.p ? x->body.p : "";
    r->body_len = x->body.len;
    r->headers = x->hdrs.p;
    r->headers_len = x->hdrs.len;
    r->bytes_sent = 100;
    r->bytes_received = (int64_t)(x->hdrs.len + x->body.len);
}

static void on_due(ll_loop *loop, void *ud) {
    (void)loop;
    fake_transfer *x = ud;
    x->active = 0;
    fill(x);
    fake_transport_stats.completions++;
    x->fn(&x->base, &x->res, x->ud);
}

static ll_transfer *fake_transfer_new(ll_transport *tp, int vu_index, uint64_t pool, const ll_client_opts *opts) {
    (void)pool;
    (void)vu_index;
    (void)opts;
    fake_transfer *x = calloc(1, sizeof(*x));
    x->base.tp = tp;
    ll_loop_timer_init(&x->timer, on_due, x);
    fake_transport_stats.transfers++;
    return &x->base;
}

static void fake_transfer_free(ll_transfer *base) {
    fake_transfer *x = (fake_transfer *)base;
    int64_t sent;
    fake_cancel(base, &sent);
    ll_buf_free(&x->body);
    ll_buf_free(&x->hdrs);
    free(x);
}

static int fake_start(ll_transfer *base, const ll_http_req *req, const char *method, const char *cookie,
                      ll_transfer_done_fn *fn, void *ud, const char **err) {
    (void)cookie;
    fake_transfer *x = (fake_transfer *)base;
    if (x->active) {
        *err = "a request is already in flight on this connection";
        return -1;
    }
    base->req = req;
    base->method = method;
    x->fn = fn;
    x->ud = ud;
    x->active = 1;
    fake_transport_stats.starts++;
    if (!strstr(req->url, "/hang")) ll_loop_timer_start(base->tp->loop, &x->timer, 0);
    return 0;
}

static int fake_supports(int http_version) { return http_version != LL_HTTP_3; }

const ll_transport_ops fake_transport_ops = {
    .name = "fake",
    .transport_new = fake_new,
    .transport_free = fake_free,
    .transfer_new = fake_transfer_new,
    .transfer_free = fake_transfer_free,
    .start = fake_start,
    .cancel = fake_cancel,
    .release = fake_release,
    .supports = fake_supports,
};
