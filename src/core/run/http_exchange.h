/* http_exchange.h -- one HTTP request of a VU on the wire, whoever made
 * it: the transfer it goes on, the metrics of its responses and its
 * redirect hops (http_exchange.c). Part of the door up from lua_api
 * (script_host.h includes it): the VU is opaque here. */
#ifndef LL_HTTP_EXCHANGE_H
#define LL_HTTP_EXCHANGE_H

#include <stdint.h>

#include "http_req.h"
#include "http_vu.h"
#include "transport.h"

typedef struct ll_vu ll_vu;

/* How a response is judged: expected (NULL: k6's default, 200 to 399)
 * and whether any judgement is made (0 after setResponseCallback(nil): no
 * http_req_failed sample, no expected_response tag). */
typedef struct ll_http_judge {
    const ll_http_expected *expected;
    int counted;
} ll_http_judge;

/* The VU's transfer for req on lane, for the client of slot and uid with
 * opts (http_vu.h's ll_http_vu_transfer), on the transport that serves it:
 * the run's forced one, else ll_transport_pick's. NULL when none can be
 * made. */
ll_transfer *ll_http_exchange_transfer(ll_vu *vu, int lane, int slot, uint64_t uid, const ll_http_req *req,
                                       const ll_client_opts *opts);
/* Records k6's HTTP metrics of r, the response to req sent with method,
 * with their tags; a failed request is also counted by message in the
 * worker's table; the transport's retries count as lost requests. */
void ll_http_exchange_record(ll_vu *vu, const ll_http_req *req, const char *method, const ll_http_res *r,
                             const ll_http_judge *j);
/* n requests that reached the server without a response of their own:
 * each a failed request with error_code (no timings); bytes_sent of them
 * went out and count in data_sent. */
void ll_http_exchange_lost(ll_vu *vu, const ll_http_req *req, const char *method, const ll_http_res *r, int n,
                           int error_code, int64_t bytes_sent, const ll_http_judge *j);
/* Cancels call's request in flight, if any; what already went out is
 * counted as k6 counts a request cut off at the end of the test (lost,
 * error_code 1000, in data_sent). */
void ll_http_exchange_cancel(ll_vu *vu, ll_http_call *call, const ll_http_judge *j);
/* Sends the next hop on x (done: on_done with call) when r, the response
 * to req, is a redirect the call may still follow; 1 when it went. */
int ll_http_exchange_follow(ll_vu *vu, ll_http_call *call, ll_transfer *x, const ll_http_req *req,
                            const char *method, const ll_http_res *r, ll_transfer_done_fn *on_done);

/* When r, the response to req, is the 401 of a Digest challenge that req
 * (params.auth = "digest", with credentials) may answer and the call has
 * not yet answered one: 1 and *ch (len *chlen) is the challenge. */
int ll_http_exchange_challenged(const ll_http_call *call, const ll_http_req *req, const ll_http_res *r,
                                const char **ch, size_t *chlen);
/* Sends req again on x with the Authorization that answers challenge ch
 * (done: on_done with call); 1 when it went. */
int ll_http_exchange_answer(ll_vu *vu, ll_http_call *call, ll_transfer *x, const ll_http_req *req,
                            const char *method, const char *ch, size_t chlen, ll_transfer_done_fn *on_done);
/* k6 counts a Digest challenge (401) as an expected response */
extern const ll_http_expected ll_http_exchange_challenge_expected;

#endif
