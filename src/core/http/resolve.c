/* resolve.c -- host names to the addresses a native connection tries (see
 * resolve.h): options.hosts, IP literals and localhost, then a worker's
 * cache of lookups, each name's entry holding its answer and, while the
 * lookup is out, the connections waiting for it. Waiters are told at the
 * loop's next turn after the answer, never from inside c-ares. */
#include "resolve.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dns_lookup.h"
#include "xmalloc.h"

typedef enum { E_PENDING, E_DONE, E_FAILED } entry_state;

typedef struct dns_entry {
    ll_resolver *r;
    char *host;
    entry_state st;
    int cached;                /* found by lookups (a failed answer, or one with ttl 0, is not) */
    int busy;                  /* its waiters are being told: it stays */
    uint64_t until_ns;         /* E_DONE: the answer holds until then; UINT64_MAX: forever */
    ll_addr *addrs;            /* E_DONE: as the lookup gave them */
    int n;
    uint64_t rr;               /* round-robin: picks made */
    const char *err;           /* E_FAILED */
    ll_resolve_wait *waiters;
    ll_timer notify;           /* the waiters are told at the next turn */
} dns_entry;

struct ll_resolver {
    ll_loop *loop;
    const ll_dns_config *dns;
    ll_dns_config defaults;    /* when none is given */
    ll_dns_lookup *lookup;     /* made on the first name to look up */
    dns_entry **v;             /* every entry alive, cached or not */
    int n, cap;
    uint64_t rng;              /* select=random's draws (xorshift64*) */
};

ll_resolver *ll_resolver_new(ll_loop *loop, const ll_dns_config *dns) {
    ll_resolver *r = ll_xcalloc(1, sizeof(*r));
    r->loop = loop;
    r->dns = dns ? dns : &r->defaults;
    r->rng = ll_loop_now_ns() ^ (uint64_t)(uintptr_t)r ^ 0x9E3779B97F4A7C15ull;
    return r;
}

static void entry_free(dns_entry *e) {
    ll_resolver *r = e->r;
    for (int i = 0; i < r->n; i++)
        if (r->v[i] == e) {
            r->v[i] = r->v[--r->n];
            break;
        }
    ll_loop_timer_stop(r->loop, &e->notify);
    while (e->waiters) ll_resolve_cancel(e->waiters);
    free(e->host);
    free(e->addrs);
    free(e);
}

void ll_resolver_free(ll_resolver *r) {
    if (!r) return;
    ll_dns_lookup_free(r->lookup); /* before the entries its queries point to */
    while (r->n) entry_free(r->v[r->n - 1]);
    free(r->v);
    free(r);
}

static uint64_t draw(ll_resolver *r) {
    uint64_t x = r->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->rng = x;
    return x * 0x2545F4914F6CDD1Dull;
}

static void set_port(ll_addr *a, int port) {
    if (a->ss.ss_family == AF_INET) ((struct sockaddr_in *)&a->ss)->sin_port = htons((uint16_t)port);
    else ((struct sockaddr_in6 *)&a->ss)->sin6_port = htons((uint16_t)port);
}

int ll_resolve_order(const ll_addr *addrs, int n, int policy, int select, uint64_t pick, ll_addr *out) {
    int fam = policy == LL_DNS_PREFER_IPV4 || policy == LL_DNS_ONLY_IPV4   ? AF_INET
              : policy == LL_DNS_PREFER_IPV6 || policy == LL_DNS_ONLY_IPV6 ? AF_INET6
                                                                           : 0;
    int only = policy == LL_DNS_ONLY_IPV4 || policy == LL_DNS_ONLY_IPV6;
    const ll_addr *pref[LL_RESOLVE_MAX], *other[LL_RESOLVE_MAX];
    int np = 0, no = 0;
    for (int i = 0; i < n; i++) {
        int mine = !fam || addrs[i].ss.ss_family == fam;
        if (mine && np < LL_RESOLVE_MAX) pref[np++] = &addrs[i];
        else if (!mine && !only && no < LL_RESOLVE_MAX) other[no++] = &addrs[i];
    }
    if (np == 0) { /* preferIPv4 without IPv4 addresses: the IPv6 ones */
        memcpy(pref, other, (size_t)no * sizeof(*pref));
        np = no;
        no = 0;
    }
    if (np == 0) return 0;
    /* the order before the IP versions take turns: the selected one, the
     * rest of its kind after it, then the others */
    const ll_addr *list[2 * LL_RESOLVE_MAX];
    int sel = select == LL_DNS_SELECT_FIRST ? 0 : (int)(pick % (uint64_t)np), nl = 0;
    for (int i = 0; i < np; i++) list[nl++] = pref[(sel + i) % np];
    for (int i = 0; i < no; i++) list[nl++] = other[i];
    /* RFC 8305's interleaving: the first one's IP version, then the other, ... */
    int first = list[0]->ss.ss_family, taken[2 * LL_RESOLVE_MAX] = {0}, k = 0;
    for (int want_first = 1; k < nl && k < LL_RESOLVE_MAX; want_first = !want_first) {
        int found = -1;
        for (int i = 0; i < nl && found < 0; i++)
            if (!taken[i] && (list[i]->ss.ss_family == first) == want_first) found = i;
        for (int i = 0; i < nl && found < 0; i++) /* that kind is used up */
            if (!taken[i]) found = i;
        taken[found] = 1;
        out[k++] = *list[found];
    }
    return k;
}

/* The addresses to try for e's answer on port: 0, or -1 (1101). */
static int pick(ll_resolver *r, dns_entry *e, int port, ll_addr **addrs, int *n) {
    ll_addr tmp[LL_RESOLVE_MAX];
    const ll_dns_config *c = r->dns;
    uint64_t p = c->select == LL_DNS_SELECT_ROUND_ROBIN ? e->rr++ : c->select == LL_DNS_SELECT_RANDOM ? draw(r) : 0;
    int k = ll_resolve_order(e->addrs, e->n, c->policy, c->select, p, tmp);
    if (k == 0) return -1;
    *addrs = ll_xmalloc((size_t)k * sizeof(**addrs));
    for (int i = 0; i < k; i++) {
        (*addrs)[i] = tmp[i];
        set_port(&(*addrs)[i], port);
    }
    *n = k;
    return 0;
}

static const char *no_address(const ll_resolver *r) {
    return r->dns->policy == LL_DNS_ONLY_IPV6 ? "no IPv6 address (dns policy onlyIPv6)"
                                              : "no IPv4 address (dns policy onlyIPv4)";
}

/* The next turn after e's answer: each waiter gets its addresses. */
static void on_notify(ll_loop *loop, void *ud) {
    (void)loop;
    dns_entry *e = ud;
    ll_resolver *r = e->r;
    e->busy = 1;
    while (e->waiters) { /* one at a time: a callback may cancel the others */
        ll_resolve_wait *w = e->waiters;
        ll_resolve_fn *fn = w->fn;
        void *ud2 = w->ud;
        ll_addr *addrs = NULL;
        int n = 0, code = 0;
        const char *err = e->err;
        if (e->st == E_FAILED) code = 1100;
        else if (pick(r, e, w->port, &addrs, &n) < 0) code = 1101, err = no_address(r);
        ll_resolve_cancel(w);
        fn(ud2, addrs, n, code, err);
    }
    e->busy = 0;
    if (!e->cached) entry_free(e);
}

static void on_answer(void *ud, const char *err, ll_addr *addrs, int n) {
    dns_entry *e = ud;
    int64_t ttl = ll_dns_ttl_ms(e->r->dns);
    e->addrs = addrs;
    e->n = n;
    e->err = err;
    e->st = err ? E_FAILED : E_DONE;
    e->until_ns = ttl == LL_DNS_TTL_FOREVER ? UINT64_MAX : ll_loop_now_ns() + (uint64_t)ttl * 1000000ull;
    if (err || ttl == 0) e->cached = 0; /* asked again, looked up again */
    ll_loop_timer_start(e->r->loop, &e->notify, 0);
}

/* host as an IPv4 or IPv6 literal (an IPv6 zone as "fe80::1%eth0") */
static int literal(const char *host, int port, ll_addr *out) {
    memset(out, 0, sizeof(*out));
    struct sockaddr_in *a4 = (struct sockaddr_in *)&out->ss;
    if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        out->len = sizeof(*a4);
        return 1;
    }
    if (!strchr(host, ':')) return 0;
    struct addrinfo hints = {.ai_family = AF_INET6, .ai_flags = AI_NUMERICHOST}, *ai = NULL;
    char service[8];
    snprintf(service, sizeof(service), "%d", port);
    if (getaddrinfo(host, service, &hints, &ai) != 0) return 0;
    memcpy(&out->ss, ai->ai_addr, ai->ai_addrlen);
    out->len = ai->ai_addrlen;
    freeaddrinfo(ai);
    return 1;
}

/* The options.hosts entry for host:port, as host and port to use instead:
 * returns 1 and fills to (at most n bytes) and *to_port, or 0. */
static int route(char *const *connect_to, const char *host, int port, char *to, size_t n, int *to_port) {
    for (int i = 0; connect_to && connect_to[i]; i++) {
        const char *e = connect_to[i], *c1 = strchr(e, ':');
        if (!c1) continue;
        const char *c2 = strchr(c1 + 1, ':');
        if (!c2 || (size_t)(c1 - e) != strlen(host) || strncmp(e, host, (size_t)(c1 - e)) != 0) continue;
        if (c2 > c1 + 1 && atoi(c1 + 1) != port) continue;
        const char *a = c2 + 1, *end;
        if (*a == '[') {
            end = strchr(a, ']');
            if (!end) continue;
            a++;
        } else {
            end = strchr(a, ':');
            if (!end) end = a + strlen(a);
        }
        size_t len = (size_t)(end - a);
        if (len >= n) continue;
        memcpy(to, a, len);
        to[len] = 0;
        const char *p = strchr(end, ':');
        *to_port = p && p[1] ? atoi(p + 1) : port;
        return 1;
    }
    return 0;
}

/* localhost is 127.0.0.1 and ::1 without asking anyone (RFC 6761). */
static int localhost(ll_resolver *r, int port, ll_addr **addrs, int *n) {
    ll_addr both[2];
    literal("127.0.0.1", port, &both[0]);
    literal("::1", port, &both[1]);
    ll_addr tmp[2];
    int k = ll_resolve_order(both, 2, r->dns->policy, LL_DNS_SELECT_FIRST, 0, tmp);
    *addrs = ll_xmalloc((size_t)k * sizeof(**addrs));
    memcpy(*addrs, tmp, (size_t)k * sizeof(**addrs));
    *n = k;
    return 0;
}

int ll_resolve(ll_resolver *r, char *const *connect_to, const char *host, int port, ll_resolve_wait *w,
               ll_resolve_fn *fn, void *ud, ll_addr **addrs, int *n, int *code, const char **err) {
    char to[256];
    int to_port = port;
    if (route(connect_to, host, port, to, sizeof(to), &to_port)) host = to;
    port = to_port;
    ll_addr one;
    if (literal(host, port, &one)) {
        *addrs = ll_xmalloc(sizeof(one));
        **addrs = one;
        *n = 1;
        return 0;
    }
    if (strcasecmp(host, "localhost") == 0) return localhost(r, port, addrs, n);
    uint64_t now = ll_loop_now_ns();
    dns_entry *e = NULL;
    for (int i = 0; i < r->n && !e; i++) {
        dns_entry *c = r->v[i];
        if (!c->cached || strcmp(c->host, host) != 0) continue;
        if (c->st != E_DONE || c->until_ns > now) e = c;
        else if (!c->waiters && !c->busy && !ll_loop_timer_armed(&c->notify)) { /* expired */
            entry_free(c);
            break;
        }
        else c->cached = 0; /* expired, still telling its waiters: freed after */
    }
    if (!e) {
        e = ll_xcalloc(1, sizeof(*e));
        e->r = r;
        e->host = ll_xstrdup(host);
        e->st = E_PENDING;
        e->cached = 1;
        ll_loop_timer_init(&e->notify, on_notify, e);
        ll_xgrow((void **)&r->v, &r->cap, r->n + 1, sizeof(*r->v));
        r->v[r->n++] = e;
        if (!r->lookup) r->lookup = ll_dns_lookup_new(r->loop);
        ll_dns_lookup_query(r->lookup, e->host, on_answer, e); /* /etc/hosts answers at once */
        if (e->st != E_PENDING) ll_loop_timer_stop(r->loop, &e->notify); /* nobody waits yet */
        if (e->st == E_FAILED) {
            *code = 1100;
            *err = e->err;
            entry_free(e);
            return -1;
        }
    }
    if (e->st == E_DONE) {
        int rc = pick(r, e, port, addrs, n);
        if (!e->cached && !e->waiters && !ll_loop_timer_armed(&e->notify)) entry_free(e); /* ttl 0 */
        if (rc == 0) return 0;
        *code = 1101;
        *err = no_address(r);
        return -1;
    }
    memset(w, 0, sizeof(*w));
    w->e = e;
    w->fn = fn;
    w->ud = ud;
    w->port = port;
    w->next = e->waiters;
    if (e->waiters) e->waiters->prev = w;
    e->waiters = w;
    return 1;
}

void ll_resolve_cancel(ll_resolve_wait *w) {
    dns_entry *e = w->e;
    if (!e) return;
    if (w->prev) w->prev->next = w->next;
    else e->waiters = w->next;
    if (w->next) w->next->prev = w->prev;
    w->e = NULL;
    w->prev = w->next = NULL;
}
