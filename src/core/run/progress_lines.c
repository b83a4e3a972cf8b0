/* progress_lines.c -- the live progress lines on stderr (see
 * progress_lines.h): their text, the terminal's width and SIGWINCH. */
#include "progress_lines.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "buf.h"
#include "duration.h"
#include "progress.h"
#include "xmalloc.h"

#define LINES_BAR_MAX 40       /* the widest bar (k6's) */
#define LINES_BAR_MIN 10       /* narrower than this: the percentage instead */
#define LINES_NAME_MAX 30      /* longer names are cut, ending in "..." (k6's) */
#define LINES_DEFAULT_COLS 80  /* a terminal that tells no width */
#define LINES_NCOLS 4          /* VUs, time, iterations, rate */
#define LINES_LEN 256          /* one line's text, and a name's */
#define LINES_COL 128          /* one column's text */

struct ll_progress_lines {
    const ll_scenarios *set;
    int tty, cols;
    int drawn;               /* lines of the last draw, to go back up over */
    int vus_digits;          /* the VU counts' width (the most VUs the test may make) */
    uint64_t t0, max_us, last_ns;
    int64_t *last_iters;     /* each scenario's iterations at last_ns */
    double *rate;            /* and their rate over the second before it */
    struct sigaction old_winch;
};

static volatile sig_atomic_t g_winch; /* set by SIGWINCH, taken by the watcher */

static void on_winch(int sig) {
    (void)sig;
    g_winch = 1;
}

static int term_cols(void) {
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    return LINES_DEFAULT_COLS;
}

static const char *plural(int64_t n) { return n == 1 ? "" : "s"; }

/* Characters in s (UTF-8: the bytes that start one). */
static int vis_len(const char *s) {
    int n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* Cuts s after max characters. */
static void vis_cut(char *s, int max) {
    int n = 0;
    for (char *c = s; *c; c++) {
        if (((unsigned char)*c & 0xC0) != 0x80 && n++ == max) {
            *c = 0;
            return;
        }
    }
}

/* d as k6's fixed-width clock, as wide as max needs, to the tenth of a
 * second: "1.5s" under 10 s, "01.5s" under a minute, "0m01.5s", "00m01.5s",
 * "0h00m01.5s", "00h00m01.5s", then days "1d00h00m01.5s". */
static void fmt_clock(uint64_t d_us, uint64_t max_us, char *buf, size_t len) {
    if (max_us < d_us) max_us = d_us;
    uint64_t t = (d_us + 50000) / 100000, mt = (max_us + 50000) / 100000; /* tenths */
    unsigned tenth = (unsigned)(t % 10), sec = (unsigned)(t / 10 % 60), min = (unsigned)(t / 600 % 60),
             hour = (unsigned)(t / 36000 % 24);
    unsigned long long days = t / 864000;
    if (mt < 100) snprintf(buf, len, "%u.%us", sec, tenth);
    else if (mt < 600) snprintf(buf, len, "%02u.%us", sec, tenth);
    else if (mt < 6000) snprintf(buf, len, "%um%02u.%us", min, sec, tenth);
    else if (mt < 36000) snprintf(buf, len, "%02um%02u.%us", min, sec, tenth);
    else if (mt < 360000) snprintf(buf, len, "%uh%02um%02u.%us", hour, min, sec, tenth);
    else if (mt < 864000) snprintf(buf, len, "%02uh%02um%02u.%us", hour, min, sec, tenth);
    else {
        int w = snprintf(NULL, 0, "%llu", (unsigned long long)(mt / 864000));
        snprintf(buf, len, "%0*llud%02uh%02um%02u.%us", w, days, hour, min, sec, tenth);
    }
}

ll_progress_lines *ll_progress_lines_new(const ll_scenarios *set, int tty, uint64_t t0, uint64_t max_us) {
    ll_progress_lines *p = ll_xcalloc(1, sizeof(*p));
    p->set = set;
    p->tty = tty;
    p->t0 = p->last_ns = t0;
    p->max_us = max_us;
    p->last_iters = ll_xcalloc((size_t)(set->n ? set->n : 1), sizeof(*p->last_iters));
    p->rate = ll_xcalloc((size_t)(set->n ? set->n : 1), sizeof(*p->rate));
    int64_t most = 0;
    for (int s = 0; s < set->n; s++) most += ll_scenario_max_vus(&set->items[s]);
    p->vus_digits = snprintf(NULL, 0, "%lld", (long long)most);
    if (tty) {
        p->cols = term_cols();
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_winch;
        sa.sa_flags = SA_RESTART;
        sigemptyset(&sa.sa_mask);
        g_winch = 0;
        sigaction(SIGWINCH, &sa, &p->old_winch);
    }
    return p;
}

/* Each scenario's iterations per second since the last call (at least a
 * quarter of a second ago; else the rates stay). */
static void update_rates(ll_progress_lines *p, ll_worker *workers, int n, uint64_t now) {
    double dt = (double)(now - p->last_ns) / 1e9;
    if (dt < 0.25) return;
    for (int s = 0; s < p->set->n; s++) {
        int64_t iters = ll_progress_iterations(workers, n, s);
        p->rate[s] = (double)(iters - p->last_iters[s]) / dt;
        p->last_iters[s] = iters;
    }
    p->last_ns = now;
}

/* "running (01.0s), 03/10 VUs, 120 complete and 0 interrupted iterations":
 * the VUs in an iteration now out of those made, iterations done and cut. */
static void running_line(const ll_progress_lines *p, ll_worker *workers, int n, uint64_t now, char *buf,
                         size_t len) {
    int64_t active = 0, made = 0, done = 0, cut = 0;
    for (int s = 0; s < p->set->n; s++) {
        active += ll_progress_active_vus(workers, n, s);
        made += ll_progress_made_vus(workers, n, s);
        done += ll_progress_iterations(workers, n, s);
    }
    for (int w = 0; w < n; w++)
        if (!workers[w].abandoned) cut += atomic_load_explicit(&workers[w].interrupted, memory_order_relaxed);
    char clock[48];
    fmt_clock((now - p->t0) / 1000, p->max_us, clock, sizeof(clock));
    snprintf(buf, len, "running (%s), %0*lld/%0*lld VUs, %lld complete and %lld interrupted iterations", clock,
             p->vus_digits, (long long)active, p->vus_digits, (long long)made, (long long)done, (long long)cut);
}

/* Scenario s's columns: its VUs, its own time, its iterations, their rate. */
static void scenario_cols(const ll_progress_lines *p, int s, ll_worker *workers, int n, uint64_t now,
                          char col[LINES_NCOLS][LINES_COL]) {
    const ll_scenario *sc = &p->set->items[s];
    int64_t iters = ll_progress_iterations(workers, n, s), active = ll_progress_active_vus(workers, n, s);
    switch (sc->executor) {
    case LL_EX_CONSTANT_ARRIVAL_RATE:
    case LL_EX_RAMPING_ARRIVAL_RATE: { /* in an iteration now / made for it (k6's busy/active) */
        int64_t made = ll_progress_made_vus(workers, n, s);
        snprintf(col[0], LINES_COL, "%lld/%lld VU%s", (long long)active, (long long)made, plural(made));
        break;
    }
    case LL_EX_RAMPING_VUS: {
        int64_t max = ll_scenario_max_vus(sc);
        snprintf(col[0], LINES_COL, "%lld/%lld VU%s", (long long)active, (long long)max, plural(max));
        break;
    }
    default: snprintf(col[0], LINES_COL, "%lld VU%s", (long long)active, plural(active)); break;
    }
    uint64_t el_us = (now - p->t0) / 1000, dur = ll_scenario_duration_us(sc);
    char a[48], b[32];
    if (el_us < sc->start_time_us) {
        ll_duration_format(sc->start_time_us, b, sizeof(b));
        snprintf(col[1], LINES_COL, "starts at %s", b);
    } else {
        uint64_t own = el_us - sc->start_time_us;
        fmt_clock(own < dur ? own : dur, dur, a, sizeof(a));
        ll_duration_format(dur, b, sizeof(b));
        snprintf(col[1], LINES_COL, "%s/%s", a, b);
    }
    int64_t total = sc->executor == LL_EX_SHARED_ITERATIONS    ? sc->iterations
                    : sc->executor == LL_EX_PER_VU_ITERATIONS ? sc->iterations * sc->vus
                                                               : -1;
    if (total >= 0) snprintf(col[2], LINES_COL, "%lld/%lld iteration%s", (long long)iters, (long long)total, plural(total));
    else snprintf(col[2], LINES_COL, "%lld iteration%s", (long long)iters, plural(iters));
    double r = p->rate[s];
    snprintf(col[3], LINES_COL, r >= 10 || r == 0 ? "%.0f/s" : "%.1f/s", r);
}

/* Appends line to b, cut to the terminal's width less one (a full line
 * would wrap on some terminals and break the redraw). */
static void put_line(ll_buf *b, const ll_progress_lines *p, char *line) {
    if (p->tty) {
        vis_cut(line, p->cols - 1);
        ll_buf_puts(b, "\033[K");
    }
    ll_buf_puts(b, line);
    ll_buf_puts(b, "\n");
}

static void draw(ll_progress_lines *p, ll_worker *workers, int n, uint64_t now, int final) {
    int ns = p->set->n;
    char(*cols)[LINES_NCOLS][LINES_COL] = ll_xcalloc((size_t)(ns ? ns : 1), sizeof(*cols));
    char(*names)[LINES_LEN] = ll_xcalloc((size_t)(ns ? ns : 1), sizeof(*names));
    int width[LINES_NCOLS] = {0}, left = 0;
    for (int s = 0; s < ns; s++) {
        snprintf(names[s], LINES_LEN, "%s", p->set->items[s].name);
        if (vis_len(names[s]) > LINES_NAME_MAX) {
            vis_cut(names[s], LINES_NAME_MAX - 3);
            strcat(names[s], "...");
        }
        if (vis_len(names[s]) > left) left = vis_len(names[s]);
        scenario_cols(p, s, workers, n, now, cols[s]);
        for (int c = 0; c < LINES_NCOLS - 1; c++)
            if ((int)strlen(cols[s][c]) > width[c]) width[c] = (int)strlen(cols[s][c]);
    }
    ll_buf b;
    memset(&b, 0, sizeof(b));
    char line[LINES_LEN * 3];
    int rmax = 0; /* the widest right side: every bar as wide */
    for (int s = 0; s < ns; s++) {
        int r = vis_len(cols[s][LINES_NCOLS - 1]) + 1;
        for (int c = 0; c < LINES_NCOLS - 1; c++) r += width[c] + 2;
        if (r > rmax) rmax = r;
    }
    ll_buf_puts(&b, p->tty ? "\r\033[J" : "\n"); /* a terminal: clear what was drawn below */
    running_line(p, workers, n, now, line, sizeof(line));
    put_line(&b, p, line);
    for (int s = 0; s < ns; s++) {
        char right[LINES_LEN] = "", bar[LINES_BAR_MAX + 3];
        size_t rl = 0;
        for (int c = 0; c < LINES_NCOLS; c++)
            rl += (size_t)snprintf(right + rl, sizeof(right) - rl, " %-*s", c < LINES_NCOLS - 1 ? width[c] + 1 : 0,
                                   cols[s][c]);
        double frac = ll_progress_fraction(&p->set->items[s], ll_progress_iterations(workers, n, s), now - p->t0);
        int pad = left - vis_len(names[s]);
        int room = p->cols - 1 - left - 1 - 2 - rmax;
        int bw = room > LINES_BAR_MAX ? LINES_BAR_MAX : room;
        if (p->tty && bw >= LINES_BAR_MIN) { /* k6's bar: "====>-----" */
            int fill = (int)(frac * bw);
            for (int i = 0; i < bw; i++) bar[i + 1] = i < fill ? '=' : '-';
            if (fill > 0 && fill < bw) bar[fill] = '>';
            bar[0] = '[';
            bar[bw + 1] = ']';
            bar[bw + 2] = 0;
        } else {
            snprintf(bar, sizeof(bar), "[ %3.0f%% ]", frac * 100);
        }
        snprintf(line, sizeof(line), "%s%*s %s%s", names[s], pad, "", bar, right);
        put_line(&b, p, line);
    }
    p->drawn = ns + 1;
    if (p->tty && !final) {
        char up[32];
        snprintf(up, sizeof(up), "\033[%dA", p->drawn);
        ll_buf_puts(&b, up);
    }
    if (b.len) fwrite(b.p, 1, b.len, stderr);
    fflush(stderr);
    ll_buf_free(&b);
    free(cols);
    free(names);
}

void ll_progress_lines_second(ll_progress_lines *p, ll_worker *workers, int n, uint64_t now) {
    if (!p) return;
    update_rates(p, workers, n, now);
    draw(p, workers, n, now, 0);
}

void ll_progress_lines_poll(ll_progress_lines *p, ll_worker *workers, int n, uint64_t now) {
    if (!p || !p->tty || !g_winch) return;
    g_winch = 0;
    p->cols = term_cols();
    draw(p, workers, n, now, 0);
}

void ll_progress_lines_end(ll_progress_lines *p, ll_worker *workers, int n, uint64_t now) {
    if (!p) return;
    if (p->tty) {
        if (g_winch) p->cols = term_cols();
        update_rates(p, workers, n, now);
        draw(p, workers, n, now, 1);
        sigaction(SIGWINCH, &p->old_winch, NULL);
    }
    free(p->last_iters);
    free(p->rate);
    free(p);
}
