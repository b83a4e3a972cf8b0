/* test_thresholds.c -- threshold expressions and metric keys
 * (src/core/thresholds.c). */
/* links: ll_metrics */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test_util.h"
#include "threshold.h"

static const char *agg_str(ll_agg a) {
    static const char *n[] = {"count", "rate", "value", "avg", "min", "max", "med", "p(N)"};
    return (unsigned)a < sizeof(n) / sizeof(n[0]) ? n[a] : "?";
}

static const char *op_str(ll_op o) {
    static const char *n[] = {"<", "<=", ">", ">=", "==", "!="};
    return (unsigned)o < sizeof(n) / sizeof(n[0]) ? n[o] : "?";
}

/* src with control bytes escaped, so each check prints on one line
 * (four rotating buffers, enough for one tu_check call). */
static const char *esc(const char *src) {
    static char bufs[4][512];
    static int next;
    if (!src) return "(null)";
    char *b = bufs[next++ & 3];
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)src; *p && o + 5 < sizeof(bufs[0]); p++) {
        if (*p < 0x20 || *p == 0x7f) o += (size_t)snprintf(b + o, 5, "\\x%02x", *p);
        else b[o++] = (char)*p;
    }
    b[o] = '\0';
    return b;
}

/* "p(95) < 200" style text of an expression. */
static const char *expr_str(char *buf, size_t len, ll_agg agg, double pct, ll_op op, double target) {
    if (agg == LL_AGG_PERCENTILE) snprintf(buf, len, "p(%g) %s %g", pct, op_str(op), target);
    else snprintf(buf, len, "%s %s %g", agg_str(agg), op_str(op), target);
    return buf;
}

/* src parses to agg (pct for p(N)), op and target. */
static void good(const char *src, ll_agg agg, double pct, ll_op op, double target) {
    ll_threshold_expr e;
    char err[256] = "", want[64], got[64];
    memset(&e, 0xAB, sizeof(e));
    int rc = ll_threshold_parse(src, &e, err, sizeof(err));
    int ok = rc == 0 && e.agg == agg && e.op == op && e.target == target &&
             (agg != LL_AGG_PERCENTILE || e.percentile == pct);
    tu_check(ok, "threshold '%s' = %s (got %s)", esc(src), expr_str(want, sizeof(want), agg, pct, op, target),
             rc == 0 ? expr_str(got, sizeof(got), e.agg, e.percentile, e.op, e.target) : err);
}

/* src is rejected with a message containing phrase (and a second one if given). */
static void bad(const char *src, const char *phrase, const char *phrase2) {
    ll_threshold_expr e;
    char err[256] = "";
    int rc = ll_threshold_parse(src, &e, err, sizeof(err));
    int ok = rc == -1 && strstr(err, phrase) && (!phrase2 || strstr(err, phrase2)) &&
             !strchr(err, '\n');
    tu_check(ok, "threshold '%s' rejected: %s", esc(src), err);
}

static void holds(const char *src, double value, int want) {
    ll_threshold_expr e;
    char err[256] = "";
    int rc = ll_threshold_parse(src, &e, err, sizeof(err));
    tu_check(rc == 0 && ll_threshold_holds(&e, value) == want, "'%s' with %g %s", src, value,
             want ? "holds" : "fails");
}

static void name_is(const char *src, const char *want) {
    ll_threshold_expr e;
    char err[256] = "", buf[32];
    int rc = ll_threshold_parse(src, &e, err, sizeof(err));
    const char *got = rc == 0 ? ll_threshold_agg_name(&e, buf, sizeof(buf)) : "(parse failed)";
    tu_check(strcmp(got, want) == 0, "ll_threshold_agg_name of '%s' = '%s' (got '%s')", src, want, got);
}

#define MAXT 4

/* src parses to want_name and the pairs wk[i]:wv[i] (NULL-terminated
 * arrays, NULL for a plain name); the pointers point into buf. */
static void key_good(const char *src, const char *want_name, const char *const *wk,
                     const char *const *wv) {
    char buf[256], err[256] = "";
    const char *name = NULL, *keys[MAXT], *values[MAXT];
    int want = 0;
    while (wk && wk[want]) want++;
    int n = ll_threshold_metric_key_parse(src, buf, sizeof(buf), &name, keys, values, MAXT, err, sizeof(err));
    int ok = n == want && name && strcmp(name, want_name) == 0;
    for (int i = 0; ok && i < n; i++) {
        ok = strcmp(keys[i], wk[i]) == 0 && strcmp(values[i], wv[i]) == 0 && keys[i] >= buf &&
             keys[i] < buf + sizeof(buf) && values[i] >= buf && values[i] < buf + sizeof(buf);
    }
    char got[256] = "";
    if (n >= 0) {
        snprintf(got, sizeof(got), "'%s'", name ? name : "(null)");
        for (int i = 0; i < n && i < MAXT; i++) {
            size_t l = strlen(got);
            snprintf(got + l, sizeof(got) - l, " [%s]=[%s]", keys[i], values[i]);
        }
    }
    tu_check(ok, "metric key '%s' -> %d pair(s) (got %d: %s%s)", esc(src), want, n, got, err);
}

static void key_bad(const char *src, int max_tags, size_t buflen, const char *phrase) {
    char buf[256], err[256] = "";
    const char *name, *keys[MAXT], *values[MAXT];
    if (buflen > sizeof(buf)) buflen = sizeof(buf);
    int n = ll_threshold_metric_key_parse(src, buf, buflen, &name, keys, values, max_tags, err, sizeof(err));
    tu_check(n == -1 && strstr(err, phrase) && !strchr(err, '\n'), "metric key '%s' rejected: %s",
             esc(src), err);
}

int main(void) {
    /* every aggregation */
    good("count>10", LL_AGG_COUNT, 0, LL_OP_GT, 10);
    good("rate<0.01", LL_AGG_RATE, 0, LL_OP_LT, 0.01);
    good("value==5", LL_AGG_VALUE, 0, LL_OP_EQ, 5);
    good("avg<100", LL_AGG_AVG, 0, LL_OP_LT, 100);
    good("min>=1", LL_AGG_MIN, 0, LL_OP_GE, 1);
    good("max<=2000", LL_AGG_MAX, 0, LL_OP_LE, 2000);
    good("med!=3", LL_AGG_MED, 0, LL_OP_NE, 3);
    good("p(95)<200", LL_AGG_PERCENTILE, 95, LL_OP_LT, 200);
    good("p(0)>0", LL_AGG_PERCENTILE, 0, LL_OP_GT, 0);
    good("p(100)<1", LL_AGG_PERCENTILE, 100, LL_OP_LT, 1);
    good("p(99.9)<300", LL_AGG_PERCENTILE, 99.9, LL_OP_LT, 300);
    good("p(99.99)<300", LL_AGG_PERCENTILE, 99.99, LL_OP_LT, 300);
    good("p(100.0)<1", LL_AGG_PERCENTILE, 100, LL_OP_LT, 1);
    /* every operator */
    good("avg<1", LL_AGG_AVG, 0, LL_OP_LT, 1);
    good("avg<=1", LL_AGG_AVG, 0, LL_OP_LE, 1);
    good("avg>1", LL_AGG_AVG, 0, LL_OP_GT, 1);
    good("avg>=1", LL_AGG_AVG, 0, LL_OP_GE, 1);
    good("avg==1", LL_AGG_AVG, 0, LL_OP_EQ, 1);
    good("avg===1", LL_AGG_AVG, 0, LL_OP_EQ, 1);
    good("avg!=1", LL_AGG_AVG, 0, LL_OP_NE, 1);
    /* whitespace */
    good("p(95) < 200", LL_AGG_PERCENTILE, 95, LL_OP_LT, 200);
    good(" avg<100 ", LL_AGG_AVG, 0, LL_OP_LT, 100);
    good("\tavg\t<=\t100\t", LL_AGG_AVG, 0, LL_OP_LE, 100);
    good("  count  ===  0  ", LL_AGG_COUNT, 0, LL_OP_EQ, 0);
    good("p( 99.9 )<300", LL_AGG_PERCENTILE, 99.9, LL_OP_LT, 300);
    good("rate\n<\n0.1\n", LL_AGG_RATE, 0, LL_OP_LT, 0.1);
    /* numbers */
    good("avg>-5", LL_AGG_AVG, 0, LL_OP_GT, -5);
    good("avg > -0.5", LL_AGG_AVG, 0, LL_OP_GT, -0.5);
    good("count<1e3", LL_AGG_COUNT, 0, LL_OP_LT, 1000);
    good("count<1E3", LL_AGG_COUNT, 0, LL_OP_LT, 1000);
    good("rate<2.5e-2", LL_AGG_RATE, 0, LL_OP_LT, 0.025);
    good("avg<-1.5e+2", LL_AGG_AVG, 0, LL_OP_LT, -150);
    good("avg<.5", LL_AGG_AVG, 0, LL_OP_LT, 0.5);
    good("avg<5.", LL_AGG_AVG, 0, LL_OP_LT, 5);
    good("avg<+5", LL_AGG_AVG, 0, LL_OP_LT, 5);
    good("avg<0", LL_AGG_AVG, 0, LL_OP_LT, 0);
    good("avg<1e-400", LL_AGG_AVG, 0, LL_OP_LT, 0); /* underflow is 0 */

    /* ll_threshold_holds at the boundary */
    holds("avg<100", 99.999, 1);
    holds("avg<100", 100, 0);
    holds("avg<=100", 100, 1);
    holds("avg<=100", 100.001, 0);
    holds("avg>100", 100.001, 1);
    holds("avg>100", 100, 0);
    holds("avg>=100", 100, 1);
    holds("avg>=100", 99.999, 0);
    holds("avg==100", 100, 1);
    holds("avg==100", 100.001, 0);
    holds("avg===100", 100, 1);
    holds("avg===100", 99.999, 0);
    holds("avg!=100", 100, 0);
    holds("avg!=100", 100.001, 1);
    holds("avg>-5", -4.9, 1);
    holds("avg>-5", -5, 0);
    holds("rate<0.01", 0.0099, 1);
    holds("rate<0.01", 0.01, 0);

    /* ll_threshold_agg_name */
    name_is("count<1", "count");
    name_is("rate<1", "rate");
    name_is("value<1", "value");
    name_is("avg<1", "avg");
    name_is("min<1", "min");
    name_is("max<1", "max");
    name_is("med<1", "med");
    name_is("p(95)<1", "p(95)");
    name_is("p(99.9)<1", "p(99.9)");
    name_is("p(99.99)<1", "p(99.99)");
    name_is("p( 90 )<1", "p(90)");
    name_is("p(0)<1", "p(0)");
    {
        ll_threshold_expr e = {LL_AGG_PERCENTILE, 50, LL_OP_LT, 1};
        char small[4];
        const char *n = ll_threshold_agg_name(&e, small, sizeof(small));
        tu_check(strlen(n) < sizeof(small) && strncmp(n, "p(5", 3) == 0,
                 "ll_threshold_agg_name truncates into a small buffer ('%s')", n);
    }

    /* malformed thresholds */
    bad(NULL, "empty threshold", NULL);
    bad("", "empty threshold", NULL);
    bad("   \t ", "empty threshold", NULL);
    bad("p95<200", "unknown aggregation 'p95'", "(expected count, rate, value, avg, min, max, med or p(N))");
    bad("average<200", "unknown aggregation 'average'", NULL);
    bad("AVG<200", "unknown aggregation 'AVG'", NULL);
    bad("P(95)<200", "unknown aggregation 'P(95)'", NULL);
    bad("avg(3)<4", "unknown aggregation 'avg(3)'", NULL);
    bad("p (95)<200", "unknown aggregation 'p'", NULL);
    bad("<200", "missing aggregation before '<200'", NULL);
    bad("avg", "missing operator after 'avg'", "(expected <, <=, >, >=, ==, === or !=)");
    bad("avg  ", "missing operator after 'avg'", NULL);
    bad("p(95)", "missing operator after 'p(95)'", NULL);
    bad("avg 100", "missing operator after 'avg'", "got '100'");
    bad("avg=100", "unknown operator '='", "(expected <, <=, >, >=, ==, === or !=)");
    bad("avg=<100", "unknown operator '=<'", NULL);
    bad("avg<<100", "unknown operator '<<'", NULL);
    bad("avg!==100", "unknown operator '!=='", NULL);
    bad("avg====100", "unknown operator '===='", NULL);
    bad("avg!100", "unknown operator '!'", NULL);
    bad("avg<", "missing number after '<'", NULL);
    bad("avg<=  ", "missing number after '<='", NULL);
    bad("avg<abc", "expected a number after '<', got 'abc'", NULL);
    bad("avg < abc ", "expected a number after '<', got 'abc'", NULL);
    bad("avg<-", "expected a number after '<', got '-'", NULL);
    bad("avg<.", "expected a number after '<', got '.'", NULL);
    bad("avg<0x10", "expected a number after '<', got '0x10'", NULL);
    bad("avg<inf", "expected a number after '<', got 'inf'", NULL);
    bad("avg<nan", "expected a number after '<', got 'nan'", NULL);
    bad("avg<1e999", "number '1e999' out of range", NULL);
    bad("avg<100xyz", "unexpected 'xyz' after the number", NULL);
    bad("avg<100 xyz", "unexpected 'xyz' after the number", NULL);
    bad("avg<100ms", "unexpected 'ms' after the number", NULL);
    bad("avg<1e", "unexpected 'e' after the number", NULL);
    bad("avg<1 2", "unexpected '2' after the number", NULL);
    bad("avg<1<2", "unexpected '<2' after the number", NULL);
    bad("p(101)<200", "percentile 101 out of range (expected 0 to 100)", NULL);
    bad("p(100.01)<200", "percentile 100.01 out of range", NULL);
    bad("p(-1)<200", "percentile -1 out of range", NULL);
    bad("p(1e999)<200", "percentile 1e999 out of range", NULL);
    bad("p()<200", "missing number in 'p()'", NULL);
    bad("p(", "missing number in 'p('", NULL);
    bad("p(abc)<200", "expected a number in p(...), got 'abc'", NULL);
    bad("p(95<200", "expected ')' after 'p(95', got '<200'", NULL);
    bad("p(95", "missing ')' after 'p(95'", NULL);
    bad("p(95 x)<1", "expected ')' after 'p(95', got 'x)<1'", NULL);
    bad("avg<1\n\x01zz", "unexpected '\\x01zz' after the number", NULL); /* escaped, one line */
    {
        char longsrc[400];
        memset(longsrc, 'x', sizeof(longsrc) - 1);
        longsrc[sizeof(longsrc) - 1] = '\0';
        bad(longsrc, "unknown aggregation 'xxxx", "...'");
    }
    {
        /* err may be NULL or tiny */
        ll_threshold_expr e;
        char tiny[8];
        tu_check(ll_threshold_parse("bogus", &e, NULL, 0) == -1, "NULL err buffer is accepted");
        tu_check(ll_threshold_parse("bogus", &e, tiny, sizeof(tiny)) == -1 && strlen(tiny) == 7,
                 "err is truncated to its size ('%s')", tiny);
    }

    /* metric keys: valid */
    key_good("http_req_duration", "http_req_duration", NULL, NULL);
    key_good("  http_reqs  ", "http_reqs", NULL, NULL);
    key_good("_x9", "_x9", NULL, NULL);
    key_good("http_req_duration{status:200}", "http_req_duration",
             (const char *[]){"status", NULL}, (const char *[]){"200", NULL});
    key_good("http_req_duration{name:login, method:POST}", "http_req_duration",
             (const char *[]){"name", "method", NULL}, (const char *[]){"login", "POST", NULL});
    key_good(" http_req_duration { name : login , method : POST } ", "http_req_duration",
             (const char *[]){"name", "method", NULL}, (const char *[]){"login", "POST", NULL});
    key_good("checks{name:'my check'}", "checks", (const char *[]){"name", NULL},
             (const char *[]){"my check", NULL});
    key_good("checks{name:\"a, b: c\"}", "checks", (const char *[]){"name", NULL},
             (const char *[]){"a, b: c", NULL});
    key_good("checks{'name':\"x\"}", "checks", (const char *[]){"name", NULL},
             (const char *[]){"x", NULL});
    key_good("checks{name:''}", "checks", (const char *[]){"name", NULL}, (const char *[]){"", NULL});
    key_good("http_req_duration{url:http://x:8080/}", "http_req_duration",
             (const char *[]){"url", NULL}, (const char *[]){"http://x:8080/", NULL});
    key_good("http_req_duration{url:'http://x:8080/a?b=1,2', status:200}", "http_req_duration",
             (const char *[]){"url", "status", NULL},
             (const char *[]){"http://x:8080/a?b=1,2", "200", NULL});
    key_good("m{a:1,b:2,c:3,d:4}", "m", (const char *[]){"a", "b", "c", "d", NULL},
             (const char *[]){"1", "2", "3", "4", NULL});
    key_good("m{k:v w}", "m", (const char *[]){"k", NULL}, (const char *[]){"v w", NULL});
    key_good("m{k:\"\"}", "m", (const char *[]){"k", NULL}, (const char *[]){"", NULL});
    {
        char longname[129];
        memset(longname, 'a', 128);
        longname[128] = '\0';
        key_good(longname, longname, NULL, NULL);
    }
    {
        /* exactly enough room: "m\0k\0v\0" is 6 bytes */
        char buf[6], err[128] = "";
        const char *name, *k[1], *v[1];
        int n = ll_threshold_metric_key_parse("m{k:v}", buf, sizeof(buf), &name, k, v, 1, err, sizeof(err));
        tu_check(n == 1 && strcmp(name, "m") == 0 && strcmp(k[0], "k") == 0 && strcmp(v[0], "v") == 0,
                 "metric key fits a buffer of exactly 6 bytes (%d %s)", n, err);
        n = ll_threshold_metric_key_parse("m", buf, 2, &name, NULL, NULL, 0, err, sizeof(err));
        tu_check(n == 0 && strcmp(name, "m") == 0, "plain name with max_tags 0 and 2-byte buffer");
    }

    /* metric keys: invalid */
    key_bad(NULL, MAXT, 256, "empty metric name");
    key_bad("", MAXT, 256, "empty metric name");
    key_bad("   ", MAXT, 256, "empty metric name");
    key_bad("{status:200}", MAXT, 256, "empty metric name in '{status:200}'");
    key_bad("http-req", MAXT, 256, "invalid character '-' in metric name 'http-req'");
    key_bad("9lives", MAXT, 256, "invalid character '9' in metric name '9lives'");
    key_bad("na.me{a:b}", MAXT, 256, "invalid character '.' in metric name 'na.me'");
    key_bad("caf\xc3\xa9", MAXT, 256, "invalid character '\\xc3'");
    key_bad("name}", MAXT, 256, "invalid character '}'");
    key_bad("my metric", MAXT, 256, "unexpected 'metric' after metric name 'my'");
    {
        char longname[130];
        memset(longname, 'a', 129);
        longname[129] = '\0';
        key_bad(longname, MAXT, 256, "too long (129 characters, at most 128)");
    }
    key_bad("m{status:200", MAXT, 256, "missing '}' at the end of 'm{status:200'");
    key_bad("m{status", MAXT, 256, "missing '}'");
    key_bad("m{", MAXT, 256, "missing '}'");
    key_bad("m{a:1,", MAXT, 256, "missing '}'");
    key_bad("m{}", MAXT, 256, "empty selector '{}'");
    key_bad("m{  }", MAXT, 256, "empty selector '{}'");
    key_bad("m{status}", MAXT, 256, "tag 'status' has no ':' (expected key:value)");
    key_bad("m{a:1,status}", MAXT, 256, "tag 'status' has no ':'");
    key_bad("m{status,a:1}", MAXT, 256, "tag 'status' has no ':'");
    key_bad("m{:200}", MAXT, 256, "empty tag key in ':200'");
    key_bad("m{ : 200}", MAXT, 256, "empty tag key");
    key_bad("m{'':200}", MAXT, 256, "empty tag key");
    key_bad("m{a:1,}", MAXT, 256, "empty key:value pair");
    key_bad("m{,a:1}", MAXT, 256, "empty key:value pair");
    key_bad("m{a:1,,b:2}", MAXT, 256, "empty key:value pair");
    key_bad("m{status:}", MAXT, 256, "empty value for tag 'status'");
    key_bad("m{status: ,a:1}", MAXT, 256, "empty value for tag 'status'");
    key_bad("m{a:1,b:2,c:3,d:4,e:5}", MAXT, 256, "more than 4 tags");
    key_bad("m{a:1,b:2}", 1, 256, "more than 1 tag in selector");
    key_bad("m{a:1}", 0, 256, "more than 0 tags");
    key_bad("m{a:1}x", MAXT, 256, "unexpected 'x' after '}'");
    key_bad("m{a:1} {b:2}", MAXT, 256, "unexpected '{b:2}' after '}'");
    key_bad("m{a:'x}", MAXT, 256, "unterminated quote");
    key_bad("m{'a:x}", MAXT, 256, "unterminated quote");
    key_bad("m{a:'x'y}", MAXT, 256, "unexpected 'y}' after quoted value 'x' of tag 'a'");
    key_bad("m{'a'b:x}", MAXT, 256, "unexpected 'b:x}' after quoted tag key 'a'");
    key_bad("m{k:v}", MAXT, 5, "buffer too small for metric key 'm{k:v}' (need 6 bytes, have 5)");
    key_bad("http_req_duration{status:200}", MAXT, 10, "need 29 bytes, have 10");
    key_bad("m", MAXT, 1, "buffer too small");
    key_bad("m", MAXT, 0, "buffer too small");
    {
        char err[128] = "";
        const char *name;
        int n = ll_threshold_metric_key_parse("m", NULL, 64, &name, NULL, NULL, 0, err, sizeof(err));
        tu_check(n == -1 && strstr(err, "buffer too small"), "NULL buffer rejected: %s", err);
    }
    return tu_summary();
}
