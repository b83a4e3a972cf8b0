/* options_json.h -- the consolidated options as JSON (test.options). */
#ifndef LL_OPTIONS_JSON_H
#define LL_OPTIONS_JSON_H

#include "config.h"

/* k6's consolidated options of cfg as a JSON object (malloc'd, the caller
 * frees it; NULL on out of memory). */
char *ll_options_json(const ll_config *cfg);

#endif
