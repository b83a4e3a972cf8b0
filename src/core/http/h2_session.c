/* h2_session.c -- one HTTP/2 client session on nghttp2 (see
 * h2_session.h). nghttp2 is driven through its memory interface: the
 * connection feeds what it read to ll_h2_recv and writes what ll_h2_send
 * appends, so the socket, TLS and the event loop stay the transport's.
 * Window sizes are Go's (k6's): 4 MiB per stream, 1 GiB per connection. */
#include "h2_session.h"

#include <nghttp2/nghttp2.h>
#include <stdlib.h>
#include <string.h>

#define STREAM_WINDOW (4 << 20)
#define CONN_WINDOW (1 << 30)
#define SEND_CHUNK (64u << 10) /* what ll_h2_send queues at most in one call */

struct ll_h2 {
    nghttp2_session *s;
    const ll_h2_stream_ops *ops;
    int goaway;
    int failed;
};

static void *ud_of(nghttp2_session *s, int32_t id) { return nghttp2_session_get_stream_user_data(s, id); }

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
                     const uint8_t *value, size_t vlen, uint8_t flags, void *user) {
    (void)flags;
    ll_h2 *h = user;
    void *ud = f->hd.type == NGHTTP2_HEADERS ? ud_of(s, f->hd.stream_id) : NULL;
    if (!ud) return 0;
    if (h->ops->on_header(ud, (const char *)name, nlen, (const char *)value, vlen) == 0) return 0;
    return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* resets the stream */
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *f, void *user) {
    ll_h2 *h = user;
    if (f->hd.type == NGHTTP2_GOAWAY) h->goaway = 1;
    if (f->hd.type != NGHTTP2_HEADERS || !(f->hd.flags & NGHTTP2_FLAG_END_HEADERS)) return 0;
    void *ud = ud_of(s, f->hd.stream_id);
    if (!ud) return 0;
    int final = f->headers.cat == NGHTTP2_HCAT_RESPONSE || f->headers.cat == NGHTTP2_HCAT_HEADERS;
    if (h->ops->on_headers_done(ud, final) == 0) return 0;
    nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, f->hd.stream_id, NGHTTP2_CANCEL);
    return 0;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *p, size_t n, void *user) {
    (void)flags;
    ll_h2 *h = user;
    void *ud = ud_of(s, id);
    if (!ud || h->ops->on_data(ud, (const char *)p, n) == 0) return 0;
    nghttp2_session_set_stream_user_data(s, id, NULL);
    nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
    h->ops->on_close(ud, NGHTTP2_CANCEL);
    return 0;
}

static int on_close(nghttp2_session *s, int32_t id, uint32_t code, void *user) {
    ll_h2 *h = user;
    void *ud = ud_of(s, id);
    if (ud) h->ops->on_close(ud, code);
    return 0;
}

static int on_frame_send(nghttp2_session *s, const nghttp2_frame *f, void *user) {
    ll_h2 *h = user;
    if ((f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA) || !(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
        return 0;
    void *ud = ud_of(s, f->hd.stream_id);
    if (ud) h->ops->on_sent(ud);
    return 0;
}

static ssize_t read_body(nghttp2_session *s, int32_t id, uint8_t *buf, size_t n, uint32_t *flags,
                         nghttp2_data_source *src, void *user) {
    (void)src;
    ll_h2 *h = user;
    void *ud = ud_of(s, id);
    if (!ud) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    ssize_t r = h->ops->read_body(ud, (char *)buf, n);
    if (r < 0) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    if (r == 0) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return r;
}

ll_h2 *ll_h2_new(const ll_h2_stream_ops *ops) {
    ll_h2 *h = calloc(1, sizeof(*h));
    nghttp2_session_callbacks *cb = NULL;
    if (!h || nghttp2_session_callbacks_new(&cb) != 0) {
        free(h);
        return NULL;
    }
    nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
    nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_frame_send);
    h->ops = ops;
    int rc = nghttp2_session_client_new(&h->s, cb, h);
    nghttp2_session_callbacks_del(cb);
    if (rc != 0) {
        free(h);
        return NULL;
    }
    nghttp2_settings_entry iv[] = {
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, STREAM_WINDOW},
    };
    if (nghttp2_submit_settings(h->s, NGHTTP2_FLAG_NONE, iv, sizeof(iv) / sizeof(iv[0])) != 0 ||
        nghttp2_session_set_local_window_size(h->s, NGHTTP2_FLAG_NONE, 0, CONN_WINDOW) != 0) {
        ll_h2_free(h);
        return NULL;
    }
    return h;
}

void ll_h2_free(ll_h2 *h) {
    if (!h) return;
    nghttp2_session_del(h->s);
    free(h);
}

int32_t ll_h2_submit(ll_h2 *h, const ll_h2_header *hv, size_t n, int has_body, void *ud) {
    nghttp2_nv nv[128];
    if (n == 0) return -1;
    nghttp2_nv *v = n <= sizeof(nv) / sizeof(nv[0]) ? nv : malloc(n * sizeof(*v));
    if (!v) return -1;
    for (size_t i = 0; i < n; i++) {
        v[i].name = (uint8_t *)hv[i].name;
        v[i].namelen = hv[i].nlen;
        v[i].value = (uint8_t *)hv[i].value;
        v[i].valuelen = hv[i].vlen;
        v[i].flags = NGHTTP2_NV_FLAG_NONE; /* nghttp2 copies them */
    }
    nghttp2_data_provider prd = {.read_callback = read_body};
    int32_t id = nghttp2_submit_request(h->s, NULL, v, n, has_body ? &prd : NULL, ud);
    if (v != nv) free(v);
    return id > 0 ? id : -1;
}

void ll_h2_cancel(ll_h2 *h, int32_t id) {
    if (id <= 0) return;
    nghttp2_session_set_stream_user_data(h->s, id, NULL);
    nghttp2_submit_rst_stream(h->s, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
}

void ll_h2_resume(ll_h2 *h, int32_t id) { nghttp2_session_resume_data(h->s, id); }

int ll_h2_recv(ll_h2 *h, const char *p, size_t n, const char **err) {
    ssize_t r = nghttp2_session_mem_recv(h->s, (const uint8_t *)p, n);
    if (r >= 0) return 0;
    h->failed = 1;
    *err = nghttp2_strerror((int)r);
    return -1;
}

int ll_h2_send(ll_h2 *h, ll_buf *out, const char **err) {
    while (out->len < SEND_CHUNK) {
        const uint8_t *data = NULL;
        ssize_t n = nghttp2_session_mem_send(h->s, &data);
        if (n < 0) {
            h->failed = 1;
            *err = nghttp2_strerror((int)n);
            return -1;
        }
        if (n == 0) break;
        if (ll_buf_append(out, data, (size_t)n) < 0) {
            *err = "out of memory";
            return -1;
        }
    }
    return 0;
}

int ll_h2_can_submit(const ll_h2 *h, int open, int max) {
    if (h->goaway || h->failed) return 0;
    if (max > 0 && open >= max) return 0;
    if ((uint32_t)open >= nghttp2_session_get_remote_settings(h->s, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS)) return 0;
    return nghttp2_session_get_next_stream_id(h->s) < (1u << 31) - 2;
}

int ll_h2_alive(const ll_h2 *h) {
    return !h->failed && (nghttp2_session_want_read(h->s) || nghttp2_session_want_write(h->s));
}
