/* transport_curl.h -- the libcurl transport (multi interface on the
 * worker's loop): every protocol libcurl has, HTTP/3 included. */
#ifndef LL_TRANSPORT_CURL_H
#define LL_TRANSPORT_CURL_H

#include "transport.h"

extern const ll_transport_ops ll_transport_curl;

/* libcurl's version line, for `luaload version`. */
const char *ll_transport_curl_version(void);

#endif
