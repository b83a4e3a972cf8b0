/* data_source.h -- the files behind data.stream: one reader per file and
 * options in the whole process, shared by every worker (each worker's Lua
 * state holds a reference), so all of them draw from one cursor.
 *
 * A source reads its file through a fixed buffer (LL_DATA_SOURCE_CHUNK
 * bytes; more only for a record longer than that), never whole: plain,
 * gzip or zstd input, told apart by its first bytes. It cuts the input
 * into raw records (CSV: quote-aware, data_csv.c's ll_data_csv_record_end;
 * JSON lines: one per line), skips empty ones, and hands one record's bytes
 * at a time to a caller under its mutex; the caller parses them into Lua
 * values outside the lock (data_stream.c).
 *
 * Rows are numbered 0, 1, ... in the file's order (the header and empty
 * lines are not rows). A test split with execution segments gives row k
 * to the part that owns global index k in k6's striping (segment.h's
 * ll_segment_tuple_owns): the parts of one sequence share the rows with
 * no overlap and no gap, as they share iterations. Each part reads the
 * whole file and skips the rows of the others.
 *
 * Modes: unique hands each of this part's rows once, then none; circular
 * starts over at the end of the file (this part's rows again); random
 * draws from a window of rows filled in circular order, each draw
 * replaced by the next row (a local shuffle: every row once per pass, in
 * an order that moves a row about window rows from its place). No Lua here. */
#ifndef LL_DATA_SOURCE_H
#define LL_DATA_SOURCE_H

#include <stddef.h>
#include <stdint.h>


#define LL_DATA_SOURCE_CHUNK (256 * 1024)
/* The longest record a stream takes (its buffer grows up to it). */
#define LL_DATA_SOURCE_MAX_RECORD (64 * 1024 * 1024)

typedef enum { LL_DATA_CSV, LL_DATA_JSONL } ll_data_format;
typedef enum { LL_DATA_UNIQUE, LL_DATA_CIRCULAR, LL_DATA_RANDOM } ll_data_mode;

typedef struct ll_data_source ll_data_source;
typedef struct ll_segment_tuple ll_segment_tuple; /* segment.h, through script_host.h */

/* What makes a source: two opens with the same ones share it. */
typedef struct ll_data_source_opts {
    const char *path;      /* what to open; also the name in messages */
    ll_data_format format;
    int header;            /* CSV: the first record names the columns */
    char sep;              /* CSV */
    ll_data_mode mode;
    int window;            /* random: rows in the window (>= 1) */
    uint64_t seed;         /* random: the window's draws (the first open's) */
} ll_data_source_opts;

/* A record handed out, in the caller's buffer (malloc'd, grown as
 * needed; free buf when done). */
typedef struct ll_data_row {
    char *buf;
    size_t len, cap;
    int line; /* the file's line the record starts on (1-based) */
} ll_data_row;

/* The process's source for o (a new reference), opened and, with a
 * header, past it. NULL with a message in err when the file cannot be
 * read or is not valid gzip/zstd. */
ll_data_source *ll_data_source_get(const ll_data_source_opts *o, char *err, size_t errlen);

/* Drops a reference; the last one closes and frees the source. */
void ll_data_source_put(ll_data_source *s);

/* The header record's bytes (not terminated) and line; NULL without a
 * header (none asked, or an empty file). Constant once got. */
const char *ll_data_source_header(const ll_data_source *s, size_t *len, int *line);

/* The next row for this part (t: its execution segment, NULL: the whole
 * test; the first call's is kept) into row. Returns 1; 0 when there is
 * none: unique mode's rows are used up, or this part has no row at all
 * (circular, random: err says why); -1 with a message in err on a read
 * error or an out of memory. Thread-safe. */
int ll_data_source_next(ll_data_source *s, const ll_segment_tuple *t, ll_data_row *row, char *err, size_t errlen);

#endif
