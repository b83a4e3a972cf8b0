/* poster.h -- a blocking HTTP POST client for the outputs (InfluxDB's
 * /write), run on the output thread, never by a VU. It fills metrics/'s
 * ll_output_http interface, so metrics/ needs no HTTP library. */
#ifndef LL_POSTER_H
#define LL_POSTER_H

#include "output.h"

extern const ll_output_http ll_poster_http;

#endif
