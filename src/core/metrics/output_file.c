/* output_file.c -- buffered plain or gzip file writing for the outputs. */
#include "output_file.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "xmalloc.h"

#define PLAIN_BUFFER (1 << 18) /* bytes per write(2): a page at a time costs the kernel 5x as much */

struct ll_outfile {
    FILE *plain;
    char *buffer; /* plain's: glibc takes only the mode of a setvbuf without one, and writes 4 KiB at a time */
    gzFile gz;
    int failed;
    int why; /* errno of the first failure, 0 when unknown */
};

/* Records a failure (the first one's errno); returns -1. */
static int failed(ll_outfile *f) {
    if (!f->failed) f->why = errno;
    f->failed = 1;
    return -1;
}

ll_outfile *ll_output_file_open(const char *path, char *err, size_t errlen) {
    ll_outfile *f = calloc(1, sizeof(*f));
    if (!f) return NULL;
    size_t n = strlen(path);
    if (n > 3 && strcmp(path + n - 3, ".gz") == 0) {
        f->gz = gzopen(path, "wb6");
        if (f->gz) gzbuffer(f->gz, 1 << 17);
    } else {
        f->plain = fopen(path, "w");
        if (f->plain) {
            f->buffer = ll_xmalloc(PLAIN_BUFFER);
            setvbuf(f->plain, f->buffer, _IOFBF, PLAIN_BUFFER);
        }
    }
    if (!f->gz && !f->plain) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        free(f);
        return NULL;
    }
    return f;
}

int ll_output_file_write(ll_outfile *f, const char *p, size_t n) {
    if (f->failed) return -1;
    errno = 0;
    int bad = f->gz ? n && gzwrite(f->gz, p, (unsigned)n) != (int)n : fwrite(p, 1, n, f->plain) != n;
    return bad ? failed(f) : 0;
}

int ll_output_file_printf(ll_outfile *f, const char *fmt, ...) {
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0) return -1;
    return ll_output_file_write(f, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

int ll_output_file_flush(ll_outfile *f) {
    if (f->failed) return -1;
    errno = 0;
    int bad = f->gz ? gzflush(f->gz, Z_SYNC_FLUSH) != Z_OK : fflush(f->plain) != 0;
    return bad ? failed(f) : 0;
}

int ll_output_file_close(ll_outfile *f, char *why, size_t len) {
    errno = 0;
    if (f->gz && gzclose(f->gz) != Z_OK) failed(f); /* writes what gzip buffered and its trailer */
    errno = 0;
    if (f->plain && fclose(f->plain) != 0) failed(f);
    int rc = f->failed ? -1 : 0;
    if (rc) snprintf(why, len, "%s", ll_output_file_error(f));
    free(f->buffer);
    free(f);
    return rc;
}

const char *ll_output_file_error(const ll_outfile *f) { return f->why ? strerror(f->why) : "unknown error"; }

void ll_output_file_failed(char *err, size_t len, const char *why) {
    if (!err[0]) snprintf(err, len, "write failed: %s; the samples from then on are lost", why);
}
