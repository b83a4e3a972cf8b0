/* test_loop.c -- the epoll loop and its timer heap (src/core/base/loop.c):
 * deadline order, zero-delay (next-turn list) and self re-arming timers,
 * absolute deadlines, stopping and
 * re-arming from callbacks, restarts, a 10,000-timer run checked against a
 * reference model, and fd watching on pipes. No sockets; every timer is
 * 0-2 ms, so the whole test waits a few milliseconds at most. */
/* links: ll_base */
#include "loop.h"
#include "test_util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* tu_rand's seed for this test: every run does the same operations */
#define TEST_LOOP_SEED 0x2545F4914F6CDD1Dull

/* Spins (no sleep) until the monotonic clock is past ns. */
static void spin_past(uint64_t ns) {
    while (ll_loop_now_ns() <= ns) {
    }
}

/* ---- a timer that records when and in which order it fired ---- */

typedef struct tt {
    ll_timer t;
    int id;
    int fired;             /* times fired */
    uint64_t fired_now;    /* ll_loop_now() in the callback */
    uint64_t deadline_seen;/* t.deadline_ns when it fired */
    int early;             /* fired before its deadline */
} tt;

static int order[64], norder;
static int remaining;

static void on_record(ll_loop *loop, void *ud) {
    tt *x = ud;
    x->fired++;
    x->fired_now = ll_loop_now(loop);
    x->deadline_seen = x->t.deadline_ns;
    if (ll_loop_now_ns() < x->t.deadline_ns || ll_loop_now(loop) < x->t.deadline_ns) x->early = 1;
    if (norder < 64) order[norder++] = x->id;
    remaining--;
}

static void tt_init(tt *x, int id) {
    memset(x, 0, sizeof(*x));
    x->id = id;
    ll_loop_timer_init(&x->t, on_record, x);
}

/* 1. 50 timers with shuffled delays fire once each, in deadline order. */
static void test_deadline_order(void) {
    enum { N = 50, STEP_US = 40 };
    ll_loop *loop = ll_loop_new();
    tt x[N];
    int delay_of[N];
    for (int i = 0; i < N; i++) delay_of[i] = i;
    for (int i = N - 1; i > 0; i--) { /* Fisher-Yates */
        int j = (int)(tu_rand() % (uint64_t)(i + 1));
        int tmp = delay_of[i];
        delay_of[i] = delay_of[j];
        delay_of[j] = tmp;
    }
    norder = 0;
    remaining = N;
    /* warm up (heap allocation, first clock read) so that arming is quick */
    tt warm;
    tt_init(&warm, -1);
    ll_loop_timer_start(loop, &warm.t, 0);
    ll_loop_timer_stop(loop, &warm.t);
    uint64_t t0 = ll_loop_now_ns();
    for (int i = 0; i < N; i++) {
        tt_init(&x[i], i);
        ll_loop_timer_start(loop, &x[i].t, (uint64_t)delay_of[i] * STEP_US);
    }
    uint64_t t1 = ll_loop_now_ns();
    int armed_ok = 1;
    for (int i = 0; i < N; i++) {
        uint64_t want = (uint64_t)delay_of[i] * STEP_US * 1000ull;
        if (!want) armed_ok &= x[i].t.heap_index == LL_TIMER_SOON; /* no delay: the next-turn list */
        else armed_ok &= ll_loop_timer_armed(&x[i].t) && x[i].t.deadline_ns >= t0 + want && x[i].t.deadline_ns <= t1 + want;
    }
    tu_check(armed_ok, "order: 50 timers armed with deadline = start time + delay (no delay: for the next turn)");
    tu_check(norder == 0, "order: nothing fires inside ll_loop_timer_start");

    int ran = 0;
    uint64_t give_up = ll_loop_now_ns() + 200000000ull;
    while (remaining > 0 && ll_loop_now_ns() < give_up) ran += ll_loop_turn(loop, 1);

    int once = 1, early = 0, disarmed = 1;
    for (int i = 0; i < N; i++) {
        once &= x[i].fired == 1;
        early |= x[i].early;
        disarmed &= !ll_loop_timer_armed(&x[i].t);
    }
    tu_check(norder == N && once, "order: each of the 50 fired exactly once (%d fires)", norder);
    tu_check(ran == N, "order: the turns' return values add up to 50 (got %d)", ran);
    tu_check(!early, "order: no timer fired before its deadline");
    tu_check(disarmed, "order: fired timers have heap_index -1");
    int by_deadline = 1;
    for (int k = 1; k < norder; k++) by_deadline &= x[order[k - 1]].deadline_seen <= x[order[k]].deadline_seen;
    tu_check(by_deadline, "order: fired in non-decreasing deadline order");
    /* Deadlines are start time + delay; with 40 us between delays the delay
     * order is the deadline order unless arming itself took >= 40 us. */
    if (t1 - t0 < STEP_US * 1000ull) {
        int by_delay = norder == N;
        for (int k = 0; k < norder; k++) by_delay &= delay_of[order[k]] == k;
        tu_check(by_delay, "order: fired in the order of the shuffled delays");
    } else {
        printf("info order: arming took %llu ns (>= 40 us), delay-order check skipped\n",
               (unsigned long long)(t1 - t0));
    }
    tu_check(ll_loop_turn(loop, 0) == 0, "order: a further turn runs nothing");
    ll_loop_free(loop);
}

/* 2. A zero-delay timer: not re-entrant, fires on the next turn, once. */
static void test_zero_delay(void) {
    ll_loop *loop = ll_loop_new();
    tt x;
    tt_init(&x, 0);
    norder = 0;
    remaining = 1;
    ll_loop_timer_start(loop, &x.t, 0);
    tu_check(x.fired == 0 && x.t.heap_index == LL_TIMER_SOON,
             "zero delay: not fired inside ll_loop_timer_start (queued for the next turn)");
    int n = ll_loop_turn(loop, 0);
    tu_check(n == 1 && x.fired == 1 && !x.early, "zero delay: fires on the next turn (turn returned %d)", n);
    tu_check(!ll_loop_timer_armed(&x.t), "zero delay: disarmed after firing");
    n = ll_loop_turn(loop, 0);
    tu_check(n == 0 && x.fired == 1, "zero delay: does not fire again (turn returned %d)", n);
    ll_loop_timer_stop(loop, &x.t); /* stopping a fired timer is harmless */
    tu_check(!ll_loop_timer_armed(&x.t) && ll_loop_turn(loop, 0) == 0, "zero delay: stopping it after it fired is harmless");
    ll_loop_free(loop);
}

/* 2b. The next-turn list: FIFO order, O(1) stop from its middle, a timer
 * re-queued from its callback waits a turn, and ll_loop_timer_at. */
static void requeue(ll_loop *loop, void *ud) {
    tt *x = ud;
    on_record(loop, ud);
    if (x->fired < 3) ll_loop_timer_start(loop, &x->t, 0);
}

static void test_next_turn(void) {
    ll_loop *loop = ll_loop_new();
    tt x[5];
    norder = 0;
    for (int i = 0; i < 5; i++) {
        tt_init(&x[i], i);
        ll_loop_timer_start(loop, &x[i].t, 0);
    }
    ll_loop_timer_stop(loop, &x[2].t); /* the middle */
    ll_loop_timer_stop(loop, &x[4].t); /* the tail */
    ll_loop_timer_start(loop, &x[0].t, 0); /* restarted: to the back */
    tu_check(!ll_loop_timer_armed(&x[2].t) && ll_loop_timer_armed(&x[0].t), "next turn: stop and restart on the list");
    int n = ll_loop_turn(loop, 0);
    tu_check(n == 3 && norder == 3 && order[0] == 1 && order[1] == 3 && order[2] == 0,
             "next turn: fired in the order queued, restarted last, stopped ones not (turn %d, order %d %d %d)", n,
             order[0], order[1], order[2]);
    tu_check(x[2].fired == 0 && x[4].fired == 0, "next turn: stopped timers did not fire");
    tu_check(ll_loop_turn(loop, 0) == 0, "next turn: the list is empty after its turn");

    tt r;
    tt_init(&r, 9);
    r.t.fn = requeue;
    ll_loop_timer_start(loop, &r.t, 0);
    int turns = 0, fired_per_turn_ok = 1;
    while (ll_loop_timer_armed(&r.t) && turns < 10) {
        int before = r.fired;
        ll_loop_turn(loop, 0);
        fired_per_turn_ok &= r.fired == before + 1;
        turns++;
    }
    tu_check(r.fired == 3 && turns == 3 && fired_per_turn_ok, "next turn: a self re-queue fires once per turn (%d in %d)",
             r.fired, turns);

    tt a;
    tt_init(&a, 10);
    uint64_t at = ll_loop_now_ns() + 500000ull;
    ll_loop_timer_at(loop, &a.t, at);
    tu_check(a.t.deadline_ns == at && a.t.heap_index >= 0, "timer at: armed on the heap at the absolute deadline");
    uint64_t give_up = ll_loop_now_ns() + 200000000ull;
    while (!a.fired && ll_loop_now_ns() < give_up) ll_loop_turn(loop, 1);
    tu_check(a.fired == 1 && !a.early && ll_loop_now_ns() >= at, "timer at: fired once, not before its deadline");
    ll_loop_timer_at(loop, &a.t, ll_loop_now_ns() + 3600000000000ull);
    ll_loop_timer_start(loop, &a.t, 0);
    tu_check(a.t.heap_index == LL_TIMER_SOON, "timer at: re-armed from the heap to the next turn");
    tu_check(ll_loop_turn(loop, 0) == 1 && a.fired == 2 && ll_loop_turn(loop, 0) == 0,
             "timer at: left the heap (fires once, next turn)");
    ll_loop_free(loop);
}

/* 3. Re-armed (delay 0) from its own callback: once per turn, no loop. */
typedef struct self_rearm {
    ll_timer t;
    int fired, limit;
    uint64_t delay_us; /* for the re-arm */
    uint64_t last_turn_now;
    int same_turn; /* fired twice with the same ll_loop_now() */
} self_rearm;

static void on_self_rearm(ll_loop *loop, void *ud) {
    self_rearm *s = ud;
    if (s->fired && ll_loop_now(loop) == s->last_turn_now) s->same_turn = 1;
    s->last_turn_now = ll_loop_now(loop);
    s->fired++;
    if (s->fired < s->limit) ll_loop_timer_start(loop, &s->t, s->delay_us);
}

static void test_self_rearm(void) {
    ll_loop *loop = ll_loop_new();
    self_rearm s = {.limit = 5};
    ll_loop_timer_init(&s.t, on_self_rearm, &s);
    ll_loop_timer_start(loop, &s.t, 0);
    int per_turn_ok = 1, turns = 0;
    while (turns < 20 && s.fired < s.limit) {
        int before = s.fired;
        int n = ll_loop_turn(loop, 1);
        turns++;
        per_turn_ok &= n == s.fired - before && n <= 1;
    }
    tu_check(s.fired == 5 && turns == 5, "self re-arm: 5 fires took 5 turns (fired %d in %d turns)", s.fired,
             turns);
    tu_check(per_turn_ok && !s.same_turn, "self re-arm: at most one fire per turn, never twice in one turn");
    tu_check(!ll_loop_timer_armed(&s.t) && ll_loop_turn(loop, 0) == 0, "self re-arm: stops when it stops re-arming");

    /* the same with a 500 us delay: the re-armed timer is not due this turn */
    s = (self_rearm){.limit = 3, .delay_us = 500};
    ll_loop_timer_init(&s.t, on_self_rearm, &s);
    ll_loop_timer_start(loop, &s.t, 500);
    uint64_t t0 = ll_loop_now_ns();
    turns = 0;
    per_turn_ok = 1;
    while (turns < 1000 && s.fired < s.limit) {
        int before = s.fired;
        int n = ll_loop_turn(loop, 2);
        turns++;
        per_turn_ok &= n == s.fired - before && n <= 1;
    }
    uint64_t took = ll_loop_now_ns() - t0;
    tu_check(s.fired == 3 && per_turn_ok && !s.same_turn, "self re-arm 500 us: 3 fires, one per turn (%d turns)",
             turns);
    tu_check(took >= 1500000ull, "self re-arm 500 us: 3 fires took >= 1.5 ms (%.3f ms)", (double)took / 1e6);
    ll_loop_free(loop);
}

/* 4. A callback that stops other timers due in the same turn. */
typedef struct stopper {
    ll_timer t;
    ll_timer **victims;
    int nvictims;
    int fired;
} stopper;

static void on_stopper(ll_loop *loop, void *ud) {
    stopper *s = ud;
    s->fired++;
    for (int i = 0; i < s->nvictims; i++) ll_loop_timer_stop(loop, s->victims[i]);
}

static void test_stop_from_callback(void) {
    ll_loop *loop = ll_loop_new();
    enum { NV = 10 };
    tt v[NV];
    ll_timer *victims[NV / 2];
    stopper s = {.victims = victims, .nvictims = NV / 2};
    ll_loop_timer_init(&s.t, on_stopper, &s);
    ll_loop_timer_start(loop, &s.t, 0);
    /* the victims are due 1 us later than the stopper, all due by the turn */
    for (int i = 0; i < NV; i++) {
        tt_init(&v[i], i);
        ll_loop_timer_start(loop, &v[i].t, 1);
    }
    for (int i = 0; i < NV / 2; i++) victims[i] = &v[2 * i + 1].t; /* the odd ones */
    uint64_t last = 0;
    for (int i = 0; i < NV; i++)
        if (v[i].t.deadline_ns > last) last = v[i].t.deadline_ns;
    spin_past(last);
    norder = 0;
    remaining = NV;
    int n = ll_loop_turn(loop, 0);
    int even_once = 1, odd_never = 1, odd_disarmed = 1;
    for (int i = 0; i < NV; i++) {
        if (i % 2 == 0) even_once &= v[i].fired == 1;
        else {
            odd_never &= v[i].fired == 0;
            odd_disarmed &= !ll_loop_timer_armed(&v[i].t);
        }
    }
    tu_check(s.fired == 1, "stop in callback: the stopper fired once");
    tu_check(even_once && odd_never, "stop in callback: the 5 stopped timers did not fire, the other 5 did");
    tu_check(n == 1 + NV / 2, "stop in callback: turn returned %d (want %d)", n, 1 + NV / 2);
    tu_check(odd_disarmed, "stop in callback: stopped timers have heap_index -1");
    tu_check(ll_loop_turn(loop, 0) == 0, "stop in callback: nothing left to fire");

    /* two timers due together, each stops the other: exactly one fires */
    stopper a = {0}, b = {0};
    ll_timer *va[1] = {&b.t}, *vb[1] = {&a.t};
    a.victims = va;
    a.nvictims = 1;
    b.victims = vb;
    b.nvictims = 1;
    ll_loop_timer_init(&a.t, on_stopper, &a);
    ll_loop_timer_init(&b.t, on_stopper, &b);
    ll_loop_timer_start(loop, &a.t, 0);
    ll_loop_timer_start(loop, &b.t, 0);
    spin_past(b.t.deadline_ns > a.t.deadline_ns ? b.t.deadline_ns : a.t.deadline_ns);
    n = ll_loop_turn(loop, 0);
    tu_check(n == 1 && a.fired + b.fired == 1, "mutual stop: exactly one of two due timers fired (turn %d, a %d, b %d)",
             n, a.fired, b.fired);
    tu_check(!ll_loop_timer_armed(&a.t) && !ll_loop_timer_armed(&b.t) && ll_loop_turn(loop, 0) == 0,
             "mutual stop: both disarmed, nothing left");
    ll_loop_free(loop);
}

/* 5. Callbacks that start a new timer or re-arm another one. */
typedef struct starter {
    ll_timer t;
    tt *fresh;    /* started with delay 0 */
    tt *later;    /* due this turn, pushed to 1 hour */
    tt *sooner;   /* due in 1 hour, pulled to 0 */
    uint64_t later_old;
    int fired;
} starter;

static void on_starter(ll_loop *loop, void *ud) {
    starter *s = ud;
    s->fired++;
    tt_init(s->fresh, 100);
    ll_loop_timer_start(loop, &s->fresh->t, 0);
    s->later_old = s->later->t.deadline_ns;
    ll_loop_timer_start(loop, &s->later->t, 3600ull * 1000000);
    ll_loop_timer_start(loop, &s->sooner->t, 0);
}

static void test_start_from_callback(void) {
    ll_loop *loop = ll_loop_new();
    tt fresh, later, sooner;
    starter s = {.fresh = &fresh, .later = &later, .sooner = &sooner};
    ll_loop_timer_init(&s.t, on_starter, &s);
    tt_init(&later, 1);
    tt_init(&sooner, 2);
    ll_loop_timer_start(loop, &s.t, 0);
    ll_loop_timer_start(loop, &later.t, 1);              /* due right after the starter */
    ll_loop_timer_start(loop, &sooner.t, 3600ull * 1000000); /* an hour away */
    spin_past(later.t.deadline_ns);
    norder = 0;
    remaining = 3;
    int n = ll_loop_turn(loop, 0);
    tu_check(s.fired == 1 && n == 1, "start in callback: only the starter ran this turn (turn returned %d)", n);
    tu_check(fresh.fired == 0 && ll_loop_timer_armed(&fresh.t), "start in callback: a new 0-delay timer is armed, not fired");
    tu_check(later.fired == 0 && ll_loop_timer_armed(&later.t) && later.t.deadline_ns >= s.later_old + 3599000000000ull,
             "start in callback: a timer due this turn, re-armed to 1 h, did not fire");
    tu_check(sooner.fired == 0 && ll_loop_timer_armed(&sooner.t), "start in callback: an 1-h timer pulled to 0 did not fire in the same turn");
    n = ll_loop_turn(loop, 1);
    tu_check(n == 2 && fresh.fired == 1 && sooner.fired == 1 && later.fired == 0,
             "start in callback: next turn fires the new and the pulled-in timer (turn returned %d)", n);
    tu_check(ll_loop_turn(loop, 0) == 0 && ll_loop_timer_armed(&later.t), "start in callback: the 1-h timer stays armed");
    ll_loop_timer_stop(loop, &later.t);
    tu_check(!ll_loop_timer_armed(&later.t), "start in callback: stopped");
    ll_loop_free(loop);
}

/* 6. Stopping unarmed timers, stopping twice. */
static void test_stop_harmless(void) {
    ll_loop *loop = ll_loop_new();
    tt a, b, c;
    tt_init(&a, 0);
    tt_init(&b, 1);
    tt_init(&c, 2);
    tu_check(!ll_loop_timer_armed(&a.t), "stop: ll_loop_timer_init leaves heap_index -1");
    ll_loop_timer_stop(loop, &a.t);
    tu_check(!ll_loop_timer_armed(&a.t), "stop: stopping a never-armed timer keeps -1");
    ll_loop_timer_start(loop, &a.t, 0);
    ll_loop_timer_start(loop, &b.t, 0);
    ll_loop_timer_start(loop, &c.t, 0);
    ll_loop_timer_stop(loop, &b.t);
    ll_loop_timer_stop(loop, &b.t);
    ll_loop_timer_stop(loop, &b.t);
    tu_check(!ll_loop_timer_armed(&b.t) && ll_loop_timer_armed(&a.t) && ll_loop_timer_armed(&c.t),
             "stop: stopping b three times leaves a and c armed");
    spin_past(c.t.deadline_ns);
    norder = 0;
    remaining = 2;
    int n = ll_loop_turn(loop, 0);
    tu_check(n == 2 && a.fired == 1 && b.fired == 0 && c.fired == 1, "stop: a and c fire, b does not (turn %d)", n);
    tu_check(ll_loop_turn(loop, 0) == 0, "stop: heap is empty afterwards (no phantom entry)");
    ll_loop_free(loop);
}

/* 7. Restarting an armed timer moves its deadline. */
static void test_restart(void) {
    ll_loop *loop = ll_loop_new();
    tt x, y, z;
    tt_init(&x, 0);
    tt_init(&y, 1);
    tt_init(&z, 2);
    ll_loop_timer_start(loop, &x.t, 3600ull * 1000000);
    uint64_t old = x.t.deadline_ns;
    ll_loop_timer_start(loop, &x.t, 0);
    tu_check(x.t.deadline_ns < old && ll_loop_timer_armed(&x.t), "restart: 1 h -> 0 moves the deadline earlier");
    norder = 0;
    remaining = 1;
    int n = ll_loop_turn(loop, 0);
    tu_check(n == 1 && x.fired == 1, "restart: the pulled-in timer fires on the next turn, once (turn %d)", n);

    ll_loop_timer_start(loop, &y.t, 0);
    old = y.t.deadline_ns;
    ll_loop_timer_start(loop, &y.t, 3600ull * 1000000);
    tu_check(y.t.deadline_ns >= old + 3599000000000ull && y.t.heap_index == 0, "restart: 0 -> 1 h moves the deadline later");
    spin_past(old + 1000);
    n = ll_loop_turn(loop, 0);
    tu_check(n == 0 && y.fired == 0, "restart: the pushed-out timer does not fire at its old deadline");
    ll_loop_timer_stop(loop, &y.t);

    /* restarting 100 times leaves one heap entry: one fire */
    for (int i = 0; i < 100; i++) ll_loop_timer_start(loop, &z.t, (uint64_t)(i % 3));
    spin_past(z.t.deadline_ns);
    n = ll_loop_turn(loop, 0);
    int n2 = ll_loop_turn(loop, 0);
    tu_check(n == 1 && n2 == 0 && z.fired == 1, "restart: 100 restarts, one fire (turns %d, %d)", n, n2);
    ll_loop_free(loop);
}

/* 8. A callback that frees its own timer (the loop must not touch it after). */
static int freed_fires;
static void on_free_self(ll_loop *loop, void *ud) {
    (void)loop;
    freed_fires++;
    free(ud);
}

static void test_free_in_callback(void) {
    ll_loop *loop = ll_loop_new();
    ll_timer *t[8];
    for (int i = 0; i < 8; i++) {
        t[i] = malloc(sizeof(ll_timer));
        ll_loop_timer_init(t[i], on_free_self, t[i]);
        ll_loop_timer_start(loop, t[i], (uint64_t)i);
    }
    uint64_t last = t[7]->deadline_ns;
    spin_past(last);
    freed_fires = 0;
    int n = ll_loop_turn(loop, 0);
    tu_check(n == 8 && freed_fires == 8, "free in callback: 8 timers that free themselves all fire (turn %d)", n);
    ll_loop_free(loop);
}

/* 9. 10,000 timers, random starts/restarts/stops, against a model. */
enum { MANY = 10000 };
typedef struct mt {
    ll_timer t;
    int fired_this_turn;
    int fired_total;
} mt;
static mt *many;
static uint64_t many_prev_deadline;
static int many_out_of_order;

static void on_many(ll_loop *loop, void *ud) {
    (void)loop;
    mt *m = ud;
    m->fired_this_turn++;
    m->fired_total++;
    if (m->t.deadline_ns < many_prev_deadline) many_out_of_order++;
    many_prev_deadline = m->t.deadline_ns;
}

/* One loop turn, checked against the model: exactly the armed timers due by
 * the turn's time fired, and the turn counted them. Returns the fires. */
static int many_turn(ll_loop *loop, int max_wait_ms, char *armed, const uint64_t *deadline, int *expected_total,
                     long *mismatches) {
    many_prev_deadline = 0;
    int n = ll_loop_turn(loop, max_wait_ms);
    uint64_t now = ll_loop_now(loop);
    int model_n = 0;
    for (int i = 0; i < MANY; i++) {
        int want = armed[i] && deadline[i] <= now;
        if (many[i].fired_this_turn != want) (*mismatches)++;
        if (want) {
            armed[i] = 0;
            expected_total[i]++;
            model_n++;
        }
        many[i].fired_this_turn = 0;
    }
    if (n != model_n) (*mismatches)++;
    return n;
}

static void test_many(void) {
    ll_loop *loop = ll_loop_new();
    many = calloc(MANY, sizeof(mt));
    char *armed = calloc(MANY, 1);           /* the model */
    uint64_t *deadline = calloc(MANY, sizeof(uint64_t));
    int *expected_total = calloc(MANY, sizeof(int));
    for (int i = 0; i < MANY; i++) ll_loop_timer_init(&many[i].t, on_many, &many[i]);
    long mismatches = 0, index_mismatches = 0, turns = 0, fires = 0, starts = 0, stops = 0;
    many_out_of_order = 0;
    for (int round = 0; round < 60; round++) {
        for (int op = 0; op < 1000; op++) {
            int i = (int)(tu_rand() % MANY);
            if (tu_rand() % 4 == 0) {
                ll_loop_timer_stop(loop, &many[i].t);
                armed[i] = 0;
                stops++;
            } else {
                ll_loop_timer_start(loop, &many[i].t, tu_rand() % 2001); /* 0..2 ms */
                armed[i] = 1;
                deadline[i] = many[i].t.deadline_ns;
                starts++;
            }
        }
        /* every round from the first 10 on also stops a run of timers */
        if (round >= 10 && round % 5 == 0)
            for (int i = round * 100; i < round * 100 + 300 && i < MANY; i++) {
                ll_loop_timer_stop(loop, &many[i].t);
                armed[i] = 0;
            }
        for (int i = 0; i < MANY; i++) index_mismatches += (ll_loop_timer_armed(&many[i].t)) != armed[i];
        fires += many_turn(loop, 0, armed, deadline, expected_total, &mismatches);
        turns++;
    }
    /* drain: everything still armed fires within ~2 ms */
    uint64_t give_up = ll_loop_now_ns() + 200000000ull;
    for (;;) {
        int left = 0;
        for (int i = 0; i < MANY; i++) left += armed[i];
        if (!left || ll_loop_now_ns() > give_up) break;
        fires += many_turn(loop, 1, armed, deadline, expected_total, &mismatches);
        turns++;
    }
    long total_mismatches = 0, still_armed = 0;
    for (int i = 0; i < MANY; i++) {
        total_mismatches += many[i].fired_total != expected_total[i];
        still_armed += ll_loop_timer_armed(&many[i].t) || armed[i];
    }
    tu_check(mismatches == 0, "many: every turn fired exactly the model's due timers (%ld mismatches, %ld turns, %ld fires)",
             mismatches, turns, fires);
    tu_check(index_mismatches == 0, "many: heap_index >= 0 exactly for the model's armed timers (%ld mismatches)",
             index_mismatches);
    tu_check(total_mismatches == 0 && still_armed == 0, "many: per-timer fire counts match, none left armed");
    tu_check(many_out_of_order == 0, "many: within each turn timers fired in deadline order (%d out of order)",
             many_out_of_order);
    tu_check(fires > 1000 && starts > 0 && stops > 0, "many: %ld starts, %ld stops, %ld fires", starts, stops, fires);
    tu_check(ll_loop_turn(loop, 0) == 0, "many: heap empty at the end");
    free(many);
    free(armed);
    free(deadline);
    free(expected_total);
    ll_loop_free(loop);
}

/* ---- fd watching ---- */

typedef struct fdrec {
    int calls;
    int fd;
    int events;
    void *ud;
} fdrec;

static void on_fd(ll_loop *loop, int fd, int events, void *ud) {
    (void)loop;
    fdrec *r = ud;
    r->calls++;
    r->fd = fd;
    r->events = events;
    r->ud = ud;
}

static void on_fd_other(ll_loop *loop, int fd, int events, void *ud) {
    on_fd(loop, fd, events, ud);
    ((fdrec *)ud)->calls += 1000; /* tells the two callbacks apart */
}

/* Each callback unwatches (or forgets) the other pipe. */
typedef struct pair {
    int fd[2];
    int calls[2];
    int forget;
} pair;
static void on_pair(ll_loop *loop, int fd, int events, void *ud) {
    (void)events;
    pair *p = ud;
    int me = fd == p->fd[0] ? 0 : 1;
    p->calls[me]++;
    if (p->forget) ll_loop_forget(loop, p->fd[1 - me]);
    else ll_loop_watch(loop, p->fd[1 - me], 0, NULL, NULL);
}

/* fd callback that arms a zero-delay timer */
typedef struct arm_ctx {
    ll_loop *loop;
    tt *timer;
} arm_ctx;
static void on_fd_arm(ll_loop *loop, int fd, int events, void *ud) {
    (void)fd;
    (void)events;
    arm_ctx *a = ud;
    ll_loop_timer_start(loop, &a->timer->t, 0);
}

static void drain(int fd) {
    char buf[64];
    while (read(fd, buf, sizeof(buf)) > 0) {
    }
}

static void test_fd(void) {
    ll_loop *loop = ll_loop_new();
    int p[2];
    if (!tu_check(pipe2(p, O_NONBLOCK | O_CLOEXEC) == 0, "fd: pipe")) return;
    fdrec r = {0}, w = {0};

    tu_check(ll_loop_watch(loop, p[0], LL_READABLE, on_fd, &r) == 0, "fd: watch the read end");
    int n = ll_loop_turn(loop, 0);
    tu_check(n == 0 && r.calls == 0, "fd: empty pipe, no callback (turn %d)", n);
    tu_check(write(p[1], "x", 1) == 1, "fd: write one byte");
    n = ll_loop_turn(loop, 10);
    tu_check(n == 1 && r.calls == 1 && r.fd == p[0] && r.events == LL_READABLE && r.ud == &r,
             "fd: readable -> callback(fd %d, LL_READABLE, ud) once (turn %d, events %d)", r.fd, n, r.events);
    n = ll_loop_turn(loop, 0);
    tu_check(n == 1 && r.calls == 2, "fd: level-triggered, fires again while unread (turn %d)", n);
    drain(p[0]);
    n = ll_loop_turn(loop, 0);
    tu_check(n == 0 && r.calls == 2, "fd: read -> no more callbacks (turn %d)", n);

    /* same events, new callback: takes effect without a syscall */
    tu_check(write(p[1], "y", 1) == 1 && ll_loop_watch(loop, p[0], LL_READABLE, on_fd_other, &w) == 0,
             "fd: re-watch with the same events and another callback");
    n = ll_loop_turn(loop, 0);
    tu_check(n == 1 && r.calls == 2 && w.calls == 1001, "fd: the new callback runs, the old one does not");

    /* events 0 stops watching */
    tu_check(ll_loop_watch(loop, p[0], 0, NULL, NULL) == 0, "fd: watch with events 0");
    n = ll_loop_turn(loop, 0);
    tu_check(n == 0 && w.calls == 1001, "fd: unwatched: no callback although readable (turn %d)", n);
    tu_check(ll_loop_watch(loop, p[0], 0, NULL, NULL) == 0, "fd: events 0 again is harmless");
    tu_check(ll_loop_watch(loop, p[0], LL_READABLE, on_fd, &r) == 0 && ll_loop_turn(loop, 0) == 1 && r.calls == 3,
             "fd: watching again fires again");
    drain(p[0]);

    /* the write end */
    tu_check(ll_loop_watch(loop, p[1], LL_WRITABLE, on_fd, &w) == 0, "fd: watch the write end for LL_WRITABLE");
    w.calls = 0;
    n = ll_loop_turn(loop, 0);
    tu_check(n == 1 && w.calls == 1 && w.fd == p[1] && w.events == LL_WRITABLE,
             "fd: writable -> callback with LL_WRITABLE (turn %d, events %d)", n, w.events);
    /* changing events READABLE|WRITABLE on the read end: only readable */
    tu_check(write(p[1], "z", 1) == 1 && ll_loop_watch(loop, p[1], 0, NULL, NULL) == 0 &&
                 ll_loop_watch(loop, p[0], LL_READABLE | LL_WRITABLE, on_fd, &r) == 0,
             "fd: modify the read end to READABLE|WRITABLE");
    n = ll_loop_turn(loop, 0);
    tu_check(n == 1 && r.calls == 4 && r.events == LL_READABLE, "fd: the read end reports only LL_READABLE (events %d)",
             r.events);
    drain(p[0]);

    /* hang-up: closing the write end makes the read end report HUP, which
     * the loop maps to READABLE|WRITABLE (as wrk's ae does) */
    ll_loop_watch(loop, p[0], LL_READABLE, on_fd, &r);
    close(p[1]);
    n = ll_loop_turn(loop, 10);
    tu_check(n == 1 && r.calls == 5 && r.events == (LL_READABLE | LL_WRITABLE),
             "fd: hang-up -> LL_READABLE|LL_WRITABLE (events %d)", r.events);

    /* forget before close: the number can be reused and watched afresh */
    int old_rfd = p[0];
    ll_loop_forget(loop, p[0]);
    close(p[0]);
    n = ll_loop_turn(loop, 0);
    tu_check(n == 0, "fd: forgotten and closed: no callback (turn %d)", n);
    int q[2];
    if (!tu_check(pipe2(q, O_NONBLOCK | O_CLOEXEC) == 0, "fd: second pipe")) return;
    fdrec r2 = {0};
    tu_check(ll_loop_watch(loop, q[0], LL_READABLE, on_fd, &r2) == 0, "fd: watch the new read end (fd %d, old %d)",
             q[0], old_rfd);
    tu_check(write(q[1], "a", 1) == 1, "fd: write to the new pipe");
    n = ll_loop_turn(loop, 10);
    tu_check(n == 1 && r2.calls == 1 && r2.fd == q[0] && r.calls == 5, "fd: the new descriptor fires its own callback");
    drain(q[0]);

    /* closed without forget, then reused and watched with other events: the
     * loop's ENOENT fallback re-adds it */
    close(q[0]);
    close(q[1]);
    int s[2];
    if (!tu_check(pipe2(s, O_NONBLOCK | O_CLOEXEC) == 0, "fd: third pipe")) return;
    fdrec r3 = {0};
    int same_num = s[0] == q[0];
    int rc = ll_loop_watch(loop, s[0], LL_READABLE | LL_WRITABLE, on_fd, &r3);
    tu_check(rc == 0, "fd: closed without forget, reused (same number: %d), watched with other events: rc %d", same_num,
             rc);
    tu_check(write(s[1], "b", 1) == 1, "fd: write to the third pipe");
    n = ll_loop_turn(loop, 10);
    tu_check(n == 1 && r3.calls == 1 && r3.events == LL_READABLE, "fd: it fires (turn %d, events %d)", n, r3.events);
    drain(s[0]);
    ll_loop_watch(loop, s[0], 0, NULL, NULL);

    /* KNOWN GAP (info only, not counted): closed without forget, reused, and
     * watched with the SAME events. ll_loop_watch's fast path (events ==
     * s->events: no system call) returns 0 without registering the new
     * descriptor, so it never fires; the ENOENT fallback for descriptors
     * "closed and reused behind our back" only runs when the events differ.
     * Callers must ll_loop_forget before close (loop.h; transport_curl.c
     * does), so this is outside the contract. */
    {
        int g[2], h[2];
        if (pipe2(g, O_NONBLOCK | O_CLOEXEC) == 0) {
            fdrec rg = {0};
            ll_loop_watch(loop, g[0], LL_READABLE, on_fd, &rg);
            close(g[0]);
            close(g[1]);
            if (pipe2(h, O_NONBLOCK | O_CLOEXEC) == 0) {
                int wrc = ll_loop_watch(loop, h[0], LL_READABLE, on_fd, &rg);
                if (write(h[1], "k", 1) == 1) {
                    int gn = ll_loop_turn(loop, 0);
                    printf("info fd: known gap: closed without forget, reused (same number: %d), same events: "
                           "watch rc %d, turn %d, callbacks %d (%s)\n",
                           h[0] == g[0], wrc, gn, rg.calls, rg.calls ? "fires" : "never fires");
                }
                ll_loop_forget(loop, h[0]);
                close(h[0]);
                close(h[1]);
            }
        }
    }

    /* a high descriptor grows the fd table */
    int high = dup2(s[0], 700);
    fdrec rh = {0};
    tu_check(high == 700 && ll_loop_watch(loop, high, LL_READABLE, on_fd, &rh) == 0, "fd: watch fd 700");
    tu_check(write(s[1], "c", 1) == 1, "fd: write");
    n = ll_loop_turn(loop, 10);
    tu_check(n == 1 && rh.calls == 1 && rh.fd == 700 && r3.calls == 1, "fd: fd 700 fires (turn %d)", n);
    drain(s[0]);
    ll_loop_forget(loop, high);
    close(high);

    /* errors */
    errno = 0;
    tu_check(ll_loop_watch(loop, -1, LL_READABLE, on_fd, &r) == -1 && errno == EBADF, "fd: fd -1 -> -1, EBADF");
    FILE *f = tmpfile();
    if (f) {
        int ffd = fileno(f);
        errno = 0;
        rc = ll_loop_watch(loop, ffd, LL_READABLE, on_fd, &r);
        tu_check(rc == -1 && errno == EPERM, "fd: a regular file cannot be watched (rc %d, errno %d)", rc, errno);
        tu_check(ll_loop_turn(loop, 0) == 0, "fd: and the failed watch left nothing behind");
        /* a later valid watch of the same slot still works the normal way */
        ll_loop_forget(loop, ffd);
        fclose(f);
    }

    /* return count: one readable fd + three due timers = 4 */
    tt t3[3];
    for (int i = 0; i < 3; i++) {
        tt_init(&t3[i], i);
        ll_loop_timer_start(loop, &t3[i].t, 0);
    }
    fdrec rc4 = {0};
    ll_loop_watch(loop, s[0], LL_READABLE, on_fd, &rc4);
    tu_check(write(s[1], "d", 1) == 1, "fd: write");
    spin_past(t3[2].t.deadline_ns);
    norder = 0;
    remaining = 3;
    n = ll_loop_turn(loop, 0);
    tu_check(n == 4 && rc4.calls == 1 && t3[0].fired + t3[1].fired + t3[2].fired == 3,
             "turn count: 1 fd callback + 3 timers = %d (want 4)", n);
    drain(s[0]);

    /* a timer armed (delay 0) by an fd callback runs in the same turn's timer
     * phase (fire_timers reads the clock after the fd callbacks) */
    tt armed;
    tt_init(&armed, 9);
    arm_ctx ac = {loop, &armed};
    ll_loop_watch(loop, s[0], LL_READABLE, on_fd_arm, &ac);
    tu_check(write(s[1], "e", 1) == 1, "fd: write");
    n = ll_loop_turn(loop, 10);
    tu_check(n == 2 && armed.fired == 1, "turn count: fd callback + the timer it armed with delay 0 = %d (want 2)", n);
    drain(s[0]);
    ll_loop_watch(loop, s[0], 0, NULL, NULL);

    /* two readable pipes; each callback unwatches the other: exactly one runs */
    int u[2], v[2];
    if (pipe2(u, O_NONBLOCK | O_CLOEXEC) == 0 && pipe2(v, O_NONBLOCK | O_CLOEXEC) == 0) {
        for (int forget = 0; forget <= 1; forget++) {
            pair pr = {{u[0], v[0]}, {0, 0}, forget};
            ll_loop_watch(loop, u[0], LL_READABLE, on_pair, &pr);
            ll_loop_watch(loop, v[0], LL_READABLE, on_pair, &pr);
            if (write(u[1], "f", 1) != 1 || write(v[1], "g", 1) != 1) break;
            n = ll_loop_turn(loop, 10);
            /* both are ready before the turn, so one epoll batch has both */
            tu_check(n == 1 && pr.calls[0] + pr.calls[1] == 1,
                     "fd: a callback that %s the other ready fd stops its callback (turn %d, calls %d+%d)",
                     forget ? "forgets" : "unwatches", n, pr.calls[0], pr.calls[1]);
            drain(u[0]);
            drain(v[0]);
            ll_loop_watch(loop, u[0], 0, NULL, NULL);
            ll_loop_watch(loop, v[0], 0, NULL, NULL);
            /* after a forget the loop thinks the fd is unwatched although
             * epoll still has it: re-watching must re-add cleanly (EEXIST path) */
            if (forget) {
                int r1 = ll_loop_watch(loop, u[0], LL_READABLE, on_fd, &rh);
                int r2w = ll_loop_watch(loop, v[0], LL_READABLE, on_fd, &rh);
                rh.calls = 0;
                if (write(u[1], "h", 1) != 1 || write(v[1], "i", 1) != 1) break;
                n = ll_loop_turn(loop, 10);
                tu_check(r1 == 0 && r2w == 0 && n == 2 && rh.calls == 2,
                         "fd: forgotten-but-open fds can be watched again (rc %d/%d, turn %d)", r1, r2w, n);
                drain(u[0]);
                drain(v[0]);
            }
        }
        ll_loop_forget(loop, u[0]);
        ll_loop_forget(loop, v[0]);
        close(u[0]);
        close(u[1]);
        close(v[0]);
        close(v[1]);
    }
    ll_loop_forget(loop, s[0]);
    close(s[0]);
    close(s[1]);
    ll_loop_free(loop);
}

/* ll_loop_idle_ns counts the time spent waiting for events, not the
 * time callbacks run: a turn that waits 30 ms for a timer whose callback
 * spins 30 ms adds about 30 ms of idle, not 60. */
static void spin_30ms(ll_loop *loop, void *ud) {
    (void)loop;
    (void)ud;
    uint64_t until = ll_loop_now_ns() + 30000000ull;
    while (ll_loop_now_ns() < until) {
    }
}

static void test_idle(void) {
    ll_loop *loop = ll_loop_new();
    ll_timer t;
    ll_loop_timer_init(&t, spin_30ms, NULL);
    tu_check(ll_loop_idle_ns(loop) == 0, "idle: 0 for a new loop");
    uint64_t start = ll_loop_now_ns();
    ll_loop_timer_start(loop, &t, 30000);
    while (ll_loop_timer_armed(&t)) ll_loop_turn(loop, 100);
    uint64_t wall = ll_loop_now_ns() - start, idle = ll_loop_idle_ns(loop);
    tu_check(idle >= 25000000ull && idle < 55000000ull, "idle: the 30 ms wait counted (%.1f ms)", idle / 1e6);
    tu_check(wall - idle >= 30000000ull, "idle: the callback's 30 ms not counted (busy %.1f ms)", (wall - idle) / 1e6);
    ll_loop_free(loop);
}

int main(void) {
    tu_rng_state = TEST_LOOP_SEED;
    test_idle();
    test_deadline_order();
    test_zero_delay();
    test_next_turn();
    test_self_rearm();
    test_stop_from_callback();
    test_start_from_callback();
    test_stop_harmless();
    test_restart();
    test_free_in_callback();
    test_many();
    test_fd();
    return tu_summary();
}
