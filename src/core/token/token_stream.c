/* token_stream.c -- token streams shared by threads (see token_stream.h):
 * the process's table of open streams, file streams read in chunks by
 * cursors, and live streams over a token ring (token_ring.c).
 *
 * A file cursor claims the byte range [o, o + chunk) with one atomic add
 * and owns the lines that start in it (a line starts at 0 or after a
 * '\n'), reading up to 64 KiB past the range's end for its last line; so
 * every line belongs to exactly one range. Each cursor guards its range
 * with a mutex of its own, uncontended until the ranges are all claimed:
 * from then on a cursor whose range is empty takes lines from the other
 * cursors' ranges under their mutexes (the table of cursors under the
 * stream's), so that the run's last tokens reach whoever needs them. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "token_ring.h"
#include "token_stream.h"

#define TOKEN_STREAM_CHUNK 65536
#define TOKEN_STREAM_MAX_LINE 65536

struct ll_token_stream {
    ll_token_stream *next_open; /* the table of open streams */
    int refs;                   /* under token_stream_mu */
    char *path;
    /* live */
    ll_token_ring *ring;
    ll_jwt_gen *gen;
    /* file */
    int fd;
    dev_t dev;
    ino_t ino;
    uint64_t size;
    _Atomic uint64_t offset;     /* the next range to claim */
    atomic_int drained;          /* every token handed out */
    pthread_mutex_t mu;          /* cursors */
    ll_token_cursor *cursors;
    _Atomic uint64_t handed;
};

struct ll_token_cursor {
    ll_token_stream *ts;
    ll_token_cursor *prev, *next; /* the stream's cursors */
    pthread_mutex_t mu;           /* pos and end, against the other cursors */
    char *buf;                    /* file: the range's bytes, from its start - 1 */
    size_t cap, got;
    size_t pos, end;              /* lines starting in [pos, end) of buf are still ours */
    int at_eof;                   /* buf reaches the file's end */
    char *own;                    /* a token copied out: taken from another cursor, or live */
    ll_jwt_signer *signer;        /* live: signs when the ring is empty */
};

static pthread_mutex_t token_stream_mu = PTHREAD_MUTEX_INITIALIZER;
static ll_token_stream *token_stream_open_list;

static int token_stream_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/* The stream in the table the same as (dev, ino) or fingerprint fp, with
 * one more reference; under token_stream_mu. */
static ll_token_stream *token_stream_find(dev_t dev, ino_t ino, const char *fp) {
    for (ll_token_stream *s = token_stream_open_list; s; s = s->next_open) {
        int same = fp ? s->gen && strcmp(ll_jwt_gen_fingerprint(s->gen), fp) == 0
                      : !s->gen && s->dev == dev && s->ino == ino;
        if (same) {
            s->refs++;
            return s;
        }
    }
    return NULL;
}

static ll_token_stream *token_stream_alloc(const char *path) {
    ll_token_stream *s = calloc(1, sizeof(*s));
    if (s) s->path = strdup(path);
    if (s && !s->path) {
        free(s);
        return NULL;
    }
    if (s) {
        s->refs = 1;
        s->fd = -1;
        pthread_mutex_init(&s->mu, NULL);
    }
    return s;
}

static void token_stream_free(ll_token_stream *s) {
    ll_token_ring_free(s->ring);
    ll_jwt_gen_free(s->gen);
    if (s->fd >= 0) close(s->fd);
    pthread_mutex_destroy(&s->mu);
    free(s->path);
    free(s);
}

ll_token_stream *ll_token_stream_open(const char *path, char *err, size_t errlen) {
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
        int e = errno;
        snprintf(err, errlen, "cannot read tokens from '%s': %s", path,
                 fd < 0 ? strerror(e) : !S_ISREG(st.st_mode) ? "not a regular file" : "the file is empty");
        if (fd >= 0) close(fd);
        return NULL;
    }
    pthread_mutex_lock(&token_stream_mu);
    ll_token_stream *s = token_stream_find(st.st_dev, st.st_ino, NULL);
    if (!s && (s = token_stream_alloc(path))) {
        s->fd = fd;
        fd = -1;
        s->dev = st.st_dev;
        s->ino = st.st_ino;
        s->size = (uint64_t)st.st_size;
        s->next_open = token_stream_open_list;
        token_stream_open_list = s;
    }
    pthread_mutex_unlock(&token_stream_mu);
    if (fd >= 0) close(fd);
    if (!s) snprintf(err, errlen, "out of memory opening '%s'", path);
    return s;
}

ll_token_stream *ll_token_stream_live(ll_jwt_gen *g, size_t capacity, int threads, char *err, size_t errlen) {
    pthread_mutex_lock(&token_stream_mu);
    ll_token_stream *s = token_stream_find(0, 0, ll_jwt_gen_fingerprint(g));
    if (!s) {
        s = token_stream_alloc("(live)");
        if (s) {
            s->gen = ll_jwt_gen_ref(g);
            s->ring = ll_token_ring_new(g, capacity, threads, err, errlen);
        } else {
            snprintf(err, errlen, "out of memory starting the token threads");
        }
        if (s && !s->ring) {
            token_stream_free(s);
            s = NULL;
        }
        if (s) {
            s->next_open = token_stream_open_list;
            token_stream_open_list = s;
        }
    }
    pthread_mutex_unlock(&token_stream_mu);
    return s;
}

void ll_token_stream_close(ll_token_stream *ts) {
    if (!ts) return;
    pthread_mutex_lock(&token_stream_mu);
    int last = --ts->refs == 0;
    for (ll_token_stream **p = &token_stream_open_list; last && *p; p = &(*p)->next_open) {
        if (*p == ts) {
            *p = ts->next_open;
            break;
        }
    }
    pthread_mutex_unlock(&token_stream_mu);
    if (last) token_stream_free(ts);
}

ll_token_cursor *ll_token_stream_cursor(ll_token_stream *ts) {
    ll_token_cursor *c = calloc(1, sizeof(*c));
    if (!c) return NULL;
    c->ts = ts;
    pthread_mutex_init(&c->mu, NULL);
    uint64_t cap = TOKEN_STREAM_CHUNK + 1 + TOKEN_STREAM_MAX_LINE;
    c->cap = ts->ring ? 0 : (size_t)(ts->size + 1 < cap ? ts->size + 1 : cap);
    c->buf = c->cap ? malloc(c->cap) : NULL;
    c->own = malloc(ts->ring ? ll_jwt_gen_max_len(ts->gen) : TOKEN_STREAM_MAX_LINE);
    if ((c->cap && !c->buf) || !c->own) {
        ll_token_stream_cursor_free(c);
        return NULL;
    }
    pthread_mutex_lock(&ts->mu);
    c->next = ts->cursors;
    if (ts->cursors) ts->cursors->prev = c;
    ts->cursors = c;
    pthread_mutex_unlock(&ts->mu);
    return c;
}

void ll_token_stream_cursor_free(ll_token_cursor *c) {
    if (!c) return;
    ll_token_stream *ts = c->ts;
    pthread_mutex_lock(&ts->mu);
    if (c->prev) c->prev->next = c->next;
    else if (ts->cursors == c) ts->cursors = c->next;
    if (c->next) c->next->prev = c->prev;
    pthread_mutex_unlock(&ts->mu);
    pthread_mutex_destroy(&c->mu);
    ll_jwt_signer_free(c->signer);
    free(c->buf);
    free(c->own);
    free(c);
}

/* The next non-blank line starting in c's range (c->mu held): 1, 0 when
 * none is left, -1 when the line is longer than the bytes read past it. */
static int token_stream_take(ll_token_cursor *c, const char **tok, size_t *len) {
    while (c->pos < c->end) {
        size_t s = c->pos, e;
        const char *nl = memchr(c->buf + s, '\n', c->got - s);
        if (nl) e = (size_t)(nl - c->buf);
        else if (c->at_eof) e = c->got;
        else return -1;
        c->pos = e + 1;
        while (s < e && token_stream_space(c->buf[s])) s++;
        while (e > s && token_stream_space(c->buf[e - 1])) e--;
        if (e > s) {
            *tok = c->buf + s;
            *len = e - s;
            return 1;
        }
    }
    return 0;
}

/* Claims and reads the next range into c (c->mu held): 1, 0 when every
 * range is claimed, -1 on a read error. */
static int token_stream_refill(ll_token_cursor *c, char *err, size_t errlen) {
    ll_token_stream *ts = c->ts;
    uint64_t o = atomic_fetch_add(&ts->offset, TOKEN_STREAM_CHUNK);
    if (o >= ts->size) return 0;
    uint64_t end = o + TOKEN_STREAM_CHUNK < ts->size ? o + TOKEN_STREAM_CHUNK : ts->size;
    uint64_t base = o > 0 ? o - 1 : 0; /* the byte before says whether a line starts at o */
    size_t want = ts->size - base < c->cap ? (size_t)(ts->size - base) : c->cap;
    size_t got = 0;
    while (got < want) {
        ssize_t r = pread(ts->fd, c->buf + got, want - got, (off_t)(base + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            snprintf(err, errlen, "cannot read tokens from '%s': %s", ts->path, r < 0 ? strerror(errno) : "it got shorter");
            return -1;
        }
        got += (size_t)r;
    }
    c->got = got;
    c->at_eof = base + got == ts->size;
    c->end = (size_t)(end - base);
    const char *nl = o == 0 ? NULL : memchr(c->buf, '\n', got);
    c->pos = o == 0 ? 0 : nl ? (size_t)(nl - c->buf) + 1 : got;
    return 1;
}

/* A token from another cursor's range, copied into c->own: 1 or 0. */
static int token_stream_steal(ll_token_cursor *c, const char **tok, size_t *len) {
    ll_token_stream *ts = c->ts;
    int found = 0;
    pthread_mutex_lock(&ts->mu);
    for (ll_token_cursor *v = ts->cursors; v && !found; v = v->next) {
        if (v == c) continue;
        const char *t;
        size_t n;
        pthread_mutex_lock(&v->mu);
        found = token_stream_take(v, &t, &n) == 1;
        if (found) memcpy(c->own, t, n);
        pthread_mutex_unlock(&v->mu);
        if (found) *len = n;
    }
    /* nothing anywhere once the ranges are all claimed: it stays so */
    if (!found) atomic_store(&ts->drained, 1);
    pthread_mutex_unlock(&ts->mu);
    *tok = c->own;
    return found;
}

static int token_stream_next_live(ll_token_cursor *c, const char **tok, size_t *len, char *err, size_t errlen) {
    ll_token_stream *ts = c->ts;
    size_t n = ll_token_ring_pop(ts->ring, c->own);
    int rc = n ? 1 : 2;
    if (n == 0) {
        int k = -1;
        if (!c->signer) c->signer = ll_jwt_signer_new(ts->gen);
        if (c->signer) k = ll_jwt_signer_sign(c->signer, c->own, ll_jwt_gen_max_len(ts->gen));
        if (k <= 0) {
            snprintf(err, errlen, "signing a %s token failed", ll_jwt_gen_alg(ts->gen));
            return -1;
        }
        n = (size_t)k;
    }
    *tok = c->own;
    *len = n;
    return rc;
}

int ll_token_stream_next(ll_token_cursor *c, const char **tok, size_t *len, char *err, size_t errlen) {
    ll_token_stream *ts = c->ts;
    int rc = 0;
    if (ts->ring) rc = token_stream_next_live(c, tok, len, err, errlen);
    else if (atomic_load(&ts->drained)) return 0;
    else {
        pthread_mutex_lock(&c->mu);
        for (;;) {
            rc = token_stream_take(c, tok, len);
            if (rc < 0) snprintf(err, errlen, "'%s' has a line longer than 64 KiB", ts->path);
            if (rc != 0 || (rc = token_stream_refill(c, err, errlen)) != 1) break;
        }
        pthread_mutex_unlock(&c->mu);
        if (rc == 0) rc = token_stream_steal(c, tok, len);
    }
    if (rc > 0) atomic_fetch_add(&ts->handed, 1);
    return rc;
}

uint64_t ll_token_stream_fell_behind(const ll_token_stream *ts) {
    return ts->ring ? ll_token_ring_fell_behind(ts->ring) : 0;
}

uint64_t ll_token_stream_handed(const ll_token_stream *ts) {
    return atomic_load(&((ll_token_stream *)ts)->handed);
}
