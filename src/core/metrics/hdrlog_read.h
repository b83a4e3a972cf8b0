/* hdrlog_read.h -- reading back what output_hdrlog.c writes (`luaload
 * merge`): the sidecar FILE.json, checked to be one of luaload's, and the
 * interval log FILE, line by line, each line's histogram decoded. The
 * format is output_hdrlog.h's; this file and that one are its only readers
 * and writers. */
#ifndef LL_HDRLOG_READ_H
#define LL_HDRLOG_READ_H

#include <stddef.h>

#include "histogram.h"

typedef struct cJSON cJSON;

/* One interval line of a log, as ll_hdrlog_read hands it on. */
typedef struct ll_hdrlog_line {
    int id;               /* what the tag maps to (ll_hdrlog_tag_fn) */
    double start_s, len_s; /* from the log's start */
    const ll_histogram *h; /* decoded; valid during the call */
    const char *b64;      /* its text */
} ll_hdrlog_line;

/* Maps a line's tag (n bytes, not terminated) to an id >= 0, or -1 when
 * the caller knows no such tag. */
typedef int ll_hdrlog_tag_fn(void *ud, const char *tag, size_t n);
/* Takes one line; nonzero stops the reading and is returned (the callback
 * writes its own error). */
typedef int ll_hdrlog_line_fn(void *ud, const ll_hdrlog_line *line);

/* The sidecar at path, parsed and checked ("format" is LL_HDRLOG_FORMAT);
 * NULL with a one-line reason in err. */
cJSON *ll_hdrlog_read_sidecar(const char *path, char *err, size_t errlen);

/* Calls fn for every interval line of the log at path, each histogram
 * decoded with like's layout; tags_from names where the tags are listed
 * (the sidecar), for the message on a line whose tag tag() does not know.
 * 0, fn's nonzero value, or -1 with a one-line reason naming path:line in
 * err. */
int ll_hdrlog_read(const char *path, const ll_histogram *like, const char *tags_from, ll_hdrlog_tag_fn *tag,
                   ll_hdrlog_line_fn *fn, void *ud, char *err, size_t errlen);

#endif
