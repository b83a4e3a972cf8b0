/* token_stream.h -- tokens handed to worker threads, each token once
 * (token_stream.c): from a file (a JWT cache file or a user's, one token
 * per line), or live, signed by background threads ahead of use.
 *
 * A stream is shared; each thread reads it through a cursor of its own.
 *
 * File streams: memory stays flat whatever the file's size (a cursor
 * holds one chunk of at most 64 KiB, read with pread). Cursors claim
 * chunks with an atomic offset, so the hot path takes no shared lock.
 * Lines end in LF or CRLF; blank lines are skipped, spaces around a token
 * trimmed. Opening the same file again in the process (same device and
 * inode) while it is open gives the same stream and position, so every
 * Lua state of a run shares it. When the chunks are all claimed, a cursor
 * takes the tokens left in the other cursors' chunks one at a time, so no
 * token is lost while one is left anywhere. Running out: once every token
 * has been handed out, ll_token_stream_next returns 0, to every cursor,
 * from then on; the caller counts that as a failed request (the Lua API
 * raises an error). Bytes appended after the open are not seen.
 *
 * Live streams: `threads` background threads sign into a ring of
 * `capacity` tokens and wait while it is full. A cursor takes the oldest
 * token; when the ring is empty the cursor signs one itself (its own
 * signer) and the stream counts that it fell behind: ll_token_stream_next
 * never runs out on a live stream. */
#ifndef LL_TOKEN_STREAM_H
#define LL_TOKEN_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "jwt.h"

typedef struct ll_token_stream ll_token_stream;
typedef struct ll_token_cursor ll_token_cursor;

/* The stream of the file at path (one reference; shared as said above),
 * or NULL with "cannot open 'x': reason" in err. */
ll_token_stream *ll_token_stream_open(const char *path, char *err, size_t errlen);
/* A live stream of g's tokens (it takes its own reference to g). Shared
 * too: a call with a generator of the same fingerprint while the first is
 * open gives the first stream (its capacity and threads). NULL with err
 * set when the threads cannot start. */
ll_token_stream *ll_token_stream_live(ll_jwt_gen *g, size_t capacity, int threads, char *err, size_t errlen);
/* Drops a reference; the last one stops the threads and frees the stream
 * (its cursors must be freed before). */
void ll_token_stream_close(ll_token_stream *ts);

/* A cursor for one thread (NULL when out of memory). */
ll_token_cursor *ll_token_stream_cursor(ll_token_stream *ts);
void ll_token_stream_cursor_free(ll_token_cursor *c);
/* The next token: 1 with *tok (not NUL-terminated, valid until the
 * cursor's next call) and *len set, 2 the same from a live stream whose
 * ring was empty (the cursor signed it: it fell behind); 0 when a file
 * stream is used up; -1 with a one-line reason in err (a read error, a
 * line longer than 64 KiB, signing failed). */
int ll_token_stream_next(ll_token_cursor *c, const char **tok, size_t *len, char *err, size_t errlen);

/* How many times a cursor found the live ring empty (0 for a file). */
uint64_t ll_token_stream_fell_behind(const ll_token_stream *ts);
/* Tokens handed out so far, by every cursor. */
uint64_t ll_token_stream_handed(const ll_token_stream *ts);

#endif
