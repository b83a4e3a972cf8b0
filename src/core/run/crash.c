/* crash.c -- the crash guard (see crash.h): fault handlers on an alternate
 * signal stack per thread that runs Lua code, which park the faulting
 * thread and mark its worker crashed for the engine to end the run. */
#include "crash.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cstack.h"
#include "exit.h"

#define ALT_STACK_SIZE ((size_t)64 << 10)

static const int SIGNALS[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};

/* Address space held from the start and given back at a crash, so that
 * the summary can still be made when the crash was memory running out
 * under an address-space limit (ulimit -v, prlimit --as). */
#define RESERVE_SIZE ((size_t)64 << 20)
static void *_Atomic reserve;

static __thread ll_worker *t_worker;   /* the worker whose Lua code this thread runs */
static __thread void *t_alt;           /* its alternate signal stack */

static void say(const char *s) {
    ssize_t rc = write(2, s, strlen(s));
    (void)rc;
}

static const char *sig_name(int sig) {
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGILL: return "SIGILL";
    case SIGFPE: return "SIGFPE";
    default: return "a signal";
    }
}

/* The crashed thread's end: it waits for the engine to end the run, which
 * exits the process; if that does not come, it exits the process itself. */
static void park(void) {
    for (int i = 0; i < LL_CRASH_WAIT_S * 10; i++) {
        struct timespec ts = {0, 100000000};
        nanosleep(&ts, NULL);
    }
    say("luaload: the run did not end after a crash: exiting\n");
    _exit(LL_EXIT_CRASH);
}

static void mark(ll_worker *w) {
    void *r = atomic_exchange(&reserve, NULL);
    if (r) munmap(r, RESERVE_SIZE);
    atomic_store(&w->crashed, 1);
    if (w->run) atomic_store(&w->run->crashed, 1);
}

static void on_fault(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    ll_worker *w = t_worker;
    if (!w || atomic_load(&w->crashed)) { /* not a Lua thread, or a fault while crashing: nothing to save */
        say("luaload: crashed: ");
        say(sig_name(sig));
        say(w ? " again in a crashed worker\n" : " outside the Lua code's threads\n");
        _exit(LL_EXIT_CRASH);
    }
    w->crash_sig = sig;
    w->crash_overflow = ll_cstack_overflowed(si->si_addr);
    mark(w);
    park();
}

void ll_crash_install(void) {
    if (!atomic_load(&reserve)) {
        void *r = mmap(NULL, RESERVE_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (r != MAP_FAILED) atomic_store(&reserve, r);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigfillset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof(SIGNALS) / sizeof(SIGNALS[0]); i++) sigaction(SIGNALS[i], &sa, NULL);
}

void ll_crash_enter(ll_worker *w) {
    (void)ll_cstack_left(); /* reads this thread's bounds now, not in the handler */
    t_worker = w;
    if (t_alt) return;
    t_alt = malloc(ALT_STACK_SIZE);
    if (!t_alt) return; /* no alternate stack: an overflow then kills the process, as before */
    stack_t ss = {.ss_sp = t_alt, .ss_size = ALT_STACK_SIZE, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0) {
        free(t_alt);
        t_alt = NULL;
    }
}

void ll_crash_leave(void) {
    t_worker = NULL;
    if (!t_alt) return;
    stack_t ss = {.ss_flags = SS_DISABLE};
    sigaltstack(&ss, NULL);
    free(t_alt);
    t_alt = NULL;
}

void ll_crash_panic(const char *what) {
    ll_worker *w = t_worker;
    if (!w) {
        fprintf(stderr, "luaload: crashed: a Lua error outside any protected call: %s\n", what ? what : "?");
        _exit(LL_EXIT_CRASH);
    }
    snprintf(w->crash_what, sizeof(w->crash_what), "%s", what ? what : "(not a string)");
    w->crash_sig = 0;
    mark(w);
    park();
}

const char *ll_crash_describe(const ll_worker *w, char *buf, size_t len) {
    char who[48];
    if (w->index >= 0) snprintf(who, sizeof(who), "worker %d", w->index);
    else snprintf(who, sizeof(who), "the lifecycle state (init, setup, teardown)");
    if (!w->crash_sig)
        snprintf(buf, len, "%s crashed: a Lua error outside any protected call (%s); the test stops", who,
                 w->crash_what);
    else if (w->crash_overflow)
        snprintf(buf, len, "%s crashed: %s, a C stack overflow (a recursion through a C function that "
                           "calls back into Lua?); the test stops", who, sig_name(w->crash_sig));
    else
        snprintf(buf, len, "%s crashed: %s in its Lua code (LuaJIT faults when memory runs out in compiled "
                           "code: an address-space limit?); the test stops", who, sig_name(w->crash_sig));
    return buf;
}
