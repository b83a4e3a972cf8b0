/* engine.h -- one run: init, setup, the workers, teardown, summary. */
#ifndef LL_ENGINE_H
#define LL_ENGINE_H

#include "config.h"
#include "metrics.h"
#include "mode.h"
#include "script.h"

typedef struct cJSON cJSON;

/* The shipped Lua library (lib/lua): beside the binary
 * (../share/luaload/lua, then ../lib/lua), else the source tree's or the install prefix's;
 * in buf when found beside the binary. */
const char *ll_engine_lib_dir(char *buf, size_t len);

/* Runs the test described by cfg through script (the door down to Lua:
 * lua_api's ll_lua_script) in mode (mode.h: ll_script_mode_ops, or quick
 * mode's ll_quick_mode_ops); returns the process exit code. */
int ll_engine_run(ll_config *cfg, const ll_script_ops *script, const ll_mode_ops *mode);

/* The end of a test whose metrics were measured elsewhere (luaload merge):
 * evaluates cfg's thresholds on total, prints the summary (the handle_summary
 * of cfg's script, after its init code, when there is one; else the default
 * text), writes --summary-export and, with html (a path), the HTML report
 * of page (ll_report_data's, whose summary this fills in). Returns the exit
 * code: 99 when a threshold failed. */
int ll_engine_report(ll_config *cfg, const ll_script_ops *script, ll_registry *reg, const ll_shard *total,
                     double elapsed_s, const char *html, cJSON *page);

#endif
