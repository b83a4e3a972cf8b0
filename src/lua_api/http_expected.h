/* http_expected.h -- k6's http.expectedStatuses and
 * http.setResponseCallback: which statuses make a failed request
 * (http_expected.c). */
#ifndef LL_HTTP_EXPECTED_H
#define LL_HTTP_EXPECTED_H

#include "http_req.h"

typedef struct lua_State lua_State;

/* Sets http.expected_statuses / expectedStatuses and
 * http.set_response_callback / setResponseCallback on the table at mod. */
void ll_http_expected_register(lua_State *L, int mod);
/* The expectedStatuses object at idx (params.responseCallback), or raises
 * naming W. */
const ll_http_expected *ll_http_expected_check(lua_State *L, int idx, const char *W);
/* The state's response callback: NULL with *counted 1 for k6's default
 * (200 to 399), NULL with *counted 0 after setResponseCallback(nil) (no
 * http_req_failed sample, no expected_response tag), else its statuses. */
const ll_http_expected *ll_http_expected_default(lua_State *L, int *counted);

#endif
