/* form_wire.h -- the multipart/form-data encoding (RFC 7578) of an ll_form
 * (form.h), for a transport that sends forms itself: a byte stream of known
 * length readable at any position, made of small header strings prepared
 * once and the parts' data read through ll_body_read as it is sent, so a
 * form is streamed like a file body and never held whole in memory.
 *
 * The bytes are libcurl's mime (form_wire.c says where they differ): each
 * part is "--BOUNDARY", its Content-Disposition (name and filename with ",
 * CR and LF escaped as %22, %0D, %0A) and Content-Type headers, a blank
 * line and its data; a CRLF and "--BOUNDARY--" end the form. */
#ifndef LL_FORM_WIRE_H
#define LL_FORM_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ll_form;

/* One stretch of the encoding: a prepared string (the delimiter and headers
 * of a part, or the closing delimiter), then a part's data (none for the
 * closing delimiter). */
typedef struct ll_form_wire_seg {
    uint64_t start;    /* where the segment begins in the encoding */
    size_t text_off;   /* its string in the wire's text */
    size_t text_len;
    uint64_t data_len; /* the part's data after it, at init */
} ll_form_wire_seg;

typedef struct ll_form_wire {
    const struct ll_form *form; /* not owned; must outlive the wire, unchanged */
    char boundary[41];          /* "------------------------" + 16 random hex digits, as libcurl makes */
    uint64_t len;               /* total bytes of the encoding */
    /* private */
    char content_type[71];      /* "multipart/form-data; boundary=" + boundary */
    char *text;                 /* every segment's string, one after another */
    ll_form_wire_seg *segs;     /* segment i is part i; the last one closes the form */
    int nsegs;
} ll_form_wire;

/* Prepares the encoding of f with a fresh random boundary (getrandom, else
 * RAND_bytes). Returns 0, or -1 when out of memory (w is then empty and
 * ll_form_wire_free is a no-op). */
int ll_form_wire_init(ll_form_wire *w, const struct ll_form *f);
/* The Content-Type header value: "multipart/form-data; boundary=<boundary>"
 * (a pointer into w, valid until ll_form_wire_free). */
const char *ll_form_wire_content_type(const ll_form_wire *w);
/* Reads up to n bytes of the encoding from position pos (0 <= pos <= len)
 * into buf. Returns the bytes read, 0 at the end, -1 on an error of a
 * part's source (errno set, as ll_body_read; a source that ends before its
 * length is EIO). May return fewer than n bytes; callers loop. */
ssize_t ll_form_wire_read(const ll_form_wire *w, uint64_t pos, char *buf, size_t n);
void ll_form_wire_free(ll_form_wire *w);

#endif
