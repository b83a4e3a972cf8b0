/* errmsg.c -- one-line error messages into a caller's buffer (errmsg.h). */
#include "errmsg.h"

#include <stdarg.h>
#include <stdio.h>

void ll_errmsg(char *err, size_t errlen, const char *fmt, ...) {
    if (!err || errlen == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}
