/* cstack.c -- the C stack of the running thread (see cstack.h): its
 * bounds, read once per thread from pthread_getattr_np, and the size of
 * the threads that run Lua code. */
#include "cstack.h"

#include <stdint.h>

static __thread struct {
    int known;                  /* 1: lo is set, -1: the bounds are unknown */
    uintptr_t lo;               /* the lowest byte of the stack (above its guard) */
} t_stack;

int ll_cstack_attr(pthread_attr_t *a) {
    int rc = pthread_attr_init(a);
    return rc ? rc : pthread_attr_setstacksize(a, LL_CSTACK_SIZE);
}

static void read_bounds(void) {
    pthread_attr_t a;
    void *lo = NULL;
    size_t size = 0;
    t_stack.known = -1;
    if (pthread_getattr_np(pthread_self(), &a) != 0) return;
    if (pthread_attr_getstack(&a, &lo, &size) == 0 && lo) {
        t_stack.lo = (uintptr_t)lo;
        t_stack.known = 1;
    }
    pthread_attr_destroy(&a);
}

size_t ll_cstack_left(void) {
    if (!t_stack.known) read_bounds();
    if (t_stack.known < 0) return SIZE_MAX;
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    return sp > t_stack.lo ? sp - t_stack.lo : 0;
}

int ll_cstack_overflowed(const void *addr) {
    uintptr_t a = (uintptr_t)addr;
    if (t_stack.known <= 0) return 0;
    return a < t_stack.lo + 4096 && a + (1u << 20) >= t_stack.lo; /* a guard is at most 1 MiB */
}
