/* cookie_jar.c -- Set-Cookie parsing, storing, matching and deleting
 * cookies, and the Cookie header (see cookie_jar.h). The rules are those of
 * Go's net/http/cookiejar (k6's jar) without a public-suffix list:
 * domainAndType, newEntry, shouldSend, jarKey and the RFC 6265 5.4 sort.
 * A jar holds few cookies, so it is a flat array in creation order that is
 * scanned. Servers and scripts size everything here, so out of memory is
 * reported, not fatal. */
#include "cookie_jar.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "buf.h"
#include "http_req.h"

/* A cookie's parts before the jar's rules apply: spans of a Set-Cookie
 * value or of jar.set's strings. */
typedef struct cookie_raw {
    const char *name, *value, *domain, *path, *same_site;
    size_t name_len, value_len, domain_len, path_len, same_site_len;
    int has_max_age;
    int64_t max_age; /* as given */
    int64_t expires; /* unix seconds; 0: none */
    int secure, http_only;
} cookie_raw;

/* A request as the matching rules see it. */
typedef struct cookie_target {
    const char *host, *key, *path;
    size_t host_len, key_len;
    int https;
} cookie_target;

/* 1 when the n bytes at s are word, in any case */
static int cookie_is(const char *s, size_t n, const char *word) {
    return n == strlen(word) && strncasecmp(s, word, n) == 0;
}

static void cookie_trim(const char **s, size_t *n) {
    while (*n && (**s == ' ' || **s == '\t')) (*s)++, (*n)--;
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t')) (*n)--;
}

/* 1 when the n bytes at s may be a cookie value: Go's bytes (0x20-0x7e but
 * '"', ';' and '\\'), or when strict RFC 6265's cookie-octets (no space or
 * comma either); either may sit in double quotes. */
static int cookie_value_ok(const char *s, size_t n, int strict) {
    if (n >= 2 && s[0] == '"' && s[n - 1] == '"') s++, n -= 2;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c > 0x7e || c == '"' || c == ';' || c == '\\') return 0;
        if (strict && (c == ' ' || c == ',')) return 0;
    }
    return 1;
}

/* 1 when what follows a date's time is nothing or a zone name in letters
 * ("GMT", taken as GMT whatever it says, as Go does) */
static int cookie_zone_ok(const char *s) {
    while (*s == ' ') s++;
    while ((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z')) s++;
    while (*s == ' ') s++;
    return *s == 0;
}

/* Parses an Expires date (RFC 1123, RFC 850 or asctime) into unix seconds.
 * A two-digit year form is tried before its four-digit twin: a four-digit
 * year fails it (the space after it is not the ':' of the hours). Returns
 * 0 or -1. */
static int cookie_date(const char *s, size_t n, int64_t *t) {
    static const struct {
        const char *fmt;
        int two_digit_year;
    } forms[] = {
        {"%a, %d %b %y %H:%M:%S", 1}, /* RFC 822 */
        {"%a, %d %b %Y %H:%M:%S", 0}, /* RFC 1123 */
        {"%a, %d-%b-%y %H:%M:%S", 1}, /* RFC 850 ("Wednesday, 21-Oct-15") */
        {"%a, %d-%b-%Y %H:%M:%S", 0}, /* Netscape's, with a four-digit year */
        {"%a %b %d %H:%M:%S %Y", 0},  /* asctime */
    };
    char buf[64];
    if (n >= sizeof(buf)) return -1;
    memcpy(buf, s, n);
    buf[n] = 0;
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        struct tm tm;
        memset(&tm, 0, sizeof(tm));
        const char *end = strptime(buf, forms[i].fmt, &tm);
        if (!end || !cookie_zone_ok(end)) continue;
        if (forms[i].two_digit_year && tm.tm_year == 69) tm.tm_year += 100; /* 5.1.1: 00-69 are 20xx */
        *t = (int64_t)timegm(&tm);
        return 0;
    }
    return -1;
}

/* Go's Max-Age: an optional sign and decimal digits, in range, without a
 * leading zero unless it is 0. Returns 0 or -1 (the attribute is ignored). */
static int cookie_max_age(const char *s, size_t n, int64_t *v) {
    size_t i = n && (s[0] == '-' || s[0] == '+');
    int64_t x = 0;
    if (i == n) return -1;
    for (; i < n; i++) {
        int d = s[i] - '0';
        if (d < 0 || d > 9 || x > (INT64_MAX - d) / 10) return -1;
        x = x * 10 + d;
    }
    if (x && s[0] == '0') return -1;
    *v = s[0] == '-' ? -x : x;
    return 0;
}

/* Takes one attribute ("Name=value" or "Name", n bytes at s) into r;
 * unknown, too long or unparsable ones are ignored, the last of a name wins
 * (but a Max-Age always wins over an Expires). */
static void cookie_attr(cookie_raw *r, const char *s, size_t n) {
    const char *eq = memchr(s, '=', n), *k = s, *v = eq ? eq + 1 : s + n;
    size_t kn = eq ? (size_t)(eq - s) : n, vn = eq ? n - kn - 1 : 0;
    int64_t x;
    cookie_trim(&k, &kn);
    cookie_trim(&v, &vn);
    if (vn > LL_COOKIE_MAX_ATTR || memchr(v, '"', vn) || !cookie_value_ok(v, vn, 0)) return;
    if (cookie_is(k, kn, "expires") && cookie_date(v, vn, &x) == 0) {
        r->expires = x > 0 ? x : INT64_MIN; /* 0 would read as "none" */
    } else if (cookie_is(k, kn, "max-age") && cookie_max_age(v, vn, &x) == 0) {
        r->has_max_age = 1;
        r->max_age = x;
    } else if (cookie_is(k, kn, "domain") && vn) { /* 5.2.3: an empty one is ignored */
        r->domain = v;
        r->domain_len = vn;
    } else if (cookie_is(k, kn, "path")) {
        r->path = v;
        r->path_len = vn;
    } else if (cookie_is(k, kn, "secure")) {
        r->secure = 1;
    } else if (cookie_is(k, kn, "httponly")) {
        r->http_only = 1;
    } else if (cookie_is(k, kn, "samesite")) {
        r->same_site = v;
        r->same_site_len = vn;
    }
}

/* Splits a Set-Cookie value into r (RFC 6265 5.2). Returns 0, or -1 when
 * it has a control character or no '=' before the first ';'. */
static int cookie_raw_parse(cookie_raw *r, const char *s, size_t len) {
    memset(r, 0, sizeof(*r));
    if (!s) return -1;
    for (size_t i = 0; i < len; i++)
        if (((unsigned char)s[i] < 32 && s[i] != '\t') || s[i] == 127) return -1;
    const char *end = s + len, *semi = memchr(s, ';', len);
    if (!semi) semi = end;
    const char *eq = memchr(s, '=', (size_t)(semi - s));
    if (!eq) return -1;
    r->name = s;
    r->name_len = (size_t)(eq - s);
    r->value = eq + 1;
    r->value_len = (size_t)(semi - eq - 1);
    cookie_trim(&r->name, &r->name_len);
    cookie_trim(&r->value, &r->value_len);
    for (const char *p = semi; p < end;) {
        const char *a = p + 1, *next = memchr(a, ';', (size_t)(end - a));
        if (!next) next = end;
        cookie_attr(r, a, (size_t)(next - a));
        p = next;
    }
    return 0;
}

/* 1 when the host (n bytes at h, a zone after '%' aside) is an IP address */
static int cookie_is_ip(const char *h, size_t n) {
    char buf[INET6_ADDRSTRLEN + 1];
    unsigned char addr[16];
    const char *zone = memchr(h, '%', n);
    if (zone) n = (size_t)(zone - h);
    if (n >= sizeof(buf)) return 0;
    memcpy(buf, h, n);
    buf[n] = 0;
    return inet_pton(AF_INET, buf, addr) == 1 || inet_pton(AF_INET6, buf, addr) == 1;
}

/* Go's jarKey without a public-suffix list: an IP whole, else the last two
 * labels of the n bytes at h (all of them when there are fewer). */
static void cookie_key(const char *h, size_t n, const char **k, size_t *kn) {
    *k = h;
    *kn = n;
    const char *last = memrchr(h, '.', n);
    if (!last || last == h || cookie_is_ip(h, n)) return;
    const char *prev = memrchr(h, '.', (size_t)(last - h - 1));
    if (!prev) return;
    *k = prev + 1;
    *kn = n - (size_t)(prev + 1 - h);
}

/* The length of a host without its trailing dot (Go's canonicalHost) */
static size_t cookie_host_len(const char *h) {
    size_t n = strlen(h);
    return n && h[n - 1] == '.' ? n - 1 : n;
}

/* RFC 6265 5.1.3: the host (hl bytes) domain-matches the domain (dl bytes) */
static int cookie_domain_match(const char *host, size_t hl, const char *d, size_t dl) {
    if (dl == hl) return strncasecmp(host, d, hl) == 0;
    return dl < hl && host[hl - dl - 1] == '.' && strncasecmp(host + hl - dl, d, dl) == 0;
}

/* RFC 6265 5.1.4: the request path matches the cookie path */
static int cookie_path_match(const char *req, const char *cp) {
    size_t n = strlen(cp);
    return strncmp(req, cp, n) == 0 && (req[n] == 0 || cp[n - 1] == '/' || req[n] == '/');
}

/* RFC 6265 5.1.4: the default path of a request path, a span of up or "/" */
static void cookie_default_path(const char *up, const char **p, size_t *n) {
    const char *last = up && up[0] == '/' ? strrchr(up, '/') : NULL;
    *p = last ? up : "/";
    *n = last && last != up ? (size_t)(last - up) : 1;
}

/* Go's domainAndType (RFC 6265 5.3 steps 4-6) for a cookie from host (hl
 * bytes): its domain, a span of host (so lower case, as ll_url's hosts
 * are), and whether it is host-only.
 * Returns 0, or -1 when the Domain attribute is refused. */
static int cookie_domain(const cookie_raw *r, const char *host, size_t hl, const char **d, size_t *dl,
                         int *host_only) {
    const char *a = r->domain;
    size_t al = r->domain_len;
    *d = host;
    *dl = hl;
    *host_only = 1;
    if (!al) return 0;
    if (cookie_is_ip(host, hl)) return al == hl && strncasecmp(a, host, hl) == 0 ? 0 : -1;
    if (a[0] == '.') a++, al--;
    if (!al || a[0] == '.' || a[al - 1] == '.' || !cookie_domain_match(host, hl, a, al)) return -1;
    if (al < hl && !memchr(a, '.', al)) return -1; /* a one-label domain above the host */
    *d = host + hl - al;
    *dl = al;
    *host_only = 0;
    return 0;
}

/* Go's newEntry: the cookie r describes, received from `from` at now.
 * strict asks for RFC 6265 cookie-octets in the value (jar.set). Returns
 * 0, -1 when refused, -3 when refused for a domain the host does not
 * domain-match, -2 when out of memory (c is zeroed on each). */
static int cookie_make(ll_cookie *c, const cookie_raw *r, int strict, const ll_url *from, int64_t now) {
    const char *host = from && from->host ? from->host : "", *dom, *path = r->path;
    size_t hl = cookie_host_len(host), dl, pl = r->path_len;
    memset(c, 0, sizeof(*c));
    if (!hl || r->name_len + r->value_len > LL_COOKIE_MAX_NAME_VALUE || !cookie_value_ok(r->value, r->value_len, strict))
        return -1;
    if (cookie_domain(r, host, hl, &dom, &dl, &c->host_only) < 0) return -3;
    if (!pl || path[0] != '/') cookie_default_path(from->path, &path, &pl);
    c->name = strndup(r->name, r->name_len);
    c->value = strndup(r->value, r->value_len);
    c->domain = strndup(dom, dl);
    c->path = strndup(path, pl);
    c->same_site = r->same_site_len ? strndup(r->same_site, r->same_site_len) : NULL;
    int rc = c->name && c->value && c->domain && c->path && (c->same_site || !r->same_site_len) ? 0 : -2;
    if (!rc && !ll_http_token_ok(c->name)) rc = -1;
    if (rc) {
        ll_cookie_free(c);
        return rc;
    }
    c->secure = r->secure;
    c->http_only = r->http_only;
    c->max_age = r->has_max_age ? r->max_age : 0;
    c->expires = r->expires;
    if (r->has_max_age && r->max_age <= 0) c->expires = INT64_MIN;
    else if (r->has_max_age) c->expires = now > 0 && r->max_age > INT64_MAX - now ? INT64_MAX : now + r->max_age;
    return 0;
}

int ll_cookie_parse(ll_cookie *out, const char *set_cookie, size_t len, const ll_url *from, int64_t now) {
    cookie_raw r;
    memset(out, 0, sizeof(*out));
    if (cookie_raw_parse(&r, set_cookie, len) < 0) return -1;
    return cookie_make(out, &r, 0, from, now) == 0 ? 0 : -1;
}

void ll_cookie_free(ll_cookie *c) {
    free(c->name);
    free(c->value);
    free(c->domain);
    free(c->path);
    free(c->same_site);
    memset(c, 0, sizeof(*c));
}

void ll_cookie_jar_init(ll_cookie_jar *j) { memset(j, 0, sizeof(*j)); }

void ll_cookie_jar_reset(ll_cookie_jar *j) {
    for (int i = 0; i < j->n; i++) ll_cookie_free(&j->c[i]);
    j->n = 0;
}

void ll_cookie_jar_free(ll_cookie_jar *j) {
    ll_cookie_jar_reset(j);
    free(j->c);
    memset(j, 0, sizeof(*j));
}

static int cookie_expired(const ll_cookie *c, int64_t now) { return c->expires != 0 && c->expires <= now; }

static void cookie_target_of(cookie_target *t, const ll_url *u) {
    t->host = u && u->host ? u->host : "";
    t->host_len = cookie_host_len(t->host);
    cookie_key(t->host, t->host_len, &t->key, &t->key_len);
    t->path = u && u->path && u->path[0] == '/' ? u->path : "/";
    t->https = u && u->scheme && strcmp(u->scheme, "https") == 0;
}

/* Go's shouldSend, under the jar key of t's host: 1 when a request to t
 * carries c (expired or not). */
static int cookie_sends(const ll_cookie *c, const cookie_target *t) {
    size_t dl = strlen(c->domain), kl;
    const char *k;
    if (c->secure && !t->https) return 0;
    if (c->host_only && (dl != t->host_len || memcmp(c->domain, t->host, dl) != 0)) return 0;
    if (!c->host_only && !cookie_domain_match(t->host, t->host_len, c->domain, dl)) return 0;
    cookie_key(c->domain, dl, &k, &kl);
    return kl == t->key_len && memcmp(k, t->key, kl) == 0 && cookie_path_match(t->path, c->path);
}

static void cookie_jar_remove(ll_cookie_jar *j, int i) {
    ll_cookie_free(&j->c[i]);
    memmove(j->c + i, j->c + i + 1, (size_t)(j->n - i - 1) * sizeof(*j->c));
    j->n--;
}

/* 1 when c's jar key (the last two labels of its domain) is the k bytes at k */
static int cookie_in_key(const ll_cookie *c, const char *k, size_t kn) {
    const char *ck;
    size_t ckn;
    cookie_key(c->domain, strlen(c->domain), &ck, &ckn);
    return ckn == kn && memcmp(ck, k, kn) == 0;
}

static int cookie_jar_count_key(const ll_cookie_jar *j, const char *k, size_t kn) {
    int n = 0;
    for (int i = 0; i < j->n; i++) n += cookie_in_key(&j->c[i], k, kn);
    return n;
}

/* Makes room for c, a new cookie, within the bounds: expired cookies go
 * first, then the oldest of c's domain, then the oldest of the jar. */
static void cookie_jar_make_room(ll_cookie_jar *j, const ll_cookie *c, int64_t now) {
    const char *k;
    size_t kn;
    cookie_key(c->domain, strlen(c->domain), &k, &kn);
    int in_key = cookie_jar_count_key(j, k, kn);
    if (j->n < LL_COOKIE_JAR_MAX && in_key < LL_COOKIE_JAR_MAX_PER_DOMAIN) return;
    for (int i = j->n - 1; i >= 0; i--)
        if (cookie_expired(&j->c[i], now)) cookie_jar_remove(j, i);
    in_key = cookie_jar_count_key(j, k, kn);
    for (int i = 0; i < j->n && in_key >= LL_COOKIE_JAR_MAX_PER_DOMAIN;) {
        if (!cookie_in_key(&j->c[i], k, kn)) {
            i++;
            continue;
        }
        cookie_jar_remove(j, i);
        in_key--;
    }
    if (j->n >= LL_COOKIE_JAR_MAX) cookie_jar_remove(j, 0);
}

/* Stores c (the jar takes its strings) at now: replaces the cookie with the
 * same name, domain and path, or deletes it when c has expired. Returns 1
 * stored, 0 deleted, -1 out of memory (c freed). */
static int cookie_jar_put(ll_cookie_jar *j, ll_cookie *c, int64_t now) {
    int i = 0;
    while (i < j->n && (strcmp(j->c[i].name, c->name) != 0 || strcmp(j->c[i].domain, c->domain) != 0 ||
                        strcmp(j->c[i].path, c->path) != 0))
        i++;
    if (cookie_expired(c, now)) {
        if (i < j->n) cookie_jar_remove(j, i);
        ll_cookie_free(c);
        return 0;
    }
    if (i < j->n) { /* RFC 6265 5.3 step 11.3: the old creation time stays */
        c->created = j->c[i].created;
        ll_cookie_free(&j->c[i]);
        j->c[i] = *c;
        return 1;
    }
    cookie_jar_make_room(j, c, now);
    if (j->n == j->cap) {
        int cap = j->cap ? 2 * j->cap : 8;
        ll_cookie *p = realloc(j->c, (size_t)cap * sizeof(*p));
        if (!p) {
            ll_cookie_free(c);
            return -1;
        }
        j->c = p;
        j->cap = cap;
    }
    c->created = j->next_seq++;
    j->c[j->n++] = *c;
    return 1;
}

int ll_cookie_jar_store(ll_cookie_jar *j, const char *set_cookie, size_t len, const ll_url *from, int64_t now) {
    cookie_raw r;
    ll_cookie c;
    if (cookie_raw_parse(&r, set_cookie, len) < 0) return 0;
    int rc = cookie_make(&c, &r, 0, from, now);
    if (rc < 0) return rc == -2 ? -1 : 0;
    return cookie_jar_put(j, &c, now);
}

int ll_cookie_jar_set(ll_cookie_jar *j, const ll_url *u, const char *name, const char *value, const char *domain,
                      const char *path, int64_t expires, int64_t max_age, int secure, int http_only, int64_t now) {
    cookie_raw r;
    ll_cookie c;
    if (!name || !value) return -1;
    memset(&r, 0, sizeof(r));
    r.name = name;
    r.name_len = strlen(name);
    r.value = value;
    r.value_len = strlen(value);
    r.domain = domain ? domain : "";
    r.domain_len = strlen(r.domain);
    r.path = path ? path : "";
    r.path_len = strlen(r.path);
    r.has_max_age = max_age != 0; /* Go's Cookie.MaxAge: 0 is none */
    r.max_age = max_age;
    r.expires = expires;
    r.secure = secure != 0;
    r.http_only = http_only != 0;
    int rc = cookie_make(&c, &r, 1, u, now);
    if (rc == -3) return 1; /* as Go's jar (k6): ignored */
    if (rc < 0) return -1;
    return cookie_jar_put(j, &c, now) < 0 ? -1 : 0;
}

int ll_cookie_jar_match(const ll_cookie_jar *j, const ll_url *u, int64_t now, ll_cookie_fn *fn, void *ud) {
    cookie_target t;
    cookie_target_of(&t, u);
    int count = 0;
    size_t below = SIZE_MAX; /* each pass takes the longest path shorter than the last one's */
    for (;;) {
        size_t len = 0;
        int found = 0;
        for (int i = 0; i < j->n; i++) {
            size_t l = strlen(j->c[i].path);
            if (l < below && l >= len && !cookie_expired(&j->c[i], now) && cookie_sends(&j->c[i], &t)) {
                len = l;
                found = 1;
            }
        }
        if (!found) return count;
        for (int i = 0; i < j->n; i++) { /* the array is in creation order */
            if (strlen(j->c[i].path) != len || cookie_expired(&j->c[i], now) || !cookie_sends(&j->c[i], &t)) continue;
            if (fn) fn(ud, &j->c[i]);
            count++;
        }
        below = len;
    }
}

/* The Cookie header being built, and the names left out. */
typedef struct cookie_header {
    ll_buf b;
    const char *const *skip;
    int n;                     /* cookies in it */
} cookie_header;

/* Appends "name=value" to the header in ud (a cookie_header), quoting a
 * value with a space or a comma as Go's sanitizeCookieValue does. */
static void cookie_header_add(void *ud, const ll_cookie *c) {
    cookie_header *h = ud;
    ll_buf *b = &h->b;
    for (int i = 0; h->skip && h->skip[i]; i++)
        if (strcmp(h->skip[i], c->name) == 0) return;
    h->n++;
    size_t n = strlen(c->value);
    int quoted = n >= 2 && c->value[0] == '"' && c->value[n - 1] == '"';
    const char *q = !quoted && strpbrk(c->value, " ,") ? "\"" : "";
    if (b->len) ll_buf_puts(b, "; ");
    ll_buf_puts(b, c->name);
    ll_buf_puts(b, "=");
    ll_buf_puts(b, q);
    ll_buf_append(b, c->value, n);
    ll_buf_puts(b, q);
}

int ll_cookie_jar_header(const ll_cookie_jar *j, const ll_url *u, int64_t now, const char *const *skip, char **out) {
    cookie_header h;
    memset(&h, 0, sizeof(h));
    h.skip = skip;
    ll_cookie_jar_match(j, u, now, cookie_header_add, &h);
    int failed = h.b.failed;
    if (failed) ll_buf_free(&h.b);
    *out = h.b.len ? h.b.p : NULL;
    if (!h.b.len) ll_buf_free(&h.b);
    return failed ? -1 : h.n;
}

/* Removes the cookies called name (any when NULL) a request to u carries. */
static int cookie_jar_drop(ll_cookie_jar *j, const ll_url *u, const char *name) {
    cookie_target t;
    cookie_target_of(&t, u);
    int n = 0;
    for (int i = j->n - 1; i >= 0; i--) {
        if ((name && strcmp(j->c[i].name, name) != 0) || !cookie_sends(&j->c[i], &t)) continue;
        cookie_jar_remove(j, i);
        n++;
    }
    return n;
}

int ll_cookie_jar_delete(ll_cookie_jar *j, const ll_url *u, const char *name) {
    return name ? cookie_jar_drop(j, u, name) : 0;
}

int ll_cookie_jar_clear(ll_cookie_jar *j, const ll_url *u) { return cookie_jar_drop(j, u, NULL); }
