/* cookie_jar.h -- one VU's cookies with k6's semantics: RFC 6265 as Go's
 * net/http/cookiejar implements it without a public-suffix list (a cookie
 * is kept under its domain's last two labels and only goes back to hosts
 * under the same two). Set-Cookie values are parsed here; the jar stores,
 * replaces and expires them, picks the ones a request carries and builds
 * its Cookie header. One VU owns a jar (no locking); times are unix seconds
 * the caller passes in. The jar is bounded as browsers bound theirs, so a
 * misbehaving server cannot grow it without end. */
#ifndef LL_COOKIE_JAR_H
#define LL_COOKIE_JAR_H

#include <stddef.h>
#include <stdint.h>

#include "url.h"

#define LL_COOKIE_JAR_MAX 3000        /* cookies in a jar; the oldest go first */
#define LL_COOKIE_JAR_MAX_PER_DOMAIN 50 /* per registrable domain (last two labels, or an IP) */
#define LL_COOKIE_MAX_NAME_VALUE 4096 /* bytes of name + value; larger cookies are rejected */
#define LL_COOKIE_MAX_ATTR 1024       /* bytes of an attribute value; longer ones are ignored */

typedef struct ll_cookie {
    char *name, *value; /* as received (a quoted value keeps its quotes) */
    char *domain;       /* lower case, no leading dot */
    char *path;
    int host_only, secure, http_only;
    int64_t expires;    /* unix seconds; 0: a session cookie; INT64_MIN:
                         * expired at once (Max-Age <= 0, or an Expires
                         * at or before 1970) */
    int64_t max_age;    /* Max-Age as given, for display; 0: none */
    char *same_site;    /* SameSite's value as given, or NULL */
    uint64_t created;   /* order of creation in the jar (kept on replacement) */
} ll_cookie;

/* Cookies in creation order (the oldest first). */
typedef struct ll_cookie_jar {
    ll_cookie *c;
    int n, cap;
    uint64_t next_seq;
} ll_cookie_jar;

void ll_cookie_jar_init(ll_cookie_jar *j);
void ll_cookie_jar_free(ll_cookie_jar *j);
/* Empties j, keeping its array (k6 empties a VU's jar at each iteration). */
void ll_cookie_jar_reset(ll_cookie_jar *j);

/* Parses one Set-Cookie header value (len bytes, no NUL needed) received in
 * a response to from, at now. Name and value are kept as given; the name
 * must be an RFC 2616 token, the value bytes 0x20-0x7e without '"' (but
 * for surrounding quotes), ';' and '\\' (Go's rule: spaces and commas
 * pass). Expires takes RFC 1123, RFC 850 (and "Wed, 21-Oct-2015 ..."),
 * and asctime dates; Max-Age wins over it; unparsable attributes are
 * ignored. Returns 0 (out owns its strings: ll_cookie_free), or -1 (out
 * zeroed): no '=', an empty or invalid name, an invalid value, a control
 * character, name + value over LL_COOKIE_MAX_NAME_VALUE, a Domain that
 * the host does not domain-match (or a one-label Domain other than the
 * host: Go would keep it only for the host's last two labels), a Domain
 * other than the host itself on an IP host, or out of memory. An expired
 * cookie parses (ll_cookie_jar_store deletes with it). */
int ll_cookie_parse(ll_cookie *out, const char *set_cookie, size_t len, const ll_url *from, int64_t now);
void ll_cookie_free(ll_cookie *c);

/* Parses set_cookie (as ll_cookie_parse) and stores it, replacing a cookie
 * with the same name, domain and path (which keeps its creation order);
 * an expired one deletes that cookie instead. A new cookie over the
 * bounds first purges expired cookies, then drops the oldest of its
 * domain, or the oldest of the jar. Returns 1 stored, 0 ignored (invalid)
 * or deleted, -1 out of memory. */
int ll_cookie_jar_store(ll_cookie_jar *j, const char *set_cookie, size_t len, const ll_url *from, int64_t now);

/* k6's jar.set(url, name, value, {domain, path, expires, max_age, secure,
 * http_only}) for u: domain NULL or "": host-only for u's host; path NULL
 * or not starting with '/': u's default path (RFC 6265 5.1.4); expires in
 * unix seconds (0: none; at or before now deletes); max_age in seconds as
 * Go's Cookie.MaxAge (0: none; < 0 deletes; wins over expires). Returns 0
 * (stored or deleted); 1 when ignored because u's host does not
 * domain-match domain (a foreign domain, a public one-label one), as Go's
 * jar and so k6 ignore it; or -1: name not a token, value not RFC 6265
 * cookie-octets (optionally in double quotes), name + value too long, or
 * out of memory. */
int ll_cookie_jar_set(ll_cookie_jar *j, const ll_url *u, const char *name, const char *value, const char *domain,
                      const char *path, int64_t expires, int64_t max_age, int secure, int http_only, int64_t now);

typedef void ll_cookie_fn(void *ud, const ll_cookie *c);
/* Calls fn (when not NULL) for each cookie a request to u carries at now,
 * in RFC 6265 5.4 order (longer paths first, then earlier creation): not
 * expired, not Secure on http, a host-only cookie's domain equal to the
 * host and a domain cookie's domain-matching it (under the same last two
 * labels), and its path path-matching u's path (5.1.4). Returns how many. */
int ll_cookie_jar_match(const ll_cookie_jar *j, const ll_url *u, int64_t now, ll_cookie_fn *fn, void *ud);
/* The Cookie header value for u ("a=1; b=2", in match order; a value with
 * a space or a comma goes in double quotes, as Go writes it) into a
 * malloc'd *out, NULL when there are none; the cookies named in skip (a
 * NULL-ended list, or NULL) are left out (k6's params.cookies with
 * replace). Returns how many went in, or -1 when out of memory (*out NULL). */
int ll_cookie_jar_header(const ll_cookie_jar *j, const ll_url *u, int64_t now, const char *const *skip, char **out);

/* k6's jar.delete(url, name): removes the cookies called name a request to
 * u would carry (expired or not). Returns how many. */
int ll_cookie_jar_delete(ll_cookie_jar *j, const ll_url *u, const char *name);
/* k6's jar.clear(url): removes every cookie a request to u would carry
 * (expired or not). Returns how many. */
int ll_cookie_jar_clear(ll_cookie_jar *j, const ll_url *u);

#endif
