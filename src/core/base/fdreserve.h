/* fdreserve.h -- open files kept aside for the end of a run, as Redis and
 * nginx keep one for EMFILE: taken at the start, before a test can use the
 * open-file limit up (a VU per connection, batches, leaks), and given back
 * when the end needs files (the summary export, handle_summary's files,
 * the report, the outputs' last flush). */
#ifndef LL_FDRESERVE_H
#define LL_FDRESERVE_H

#define LL_FDRESERVE_MAX 16

typedef struct ll_fdreserve {
    int fds[LL_FDRESERVE_MAX];
    int n;
} ll_fdreserve;

/* Opens n descriptors (at most LL_FDRESERVE_MAX) on /dev/null; fewer when
 * they cannot be had. Returns how many it holds. */
int ll_fdreserve_take(ll_fdreserve *r, int n);
/* Closes them (again: nothing). */
void ll_fdreserve_release(ll_fdreserve *r);

#endif
