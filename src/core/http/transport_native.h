/* transport_native.h -- luaload's own HTTP/1.1 transport (plain and TLS on
 * OpenSSL, responses parsed by http-parser): what the curl transport does
 * for HTTP/1.1 at a fraction of the instructions per request, with no
 * hidden retries. */
#ifndef LL_TRANSPORT_NATIVE_H
#define LL_TRANSPORT_NATIVE_H

#include "transport.h"

extern const ll_transport_ops ll_transport_native;

#endif
