/* test_resolve.c -- the dns option's text (dns_config.c), source address
 * pools (base/ip_pool.c), and the order resolve.c tries a name's
 * addresses in: policy, select, RFC 8305's interleaving; literals,
 * localhost and options.hosts answered at once. Lookups over the network
 * are test_dns.sh's. */
/* links: ll_http */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "dns_config.h"
#include "ip_pool.h"
#include "loop.h"
#include "resolve.h"
#include "test_util.h"

static ll_addr ip(const char *s) {
    ll_addr a;
    ll_addr_parse(s, 0, &a.ss, &a.len);
    return a;
}

static const char *text(const ll_addr *a, char *buf) {
    const void *p = a->ss.ss_family == AF_INET ? (const void *)&((const struct sockaddr_in *)&a->ss)->sin_addr
                                              : (const void *)&((const struct sockaddr_in6 *)&a->ss)->sin6_addr;
    inet_ntop(a->ss.ss_family, p, buf, INET6_ADDRSTRLEN);
    return buf;
}

/* the addresses of out as "a b c" */
static const char *joined(const ll_addr *out, int n) {
    static char s[512];
    char one[INET6_ADDRSTRLEN];
    s[0] = 0;
    for (int i = 0; i < n; i++) {
        strcat(s, i ? " " : "");
        strcat(s, text(&out[i], one));
    }
    return s;
}

static void dns_config(void) {
    ll_dns_config c;
    const char *exp = NULL;
    char buf[128];
    memset(&c, 0, sizeof(c));
    ll_dns_config_format(&c, buf, sizeof(buf));
    tu_check(strcmp(buf, "ttl=5m0s,select=random,policy=preferIPv4") == 0, "k6's default: %s", buf);
    tu_check(ll_dns_config_parse(&c, "ttl=1m,select=first,policy=any", 1, &exp) == 0, "parses k6's --dns form");
    ll_dns_config_format(&c, buf, sizeof(buf));
    tu_check(strcmp(buf, "ttl=1m0s,select=first,policy=any") == 0, "and shows it: %s", buf);
    tu_check(ll_dns_config_parse(&c, "select=roundRobin,ttl=inf", 0, &exp) == 0 && c.select == LL_DNS_SELECT_FIRST &&
                 ll_dns_ttl_ms(&c) == 60000,
             "a field set already stays without force (the command line wins)");
    tu_check(ll_dns_config_parse(&c, "ttl=inf", 1, &exp) == 0 && ll_dns_ttl_ms(&c) == LL_DNS_TTL_FOREVER, "ttl=inf");
    tu_check(ll_dns_config_parse(&c, "ttl=1500", 1, &exp) == 0 && ll_dns_ttl_ms(&c) == 1500,
             "a ttl without a unit is milliseconds, as in k6");
    tu_check(ll_dns_config_parse(&c, "ttl=0", 1, &exp) == 0 && ll_dns_ttl_ms(&c) == 0, "ttl=0: no cache");
    tu_check(ll_dns_config_parse(&c, "policy=onlyIPv6,select=fastest", 1, &exp) < 0 && c.policy == LL_DNS_ANY &&
                 strcmp(exp, "select: first, random or roundRobin") == 0,
             "a bad field: nothing changes, and what it takes is said (%s)", exp);
    tu_check(ll_dns_config_parse(&c, "ttl=soon", 1, &exp) < 0 && strncmp(exp, "ttl:", 4) == 0, "bad ttl");
    tu_check(ll_dns_config_parse(&c, "policy=IPv6", 1, &exp) < 0 && strncmp(exp, "policy:", 7) == 0, "bad policy");
    tu_check(ll_dns_config_parse(&c, "ttl", 1, &exp) < 0, "no value");
    tu_check(ll_dns_config_parse(&c, "", 1, &exp) < 0, "empty");
    tu_check(ll_dns_config_parse(&c, "ttl=1m,", 1, &exp) < 0, "trailing comma");
    tu_check(ll_dns_config_set(&c, "colour", "red", 1, &exp) < 0, "unknown key");
}

static void pool_is(const char *spec, int count, const char *want) {
    ll_ip_pool p;
    char err[200], one[INET6_ADDRSTRLEN];
    if (!tu_check(ll_ip_pool_parse(&p, spec, err, sizeof(err)) == 0, "pool '%s' parses (%s)", spec, err)) return;
    char got[512] = "";
    for (int i = 0; i < count; i++) {
        ll_addr a;
        ll_ip_pool_get(&p, (uint64_t)i, &a);
        strcat(got, i ? " " : "");
        strcat(got, text(&a, one));
    }
    tu_check(strcmp(got, want) == 0, "pool '%s': %s (got %s)", spec, want, got);
    ll_ip_pool_free(&p);
}

static void pool_bad(const char *spec) {
    ll_ip_pool p;
    char err[200] = "";
    tu_check(ll_ip_pool_parse(&p, spec, err, sizeof(err)) < 0 && err[0], "pool '%s' refused: %s", spec, err);
}

static void pools(void) {
    pool_is("10.0.0.10", 2, "10.0.0.10 10.0.0.10");
    pool_is("10.0.0.10,10.0.0.20-10.0.0.22", 5, "10.0.0.10 10.0.0.20 10.0.0.21 10.0.0.22 10.0.0.10");
    pool_is("10.0.1.0/30", 3, "10.0.1.1 10.0.1.2 10.0.1.1"); /* without .0 and .3 */
    pool_is("10.0.1.7/31", 3, "10.0.1.6 10.0.1.7 10.0.1.6");
    pool_is("10.0.1.7/32", 1, "10.0.1.7");
    pool_is("10.0.0.255-10.0.1.1", 3, "10.0.0.255 10.0.1.0 10.0.1.1");
    pool_is("fd00::1-fd00::2, fd00::ff/127", 5, "fd00::1 fd00::2 fd00::fe fd00::ff fd00::1");
    pool_is("10.0.0.0/8", 1, "10.0.0.1");
    ll_ip_pool p;
    char err[200];
    ll_addr a;
    ll_ip_pool_parse(&p, "10.0.0.0/8", err, sizeof(err));
    ll_ip_pool_get(&p, 16777213, &a); /* the last of 2^24 - 2 */
    char one[INET6_ADDRSTRLEN];
    tu_check(strcmp(text(&a, one), "10.255.255.254") == 0, "a /8 is computed, not listed: %s", one);
    ll_ip_pool_free(&p);
    pool_bad("10.0.0.x");
    pool_bad("10.0.0.9-10.0.0.1");
    pool_bad("10.0.0.1-fd00::1");
    pool_bad("10.0.0.0/33");
    pool_bad("::/0");
    pool_bad("10.0.0.1,");
    pool_bad("");
}

static void order(void) {
    ll_addr in[5] = {ip("::1"), ip("10.0.0.1"), ip("fd00::2"), ip("10.0.0.2"), ip("10.0.0.3")};
    ll_addr out[LL_RESOLVE_MAX];
    int n = ll_resolve_order(in, 5, LL_DNS_PREFER_IPV4, LL_DNS_SELECT_FIRST, 0, out);
    tu_check(n == 5 && strcmp(joined(out, n), "10.0.0.1 ::1 10.0.0.2 fd00::2 10.0.0.3") == 0,
             "preferIPv4, first: IPv4 first, the versions taking turns (%s)", joined(out, n));
    n = ll_resolve_order(in, 5, LL_DNS_PREFER_IPV4, LL_DNS_SELECT_ROUND_ROBIN, 4, out);
    tu_check(strcmp(joined(out, n), "10.0.0.2 ::1 10.0.0.3 fd00::2 10.0.0.1") == 0,
             "roundRobin's 5th pick starts at the 2nd IPv4 address (%s)", joined(out, n));
    n = ll_resolve_order(in, 5, LL_DNS_PREFER_IPV6, LL_DNS_SELECT_RANDOM, 1, out);
    tu_check(strcmp(joined(out, n), "fd00::2 10.0.0.1 ::1 10.0.0.2 10.0.0.3") == 0, "preferIPv6 (%s)", joined(out, n));
    n = ll_resolve_order(in, 5, LL_DNS_ONLY_IPV6, LL_DNS_SELECT_FIRST, 0, out);
    tu_check(strcmp(joined(out, n), "::1 fd00::2") == 0, "onlyIPv6 (%s)", joined(out, n));
    n = ll_resolve_order(in, 5, LL_DNS_ANY, LL_DNS_SELECT_FIRST, 0, out);
    tu_check(strcmp(joined(out, n), "::1 10.0.0.1 fd00::2 10.0.0.2 10.0.0.3") == 0, "any: as resolved (%s)",
             joined(out, n));
    n = ll_resolve_order(in + 1, 1, LL_DNS_ONLY_IPV6, LL_DNS_SELECT_FIRST, 0, out);
    tu_check(n == 0, "onlyIPv6 without IPv6: none");
    n = ll_resolve_order(in, 1, LL_DNS_PREFER_IPV4, LL_DNS_SELECT_FIRST, 0, out);
    tu_check(n == 1 && strcmp(joined(out, n), "::1") == 0, "preferIPv4 without IPv4: the IPv6 one");
    int seen[3] = {0};
    for (uint64_t pick = 0; pick < 30; pick++) {
        ll_resolve_order(in, 5, LL_DNS_ONLY_IPV4, LL_DNS_SELECT_RANDOM, pick * 7919, out);
        seen[((struct sockaddr_in *)&out[0].ss)->sin_addr.s_addr == inet_addr("10.0.0.1")   ? 0
             : ((struct sockaddr_in *)&out[0].ss)->sin_addr.s_addr == inet_addr("10.0.0.2") ? 1
                                                                                           : 2]++;
    }
    tu_check(seen[0] && seen[1] && seen[2], "random draws pick every address (%d %d %d)", seen[0], seen[1], seen[2]);
    ll_addr many[40];
    for (int i = 0; i < 40; i++) many[i] = ip("10.0.0.1");
    tu_check(ll_resolve_order(many, 40, LL_DNS_ANY, LL_DNS_SELECT_FIRST, 0, out) == LL_RESOLVE_MAX,
             "at most LL_RESOLVE_MAX addresses");
}

static void never(void *ud, ll_addr *addrs, int n, int code, const char *err) {
    (void)addrs, (void)n, (void)code, (void)err;
    *(int *)ud += 1;
}

/* literals, localhost and options.hosts: answered at once, no lookup */
static void at_once(void) {
    ll_loop *loop = ll_loop_new();
    ll_dns_config dns;
    memset(&dns, 0, sizeof(dns));
    ll_resolver *r = ll_resolver_new(loop, &dns);
    ll_resolve_wait w;
    ll_addr *a = NULL;
    int n = 0, code = 0, called = 0;
    const char *err = NULL;
    int rc = ll_resolve(r, NULL, "127.0.0.5", 8080, &w, never, &called, &a, &n, &code, &err);
    tu_check(rc == 0 && n == 1 && ntohs(((struct sockaddr_in *)&a->ss)->sin_port) == 8080, "an IPv4 literal");
    free(a);
    rc = ll_resolve(r, NULL, "localhost", 80, &w, never, &called, &a, &n, &code, &err);
    tu_check(rc == 0 && strcmp(joined(a, n), "127.0.0.1 ::1") == 0, "localhost: 127.0.0.1 then ::1 (%s)", joined(a, n));
    free(a);
    dns.policy = LL_DNS_ONLY_IPV6;
    rc = ll_resolve(r, NULL, "LOCALHOST", 80, &w, never, &called, &a, &n, &code, &err);
    tu_check(rc == 0 && strcmp(joined(a, n), "::1") == 0, "localhost with onlyIPv6: ::1 (%s)", joined(a, n));
    free(a);
    char *hosts[] = {"test.k6.io::[::1]:9000", NULL};
    rc = ll_resolve(r, hosts, "test.k6.io", 443, &w, never, &called, &a, &n, &code, &err);
    tu_check(rc == 0 && n == 1 && strcmp(joined(a, n), "::1") == 0 &&
                 ntohs(((struct sockaddr_in6 *)&a->ss)->sin6_port) == 9000,
             "options.hosts routes a name to an address and port");
    free(a);
    ll_loop_turn(loop, 0);
    tu_check(called == 0, "no callback for answers given at once");
    ll_resolver_free(r);
    ll_loop_free(loop);
}

int main(void) {
    dns_config();
    pools();
    order();
    at_once();
    return tu_summary();
}
