/* h2_session.c -- one HTTP/2 client session on nghttp2 (see
 * h2_session.h). nghttp2 is driven through its memory interface: the
 * connection feeds what it read to ll_h2_recv and writes what ll_h2_send
 * appends, so the socket, TLS and the event loop stay the transport's.
 * Window sizes are Go's (k6's): 4 MiB per stream, 1 GiB per connection. */
#include "h2_session.h"
#include "body.h"

#include <nghttp2/nghttp2.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define STREAM_WINDOW (4 << 20)
#define CONN_WINDOW (1 << 30)
#define SEND_CHUNK (64u << 10) /* what ll_h2_send queues at most in one call */

/* nghttp2's memory comes from the session's own lists of freed blocks,
 * one per size class (64 bytes to 2 KiB), each keeping at most POOL_KEEP.
 * A stream costs nghttp2 about eleven small blocks, and a connection's
 * streams end in bursts: glibc's per-thread cache keeps seven blocks a
 * size, so most frees went through its slow path (_int_free, ~1.4k
 * instructions per request in callgrind). A block has a header before
 * what nghttp2 sees: its class (-1: larger, malloc's own) and size. */
#define POOL_CLASSES 6
#define POOL_SMALLEST 64
#define POOL_KEEP 128

typedef union pool_head {
    struct {
        int cls;
        size_t size;
    } h;
    max_align_t align;
} pool_head;

typedef struct pool_free {
    struct pool_free *next;
} pool_free;

struct ll_h2 {
    nghttp2_session *s;
    const ll_h2_stream_ops *ops;
    int goaway;
    int failed;
    int32_t last_id;            /* the stream whose owner was looked up last, */
    void *last_ud;              /* and its owner: a response's callbacks come
                                 * for one stream in a row (0: none) */
    pool_free *free[POOL_CLASSES];
    int nfree[POOL_CLASSES];
};

static void *pool_malloc(size_t size, void *user) {
    ll_h2 *h = user;
    int cls = 0;
    while (cls < POOL_CLASSES && ((size_t)POOL_SMALLEST << cls) < size) cls++;
    if (cls < POOL_CLASSES && h->free[cls]) {
        pool_free *f = h->free[cls];
        h->free[cls] = f->next;
        h->nfree[cls]--;
        return f;
    }
    size_t cap = cls < POOL_CLASSES ? (size_t)POOL_SMALLEST << cls : size;
    if (cap > SIZE_MAX - sizeof(pool_head)) return NULL;
    pool_head *b = malloc(sizeof(pool_head) + cap);
    if (!b) return NULL;
    b->h.cls = cls < POOL_CLASSES ? cls : -1;
    b->h.size = cap;
    return b + 1;
}

static void pool_release(void *p, void *user) {
    ll_h2 *h = user;
    if (!p) return;
    pool_head *b = (pool_head *)p - 1;
    int cls = b->h.cls;
    if (cls < 0 || h->nfree[cls] >= POOL_KEEP) {
        free(b);
        return;
    }
    pool_free *f = p;
    f->next = h->free[cls];
    h->free[cls] = f;
    h->nfree[cls]++;
}

static void *pool_calloc(size_t n, size_t size, void *user) {
    if (size && n > SIZE_MAX / size) return NULL;
    void *p = pool_malloc(n * size, user);
    if (p) memset(p, 0, n * size);
    return p;
}

static void *pool_realloc(void *p, size_t size, void *user) {
    if (!p) return pool_malloc(size, user);
    size_t had = ((pool_head *)p - 1)->h.size;
    if (size <= had) return p;
    void *q = pool_malloc(size, user);
    if (!q) return NULL;
    memcpy(q, p, had < size ? had : size);
    pool_release(p, user);
    return q;
}

static void pool_drain(ll_h2 *h) {
    for (int i = 0; i < POOL_CLASSES; i++)
        while (h->free[i]) {
            pool_free *f = h->free[i];
            h->free[i] = f->next;
            free((pool_head *)(void *)f - 1);
        }
}

/* The owner of stream id, or NULL: from the last lookup when it was for
 * the same stream (nghttp2's is a hash lookup). */
static void *ud_of(ll_h2 *h, int32_t id) {
    if (id == h->last_id && id != 0) return h->last_ud;
    h->last_ud = nghttp2_session_get_stream_user_data(h->s, id);
    h->last_id = id;
    return h->last_ud;
}

/* Stream id has no owner any more (cancelled, failed or closed). */
static void forget(ll_h2 *h, int32_t id) {
    if (id == h->last_id) h->last_id = 0;
}

/* Takes stream id from its owner, which hears no more of it. */
static void disown(ll_h2 *h, int32_t id) {
    nghttp2_session_set_stream_user_data(h->s, id, NULL);
    forget(h, id);
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name, size_t nlen,
                     const uint8_t *value, size_t vlen, uint8_t flags, void *user) {
    (void)s;
    (void)flags;
    ll_h2 *h = user;
    void *ud = f->hd.type == NGHTTP2_HEADERS ? ud_of(h, f->hd.stream_id) : NULL;
    if (!ud) return 0;
    if (h->ops->on_header(ud, (const char *)name, nlen, (const char *)value, vlen) == 0) return 0;
    return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* resets the stream */
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *f, void *user) {
    ll_h2 *h = user;
    if (f->hd.type == NGHTTP2_GOAWAY) h->goaway = 1;
    if (f->hd.type != NGHTTP2_HEADERS || !(f->hd.flags & NGHTTP2_FLAG_END_HEADERS)) return 0;
    void *ud = ud_of(h, f->hd.stream_id);
    if (!ud) return 0;
    int final = f->headers.cat == NGHTTP2_HCAT_RESPONSE || f->headers.cat == NGHTTP2_HCAT_HEADERS;
    if (h->ops->on_headers_done(ud, final) == 0) return 0;
    nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, f->hd.stream_id, NGHTTP2_CANCEL);
    return 0;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t id, const uint8_t *p, size_t n, void *user) {
    (void)flags;
    ll_h2 *h = user;
    void *ud = ud_of(h, id);
    if (!ud || h->ops->on_data(ud, (const char *)p, n) == 0) return 0;
    disown(h, id);
    nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
    h->ops->on_close(ud, NGHTTP2_CANCEL);
    return 0;
}

static int on_close(nghttp2_session *s, int32_t id, uint32_t code, void *user) {
    (void)s;
    ll_h2 *h = user;
    void *ud = ud_of(h, id);
    forget(h, id);
    if (ud) h->ops->on_close(ud, code);
    return 0;
}

static int on_frame_send(nghttp2_session *s, const nghttp2_frame *f, void *user) {
    (void)s;
    ll_h2 *h = user;
    if ((f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA) || !(f->hd.flags & NGHTTP2_FLAG_END_STREAM))
        return 0;
    void *ud = ud_of(h, f->hd.stream_id);
    if (ud) h->ops->on_sent(ud);
    return 0;
}

static ssize_t read_body(nghttp2_session *s, int32_t id, uint8_t *buf, size_t n, uint32_t *flags,
                         nghttp2_data_source *src, void *user) {
    (void)s;
    (void)src;
    ll_h2 *h = user;
    void *ud = ud_of(h, id);
    if (!ud) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    ssize_t r = h->ops->read_body(ud, (char *)buf, n);
    if (r == LL_BODY_LATER) return NGHTTP2_ERR_DEFERRED; /* ll_h2_resume when there is more */
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
    nghttp2_mem mem = {h, pool_malloc, pool_release, pool_calloc, pool_realloc};
    int rc = nghttp2_session_client_new3(&h->s, cb, h, NULL, &mem);
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
    pool_drain(h);
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
        /* nghttp2 copies them (and lower-cases the name), but for a name
         * that outlives the session */
        v[i].flags = hv[i].static_name ? NGHTTP2_NV_FLAG_NO_COPY_NAME : NGHTTP2_NV_FLAG_NONE;
    }
    nghttp2_data_provider prd = {.read_callback = read_body};
    int32_t id = nghttp2_submit_request(h->s, NULL, v, n, has_body ? &prd : NULL, ud);
    if (v != nv) free(v);
    forget(h, id); /* a lookup made before it was submitted saw no owner */
    return id > 0 ? id : -1;
}

void ll_h2_cancel(ll_h2 *h, int32_t id) {
    if (id <= 0) return;
    disown(h, id);
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
