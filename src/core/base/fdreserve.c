/* fdreserve.c -- open files kept aside for the end of a run (fdreserve.h). */
#include "fdreserve.h"

#include <fcntl.h>
#include <unistd.h>

int ll_fdreserve_take(ll_fdreserve *r, int n) {
    r->n = 0;
    if (n > LL_FDRESERVE_MAX) n = LL_FDRESERVE_MAX;
    int first = n > 0 ? open("/dev/null", O_RDONLY | O_CLOEXEC) : -1;
    if (first < 0) return 0;
    r->fds[r->n++] = first;
    while (r->n < n) {
        int fd = fcntl(first, F_DUPFD_CLOEXEC, 0);
        if (fd < 0) break;
        r->fds[r->n++] = fd;
    }
    return r->n;
}

void ll_fdreserve_release(ll_fdreserve *r) {
    while (r->n > 0) close(r->fds[--r->n]);
}
