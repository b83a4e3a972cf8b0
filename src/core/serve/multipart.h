/* multipart.h -- a streaming multipart/form-data parser (RFC 7578 on RFC
 * 2046's multipart syntax) with a push API: feed it the body in pieces of
 * any size; it calls back at each part's start (its headers parsed), for
 * each run of its data, and at its end. It holds no body data, only the
 * current part's headers (up to LL_MULTIPART_HEAD_MAX bytes) and, across
 * feeds, the few bytes that may begin a delimiter.
 *
 *   char b[LL_MULTIPART_BOUNDARY_MAX + 1];
 *   int n = ll_multipart_boundary(content_type, strlen(content_type), b, &why);
 *   ll_multipart *m = ll_multipart_new(b, (size_t)n, &callbacks, ud);
 *   while (...) ll_multipart_feed(m, p, len);    -1 once the body is bad
 *   if (ll_multipart_end(m) < 0) puts(ll_multipart_error(m));
 *   ll_multipart_free(m);
 *
 * The body: a preamble (ignored), then parts, each "--boundary" CRLF, header
 * lines, an empty line and the data, which ends at CRLF "--boundary"; the
 * last boundary is followed by "--" and the epilogue (ignored). Each part
 * needs Content-Disposition: form-data with a name parameter; filename and
 * the Content-Type header are optional. Parameter values may be tokens or
 * quoted strings (\" and \\ are undone, other backslashes and
 * percent-encoding are kept as sent). */
#ifndef LL_MULTIPART_H
#define LL_MULTIPART_H

#include <stddef.h>

#define LL_MULTIPART_BOUNDARY_MAX 70   /* RFC 2046 */
#define LL_MULTIPART_HEAD_MAX 16384    /* one part's header lines, CRLFs included */

typedef struct ll_multipart ll_multipart;

/* A part's headers. The strings are NUL-terminated (the lengths exclude the
 * NUL) and last until the part's end callback returns. */
typedef struct ll_multipart_part {
    const char *name;          /* Content-Disposition's name */
    size_t name_len;
    const char *filename;      /* its filename, NULL when absent */
    size_t filename_len;
    const char *content_type;  /* the Content-Type value as sent, NULL when absent */
    size_t content_type_len;
} ll_multipart_part;

/* Any of them may be NULL. A nonzero return stops the parser: the feed
 * returns -1 and the error is "stopped by the caller". */
typedef struct ll_multipart_cb {
    int (*part_begin)(void *ud, const ll_multipart_part *part);
    int (*part_data)(void *ud, const char *data, size_t n);  /* n > 0 */
    int (*part_end)(void *ud);
} ll_multipart_cb;

/* The boundary parameter of a Content-Type value ("multipart/form-data;
 * boundary=xyz", quoted or not) into out (NUL-terminated). Its length (1 to
 * LL_MULTIPART_BOUNDARY_MAX), or -1 with a one-line reason (no newline) in
 * *why: not multipart/form-data, no boundary parameter, a bad boundary. */
int ll_multipart_boundary(const char *ctype, size_t n, char out[LL_MULTIPART_BOUNDARY_MAX + 1],
                          const char **why);
/* A parser for bodies with this boundary (1 to LL_MULTIPART_BOUNDARY_MAX
 * bytes, no CR or LF; NULL otherwise). cb is copied; ud is passed back. */
ll_multipart *ll_multipart_new(const char *boundary, size_t n, const ll_multipart_cb *cb, void *ud);
/* Parses the next n bytes of the body. 0, or -1 once the body turned out
 * bad (the error sticks; later feeds do nothing). Bytes after the closing
 * delimiter are ignored. */
int ll_multipart_feed(ll_multipart *m, const char *p, size_t n);
/* The body ended: 0 when it was complete (the closing delimiter seen), -1
 * otherwise (missing closing delimiter, or an earlier error). */
int ll_multipart_end(ll_multipart *m);
/* The one-line reason (no newline) of the error, NULL if none. */
const char *ll_multipart_error(const ll_multipart *m);
/* Parts begun so far. */
size_t ll_multipart_parts(const ll_multipart *m);
void ll_multipart_free(ll_multipart *m);

#endif
