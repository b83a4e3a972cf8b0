/* progress_lines.h -- the live progress on stderr while the scenarios run,
 * in k6's shape: a "running (01.0s), 03/10 VUs, 120 complete and 0
 * interrupted iterations" line, then one line per scenario (its name, a
 * bar or a percentage, its VUs, its own time, its iterations and their
 * rate over the last second).
 *
 * On a terminal the lines are redrawn in place every second, fitted to its
 * width (TIOCGWINSZ on stderr; re-read on SIGWINCH, then redrawn at once)
 * and left on screen at the end. Otherwise they are printed anew every
 * second (k6's interval without a terminal), a blank line before each
 * block, the bar as a percentage; a run shorter than a second prints none. */
#ifndef LL_PROGRESS_LINES_H
#define LL_PROGRESS_LINES_H

#include <stdint.h>

#include "worker.h"

typedef struct ll_progress_lines ll_progress_lines;

/* The lines for set's scenarios started at t0; max_us: when the test ends
 * at the latest, gracefulStop included (the clock's width). tty: stderr is
 * a terminal (the handler for SIGWINCH is installed then, and only then). */
ll_progress_lines *ll_progress_lines_new(const ll_scenarios *set, int tty, uint64_t t0, uint64_t max_us);
/* Each whole second: the rates, then the lines. */
void ll_progress_lines_second(ll_progress_lines *p, ll_worker *workers, int n, uint64_t now);
/* Each wake-up of the watcher: after a SIGWINCH, the width re-read and the
 * lines redrawn. */
void ll_progress_lines_poll(ll_progress_lines *p, ll_worker *workers, int n, uint64_t now);
/* The end (the workers joined): on a terminal the last lines, left on
 * screen; SIGWINCH's handler put back; p freed. NULL is fine. */
void ll_progress_lines_end(ll_progress_lines *p, ll_worker *workers, int n, uint64_t now);

#endif
