/* data_source.c -- data.stream's shared, buffered file readers and their
 * process-wide registry (see data_source.h). */
#include "data_source.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "data_csv.h"
#include "script_host.h" /* ll_segment_tuple_owns (segment.h) */
#include "xmalloc.h"

enum { CODEC_PLAIN, CODEC_GZIP, CODEC_ZSTD };

struct ll_data_source {
    ll_data_source *next; /* in the registry */
    int refs;             /* under reg_mu */
    ll_data_source_opts o; /* path owned */
    pthread_mutex_t mu;   /* guards all below */
    int fd;
    int codec;
    z_stream z;
    int z_made;           /* z holds inflate's state (inflateEnd at the end) */
    int z_live;           /* inside a gzip member */
    ZSTD_DStream *zs;
    unsigned char *in;    /* the file's bytes, LL_DATA_SOURCE_CHUNK */
    size_t in_pos, in_len;
    int in_eof;           /* read() said so */
    char *buf;            /* decoded bytes; [start, end) not handed out yet */
    size_t cap, start, end;
    int eof;              /* nothing more to decode */
    int line;             /* the line buf + start is on */
    int fresh;            /* nothing decoded yet: a BOM may come */
    int64_t k;            /* rows read in this pass */
    int64_t mine;         /* rows of this part read in this pass */
    char *header;
    size_t header_len;
    int header_line;
    const ll_segment_tuple *tuple;
    int tuple_set;
    int used_up;          /* unique: the rows are gone */
    ll_data_row *win;     /* random: the window, nwin rows once filled */
    int nwin;
    uint64_t rng;
};

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static ll_data_source *reg_head;

/* ---- decoding ---- */

/* Reads more of the file into s->in once it is used up; -1 on error. */
static int ll_data_source_read_in(ll_data_source *s, char *err, size_t errlen) {
    if (s->in_pos < s->in_len || s->in_eof) return 0;
    ssize_t n;
    do n = read(s->fd, s->in, LL_DATA_SOURCE_CHUNK);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        snprintf(err, errlen, "cannot read '%s': %s", s->o.path, strerror(errno));
        return -1;
    }
    s->in_pos = 0;
    s->in_len = (size_t)n;
    s->in_eof = n == 0;
    return 0;
}

/* Tells the codec from the file's first bytes (read into s->in). */
static int ll_data_source_sniff(ll_data_source *s, char *err, size_t errlen) {
    if (ll_data_source_read_in(s, err, errlen) != 0) return -1;
    const unsigned char *b = s->in;
    s->codec = CODEC_PLAIN;
    if (s->in_len >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
        s->codec = CODEC_GZIP;
        if (s->z_made && inflateReset(&s->z) != Z_OK) { /* read again: the state kept */
            inflateEnd(&s->z);
            s->z_made = 0;
        }
        if (!s->z_made) s->z_made = inflateInit2(&s->z, 15 + 16) == Z_OK;
        if (!s->z_made) {
            snprintf(err, errlen, "'%s': cannot start gzip decoding", s->o.path);
            return -1;
        }
        s->z_live = 1;
    } else if (s->in_len >= 4 && b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd) {
        s->codec = CODEC_ZSTD;
        if (!s->zs) s->zs = ZSTD_createDStream();
        if (!s->zs || ZSTD_isError(ZSTD_initDStream(s->zs))) {
            snprintf(err, errlen, "'%s': cannot start zstd decoding", s->o.path);
            return -1;
        }
    }
    return 0;
}

/* Decodes what comes next into buf[end, cap) (room is there). Returns
 * the bytes added, 0 at the end of the input, -1 on error. */
static long ll_data_source_decode(ll_data_source *s, char *err, size_t errlen) {
    for (;;) {
        if (ll_data_source_read_in(s, err, errlen) != 0) return -1;
        size_t room = s->cap - s->end, avail = s->in_len - s->in_pos;
        if (s->codec == CODEC_PLAIN) {
            if (avail == 0) return 0;
            size_t n = avail < room ? avail : room;
            memcpy(s->buf + s->end, s->in + s->in_pos, n);
            s->in_pos += n;
            return (long)n;
        }
        if (s->codec == CODEC_GZIP) {
            if (avail == 0 && s->in_eof) {
                if (!s->z_live) return 0; /* ended with a whole member */
                snprintf(err, errlen, "'%s': the gzip data is cut short", s->o.path);
                return -1;
            }
            if (!s->z_live) { /* another member follows (cat a.gz b.gz) */
                if (inflateReset(&s->z) != Z_OK) break;
                s->z_live = 1;
            }
            s->z.next_in = s->in + s->in_pos;
            s->z.avail_in = (uInt)avail;
            s->z.next_out = (Bytef *)s->buf + s->end;
            s->z.avail_out = (uInt)(room < UINT32_MAX ? room : UINT32_MAX);
            int rc = inflate(&s->z, Z_NO_FLUSH);
            s->in_pos = s->in_len - s->z.avail_in;
            long got = (long)(room - s->z.avail_out);
            if (rc == Z_STREAM_END) s->z_live = 0;
            else if (rc != Z_OK && rc != Z_BUF_ERROR) {
                snprintf(err, errlen, "'%s': not valid gzip data (%s)", s->o.path, s->z.msg ? s->z.msg : "inflate");
                return -1;
            }
            if (got > 0) return got;
            continue;
        }
        if (avail == 0 && s->in_eof) return 0; /* a frame cut short shows as garbage to the parser, or nothing */
        ZSTD_inBuffer zin = {s->in + s->in_pos, avail, 0};
        ZSTD_outBuffer zout = {s->buf + s->end, room, 0};
        size_t rc = ZSTD_decompressStream(s->zs, &zout, &zin);
        s->in_pos += zin.pos;
        if (ZSTD_isError(rc)) {
            snprintf(err, errlen, "'%s': not valid zstd data (%s)", s->o.path, ZSTD_getErrorName(rc));
            return -1;
        }
        if (zout.pos > 0) return (long)zout.pos;
    }
    snprintf(err, errlen, "'%s': cannot go on decoding gzip", s->o.path);
    return -1;
}

/* Adds decoded bytes after s->end, moving the unread ones to the front
 * and growing buf when a record fills it. Returns 1, 0 at the end of the
 * input, -1 on error. */
static int ll_data_source_fill(ll_data_source *s, char *err, size_t errlen) {
    if (s->eof) return 0;
    if (s->start > 0) {
        memmove(s->buf, s->buf + s->start, s->end - s->start);
        s->end -= s->start;
        s->start = 0;
    }
    if (s->end == s->cap) {
        if (s->cap >= LL_DATA_SOURCE_MAX_RECORD) {
            snprintf(err, errlen, "'%s' line %d: a record longer than %d MiB", s->o.path, s->line,
                     LL_DATA_SOURCE_MAX_RECORD >> 20);
            return -1;
        }
        char *bigger = realloc(s->buf, s->cap * 2);
        if (!bigger) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        s->buf = bigger;
        s->cap *= 2;
    }
    long n = ll_data_source_decode(s, err, errlen);
    if (n < 0) return -1;
    if (n == 0) {
        s->eof = 1;
        return 0;
    }
    s->end += (size_t)n;
    if (s->fresh) { /* a UTF-8 BOM, as spreadsheets write (a first read gives more than 3 bytes) */
        s->fresh = 0;
        if (s->end >= 3 && memcmp(s->buf, "\xEF\xBB\xBF", 3) == 0) s->start = 3;
    }
    return 1;
}

/* Starts the file over (a new source, or circular mode at its end). */
static int ll_data_source_rewind(ll_data_source *s, char *err, size_t errlen) {
    if (lseek(s->fd, 0, SEEK_SET) < 0) {
        snprintf(err, errlen, "cannot read '%s' again: %s", s->o.path, strerror(errno));
        return -1;
    }
    s->z_live = 0;
    s->in_pos = s->in_len = 0;
    s->in_eof = 0;
    s->start = s->end = 0;
    s->eof = 0;
    s->line = 1;
    s->fresh = 1;
    s->k = s->mine = 0;
    return ll_data_source_sniff(s, err, errlen);
}

/* ---- records ---- */

static int ll_data_source_blank(const char *p, size_t n, int jsonl) {
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\n' || p[i] == '\r') continue;
        if (jsonl && (p[i] == ' ' || p[i] == '\t')) continue;
        return 0;
    }
    return 1;
}

/* The next non-empty record: *p, *len in buf (valid until the next call),
 * *line where it starts. Returns 1, 0 at the end of the file, -1. */
static int ll_data_source_record(ll_data_source *s, const char **p, size_t *len, int *line, char *err,
                                 size_t errlen) {
    for (;;) {
        const char *b = s->buf + s->start, *e = s->buf + s->end, *rec_end;
        int lines = 1;
        if (s->o.format == LL_DATA_CSV) {
            rec_end = ll_data_csv_record_end(b, e, s->o.sep, &lines);
        } else {
            rec_end = memchr(b, '\n', (size_t)(e - b));
            if (rec_end) rec_end++;
        }
        if (!rec_end) {
            int rc = ll_data_source_fill(s, err, errlen);
            if (rc < 0) return -1;
            if (rc > 0) continue;
            if (b == e) return 0;
            rec_end = e; /* the last record, without a line break */
        }
        size_t n = (size_t)(rec_end - b);
        int at = s->line;
        s->start += n;
        s->line += lines;
        if (ll_data_source_blank(b, n, s->o.format == LL_DATA_JSONL)) continue;
        *p = b;
        *len = n;
        *line = at;
        return 1;
    }
}

/* Copies a record into row, growing its buffer. */
static int ll_data_source_copy(ll_data_row *row, const char *p, size_t n, int line, char *err, size_t errlen) {
    if (row->cap < n + 1) {
        size_t cap = row->cap ? row->cap : 256;
        while (cap < n + 1) cap *= 2;
        char *bigger = realloc(row->buf, cap);
        if (!bigger) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        row->buf = bigger;
        row->cap = cap;
    }
    memcpy(row->buf, p, n);
    row->buf[n] = '\0';
    row->len = n;
    row->line = line;
    return 0;
}

/* The header record (CSV with header), kept; at a rewind skipped again. */
static int ll_data_source_skip_header(ll_data_source *s, char *err, size_t errlen) {
    if (s->o.format != LL_DATA_CSV || !s->o.header) return 0;
    const char *p;
    size_t n;
    int line;
    int rc = ll_data_source_record(s, &p, &n, &line, err, errlen);
    if (rc <= 0 || s->header) return rc;
    s->header = ll_xstrndup(p, n);
    s->header_len = n;
    s->header_line = line;
    return 0;
}

/* 1 when row k belongs to this part. */
static int ll_data_source_mine(const ll_data_source *s, int64_t k) {
    return !s->tuple || ll_segment_tuple_owns(s->tuple, k);
}

/* The next row of this part in file order; at the end of the file 0, or
 * with wrap the file again from the top (0 when this part has no row). */
static int ll_data_source_scan(ll_data_source *s, int wrap, ll_data_row *row, char *err, size_t errlen) {
    for (;;) {
        const char *p;
        size_t n;
        int line;
        int rc = ll_data_source_record(s, &p, &n, &line, err, errlen);
        if (rc < 0) return -1;
        if (rc == 0 && wrap && s->mine == 0) {
            if (s->k == 0) snprintf(err, errlen, "the file has no rows");
            else snprintf(err, errlen, "this part of the split test owns none of its %lld rows", (long long)s->k);
            return 0;
        }
        if (rc == 0) {
            if (!wrap) return 0;
            if (ll_data_source_rewind(s, err, errlen) != 0 || ll_data_source_skip_header(s, err, errlen) < 0)
                return -1;
            continue;
        }
        if (!ll_data_source_mine(s, s->k++)) continue;
        s->mine++;
        return ll_data_source_copy(row, p, n, line, err, errlen) == 0 ? 1 : -1;
    }
}

/* xorshift64*: the window's draws (under the mutex). */
static uint64_t ll_data_source_rand(ll_data_source *s) {
    s->rng ^= s->rng >> 12;
    s->rng ^= s->rng << 25;
    s->rng ^= s->rng >> 27;
    return s->rng * 2685821657736338717ull;
}

/* Random mode: a row drawn from the window, its slot refilled. */
static int ll_data_source_draw(ll_data_source *s, ll_data_row *row, char *err, size_t errlen) {
    if (!s->win) {
        s->win = ll_xcalloc((size_t)s->o.window, sizeof(*s->win));
        for (; s->nwin < s->o.window; s->nwin++) {
            int rc = ll_data_source_scan(s, 1, &s->win[s->nwin], err, errlen);
            if (rc <= 0) return rc;
        }
    }
    if (s->nwin < s->o.window) return 0; /* it could not be filled */
    int j = (int)(ll_data_source_rand(s) % (uint64_t)s->nwin);
    ll_data_row drawn = s->win[j];
    s->win[j] = *row; /* the caller's old buffer takes the next row */
    *row = drawn;
    return ll_data_source_scan(s, 1, &s->win[j], err, errlen) < 0 ? -1 : 1;
}

int ll_data_source_next(ll_data_source *s, const ll_segment_tuple *t, ll_data_row *row, char *err, size_t errlen) {
    pthread_mutex_lock(&s->mu);
    if (!s->tuple_set) {
        s->tuple = t;
        s->tuple_set = 1;
    }
    int rc;
    if (s->o.mode == LL_DATA_RANDOM) {
        rc = ll_data_source_draw(s, row, err, errlen);
    } else if (s->o.mode == LL_DATA_CIRCULAR) {
        rc = ll_data_source_scan(s, 1, row, err, errlen);
    } else {
        rc = s->used_up ? 0 : ll_data_source_scan(s, 0, row, err, errlen);
        if (rc == 0) s->used_up = 1;
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

const char *ll_data_source_header(const ll_data_source *s, size_t *len, int *line) {
    *len = s->header_len;
    *line = s->header_line;
    return s->header;
}

/* ---- the registry ---- */

static int ll_data_source_same(const ll_data_source_opts *a, const ll_data_source_opts *b) {
    return strcmp(a->path, b->path) == 0 && a->format == b->format && a->header == b->header && a->sep == b->sep &&
           a->mode == b->mode && (a->mode != LL_DATA_RANDOM || a->window == b->window);
}

static void ll_data_source_free(ll_data_source *s) {
    if (s->fd >= 0) close(s->fd);
    if (s->z_made) inflateEnd(&s->z);
    if (s->zs) ZSTD_freeDStream(s->zs);
    for (int i = 0; i < s->nwin; i++) free(s->win[i].buf);
    free(s->win);
    free(s->in);
    free(s->buf);
    free(s->header);
    free((char *)s->o.path);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

static ll_data_source *ll_data_source_open(const ll_data_source_opts *o, char *err, size_t errlen) {
    ll_data_source *s = ll_xcalloc(1, sizeof(*s));
    s->o = *o;
    s->o.path = ll_xstrdup(o->path);
    s->rng = o->seed ? o->seed : 0x9E3779B97F4A7C15ull;
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP); /* spins a little before sleeping: next() holds it briefly */
    pthread_mutex_init(&s->mu, &ma);
    pthread_mutexattr_destroy(&ma);
    s->in = malloc(LL_DATA_SOURCE_CHUNK);
    s->buf = malloc(LL_DATA_SOURCE_CHUNK);
    s->cap = LL_DATA_SOURCE_CHUNK;
    s->fd = open(o->path, O_RDONLY | O_CLOEXEC);
    if (!s->in || !s->buf) {
        snprintf(err, errlen, "out of memory");
    } else if (s->fd < 0) {
        snprintf(err, errlen, "cannot read '%s': %s", o->path, strerror(errno));
    } else if (ll_data_source_rewind(s, err, errlen) == 0 && ll_data_source_skip_header(s, err, errlen) == 0) {
#ifdef POSIX_FADV_SEQUENTIAL
        posix_fadvise(s->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
        return s;
    }
    ll_data_source_free(s);
    return NULL;
}

ll_data_source *ll_data_source_get(const ll_data_source_opts *o, char *err, size_t errlen) {
    pthread_mutex_lock(&reg_mu);
    ll_data_source *s = reg_head;
    while (s && !ll_data_source_same(&s->o, o)) s = s->next;
    if (!s && (s = ll_data_source_open(o, err, errlen)) != NULL) {
        s->next = reg_head;
        reg_head = s;
    }
    if (s) s->refs++;
    pthread_mutex_unlock(&reg_mu);
    return s;
}

void ll_data_source_put(ll_data_source *s) {
    if (!s) return;
    pthread_mutex_lock(&reg_mu);
    int last = --s->refs == 0;
    if (last) {
        ll_data_source **pp = &reg_head;
        while (*pp != s) pp = &(*pp)->next;
        *pp = s->next;
    }
    pthread_mutex_unlock(&reg_mu);
    if (last) ll_data_source_free(s);
}
