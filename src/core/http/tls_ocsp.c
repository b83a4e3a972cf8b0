/* tls_ocsp.c -- a TLS server's stapled OCSP response read with OpenSSL's
 * OCSP parser into k6's res.ocsp fields (see tls_ocsp.h). */
#include "tls_ocsp.h"

#include <openssl/ocsp.h>
#include <openssl/ssl.h>
#include <string.h>
#include <time.h>

void ll_tls_ocsp_request(void *ssl) { SSL_set_tlsext_status_type((SSL *)ssl, TLSEXT_STATUSTYPE_ocsp); }

/* t as unix milliseconds, 0 when absent or out of range */
static int64_t unix_ms(const ASN1_GENERALIZEDTIME *t) {
    struct tm tm;
    if (!t || !ASN1_TIME_to_tm(t, &tm)) return 0;
    time_t s = timegm(&tm);
    return s == (time_t)-1 ? 0 : (int64_t)s * 1000;
}

/* the single response about the server's certificate: the first one */
static void read_basic(OCSP_BASICRESP *bs, ll_ocsp *out) {
    OCSP_SINGLERESP *one = OCSP_resp_get0(bs, 0);
    if (!one) return;
    int reason = -1;
    ASN1_GENERALIZEDTIME *rev = NULL, *thisupd = NULL, *nextupd = NULL;
    int st = OCSP_single_get0_status(one, &reason, &rev, &thisupd, &nextupd);
    out->status = st == V_OCSP_CERTSTATUS_GOOD ? LL_OCSP_GOOD : st == V_OCSP_CERTSTATUS_REVOKED ? LL_OCSP_REVOKED
                                                                                              : LL_OCSP_UNKNOWN;
    out->reason = st == V_OCSP_CERTSTATUS_REVOKED ? reason : -1;
    out->produced_at = unix_ms(OCSP_resp_get0_produced_at(bs));
    out->this_update = unix_ms(thisupd);
    out->next_update = unix_ms(nextupd);
    out->revoked_at = unix_ms(rev);
}

void ll_tls_ocsp_read(void *ssl, ll_ocsp *out) {
    memset(out, 0, sizeof(*out));
    out->reason = -1;
    out->status = ssl ? LL_OCSP_UNKNOWN : LL_OCSP_NONE;
    const unsigned char *p = NULL;
    long len = ssl ? SSL_get_tlsext_status_ocsp_resp((SSL *)ssl, &p) : -1;
    if (len <= 0 || !p) return;
    OCSP_RESPONSE *r = d2i_OCSP_RESPONSE(NULL, &p, len);
    if (!r) return;
    if (OCSP_response_status(r) != OCSP_RESPONSE_STATUS_SUCCESSFUL) {
        out->status = LL_OCSP_SERVER_FAILED;
    } else {
        OCSP_BASICRESP *bs = OCSP_response_get1_basic(r);
        if (bs) read_basic(bs, out);
        OCSP_BASICRESP_free(bs);
    }
    OCSP_RESPONSE_free(r);
}

const char *ll_tls_ocsp_status_name(int status) {
    static const char *const names[] = {"", "unknown", "good", "revoked", "server_failed"};
    return status >= 0 && status <= LL_OCSP_SERVER_FAILED ? names[status] : "";
}

const char *ll_tls_ocsp_reason_name(int reason) {
    /* RFC 5280's CRLReason; 7 is not used */
    static const char *const names[] = {"unspecified", "key_compromise", "ca_compromise", "affiliation_changed",
                                        "superseded", "cessation_of_operation", "certificate_hold", "",
                                        "remove_from_crl", "privilege_withdrawn", "aa_compromise"};
    return reason >= 0 && reason <= 10 ? names[reason] : "";
}
