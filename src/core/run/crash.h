/* crash.h -- the crash guard, the last resort when LuaJIT cannot recover:
 * a fault (SIGSEGV, SIGBUS, SIGILL, SIGFPE) in a thread that runs Lua code
 * (a C stack overflow luaload's guards did not see, LuaJIT faulting on
 * out-of-memory in compiled code) or a Lua panic (an error outside any
 * protected call) is caught on an alternate signal stack. The thread stops
 * there for good; its worker is marked crashed and the engine ends the run
 * with a one-line diagnosis, the summary of what completed (the crashed
 * worker's metrics from its last snapshot) and exit code LL_EXIT_CRASH.
 * A fault in any other thread exits at once with that code and one line. */
#ifndef LL_CRASH_H
#define LL_CRASH_H

#include <stddef.h>

#include "worker.h"

/* How long a crashed thread waits for the engine to end the run before it
 * exits the process itself (the run could be stuck behind a lock it held). */
#define LL_CRASH_WAIT_S 60

/* Installs the fault handlers, process-wide, and holds 64 MiB of address
 * space that a crash gives back for the summary. Again: no effect. */
void ll_crash_install(void);

/* This thread runs w's Lua code until ll_crash_leave: gives it an alternate
 * signal stack and knows its faults as w's. */
void ll_crash_enter(ll_worker *w);
void ll_crash_leave(void);

/* ll_crash_panic, a Lua panic on this thread, is declared in
 * script_host.h: lua_api calls it. */

/* The one line saying what happened to a crashed worker (no newline). */
const char *ll_crash_describe(const ll_worker *w, char *buf, size_t len);

#endif
