/* quick.h -- quick mode: `luaload run URL [flags]`, a load test without a
 * script. Its flags (gopayloader's, hey's and gobench's names) and the
 * scenario and per-request work they make (quick.c); the settings they
 * fill are ll_config's (run/config.h: ll_quick). */
#ifndef LL_QUICK_H
#define LL_QUICK_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "flags.h"


/* Quick mode's flags (cli.c parses them with luaload run's). */
#define LL_QUICK_NFLAGS 30
extern const ll_flag ll_quick_flags[LL_QUICK_NFLAGS];
/* Applies quick-mode flag (value v, NULL for a switch). Returns 0, or
 * LL_EXIT_CONFIG after printing a one-line error. */
int ll_quick_flag(ll_config *cfg, const char *flag, const char *v);
/* Sets the quick URL argument: one URL, a,b,c, or @file of URLs (one per
 * line, # comments). Returns 0 or LL_EXIT_CONFIG (error printed). */
int ll_quick_set_urls(ll_config *cfg, const char *arg);
/* After all flags: checks their combination, and turns -r/--rate into a
 * scenario. Returns 0 or LL_EXIT_CONFIG (error printed). */
int ll_quick_finish(ll_config *cfg);
/* The script quick mode runs: its options alone, the iterations being
 * quick_native.c's (malloc'd; NULL on out of memory). */
char *ll_quick_script(const ll_config *cfg);

#endif
