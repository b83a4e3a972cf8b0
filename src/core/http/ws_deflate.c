/* ws_deflate.c -- permessage-deflate on zlib (see ws_deflate.h): raw
 * deflate streams, each message ended by a sync flush whose empty stored
 * block (00 00 ff ff) is left off on the wire and put back to inflate
 * (RFC 7692 7.2.1, 7.2.2). */
#include "ws_deflate.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

static const unsigned char tail[4] = {0x00, 0x00, 0xff, 0xff};

struct ll_ws_deflate_inflater {
    z_stream z;
    int reset;                 /* server_no_context_takeover */
};

/* ---- the answer ---- */

/* The next ";"-separated parameter of s[*i..n), spaces trimmed: its name
 * and value spans (vn 0: none). 0 when none is left. */
static int next_param(const char *s, size_t n, size_t *i, const char **name, size_t *nn, const char **val,
                      size_t *vn) {
    while (*i < n && (s[*i] == ' ' || s[*i] == '\t' || s[*i] == ';')) (*i)++;
    if (*i >= n) return 0;
    size_t b = *i;
    while (*i < n && s[*i] != ';') (*i)++;
    size_t e = *i;
    while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) e--;
    const char *eq = memchr(s + b, '=', e - b);
    size_t ne = eq ? (size_t)(eq - s) : e;
    while (ne > b && (s[ne - 1] == ' ' || s[ne - 1] == '\t')) ne--;
    *name = s + b;
    *nn = ne - b;
    *val = NULL;
    *vn = 0;
    if (eq) {
        size_t vb = (size_t)(eq - s) + 1;
        while (vb < e && (s[vb] == ' ' || s[vb] == '\t' || s[vb] == '"')) vb++;
        size_t ve = e;
        while (ve > vb && s[ve - 1] == '"') ve--;
        *val = s + vb;
        *vn = ve - vb;
    }
    return 1;
}

static int is(const char *p, size_t n, const char *word) { return n == strlen(word) && strncasecmp(p, word, n) == 0; }

int ll_ws_deflate_accept(const char *v, size_t n, int *server_reset, char *err, size_t errlen) {
    *server_reset = 0;
    if (n == 0) return 0;
    if (memchr(v, ',', n)) {
        snprintf(err, errlen, "websocket: bad handshake: the server answered with more than the one extension offered");
        return -1;
    }
    size_t i = 0, nn, vn;
    const char *name, *val;
    if (!next_param(v, n, &i, &name, &nn, &val, &vn) || !is(name, nn, "permessage-deflate") || val) {
        snprintf(err, errlen, "websocket: bad handshake: the server answered with the extension \"%.*s\", not offered",
                 (int)(n > 60 ? 60 : n), v);
        return -1;
    }
    while (next_param(v, n, &i, &name, &nn, &val, &vn)) {
        if (is(name, nn, "server_no_context_takeover") && !val) {
            *server_reset = 1;
        } else if (is(name, nn, "client_no_context_takeover") && !val) {
            /* what was asked: each message is compressed afresh anyway */
        } else if (is(name, nn, "server_max_window_bits") && val && vn >= 1 && vn <= 2 && atoi(val) >= 8 &&
                   atoi(val) <= 15) {
            /* inflating with the largest window reads any smaller one */
        } else {
            snprintf(err, errlen, "websocket: bad handshake: permessage-deflate's parameter \"%.*s\" was not offered "
                     "or is malformed", (int)(nn > 60 ? 60 : nn), name);
            return -1;
        }
    }
    return 1;
}

/* ---- compressing: one stream per thread ---- */

static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static __thread z_stream *thread_z;

static void z_free(void *p) {
    z_stream *z = p;
    deflateEnd(z);
    free(z);
    thread_z = NULL;
}

static void key_make(void) { pthread_key_create(&key, z_free); }

static z_stream *deflater(void) {
    if (thread_z) return thread_z;
    pthread_once(&key_once, key_make);
    z_stream *z = calloc(1, sizeof(*z));
    /* level 1: gorilla/websocket's (k6's) default, cheap for a load tester */
    if (!z || deflateInit2(z, 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(z);
        return NULL;
    }
    pthread_setspecific(key, z); /* freed when the thread ends */
    return thread_z = z;
}

int ll_ws_deflate_compress(const void *p, size_t n, ll_buf *out) {
    z_stream *z = deflater();
    out->len = 0;
    if (!z || deflateReset(z) != Z_OK) return -1;
    z->next_in = (Bytef *)p;
    z->avail_in = (uInt)n; /* messages are under 4 GiB (size_t checked by the caller) */
    do {
        size_t room = n / 2 + 64;
        if (ll_buf_reserve(out, room) < 0) return -1;
        z->next_out = (Bytef *)out->p + out->len;
        z->avail_out = (uInt)room;
        int rc = deflate(z, Z_SYNC_FLUSH);
        if (rc != Z_OK && rc != Z_BUF_ERROR) return -1;
        out->len += room - z->avail_out;
    } while (z->avail_in > 0 || z->avail_out == 0);
    if (out->len >= 4 && memcmp(out->p + out->len - 4, tail, 4) == 0) out->len -= 4;
    return 0;
}

/* ---- inflating: one stream per connection ---- */

ll_ws_deflate_inflater *ll_ws_deflate_inflater_new(int server_reset) {
    ll_ws_deflate_inflater *z = calloc(1, sizeof(*z));
    if (!z || inflateInit2(&z->z, -15) != Z_OK) {
        free(z);
        return NULL;
    }
    z->reset = server_reset;
    return z;
}

/* Inflates what z->z holds as input into out, up to max; *ended when the
 * server ended its deflate stream (a final block). 0, -1, -2 as
 * ll_ws_deflate_inflate. */
static int inflate_into(ll_ws_deflate_inflater *z, uint64_t max, ll_buf *out, int *ended, const char **err) {
    for (;;) {
        size_t room = 16384;
        if (ll_buf_reserve(out, room) < 0) {
            *err = "out of memory inflating a message";
            return -1;
        }
        z->z.next_out = (Bytef *)out->p + out->len;
        z->z.avail_out = (uInt)room;
        int rc = inflate(&z->z, Z_SYNC_FLUSH);
        out->len += room - z->z.avail_out;
        if (out->len > max) return -2;
        if (rc == Z_STREAM_END) {
            *ended = 1;
            return 0;
        }
        if (rc != Z_OK && rc != Z_BUF_ERROR) {
            *err = z->z.msg ? z->z.msg : "corrupt deflate data";
            return -1;
        }
        if (z->z.avail_out > 0 && (z->z.avail_in == 0 || rc == Z_BUF_ERROR)) return 0; /* all taken */
    }
}

int ll_ws_deflate_inflate(ll_ws_deflate_inflater *z, const void *p, size_t n, uint64_t max, ll_buf *out,
                          const char **err) {
    int ended = 0;
    out->len = 0;
    z->z.next_in = (Bytef *)p;
    z->z.avail_in = (uInt)n;
    int rc = inflate_into(z, max, out, &ended, err);
    if (rc == 0 && !ended) {
        z->z.next_in = (Bytef *)tail;
        z->z.avail_in = sizeof(tail);
        rc = inflate_into(z, max, out, &ended, err);
    }
    if (rc != 0 || ended || z->reset) inflateReset(&z->z); /* the next message starts afresh */
    return rc;
}

void ll_ws_deflate_inflater_free(ll_ws_deflate_inflater *z) {
    if (!z) return;
    inflateEnd(&z->z);
    free(z);
}

int ll_ws_deflate_utf8_ok(const char *s, size_t n) {
    const unsigned char *p = (const unsigned char *)s, *e = p + n;
    while (p < e) {
        unsigned c = *p;
        if (c < 0x80) {
            p++;
            continue;
        }
        size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        if (!len || (size_t)(e - p) < len) return 0;
        for (size_t i = 1; i < len; i++)
            if ((p[i] & 0xc0) != 0x80) return 0;
        if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f) || (c == 0xf0 && p[1] < 0x90) ||
            (c == 0xf4 && p[1] > 0x8f))
            return 0; /* overlong, a surrogate, over U+10FFFF */
        p += len;
    }
    return 1;
}
