/* options.h -- reads the script's global `options` table into the config,
 * for what neither the CLI nor the environment set. */
#ifndef LL_OPTIONS_H
#define LL_OPTIONS_H

#include <stddef.h>

#include "config.h"

typedef struct lua_State lua_State;

/* Fills cfg (what is unset) and reg (options.tags, threshold sub-metrics).
 * Returns 0, or LL_EXIT_CONFIG with a one-line message in err. */
int ll_options_read(lua_State *L, ll_config *cfg, ll_registry *reg, char *err, size_t errlen);

#endif
