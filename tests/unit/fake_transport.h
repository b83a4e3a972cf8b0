/* fake_transport.h -- a transport for tests: it completes every request
 * from a canned response on the next loop turn, with no sockets. By
 * default it echoes the request (method, URL, headers, body read through
 * the body source) in the response body; URL paths pick other answers:
 *   /status/N  status N        /fail  a transport error (connection refused)
 *   /json      a JSON body     /hang  never completes (until cancelled) */
#ifndef LL_FAKE_TRANSPORT_H
#define LL_FAKE_TRANSPORT_H

#include "transport.h"

extern const ll_transport_ops fake_transport_ops;

/* What the fake transport did since the program started. */
typedef struct fake_stats {
    int transports, transfers, starts, cancels, completions;
} fake_stats;
extern fake_stats fake_transport_stats;

/* The timings every fake response reports (µs): blocked 1000, sending 100,
 * waiting 2000, receiving 300, duration 2400. */
#define FAKE_DURATION_US 2400

#endif
