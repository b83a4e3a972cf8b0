/* dns_config.c -- k6's dns option, parsed and shown (see dns_config.h). */
#include "dns_config.h"

#include <stdio.h>
#include <string.h>

#include "duration.h"

static const char *const SELECTS[] = {"random", "first", "roundRobin", NULL};
static const char *const POLICIES[] = {"preferIPv4", "preferIPv6", "onlyIPv4", "onlyIPv6", "any", NULL};

const char *ll_dns_select_name(int select) { return SELECTS[select]; }
const char *ll_dns_policy_name(int policy) { return POLICIES[policy]; }

int64_t ll_dns_ttl_ms(const ll_dns_config *c) { return c->ttl_set ? c->ttl_ms : LL_DNS_TTL_DEFAULT_MS; }

static int name_index(const char *const *names, const char *v) {
    for (int i = 0; names[i]; i++)
        if (strcmp(names[i], v) == 0) return i;
    return -1;
}

/* k6's ttl: "inf", a number of milliseconds, or a duration ("1m30s"). */
static int parse_ttl(const char *v, int64_t *ms) {
    int64_t n;
    uint64_t us;
    if (strcmp(v, "inf") == 0) *ms = LL_DNS_TTL_FOREVER;
    else if (ll_duration_parse_int(v, &n) == 0) *ms = n;
    else if (ll_duration_parse(v, &us) == 0) *ms = (int64_t)(us / 1000);
    else return -1;
    return 0;
}

int ll_dns_config_set(ll_dns_config *c, const char *key, const char *value, int force, const char **expected) {
    if (strcmp(key, "ttl") == 0) {
        int64_t ms;
        if (parse_ttl(value, &ms) < 0) {
            *expected = "ttl: a duration such as 1m, a number of milliseconds, 0 (no cache) or inf";
            return -1;
        }
        if (force || !c->ttl_set) c->ttl_ms = ms, c->ttl_set = 1;
    } else if (strcmp(key, "select") == 0) {
        int i = name_index(SELECTS, value);
        if (i < 0) {
            *expected = "select: first, random or roundRobin";
            return -1;
        }
        if (force || !c->select_set) c->select = i, c->select_set = 1;
    } else if (strcmp(key, "policy") == 0) {
        int i = name_index(POLICIES, value);
        if (i < 0) {
            *expected = "policy: preferIPv4, preferIPv6, onlyIPv4, onlyIPv6 or any";
            return -1;
        }
        if (force || !c->policy_set) c->policy = i, c->policy_set = 1;
    } else {
        *expected = "ttl, select or policy as key=value, e.g. ttl=1m,select=first,policy=any";
        return -1;
    }
    return 0;
}

int ll_dns_config_parse(ll_dns_config *c, const char *text, int force, const char **expected) {
    ll_dns_config next = *c; /* all of it or nothing */
    for (const char *s = text;;) {
        size_t len = strcspn(s, ",");
        const char *eq = memchr(s, '=', len);
        char key[16], value[64];
        size_t klen = eq ? (size_t)(eq - s) : 0, vlen = eq ? len - klen - 1 : 0;
        if (!eq || klen >= sizeof(key) || !vlen || vlen >= sizeof(value)) {
            *expected = "ttl, select or policy as key=value, e.g. ttl=1m,select=first,policy=any";
            return -1;
        }
        memcpy(key, s, klen);
        key[klen] = 0;
        memcpy(value, eq + 1, vlen);
        value[vlen] = 0;
        if (ll_dns_config_set(&next, key, value, force, expected) < 0) return -1;
        if (!s[len]) break;
        s += len + 1;
    }
    *c = next;
    return 0;
}

void ll_dns_config_format(const ll_dns_config *c, char *buf, size_t n) {
    char ttl[64] = "inf";
    int64_t ms = ll_dns_ttl_ms(c);
    if (ms != LL_DNS_TTL_FOREVER) ll_duration_format((uint64_t)ms * 1000, ttl, sizeof(ttl));
    snprintf(buf, n, "ttl=%s,select=%s,policy=%s", ttl, SELECTS[c->select], POLICIES[c->policy]);
}
