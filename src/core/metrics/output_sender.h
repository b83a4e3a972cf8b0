/* output_sender.h -- an output's HTTP posts off the output thread. A sink
 * hands each finished body to its sender and goes back to draining the
 * samples while the sender's own thread POSTs it, as k6's outputs push in
 * the background. At most LL_SENDER_QUEUE bodies wait; past that the sink
 * keeps its batch, or once that is full waits too (the sample rings then fill, and what they drop is counted:
 * output.c). At the end of a run what is queued is sent for up to
 * LL_SENDER_DRAIN_S seconds more, counted from the moment
 * the run ended (ll_sender_end); what is left then counts as failed. */
#ifndef LL_OUTPUT_SENDER_H
#define LL_OUTPUT_SENDER_H

#include "buf.h"
#include "output.h"

#define LL_SENDER_QUEUE 2
#define LL_SENDER_DRAIN_S 5

typedef struct ll_sender ll_sender;

/* A sender posting to `to` (copied) over a connection of http's. NULL when
 * the connection or the thread cannot be made. */
ll_sender *ll_sender_open(const ll_output_http *http, const ll_output_post *to);
/* Queues body's bytes and leaves body empty (its storage is the sender's
 * now). While LL_SENDER_QUEUE bodies are queued it waits when wait is set,
 * else returns -1 and leaves body to the caller; 0 when queued. */
int ll_sender_post(ll_sender *s, ll_buf *body, int wait);
/* The run is over: from now on LL_SENDER_DRAIN_S seconds at most are
 * spent waiting, in ll_sender_post and ll_sender_close together; a body
 * that would wait past that is given up (and counted failed by close). */
void ll_sender_end(ll_sender *s);
/* The posts that failed so far (a status other than 2xx, or no answer),
 * and the last one's reason in why. */
long ll_sender_failures(ll_sender *s, char *why, size_t len);
/* Queues last (when not empty, whatever the queue holds), sends what is
 * queued until LL_SENDER_DRAIN_S seconds after ll_sender_end (or now, when
 * it was not called; then the post under way ends and the rest count as
 * failed), stops the thread and frees s. Returns
 * the failures of the whole run, the last one's reason in why. */
long ll_sender_close(ll_sender *s, ll_buf *last, char *why, size_t len);

#endif
