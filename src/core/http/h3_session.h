/* h3_session.h -- the HTTP/3 framing of one client connection: QUIC on
 * ngtcp2 (its TLS 1.3 in the GnuTLS session quic_tls.c made) and HTTP/3
 * with QPACK on nghttp3. Requests go in as streams, the server's
 * datagrams are fed in, the datagrams to send come out, and the clock is
 * the caller's: nothing here touches a socket or the loop, as with
 * h2_session.h, whose table of stream callbacks the owners of streams
 * use here too. Loss recovery, congestion control, pacing, flow control
 * and key updates are ngtcp2's. */
#ifndef LL_H3_SESSION_H
#define LL_H3_SESSION_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "h2_session.h"

typedef struct ll_h3 ll_h3;

/* The most datagrams ll_h3_send gives in one call. */
#define LL_H3_BATCH 16

/* A datagram batch: n datagrams, datagram i at buf + off[i], len[i] bytes. */
typedef struct ll_h3_out {
    uint8_t *buf;
    size_t cap;
    size_t off[LL_H3_BATCH], len[LL_H3_BATCH];
    int n;
} ll_h3_out;

/* A client connection from local to remote (their addresses copied),
 * its handshake under way in tls (a gnutls_session_t, which the session
 * takes and frees). qlog_dir: ngtcp2's qlog goes to a file there named
 * after the connection's first id (NULL: none). now: ll_loop_now_ns().
 * NULL with *err. */
ll_h3 *ll_h3_new(const ll_h2_stream_ops *ops, void *tls, const struct sockaddr *local, socklen_t local_len,
                 const struct sockaddr *remote, socklen_t remote_len, const char *qlog_dir, uint64_t now,
                 const char **err);
void ll_h3_free(ll_h3 *h);
/* One datagram from the server. 0, or -1 when the connection is over
 * (ll_h3_why says why). */
int ll_h3_recv(ll_h3 *h, const uint8_t *p, size_t n, uint64_t now);
/* The next datagrams to send into out (its buf and cap set): out->n of
 * them, 0 when nothing is due. 0, or -1 when the connection failed. */
int ll_h3_send(ll_h3 *h, ll_h3_out *out, uint64_t now);
/* When ll_h3_expire is due (ll_loop_now_ns), UINT64_MAX: never. */
uint64_t ll_h3_expiry(ll_h3 *h);
/* The timers of loss recovery and idle close. 0, or -1: over. */
int ll_h3_expire(ll_h3 *h, uint64_t now);
/* 1 once requests may go: the handshake completed, or 0-RTT is under
 * way (ll_h3_early). */
int ll_h3_ready(const ll_h3 *h);
/* 1 once the handshake completed. */
int ll_h3_handshake_done(const ll_h3 *h);

/* 0-RTT (early data): none tried, sent (the handshake under way), the
 * server accepted it, or refused it. */
typedef enum { LL_H3_EARLY_NONE, LL_H3_EARLY_SENT, LL_H3_EARLY_ACCEPTED, LL_H3_EARLY_REFUSED } ll_h3_early_state;
/* The on_close code of a request sent as 0-RTT that the server refused:
 * its owner submits it again (it was not processed). Outside HTTP/3's
 * 62-bit codes' use here, which are truncated to 32 bits otherwise. */
#define LL_H3_RESTART 0xfffffffeu
/* Right after ll_h3_new, whose tls session resumes a ticket that allows
 * early data (quic_tls.h): tp, n are the server's transport parameters
 * from the connection that got the ticket (ll_h3_early_params). Requests
 * may then be submitted at once, and go as 0-RTT. 0, or -1: the
 * connection goes on without (the parameters did not decode). */
int ll_h3_early(ll_h3 *h, const uint8_t *tp, size_t n);
ll_h3_early_state ll_h3_early_of(const ll_h3 *h);
/* The server's transport parameters, as ll_h3_early wants them, into buf
 * (after the handshake): their length, or -1. */
int ll_h3_early_params(ll_h3 *h, uint8_t *buf, size_t cap);
/* Submits a request (pseudo-headers first, names lower case); has_body:
 * the body comes through read_body. The stream id (>= 0), or -1. */
int64_t ll_h3_submit(ll_h3 *h, const ll_h2_header *hv, size_t n, int has_body, void *ud);
/* The owner of stream id is gone: the stream is cancelled, no callback
 * reaches ud. */
void ll_h3_cancel(ll_h3 *h, int64_t id);
/* A stream whose body source had nothing yet may be read again. */
void ll_h3_resume(ll_h3 *h, int64_t id);
/* 1 when another request may join besides the open ones (as the owner
 * counts them): no GOAWAY and under max. Past the server's stream limit
 * it waits for a stream credit (ll_h3_streams_left). */
int ll_h3_can_submit(const ll_h3 *h, int open, int max);
/* How many more request streams the server allows now (it grants more
 * as streams close). */
int ll_h3_streams_left(const ll_h3 *h);
/* When the server last acknowledged stream data of ours or sent some
 * (the now of ll_h3_recv), 0: never; a live server acknowledges a
 * request's frames within its ACK delay. Datagrams that are not the
 * connection's (garbage, another connection's stateless reset) do not
 * count: ngtcp2 drops them. */
uint64_t ll_h3_heard(const ll_h3 *h);
/* 1 while the connection is alive. */
int ll_h3_alive(const ll_h3 *h);
/* How a connection ended (ll_h3_why): the server's certificate refused,
 * another TLS failure (a TLS alert either way), idle (no answer), a
 * stateless reset from the server, or anything else. */
typedef enum { LL_H3_END_OTHER, LL_H3_END_VERIFY, LL_H3_END_TLS, LL_H3_END_IDLE, LL_H3_END_RESET } ll_h3_end;
/* Why the connection ended, a sentence, and its kind. */
const char *ll_h3_why(ll_h3 *h, ll_h3_end *kind);
/* fn(ud, tls) is called with the session (a gnutls_session_t) each time
 * the server sends a session ticket, to keep it for a resumption. */
void ll_h3_on_ticket(ll_h3 *h, void (*fn)(void *ud, void *tls), void *ud);
/* 1 when the handshake resumed a session. */
int ll_h3_resumed(const ll_h3 *h);
/* The negotiated TLS cipher suite (IANA name), "" before the handshake:
 * a static string, good after the session is freed. */
const char *ll_h3_cipher(const ll_h3 *h);
/* A CONNECTION_CLOSE for an orderly end into out (n 0: none is due). */
void ll_h3_close(ll_h3 *h, ll_h3_out *out, uint64_t now);

/* An HTTP/3 session on no QUIC connection, its control and QPACK streams
 * open (client ids 2, 6, 10) and requests submitted as usual (ids 0, 4,
 * ...): what a server sends comes in through ll_h3_feed, and stream
 * windows, shutdowns and datagrams go nowhere. For the fuzzer
 * (tests/fuzz/fuzz_h3_frames.c): nghttp3's frames and QPACK through
 * this file's callbacks, without a handshake. NULL when out of memory.
 * Only the stream functions apply to it (not recv, send, expire). */
ll_h3 *ll_h3_new_unbound(const ll_h2_stream_ops *ops);
/* n bytes of stream id from the server, fin: its last. 0, or -1 when
 * HTTP/3 failed the connection (ll_h3_why). */
int ll_h3_feed(ll_h3 *h, int64_t id, const uint8_t *p, size_t n, int fin);
/* Stream id closed both ways (QUIC's word), with code. 0, or -1. */
int ll_h3_feed_close(ll_h3 *h, int64_t id, uint64_t code);

#endif
