/* alt_svc.h -- the HTTP/3 alternatives servers advertise (RFC 7838's
 * Alt-Svc header: `h3=":443"; ma=86400`), remembered per origin for a
 * Client that asks for discovery (its alt_svc option): the native
 * transport sends that origin's next requests over HTTP/3 to the
 * alternative. Bounded (the oldest entry goes), no I/O, no clock of its
 * own: the caller gives now. */
#ifndef LL_ALT_SVC_H
#define LL_ALT_SVC_H

#include <stddef.h>
#include <stdint.h>

/* The most origins remembered. */
#define LL_ALT_SVC_MAX 64

typedef struct ll_alt_svc_entry {
    char origin[280];  /* "host:port" of an https:// origin */
    char host[256];    /* the alternative's host, "" for the origin's */
    int port;          /* the alternative's UDP port */
    uint64_t expires_ns;
} ll_alt_svc_entry;

typedef struct ll_alt_svc {
    ll_alt_svc_entry e[LL_ALT_SVC_MAX];
    int n;
} ll_alt_svc;

/* An Alt-Svc header value (len bytes) from the origin host:port heard at
 * now: its first "h3" alternative is remembered for its max age (ma, 24
 * hours by default, as RFC 7838 says); "clear" forgets the origin's; a
 * value with no h3 alternative, or one that does not parse, changes
 * nothing. Returns 1 when an alternative was remembered, 0 when not. */
int ll_alt_svc_heard(ll_alt_svc *a, const char *host, int port, const char *value, size_t len, uint64_t now_ns);
/* The origin's HTTP/3 alternative at now, or NULL (expired ones are
 * forgotten). */
const ll_alt_svc_entry *ll_alt_svc_find(ll_alt_svc *a, const char *host, int port, uint64_t now_ns);
/* Forgets the origin's alternative (it failed). */
void ll_alt_svc_forget(ll_alt_svc *a, const char *host, int port);

#endif
