/* transport_native.h -- luaload's own HTTP/1.1 transport (plain and TLS on
 * OpenSSL, responses parsed by http-parser): what the curl transport does
 * for HTTP/1.1 at a fraction of the instructions per request, with no
 * hidden retries. */
#ifndef LL_TRANSPORT_NATIVE_H
#define LL_TRANSPORT_NATIVE_H

#include "resolve.h"
#include "transport.h"

extern const ll_transport_ops ll_transport_native;

/* The resolver of tp, a native transport (its worker's lookups and cache):
 * what a WebSocket's open (ws_conn.h) looks names up with. */
ll_resolver *ll_transport_native_dns(ll_transport *tp);

#endif
