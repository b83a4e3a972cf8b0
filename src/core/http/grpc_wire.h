/* grpc_wire.h -- gRPC's framing over HTTP/2, the part of the protocol that
 * is not HTTP (grpc_wire.c; PROTOCOL-HTTP2.md of grpc/grpc): the
 * length-prefixed messages of a request or response body (a flag byte, a
 * 4-byte big-endian length, the message, gzip-compressed when the flag
 * says so), a reader that finds them in a body arriving in pieces, the
 * grpc-timeout header, the status codes by name and the grpc-message
 * trailer's percent-encoding. The messages themselves are proto/'s. */
#ifndef LL_GRPC_WIRE_H
#define LL_GRPC_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define LL_GRPC_PREFIX 5 /* flag byte and length */

/* gRPC's status codes (grpc-status), 0 to 16. */
enum {
    LL_GRPC_OK = 0,
    LL_GRPC_CANCELLED = 1,
    LL_GRPC_UNKNOWN = 2,
    LL_GRPC_INVALID_ARGUMENT = 3,
    LL_GRPC_DEADLINE_EXCEEDED = 4,
    LL_GRPC_NOT_FOUND = 5,
    LL_GRPC_ALREADY_EXISTS = 6,
    LL_GRPC_PERMISSION_DENIED = 7,
    LL_GRPC_RESOURCE_EXHAUSTED = 8,
    LL_GRPC_FAILED_PRECONDITION = 9,
    LL_GRPC_ABORTED = 10,
    LL_GRPC_OUT_OF_RANGE = 11,
    LL_GRPC_UNIMPLEMENTED = 12,
    LL_GRPC_INTERNAL = 13,
    LL_GRPC_UNAVAILABLE = 14,
    LL_GRPC_DATA_LOSS = 15,
    LL_GRPC_UNAUTHENTICATED = 16,
    LL_GRPC_NSTATUS
};

/* A status code's name as k6 exports it after "Status" ("OK",
 * "Canceled", ..., "Unauthenticated"); NULL past the last. */
const char *ll_grpc_status_name(int code);
/* The status in a grpc-status value (len bytes): 0..16 as given, any
 * other code as given too (a server may send one); -1 when it is not a
 * decimal number. */
int ll_grpc_status_parse(const char *value, size_t len);

/* Appends one message (len bytes at msg) framed: compressed with gzip
 * when gzip is set (the request then says grpc-encoding: gzip). Returns
 * 0, or -1 with a one-line reason in err. */
int ll_grpc_frame(ll_buf *out, const void *msg, size_t len, int gzip, char *err, size_t errlen);

/* Finds the messages in a body that arrives in pieces. */
typedef struct ll_grpc_reader {
    ll_buf pending;        /* a message not whole yet, with its prefix */
    uint64_t max;          /* the largest message taken (max_receive_size) */
    int gzip;              /* the response's grpc-encoding is gzip */
    int64_t messages;      /* handed over so far */
} ll_grpc_reader;

void ll_grpc_reader_init(ll_grpc_reader *r, uint64_t max, int gzip);
void ll_grpc_reader_free(ll_grpc_reader *r);
/* Called with each whole message (decompressed), in order; a non-zero
 * return stops the reader (feed returns it). */
typedef int ll_grpc_message_fn(const char *msg, size_t len, void *ud);
/* Takes n more bytes of the body. Returns 0, what fn returned when it
 * stopped, or -1 with a one-line reason in err and the gRPC status it
 * means in *status (RESOURCE_EXHAUSTED: a message over max; INTERNAL: a
 * compressed message without grpc-encoding, or one that does not
 * inflate). */
int ll_grpc_reader_feed(ll_grpc_reader *r, const char *p, size_t n, ll_grpc_message_fn *fn, void *ud, int *status,
                        char *err, size_t errlen);
/* At the end of the body: 0, or -1 when a message was cut short. */
int ll_grpc_reader_end(const ll_grpc_reader *r, char *err, size_t errlen);

/* The grpc-timeout value for us microseconds: at most 8 digits and a unit
 * (n, u, m, S, M, H), rounded up so that the server never sees less than
 * asked. buf holds at least 10 bytes. */
void ll_grpc_timeout(uint64_t us, char *buf, size_t len);

/* The grpc-message trailer decoded (percent-encoding, RFC 3986 style, as
 * the spec says) into out; an invalid escape is kept as it was. */
int ll_grpc_message_decode(const char *value, size_t len, ll_buf *out);

#endif
