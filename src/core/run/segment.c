/* segment.c -- k6's execution segments: exact fractions, the segment,
 * sequence and shard syntaxes, scaling and striping (see segment.h). */
#include "segment.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

/* Products of two int64 fit; every intermediate value here is one. */
typedef __int128 wide;

/* Striping stores lcd positions: a bound on memory (16 bytes each at most)
 * and on the time to build a tuple. */
static const int64_t MAX_LCD = 10000000;

static const char SEG_FLAG[] = "--execution-segment";
static const char SEQ_FLAG[] = "--execution-segment-sequence";

/* ---- fractions ---- */

static wide wide_gcd(wide a, wide b) {
    if (a < 0) a = -a;
    if (b < 0) b = -b;
    while (b != 0) {
        wide r = a % b;
        a = b;
        b = r;
    }
    return a;
}

static int rat_from_wide(wide num, wide den, ll_segment_rat *out) {
    if (den == 0) return -1;
    if (den < 0) {
        num = -num;
        den = -den;
    }
    wide g = wide_gcd(num, den); /* den when num is 0: 0/1 */
    num /= g;
    den /= g;
    if (num > INT64_MAX || num < -INT64_MAX || den > INT64_MAX) return -1;
    out->num = (int64_t)num;
    out->den = (int64_t)den;
    return 0;
}

int ll_segment_rat_make(int64_t num, int64_t den, ll_segment_rat *out) { return rat_from_wide(num, den, out); }

int ll_segment_rat_cmp(ll_segment_rat a, ll_segment_rat b) {
    wide l = (wide)a.num * b.den, r = (wide)b.num * a.den;
    return (l > r) - (l < r);
}

static int rat_sub(ll_segment_rat a, ll_segment_rat b, ll_segment_rat *out) {
    return rat_from_wide((wide)a.num * b.den - (wide)b.num * a.den, (wide)a.den * b.den, out);
}

void ll_segment_rat_format(ll_segment_rat r, char *buf, size_t len) {
    if (r.den == 1) snprintf(buf, len, "%lld", (long long)r.num);
    else snprintf(buf, len, "%lld/%lld", (long long)r.num, (long long)r.den);
}

/* Go's big.Int.QuoRem rounding as k6's roundUp uses it: the quotient
 * truncated toward zero, plus one when the remainder is at least half of
 * den (den > 0; a negative remainder never rounds). */
static wide round_half_up(wide num, wide den) {
    wide q = num / den, r = num % den;
    return 2 * r >= den ? q + 1 : q;
}

/* ---- numbers: "1/4", "0.25", "2.5e-1", "25%" (k6's stringToRat) ---- */

enum { NUM_OK = 0, NUM_SYNTAX = -1, NUM_TOO_BIG = -2, NUM_PERCENT = -3 };

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Decimal digits s[0..n) (at least one, nothing else) into *v. */
static int parse_digits(const char *s, size_t n, int64_t *v) {
    if (n == 0) return NUM_SYNTAX;
    for (size_t i = 0; i < n; i++)
        if (!is_digit(s[i])) return NUM_SYNTAX;
    int64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        int d = s[i] - '0';
        if (x > (INT64_MAX - d) / 10) return NUM_TOO_BIG;
        x = x * 10 + d;
    }
    *v = x;
    return NUM_OK;
}

/* An optional sign, then decimal digits. */
static int parse_signed(const char *s, size_t n, int64_t *v) {
    int neg = n > 0 && s[0] == '-';
    size_t skip = n > 0 && (s[0] == '-' || s[0] == '+');
    int rc = parse_digits(s + skip, n - skip, v);
    if (rc == NUM_OK && neg) *v = -*v;
    return rc;
}

/* A whole number of a fraction: Go reads "010" there as octal, so a
 * leading zero before more digits is refused rather than read otherwise. */
static int parse_fraction_part(const char *s, size_t n, int signed_ok, int64_t *v) {
    size_t skip = signed_ok && n > 0 && (s[0] == '-' || s[0] == '+');
    if (n - skip > 1 && s[skip] == '0') return NUM_SYNTAX;
    return signed_ok ? parse_signed(s, n, v) : parse_digits(s, n, v);
}

static int parse_fraction(const char *s, size_t n, size_t slash, ll_segment_rat *out) {
    int64_t num, den;
    int rc = parse_fraction_part(s, slash, 1, &num);
    int rc2 = parse_fraction_part(s + slash + 1, n - slash - 1, 0, &den);
    if (rc == NUM_SYNTAX || rc2 == NUM_SYNTAX || (rc2 == NUM_OK && den == 0)) return NUM_SYNTAX;
    if (rc != NUM_OK || rc2 != NUM_OK) return NUM_TOO_BIG;
    return rat_from_wide(num, den, out) == 0 ? NUM_OK : NUM_TOO_BIG;
}

/* [+-]digits[.digits][(e|E)[+-]digits], with a digit on at least one side
 * of the point (".5" and "5." as Go reads them). */
static int parse_decimal(const char *s, size_t n, ll_segment_rat *out) {
    size_t i = n > 0 && (s[0] == '-' || s[0] == '+');
    int neg = i == 1 && s[0] == '-';
    size_t int_start = i;
    while (i < n && is_digit(s[i])) i++;
    size_t int_len = i - int_start, frac_start = i, frac_len = 0;
    if (i < n && s[i] == '.') {
        frac_start = ++i;
        while (i < n && is_digit(s[i])) i++;
        frac_len = i - frac_start;
    }
    if (int_len + frac_len == 0) return NUM_SYNTAX;
    int64_t exp = 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        int exp_neg = i < n && s[i] == '-';
        if (i < n && (s[i] == '-' || s[i] == '+')) i++;
        if (i == n || !is_digit(s[i])) return NUM_SYNTAX;
        for (; i < n && is_digit(s[i]); i++)
            if (exp < 1000000) exp = exp * 10 + (s[i] - '0'); /* beyond that it cannot fit anyway */
        if (exp_neg) exp = -exp;
    }
    if (i != n) return NUM_SYNTAX;
    while (frac_len > 0 && s[frac_start + frac_len - 1] == '0') frac_len--; /* 0.50 is 0.5 */
    wide mant = 0;
    for (size_t k = 0; k < int_len + frac_len; k++) {
        char c = k < int_len ? s[int_start + k] : s[frac_start + k - int_len];
        mant = mant * 10 + (c - '0');
        if (mant > INT64_MAX) return NUM_TOO_BIG;
    }
    if (mant == 0) return rat_from_wide(0, 1, out);
    int64_t net = exp - (int64_t)frac_len; /* value = mant * 10^net */
    if (net > 18 || net < -38) return NUM_TOO_BIG;
    wide scale = 1;
    for (int64_t k = 0; k < (net < 0 ? -net : net); k++) scale *= 10;
    wide num = neg ? -mant : mant;
    int rc = net >= 0 ? rat_from_wide(num * scale, 1, out) : rat_from_wide(num, scale, out);
    return rc == 0 ? NUM_OK : NUM_TOO_BIG;
}

static int parse_number(const char *s, size_t n, ll_segment_rat *out) {
    if (n > 0 && s[n - 1] == '%') {
        int64_t v;
        int rc = parse_signed(s, n - 1, &v); /* k6: a base-10 big.Int, so no "12.5%" */
        if (rc != NUM_OK) return rc == NUM_TOO_BIG ? NUM_TOO_BIG : NUM_PERCENT;
        return rat_from_wide(v, 100, out) == 0 ? NUM_OK : NUM_TOO_BIG;
    }
    const char *slash = memchr(s, '/', n);
    if (slash) return parse_fraction(s, n, (size_t)(slash - s), out);
    return parse_decimal(s, n, out);
}

static void number_error(char *err, size_t errlen, const char *flag, const char *input, const char *tok, size_t n,
                         int rc) {
    int len = (int)n;
    if (rc == NUM_PERCENT)
        snprintf(err, errlen, "%s \"%s\": \"%.*s\" is not a valid percentage (expected a whole number before the %%, "
                 "like 25%%)", flag, input, len, tok);
    else if (rc == NUM_TOO_BIG)
        snprintf(err, errlen, "%s \"%s\": \"%.*s\" is too precise (its fraction must fit in 64-bit integers)", flag,
                 input, len, tok);
    else
        snprintf(err, errlen, "%s \"%s\": \"%.*s\" is not a number (expected a fraction like 1/4, a decimal like "
                 "0.25 or a whole percentage like 25%%)", flag, input, len, tok);
}

/* ---- segments ---- */

static const ll_segment WHOLE = {{0, 1}, {1, 1}};
static const ll_segment_rat ZERO = {0, 1}, ONE = {1, 1};

int ll_segment_parse(const char *s, const char *what, ll_segment *out, char *err, size_t errlen) {
    const char *name = what ? what : SEG_FLAG;
    ll_segment seg = WHOLE;
    const char *colon = strchr(s, ':');
    const char *to = colon ? colon + 1 : s;
    if (colon) {
        int rc = parse_number(s, (size_t)(colon - s), &seg.from);
        if (rc != NUM_OK) {
            number_error(err, errlen, name, s, s, (size_t)(colon - s), rc);
            return -1;
        }
    }
    if (colon || *s) { /* k6: "" alone is the whole test */
        int rc = parse_number(to, strlen(to), &seg.to);
        if (rc != NUM_OK) {
            number_error(err, errlen, name, s, to, strlen(to), rc);
            return -1;
        }
    }
    char a[48], b[48];
    ll_segment_rat_format(seg.from, a, sizeof(a));
    ll_segment_rat_format(seg.to, b, sizeof(b));
    /* k6's NewExecutionSegment checks in this order */
    if (ll_segment_rat_cmp(seg.from, ZERO) < 0) {
        snprintf(err, errlen, "%s \"%s\": the start (%s) must be at least 0", name, s, a);
        return -1;
    }
    if (ll_segment_rat_cmp(seg.from, seg.to) >= 0) {
        snprintf(err, errlen, "%s \"%s\": the start (%s) must be below the end (%s)", name, s, a, b);
        return -1;
    }
    if (ll_segment_rat_cmp(seg.to, ONE) > 0) {
        snprintf(err, errlen, "%s \"%s\": the end (%s) must be at most 1", name, s, b);
        return -1;
    }
    *out = seg;
    return 0;
}

void ll_segment_format(const ll_segment *seg, char *buf, size_t len) {
    if (!seg) seg = &WHOLE;
    char a[48], b[48];
    ll_segment_rat_format(seg->from, a, sizeof(a));
    ll_segment_rat_format(seg->to, b, sizeof(b));
    snprintf(buf, len, "%s:%s", a, b);
}

int ll_segment_equal(const ll_segment *a, const ll_segment *b) {
    if (!a) a = &WHOLE;
    if (!b) b = &WHOLE;
    return ll_segment_rat_cmp(a->from, b->from) == 0 && ll_segment_rat_cmp(a->to, b->to) == 0;
}

double ll_segment_length(const ll_segment *seg) {
    if (!seg) return 1.0;
    return (double)seg->to.num / (double)seg->to.den - (double)seg->from.num / (double)seg->from.den;
}

int64_t ll_segment_scale(const ll_segment *seg, int64_t value) {
    if (!seg) return value;
    wide from = round_half_up((wide)value * seg->from.num, seg->from.den);
    wide rest = (wide)value * seg->to.num - from * seg->to.den; /* (value * to - from) * to.den */
    return (int64_t)round_half_up(rest, seg->to.den);
}

/* ---- sequences ---- */

/* k6's NewExecutionSegment checks for points i and i + 1 (1-based) of the
 * sequence s. */
static int check_points(const char *name, const char *s, size_t i, ll_segment_rat a, ll_segment_rat b, char *err,
                        size_t errlen) {
    char sa[48], sb[48];
    ll_segment_rat_format(a, sa, sizeof(sa));
    ll_segment_rat_format(b, sb, sizeof(sb));
    if (ll_segment_rat_cmp(a, ZERO) < 0) {
        snprintf(err, errlen, "%s \"%s\": point %zu (%s) must be at least 0", name, s, i, sa);
        return -1;
    }
    if (ll_segment_rat_cmp(a, b) >= 0) {
        snprintf(err, errlen, "%s \"%s\": point %zu (%s) must be above point %zu (%s); points must increase", name,
                 s, i + 1, sb, i, sa);
        return -1;
    }
    if (ll_segment_rat_cmp(b, ONE) > 0) {
        snprintf(err, errlen, "%s \"%s\": point %zu (%s) must be at most 1", name, s, i + 1, sb);
        return -1;
    }
    return 0;
}

int ll_segment_seq_parse(const char *s, const char *what, ll_segment_seq *out, char *err, size_t errlen) {
    const char *name = what ? what : SEQ_FLAG;
    out->items = NULL;
    out->n = 0;
    if (!*s) return 0;
    size_t npoints = 1;
    for (const char *p = s; *p; p++) npoints += *p == ',';
    if (npoints < 2) {
        snprintf(err, errlen, "%s \"%s\": expected at least 2 comma-separated points, like 0,1/2,1 (1 given)", name,
                 s);
        return -1;
    }
    if (npoints - 1 > (size_t)MAX_LCD) {
        snprintf(err, errlen, "%s: too many points (%zu; at most %lld)", name, npoints, (long long)MAX_LCD + 1);
        return -1;
    }
    ll_segment *items = ll_xmalloc((npoints - 1) * sizeof(*items));
    const char *p = s;
    ll_segment_rat prev = ZERO;
    for (size_t i = 0; i < npoints; i++) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        ll_segment_rat r;
        int rc = parse_number(p, n, &r);
        if (rc != NUM_OK) {
            number_error(err, errlen, name, s, p, n, rc);
            free(items);
            return -1;
        }
        if (i > 0 && check_points(name, s, i, prev, r, err, errlen) != 0) {
            free(items);
            return -1;
        }
        if (i > 0) items[i - 1] = (ll_segment){prev, r};
        prev = r;
        if (comma) p = comma + 1;
    }
    out->items = items;
    out->n = (int)(npoints - 1);
    return 0;
}

void ll_segment_seq_format(const ll_segment_seq *seq, char *buf, size_t len) {
    if (len == 0) return;
    buf[0] = 0;
    size_t used = 0;
    for (int i = 0; seq->n > 0 && i <= seq->n; i++) {
        char r[48];
        ll_segment_rat_format(i == 0 ? seq->items[0].from : seq->items[i - 1].to, r, sizeof(r));
        int w = snprintf(buf + used, len - used, "%s%s", i ? "," : "", r);
        if (w < 0 || (size_t)w >= len - used) return; /* truncated */
        used += (size_t)w;
    }
}

void ll_segment_seq_free(ll_segment_seq *seq) {
    free(seq->items);
    seq->items = NULL;
    seq->n = 0;
}

int ll_segment_parse_shard(const char *s, const char *what, ll_segment *seg, ll_segment_seq *seq, char *err,
                           size_t errlen) {
    const char *name = what ? what : "shard";
    seq->items = NULL;
    seq->n = 0;
    const char *slash = strchr(s, '/');
    int64_t i = 0, n = 0;
    if (!slash || parse_signed(s, (size_t)(slash - s), &i) != NUM_OK ||
        parse_signed(slash + 1, strlen(slash + 1), &n) != NUM_OK) {
        snprintf(err, errlen, "%s \"%s\": expected i/N with whole numbers, like 2/4 for the second of 4 equal parts",
                 name, s);
        return -1;
    }
    if (n < 1) {
        snprintf(err, errlen, "%s \"%s\": the number of parts N (%lld) must be at least 1", name, s, (long long)n);
        return -1;
    }
    if (n > MAX_LCD) {
        snprintf(err, errlen, "%s \"%s\": the number of parts N (%lld) must be at most %lld", name, s, (long long)n,
                 (long long)MAX_LCD);
        return -1;
    }
    if (i < 1 || i > n) {
        snprintf(err, errlen, "%s \"%s\": i (%lld) must be from 1 to N (%lld); shards count from 1", name, s,
                 (long long)i, (long long)n);
        return -1;
    }
    ll_segment *items = ll_xmalloc((size_t)n * sizeof(*items));
    for (int64_t k = 0; k < n; k++) {
        rat_from_wide(k, n, &items[k].from); /* cannot fail: 0 <= k <= n */
        rat_from_wide(k + 1, n, &items[k].to);
    }
    *seg = items[i - 1];
    seq->items = items;
    seq->n = (int)n;
    return 0;
}

/* ---- striping (k6's NewExecutionSegmentSequenceWrapper) ---- */

/* A binary min-heap of int64 keys. */
static void heap_push(int64_t *h, int64_t *n, int64_t key) {
    int64_t i = (*n)++;
    while (i > 0 && h[(i - 1) / 2] > key) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = key;
}

static int64_t heap_pop(int64_t *h, int64_t *n) {
    int64_t top = h[0], last = h[--(*n)], i = 0;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && h[c + 1] < h[c]) c++;
        if (h[c] >= last) break;
        h[i] = h[c];
        i = c;
    }
    if (*n > 0) h[i] = last;
    return top;
}

typedef struct share_rank {
    int64_t share;
    int index;
} share_rank;

/* Biggest share first; equal shares keep the sequence's order (k6 sorts
 * stably). */
static int share_cmp(const void *pa, const void *pb) {
    const share_rank *a = pa, *b = pb;
    if (a->share != b->share) return a->share > b->share ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

/* The positions each segment owns in one cycle of lcd indexes. k6 gives
 * index i to the first segment, biggest share first, that has taken c of
 * its share s so far and for which i >= c * lcd / s, which spreads every
 * segment's indexes evenly. A segment that qualified and was passed over
 * still qualifies at the next index, so instead of asking every segment at
 * every index this keeps the ones that qualify in a heap by rank and the
 * others in a heap by the index at which they will: the same choices in
 * O(lcd log n) rather than O(lcd n). */
static int stripe_positions(int64_t lcd, int n, const int64_t *share, const int64_t *first, int64_t *pos,
                            char *err, size_t errlen) {
    share_rank *order = ll_xmalloc((size_t)n * sizeof(*order));
    int64_t *taken = ll_xcalloc((size_t)n, sizeof(*taken));
    int64_t *ready = ll_xmalloc((size_t)n * sizeof(*ready));   /* ranks that qualify */
    int64_t *waiting = ll_xmalloc((size_t)n * sizeof(*waiting)); /* when * n + rank */
    int ok = 1;
    int64_t nready = 0, nwaiting = 0;
    for (int i = 0; i < n; i++) order[i] = (share_rank){share[i], i};
    qsort(order, (size_t)n, sizeof(*order), share_cmp);
    for (int r = 0; r < n; r++) heap_push(ready, &nready, r); /* taken 0: all qualify at index 0 */
    for (int64_t i = 0; i < lcd; i++) {
        while (nwaiting > 0 && waiting[0] / n <= i) heap_push(ready, &nready, heap_pop(waiting, &nwaiting) % n);
        if (nready == 0) { /* cannot happen: the shares add up to lcd */
            snprintf(err, errlen, "internal error: striping found no segment for index %lld", (long long)i);
            ok = 0;
            break;
        }
        int64_t rank = heap_pop(ready, &nready);
        int s = order[rank].index;
        pos[first[s] + taken[s]] = i;
        taken[s]++;
        if (taken[s] < share[s]) heap_push(waiting, &nwaiting, (taken[s] * lcd + share[s] - 1) / share[s] * n + rank);
    }
    free(order);
    free(taken);
    free(ready);
    free(waiting);
    return ok ? 0 : -1;
}

/* Sets t->lcd, first, pos and offsets for t->seq (filled) and t->index;
 * frees t on failure. */
static int tuple_stripe(ll_segment_tuple *t, char *err, size_t errlen) {
    int n = t->seq.n;
    int64_t *share = ll_xmalloc((size_t)n * sizeof(*share));
    t->first = ll_xmalloc(((size_t)n + 1) * sizeof(*t->first));
    t->first[0] = 0;
    ll_segment_rat *lens = ll_xmalloc((size_t)n * sizeof(*lens));
    int ok = 1;
    /* k6's LCD: the least common multiple of the lengths' denominators */
    wide lcd = 1;
    for (int i = 0; ok && i < n; i++) {
        ok = rat_sub(t->seq.items[i].to, t->seq.items[i].from, &lens[i]) == 0;
        if (ok) lcd = lcd / wide_gcd(lcd, lens[i].den) * lens[i].den;
        ok = ok && lcd <= MAX_LCD;
        if (!ok) {
            char seq[200];
            ll_segment_seq_format(&t->seq, seq, sizeof(seq));
            snprintf(err, errlen, "the execution segments %s need a common denominator above %lld; use coarser "
                     "fractions", seq, (long long)MAX_LCD);
        }
    }
    t->lcd = (int64_t)lcd;
    for (int i = 0; ok && i < n; i++) {
        share[i] = lens[i].num * (t->lcd / lens[i].den);
        t->first[i + 1] = t->first[i] + share[i];
    }
    if (ok) t->pos = ll_xmalloc((size_t)t->lcd * sizeof(*t->pos));
    if (ok) ok = stripe_positions(t->lcd, n, share, t->first, t->pos, err, errlen) == 0;
    if (ok) {
        int64_t f = t->first[t->index], cnt = t->first[t->index + 1] - f;
        t->offsets = ll_xmalloc((size_t)cnt * sizeof(*t->offsets));
        for (int64_t j = 0; j < cnt; j++)
            t->offsets[j] = j + 1 < cnt ? t->pos[f + j + 1] - t->pos[f + j] : t->pos[f] + t->lcd - t->pos[f + j];
    }
    free(share);
    free(lens);
    if (!ok) ll_segment_tuple_free(t);
    return ok ? 0 : -1;
}

int ll_segment_tuple_init(ll_segment_tuple *t, const ll_segment *seg, const ll_segment_seq *seq, char *err,
                          size_t errlen) {
    memset(t, 0, sizeof(*t));
    const ll_segment *want = seg ? seg : &WHOLE;
    int given = seq && seq->n > 0;
    const ll_segment *src = given ? seq->items : want;
    int nsrc = given ? seq->n : 1;
    int index = -1;
    for (int i = 0; i < nsrc && index < 0; i++)
        if (ll_segment_equal(&src[i], want)) index = i;
    if (index < 0) { /* k6's Options.Validate: the segment must be one of the sequence's */
        char a[100], b[200];
        ll_segment_format(want, a, sizeof(a));
        ll_segment_seq_format(seq, b, sizeof(b));
        snprintf(err, errlen, "%s \"%s\" is not one of the segments of %s \"%s\" (expected two consecutive points of "
                 "it)", SEG_FLAG, a, SEQ_FLAG, b);
        return -1;
    }
    /* k6's GetFilledExecutionSegmentSequence: the gaps before and after */
    int before = ll_segment_rat_cmp(src[0].from, ZERO) != 0;
    int after = ll_segment_rat_cmp(src[nsrc - 1].to, ONE) != 0;
    int n = nsrc + before + after;
    ll_segment *items = ll_xmalloc((size_t)n * sizeof(*items));
    if (before) items[0] = (ll_segment){ZERO, src[0].from};
    memcpy(items + before, src, (size_t)nsrc * sizeof(*items));
    if (after) items[n - 1] = (ll_segment){src[nsrc - 1].to, ONE};
    t->seq.items = items;
    t->seq.n = n;
    t->index = index + before;
    return tuple_stripe(t, err, errlen);
}

void ll_segment_tuple_free(ll_segment_tuple *t) {
    free(t->seq.items);
    free(t->first);
    free(t->pos);
    free(t->offsets);
    memset(t, 0, sizeof(*t));
}

/* How many of the n ascending values in a are below x. */
static int64_t count_below(const int64_t *a, int64_t n, int64_t x) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (a[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

int64_t ll_segment_tuple_scale_at(const ll_segment_tuple *t, int i, int64_t value) {
    int64_t f = t->first[i], cnt = t->first[i + 1] - f;
    /* whole cycles, then this cycle's positions below the rest (C's / and %
     * truncate like Go's, so negative values scale as in k6) */
    return value / t->lcd * cnt + count_below(t->pos + f, cnt, value % t->lcd);
}

int64_t ll_segment_tuple_scale(const ll_segment_tuple *t, int64_t value) {
    if (t->seq.n == 1) return value;
    return ll_segment_tuple_scale_at(t, t->index, value);
}

int64_t ll_segment_tuple_offsets(const ll_segment_tuple *t, int64_t *start, const int64_t **offsets, int64_t *lcd) {
    int64_t f = t->first[t->index];
    *start = t->pos[f];
    *offsets = t->offsets;
    *lcd = t->lcd;
    return t->first[t->index + 1] - f;
}

int64_t ll_segment_tuple_local(const ll_segment_tuple *t, int64_t g) {
    if (g < 0) return -1;
    int64_t f = t->first[t->index], cnt = t->first[t->index + 1] - f, r = g % t->lcd;
    int64_t j = count_below(t->pos + f, cnt, r);
    if (j == cnt || t->pos[f + j] != r) return -1;
    return g / t->lcd * cnt + j;
}

int ll_segment_tuple_owns(const ll_segment_tuple *t, int64_t g) { return ll_segment_tuple_local(t, g) >= 0; }

int64_t ll_segment_tuple_global(const ll_segment_tuple *t, int64_t k) {
    if (k < 0) return -1;
    int64_t f = t->first[t->index], cnt = t->first[t->index + 1] - f;
    int64_t cycles = k / cnt, at = t->pos[f + k % cnt];
    if (cycles > (INT64_MAX - at) / t->lcd) return -1;
    return cycles * t->lcd + at;
}

int ll_segment_tuple_rescale(const ll_segment_tuple *t, int64_t value, ll_segment_tuple *out, char *err,
                             size_t errlen) {
    memset(out, 0, sizeof(*out));
    char a[100];
    ll_segment_format(&t->seq.items[t->index], a, sizeof(a));
    if (value < 1) {
        snprintf(err, errlen, "segment %s: cannot split %lld between the segments (expected at least 1)", a,
                 (long long)value);
        return -1;
    }
    ll_segment *items = ll_xmalloc((size_t)t->seq.n * sizeof(*items));
    /* When lcd divides value this gives t's own sequence back, as k6's
     * shortcut does. */
    int n = 0, index = -1;
    int64_t prev = 0;
    for (int i = 0; i < t->seq.n; i++) {
        int64_t v = ll_segment_tuple_scale_at(t, i, value);
        if (v == 0) continue;
        if (i == t->index) index = n;
        rat_from_wide(prev, value, &items[n].from); /* cannot fail: 0 <= prev < value */
        rat_from_wide(prev + v, value, &items[n].to);
        prev += v;
        n++;
    }
    if (index < 0) {
        free(items);
        snprintf(err, errlen, "segment %s gets none of %lld (its share rounds to 0)", a, (long long)value);
        return -1;
    }
    out->seq.items = items;
    out->seq.n = n;
    out->index = index;
    return tuple_stripe(out, err, errlen);
}
