/* http_options.h -- k6's global HTTP options: the keys options.c leaves to
 * this module, their check, and the per-state Client defaults they make
 * (http_options.c). */
#ifndef LL_HTTP_OPTIONS_H
#define LL_HTTP_OPTIONS_H

#include "transport.h"

typedef struct lua_State lua_State;

typedef struct ll_http_defaults {
    ll_client_opts o;          /* unset: NULL, 0, or -1 where 0 means something */
    int discard;               /* discardResponseBodies; -1 unset */
    int no_vu_reuse;           /* noVUConnectionReuse */
    int batch, batch_per_host; /* http.batch's limits (k6: 20 and 6; 0: none per host) */
} ll_http_defaults;

extern const char *const LL_HTTP_OPTION_KEYS[];
/* 1 when options[k] is one of this module's */
int ll_http_option_key(const char *k);
/* Raises with "options.<key>: ..." unless the options table at idx holds
 * valid HTTP options. */
void ll_http_options_check(lua_State *L, int idx);
/* The defaults of L's Clients, read from its global options table on
 * first use (it raises on bad values, which the check caught already). */
const ll_http_defaults *ll_http_options_defaults(lua_State *L);

#endif
