/* tls_ocsp.h -- OCSP stapling on the native TLS connections: ask the server
 * to staple its certificate's OCSP response (the status_request extension,
 * as Go's client and so k6 always do) and read what it stapled into k6's
 * res.ocsp fields (tls_ocsp.c). The response's signature is not checked,
 * as k6 does not check it. */
#ifndef LL_TLS_OCSP_H
#define LL_TLS_OCSP_H

#include "http_req.h"

/* Asks for a stapled response on ssl (an SSL * not yet connected). */
void ll_tls_ocsp_request(void *ssl);
/* What ssl's server stapled, once the handshake is done: GOOD, REVOKED
 * (with its reason and time) or SERVER_FAILED; UNKNOWN when it stapled
 * nothing (a resumed session staples nothing either) or something that
 * does not parse. NULL ssl: LL_OCSP_NONE. */
void ll_tls_ocsp_read(void *ssl, ll_ocsp *out);
/* k6's names: "good", "revoked", "server_failed", "unknown"; "" for NONE.
 * Reasons: "unspecified", "key_compromise", ...; "" for none. */
const char *ll_tls_ocsp_status_name(int status);
const char *ll_tls_ocsp_reason_name(int reason);

#endif
