/* dns_config.h -- k6's dns option: how long a name's addresses are kept
 * (ttl), which of them a new connection goes to (select), and which IP
 * versions count (policy). Set from --dns "ttl=1m,select=first,policy=any",
 * LUALOAD_DNS, or options.dns = { ttl = "1m", ... }, each field on its own:
 * the command line wins over the environment, which wins over the script.
 * A zeroed struct is k6's default: ttl 5m, select random, policy
 * preferIPv4. */
#ifndef LL_DNS_CONFIG_H
#define LL_DNS_CONFIG_H

#include <stddef.h>
#include <stdint.h>

enum { LL_DNS_SELECT_RANDOM, LL_DNS_SELECT_FIRST, LL_DNS_SELECT_ROUND_ROBIN };
enum { LL_DNS_PREFER_IPV4, LL_DNS_PREFER_IPV6, LL_DNS_ONLY_IPV4, LL_DNS_ONLY_IPV6, LL_DNS_ANY };

#define LL_DNS_TTL_DEFAULT_MS 300000
#define LL_DNS_TTL_FOREVER (-1)

typedef struct ll_dns_config {
    int64_t ttl_ms;            /* with ttl_set: 0 keeps nothing, LL_DNS_TTL_FOREVER ("inf") all */
    int select;                /* LL_DNS_SELECT_* */
    int policy;                /* LL_DNS_* */
    int ttl_set, select_set, policy_set;
} ll_dns_config;

/* The ttl in effect, ms (LL_DNS_TTL_FOREVER: forever). */
int64_t ll_dns_ttl_ms(const ll_dns_config *c);
/* Sets key ("ttl", "select" or "policy") to value, unless that field was
 * set already (force: anyway). Returns 0, or -1 with *expected saying what
 * the key takes ("select: first, random or roundRobin"). */
int ll_dns_config_set(ll_dns_config *c, const char *key, const char *value, int force, const char **expected);
/* The same from "key=value,key=value" (the --dns form). */
int ll_dns_config_parse(ll_dns_config *c, const char *text, int force, const char **expected);
/* "ttl=5m0s,select=random,policy=preferIPv4", k6's form of the option. */
void ll_dns_config_format(const ll_dns_config *c, char *buf, size_t n);
const char *ll_dns_select_name(int select);
const char *ll_dns_policy_name(int policy);

#endif
