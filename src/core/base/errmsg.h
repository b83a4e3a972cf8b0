/* errmsg.h -- the one formatter of the one-line error messages that
 * functions hand back in a caller's buffer (char *err, size_t errlen). */
#ifndef LL_ERRMSG_H
#define LL_ERRMSG_H

#include <stddef.h>

/* Formats into err (errlen bytes, truncated); nothing when err is NULL or
 * errlen is 0. */
void ll_errmsg(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
