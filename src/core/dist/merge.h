/* merge.h -- `luaload merge`: the parts of a split test (--out hdrlog)
 * added up into one summary, judged by the thresholds. */
#ifndef LL_MERGE_H
#define LL_MERGE_H

#include "config.h"
#include "script.h"

/* Merges the parts (their hdrlog or sidecar paths) with cfg's summary and
 * output settings (app/cli.c parsed them; cfg stays the caller's); the
 * summary through script (cfg's handle_summary, when it has one).
 * Returns the process exit code: 0, 99 when a threshold fails on the
 * merged data, 104 when the parts are refused. */
int ll_merge_run(ll_config *cfg, const ll_script_ops *script, char **parts, int nparts);

#endif
