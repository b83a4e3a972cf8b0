/* jwt_pregen.h -- signing many tokens at once on several threads, each
 * with a signer of its own, into a file (jwt_pregen.c); the JWT cache's
 * writer. */
#ifndef LL_JWT_PREGEN_H
#define LL_JWT_PREGEN_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "jwt.h"

/* Signs n tokens of g on `threads` threads and writes them to fd, one per
 * line ("\n"), in chunks of a few hundred (the threads' chunks interleave,
 * so the order is no one's). With progress, a line on stderr is redrawn
 * about four times a second. Gives up when stop (if not NULL) becomes
 * non-zero. Returns 0, or -1 with a one-line reason in err (what is
 * written is then incomplete). */
int ll_jwt_pregen_write(ll_jwt_gen *g, uint64_t n, int fd, int threads, int progress, const atomic_int *stop,
                        char *err, size_t errlen);

#endif
