/* output_file.c -- buffered plain or gzip file writing for the outputs. */
#include "output_file.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

struct ll_outfile {
    FILE *plain;
    gzFile gz;
    int failed;
};

ll_outfile *ll_output_file_open(const char *path, char *err, size_t errlen) {
    ll_outfile *f = calloc(1, sizeof(*f));
    if (!f) return NULL;
    size_t n = strlen(path);
    if (n > 3 && strcmp(path + n - 3, ".gz") == 0) {
        f->gz = gzopen(path, "wb6");
        if (f->gz) gzbuffer(f->gz, 1 << 17);
    } else {
        f->plain = fopen(path, "w");
        if (f->plain) setvbuf(f->plain, NULL, _IOFBF, 1 << 17);
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
    if (f->gz) f->failed = n && gzwrite(f->gz, p, (unsigned)n) != (int)n;
    else f->failed = fwrite(p, 1, n, f->plain) != n;
    return f->failed ? -1 : 0;
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
    if (f->gz) f->failed = gzflush(f->gz, Z_SYNC_FLUSH) != Z_OK;
    else f->failed = fflush(f->plain) != 0;
    return f->failed ? -1 : 0;
}

int ll_output_file_close(ll_outfile *f) {
    int rc = f->failed ? -1 : 0;
    if (f->gz && gzclose(f->gz) != Z_OK) rc = -1;
    if (f->plain && fclose(f->plain) != 0) rc = -1;
    free(f);
    return rc;
}
