/* test_data_source.c -- data.stream's reader below Lua: where a CSV record
 * ends (ll_data_csv_record_end), records across the buffer's refills and
 * longer than it, the rows of uneven execution segments (each row in one
 * part only, every row in some part), circular wrapping, and 4 threads on
 * one source (each row handed out once). */
/* links: ll_lua_api */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data_csv.h"
#include "data_source.h"
#include "segment.h"
#include "test_util.h"

static char err[512];

static void test_record_end(void) {
    static const struct {
        const char *in;
        int end;   /* bytes up to the record's end, -1: incomplete */
        int lines;
    } cases[] = {
        {"a,b\nc", 4, 1},
        {"\"a\nb\",c\nd", 8, 2},
        {"\"a\"\"\nb\"\n", 8, 2},      /* "" inside, a line break inside */
        {"ab\"c,d\ne", 7, 1},          /* a quote inside a plain field is data */
        {"\"a\"", -1, 0},              /* a "" may follow the quote */
        {"\"a\n", -1, 0},              /* an open quote */
        {"a,b", -1, 0},                /* no line break yet */
        {"x,\"q\"\r\ny", 7, 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *in = cases[i].in;
        int lines = 0;
        const char *e = ll_data_csv_record_end(in, in + strlen(in), ',', &lines);
        int got = e ? (int)(e - in) : -1;
        tu_check(got == cases[i].end && (!e || lines == cases[i].lines), "record_end case %zu: %d (%d lines)", i, got,
                 lines);
    }
}

/* A CSV file: a header, n rows "i,<field>", row 7's field 300 KiB and
 * quoted with line breaks (longer than a buffer), returns its path. */
static const char *write_csv(int n) {
    static char path[] = "/tmp/test_data_source.XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "id,v\n");
    for (int i = 0; i < n; i++) {
        if (i == 7) {
            fputs("7,\"", f);
            for (int k = 0; k < 300 * 1024; k++) fputc(k % 1000 == 999 ? '\n' : 'x', f);
            fputs("\"\n", f);
        } else {
            fprintf(f, "%d,\"v%d\"\n", i, i);
        }
    }
    fclose(f);
    return path;
}

/* The row number at the start of a record. */
static int row_id(const ll_data_row *r) { return atoi(r->buf); }

static void test_sequential(const char *path, int n) {
    ll_data_source_opts o = {.path = path, .format = LL_DATA_CSV, .header = 1, .sep = ',', .mode = LL_DATA_UNIQUE};
    ll_data_source *s = ll_data_source_get(&o, err, sizeof(err));
    if (!tu_check(s != NULL, "open %s: %s", path, s ? "" : err)) return;
    size_t hlen;
    int hline;
    const char *h = ll_data_source_header(s, &hlen, &hline);
    tu_check(h && hlen == 5 && memcmp(h, "id,v\n", 5) == 0 && hline == 1, "header kept");
    ll_data_row r = {0};
    int ok = 1, count = 0, line8 = 0;
    for (int rc; (rc = ll_data_source_next(s, NULL, &r, err, sizeof(err))) == 1; count++) {
        ok &= row_id(&r) == count;
        if (count == 8) line8 = r.line;
    }
    tu_check(ok && count == n, "unique: every row in order once (%d of %d)", count, n);
    tu_check(line8 == 2 + 8 + 307, "a row after a 300 KiB field with 307 line breaks: its line (%d)", line8);
    tu_check(ll_data_source_next(s, NULL, &r, err, sizeof(err)) == 0, "unique: then none, again");
    ll_data_source *same = ll_data_source_get(&o, err, sizeof(err));
    tu_check(same == s, "the same file and options: the same source");
    ll_data_source_put(same);
    ll_data_source_put(s);
    o.mode = LL_DATA_CIRCULAR;
    s = ll_data_source_get(&o, err, sizeof(err));
    ok = 1;
    for (int i = 0; i < 3 * n; i++) ok &= ll_data_source_next(s, NULL, &r, err, sizeof(err)) == 1 && row_id(&r) == i % n;
    tu_check(ok, "circular: three passes in order");
    ll_data_source_put(s);
    free(r.buf);
}

/* Three uneven parts (0,1/5,3/5,1): each row in exactly one. */
static void test_parts(const char *path, int n) {
    ll_segment_seq seq;
    if (ll_segment_seq_parse("0,1/5,3/5,1", NULL, &seq, err, sizeof(err)) != 0) return;
    int *seen = calloc((size_t)n, sizeof(int));
    int got[3] = {0};
    for (int p = 0; p < 3; p++) {
        ll_segment_tuple t;
        ll_segment_tuple_init(&t, &seq.items[p], &seq, err, sizeof(err));
        ll_data_source_opts o = {.path = path, .format = LL_DATA_CSV, .header = 1, .sep = ',', .mode = LL_DATA_UNIQUE};
        ll_data_source *s = ll_data_source_get(&o, err, sizeof(err)); /* a new one: the last was put */
        ll_data_row r = {0};
        while (ll_data_source_next(s, &t, &r, err, sizeof(err)) == 1) {
            seen[row_id(&r)]++;
            got[p]++;
        }
        ll_data_source_put(s);
        ll_segment_tuple_free(&t);
        free(r.buf);
    }
    int ok = 1;
    for (int i = 0; i < n; i++) ok &= seen[i] == 1;
    tu_check(ok, "parts 0,1/5,3/5,1: each row in one part (%d %d %d)", got[0], got[1], got[2]);
    tu_check(got[0] == n / 5 && got[1] == 2 * n / 5 && got[2] == 2 * n / 5, "parts: their shares");
    free(seen);
    ll_segment_seq_free(&seq);
}

typedef struct {
    ll_data_source *s;
    int *seen;
} puller;

static void *pull(void *ud) {
    puller *p = ud;
    ll_data_row r = {0};
    char e[256];
    while (ll_data_source_next(p->s, NULL, &r, e, sizeof(e)) == 1) __atomic_add_fetch(&p->seen[row_id(&r)], 1, __ATOMIC_RELAXED);
    free(r.buf);
    return NULL;
}

static void test_threads(const char *path, int n) {
    ll_data_source_opts o = {.path = path, .format = LL_DATA_CSV, .header = 1, .sep = ',', .mode = LL_DATA_UNIQUE};
    puller p = {ll_data_source_get(&o, err, sizeof(err)), calloc((size_t)n, sizeof(int))};
    pthread_t th[4];
    for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, pull, &p);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    int ok = 1;
    for (int i = 0; i < n; i++) ok &= p.seen[i] == 1;
    tu_check(ok, "4 threads on one source: each row once");
    ll_data_source_put(p.s);
    free(p.seen);
}

int main(void) {
    test_record_end();
    int n = 20000;
    const char *path = write_csv(n);
    test_sequential(path, n);
    test_parts(path, n);
    test_threads(path, n);
    ll_data_source_opts o = {.path = "/nonexistent/x.csv", .format = LL_DATA_CSV, .sep = ','};
    tu_check(!ll_data_source_get(&o, err, sizeof(err)) && strstr(err, "cannot read '/nonexistent/x.csv'"),
             "a missing file: %s", err);
    unlink(path);
    return tu_summary();
}
