/* lifecycle.h -- running one step of the lifecycle worker (its init code,
 * setup(), teardown(), the summary) on a thread of its own while the
 * calling thread watches the clock, so that Lua code which never yields
 * cannot hold the run past its timeout or a signal. */
#ifndef LL_LIFECYCLE_H
#define LL_LIFECYCLE_H

#include <stdint.h>

#include "worker.h"

/* After a step (or a worker) is due to stop: how long it gets to stop on
 * its own, then to stop once its Lua code is asked to (ll_script_stop),
 * before it is given up on. */
#define LL_LIFECYCLE_STOP_AFTER_NS 100000000ull
#define LL_LIFECYCLE_GIVE_UP_AFTER_NS 400000000ull

typedef int ll_lifecycle_fn(void *arg);

/* Runs fn(arg), which uses w's Lua state, on a new thread and waits. The
 * step is due at deadline_ns (ll_loop_now_ns; 0: never) or signal_ns after
 * a SIGINT/SIGTERM, whichever comes first. Returns 1 and sets *rc to what
 * fn returned; or 0 when fn did not return in time even after its Lua code
 * was asked to stop, or when its thread crashed (w->crashed, crash.h): then
 * the thread is left running or parked, and neither w nor arg may be used or
 * freed again. */
int ll_lifecycle_run(ll_run *run, ll_worker *w, ll_lifecycle_fn *fn, void *arg, uint64_t deadline_ns,
                     uint64_t signal_ns, int *rc);

/* When a thing started before and due at due_ns (0: never) must stop, given
 * the signal budget signal_ns: the earlier of the two (0: never). */
uint64_t ll_lifecycle_due(ll_run *run, uint64_t due_ns, uint64_t signal_ns);

#endif
