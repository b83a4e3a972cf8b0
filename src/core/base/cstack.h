/* cstack.h -- the C stack of the running thread: the size given to the
 * threads that run Lua code, how much of it is left, and whether a fault
 * address is an overflow of it. LuaJIT checks its own Lua stack, not the
 * C stack: a recursion through a C function that calls back into Lua
 * (string.gsub's callback, coroutine.resume) overflows the C stack first. */
#ifndef LL_CSTACK_H
#define LL_CSTACK_H

#include <pthread.h>
#include <stddef.h>

/* The C stack of the threads that run Lua code (workers, lifecycle steps):
 * the same whatever `ulimit -s` says. 16 MiB of address space, used as
 * touched; the recursions LuaJIT bounds by its Lua stack (65500 slots)
 * need at most about 4 MiB of it. */
#define LL_CSTACK_SIZE ((size_t)16 << 20)

/* What a guarded call into Lua code leaves free: below this much C stack
 * left, it raises "C stack overflow" instead (the error itself needs some). */
#define LL_CSTACK_RESERVE ((size_t)256 << 10)

/* pthread_attr_init, with the stack size LL_CSTACK_SIZE. 0 or an errno. */
int ll_cstack_attr(pthread_attr_t *a);

/* Bytes of C stack left below the caller's frame on this thread (SIZE_MAX
 * when the thread's stack is unknown). The first call on a thread reads
 * its bounds (not async-signal-safe); later ones only compare addresses. */
size_t ll_cstack_left(void);

/* Whether addr lies in the guard just below this thread's stack, or in its
 * lowest page: a fault there is a C stack overflow. Async-signal-safe once
 * ll_cstack_left was called on the thread. */
int ll_cstack_overflowed(const void *addr);

#endif
