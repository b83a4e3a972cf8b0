/* transport.c -- the transports luaload has, by name, and which one
 * serves a request. */
#include "transport.h"

#include <string.h>

#include "transport_curl.h"
#include "transport_native.h"

static const ll_transport_ops *const transports[] = {&ll_transport_native, &ll_transport_curl};

const ll_transport_ops *ll_transport_find(const char *name) {
    for (size_t i = 0; i < sizeof(transports) / sizeof(transports[0]); i++)
        if (strcmp(transports[i]->name, name) == 0) return transports[i];
    return NULL;
}

const char *ll_transport_native_lacks(const ll_client_opts *o) {
    if (o->proxy) return "a proxy";
    return NULL;
}

const ll_transport_ops *ll_transport_pick(const ll_client_opts *o, const ll_http_req *req,
                                          const ll_transport_ops *forced) {
    if (o->transport) forced = o->transport;
    int v = req->http_version >= 0 ? req->http_version : o->http_version;
    if (forced && forced != &ll_transport_native) return forced;
    (void)v;
    if (ll_transport_native_lacks(o) || req->auth == LL_AUTH_NTLM) return &ll_transport_curl;
    return &ll_transport_native;
}

int ll_transfer_begin(int active, uint64_t applied_id, const char *applied_method, const char *applied_cookie,
                      const ll_http_req *req, const char *method, const char *cookie, const char **err) {
    if (active) {
        *err = "a request is already in flight on this connection";
        return -1;
    }
    if (applied_id != req->id || applied_method != method) return 1;
    if (!cookie || !applied_cookie) return cookie != applied_cookie;
    return strcmp(cookie, applied_cookie) != 0;
}
