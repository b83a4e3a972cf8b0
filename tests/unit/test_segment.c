/* test_segment.c -- execution segments (src/core/run/segment.c) against
 * the golden values of k6's lib/execution_segment_test.go (and the global
 * iteration lists of lib/executor's *GlobalIters tests), then properties:
 * the segments of a sequence share every global index exactly once. */
/* links: ll_run */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "segment.h"
#include "test_util.h"

static char err[512];

/* "" when s parses, else the error; out gets the formatted segment. */
static int parse_fmt(const char *s, char *out, size_t len) {
    ll_segment seg;
    err[0] = 0;
    if (ll_segment_parse(s, NULL, &seg, err, sizeof(err)) != 0) return -1;
    ll_segment_format(&seg, out, len);
    return 0;
}

/* A tuple for segment seg ("" or NULL: none) in sequence seq (NULL: none). */
static int make_tuple(ll_segment_tuple *t, const char *seg, const char *seq) {
    ll_segment s;
    ll_segment_seq q = {0};
    err[0] = 0;
    if (seg && ll_segment_parse(seg, NULL, &s, err, sizeof(err)) != 0) return -1;
    if (seq && ll_segment_seq_parse(seq, NULL, &q, err, sizeof(err)) != 0) return -1;
    int rc = ll_segment_tuple_init(t, seg ? &s : NULL, seq ? &q : NULL, err, sizeof(err));
    ll_segment_seq_free(&q);
    return rc;
}

static void test_rat(void) {
    ll_segment_rat r;
    tu_check(ll_segment_rat_make(2, 4, &r) == 0 && r.num == 1 && r.den == 2, "rat 2/4 = 1/2");
    tu_check(ll_segment_rat_make(-2, -4, &r) == 0 && r.num == 1 && r.den == 2, "rat -2/-4 = 1/2");
    tu_check(ll_segment_rat_make(3, -6, &r) == 0 && r.num == -1 && r.den == 2, "rat 3/-6 = -1/2");
    tu_check(ll_segment_rat_make(0, 5, &r) == 0 && r.num == 0 && r.den == 1, "rat 0/5 = 0");
    tu_check(ll_segment_rat_make(1, 0, &r) != 0, "rat 1/0 is refused");
    tu_check(ll_segment_rat_make(INT64_MIN, 1, &r) != 0, "rat INT64_MIN/1 does not fit");
    ll_segment_rat a = {INT64_MAX - 1, INT64_MAX}, b = {INT64_MAX - 2, INT64_MAX - 1};
    tu_check(ll_segment_rat_cmp(a, b) == 1 && ll_segment_rat_cmp(b, a) == -1 && ll_segment_rat_cmp(a, a) == 0,
             "rat comparison is exact next to INT64_MAX");
    char buf[48];
    ll_segment_rat_format((ll_segment_rat){3, 4}, buf, sizeof(buf));
    tu_check(strcmp(buf, "3/4") == 0, "rat format 3/4: %s", buf);
    ll_segment_rat_format((ll_segment_rat){1, 1}, buf, sizeof(buf));
    tu_check(strcmp(buf, "1") == 0, "rat format 1: %s", buf);
}

/* k6 TestExecutionSegmentUnmarshalText, TestExecutionSegmentNew and
 * TestExecutionSegmentEquals, then luaload's own syntax cases. */
static void test_parse(void) {
    static const struct { const char *in, *out; } k6[] = {
        {"0:1", "0:1"}, {"0.5:0.75", "1/2:3/4"}, {"1/2:3/4", "1/2:3/4"}, {"50%:75%", "1/2:3/4"},
        {"2/4:75%", "1/2:3/4"}, {"75%", "0:3/4"},
        {"125%", NULL}, {"1a5%", NULL}, {"1a5", NULL}, {"1a5%:2/3", NULL}, {"125%:250%", NULL}, {"55%:50%", NULL},
        /* TestExecutionSegmentNew, as strings */
        {"-1:1", NULL}, {"0:2", NULL}, {"1/2:1/3", NULL}, {"1/2:1/2", NULL},
        /* nil segment's String is "0:1"; k6 reads "" as the whole test */
        {"", "0:1"},
    };
    static const struct { const char *in, *out; } own[] = {
        {".5", "0:1/2"}, {"1.", "0:1"}, {"5e-1", "0:1/2"}, {"2.5E-1:0.5", "1/4:1/2"}, {"+25%", "0:1/4"},
        {"0.1:0.2", "1/10:1/5"}, {"1/3:2/3", "1/3:2/3"}, {"0.500000000000000000000000", "0:1/2"}, {"0%:100%", "0:1"},
        {"1", "0:1"}, {"0", NULL}, {"12.5%", NULL}, {"1/0", NULL}, {"a:b:c", NULL}, {"0:1/2:1", NULL}, {":1", NULL},
        {"1/2:", NULL}, {":", NULL}, {" 0.5", NULL}, {"0.5 ", NULL}, {"1e", NULL}, {".", NULL}, {"%", NULL},
        {"010/100", NULL}, {"0x1/4", NULL}, {"1/-4", NULL}, {"-1/4:1/4", NULL},
        {"1/99999999999999999999", NULL}, {"0.00000000000000000000001", NULL},
        {"1/9223372036854775807", "0:1/9223372036854775807"}, {"1/9223372036854775808", NULL},
        {"1/4611686018427387904:1/2", "1/4611686018427387904:1/2"},
    };
    char out[128];
    for (size_t i = 0; i < sizeof(k6) / sizeof(k6[0]); i++) {
        int rc = parse_fmt(k6[i].in, out, sizeof(out));
        if (k6[i].out)
            tu_check(rc == 0 && strcmp(out, k6[i].out) == 0, "k6 segment \"%s\" is %s (got %s)", k6[i].in, k6[i].out,
                     rc ? err : out);
        else
            tu_check(rc != 0 && strstr(err, k6[i].in), "k6 segment \"%s\" is refused: %s", k6[i].in, err);
    }
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
        int rc = parse_fmt(own[i].in, out, sizeof(out));
        if (own[i].out)
            tu_check(rc == 0 && strcmp(out, own[i].out) == 0, "segment \"%s\" is %s (got %s)", own[i].in, own[i].out,
                     rc ? err : out);
        else
            tu_check(rc != 0 && err[0], "segment \"%s\" is refused: %s", own[i].in, err);
    }
    /* round trip: a formatted segment parses back to itself */
    const char *rt[] = {"1/2:3/4", "0:3/4", "1/13:2/13", "7/20:7/10"};
    for (size_t i = 0; i < sizeof(rt) / sizeof(rt[0]); i++) {
        char again[128];
        int ok = parse_fmt(rt[i], out, sizeof(out)) == 0 && parse_fmt(out, again, sizeof(again)) == 0;
        tu_check(ok && strcmp(out, again) == 0 && strcmp(out, rt[i]) == 0, "segment %s round-trips", rt[i]);
    }
    ll_segment a, b;
    ll_segment_parse("0:1", NULL, &a, err, sizeof(err));
    ll_segment_parse("1/2:2/3", NULL, &b, err, sizeof(err));
    tu_check(ll_segment_equal(NULL, &a) && ll_segment_equal(&a, NULL), "k6 nil segment equals 0:1");
    tu_check(ll_segment_equal(&b, &b) && !ll_segment_equal(&a, &b), "k6 1/2:2/3 equals itself, not 0:1");
    ll_segment_format(NULL, out, sizeof(out));
    tu_check(strcmp(out, "0:1") == 0, "k6 nil segment formats as 0:1");

    /* messages */
    parse_fmt("1/2:1/4", out, sizeof(out));
    tu_check(strcmp(err, "--execution-segment \"1/2:1/4\": the start (1/2) must be below the end (1/4)") == 0,
             "message: %s", err);
    parse_fmt("-1/2:1", out, sizeof(out));
    tu_check(strcmp(err, "--execution-segment \"-1/2:1\": the start (-1/2) must be at least 0") == 0, "message: %s",
             err);
    parse_fmt("125%", out, sizeof(out));
    tu_check(strcmp(err, "--execution-segment \"125%\": the end (5/4) must be at most 1") == 0, "message: %s", err);
    parse_fmt("1a5", out, sizeof(out));
    tu_check(strcmp(err, "--execution-segment \"1a5\": \"1a5\" is not a number (expected a fraction like 1/4, a "
                         "decimal like 0.25 or a whole percentage like 25%)") == 0, "message: %s", err);
    parse_fmt("12.5%:1", out, sizeof(out));
    tu_check(strstr(err, "\"12.5%\" is not a valid percentage") != NULL, "message: %s", err);
    parse_fmt("0:1/99999999999999999999", out, sizeof(out));
    tu_check(strstr(err, "\"1/99999999999999999999\" is too precise") != NULL, "message: %s", err);

    ll_segment_parse("1/3:1", NULL, &a, err, sizeof(err));
    double len = ll_segment_length(&a);
    tu_check(len > 0.66666 && len < 0.66667 && ll_segment_length(NULL) == 1.0, "k6 FloatLength of 1/3:1 and nil");
}

/* k6 TestExecutionSegmentFailures (Scale) and large values */
static void test_scale(void) {
    static const struct { const char *seg; int64_t value, want; } k6[] = {
        {"0:0.25", 2, 1}, {"0:0.25", 3, 1}, {"0.25:0.5", 2, 0}, {"0.25:0.5", 3, 1},
        {"0.5:0.75", 2, 1}, {"0.5:0.75", 3, 0}, {"0.75:1", 2, 0}, {"0.75:1", 3, 1},
    };
    for (size_t i = 0; i < sizeof(k6) / sizeof(k6[0]); i++) {
        ll_segment s;
        ll_segment_parse(k6[i].seg, NULL, &s, err, sizeof(err));
        int64_t got = ll_segment_scale(&s, k6[i].value);
        tu_check(got == k6[i].want, "k6 Scale %s of %lld = %lld (got %lld)", k6[i].seg, (long long)k6[i].value,
                 (long long)k6[i].want, (long long)got);
    }
    ll_segment a, b;
    ll_segment_parse("0:1/3", NULL, &a, err, sizeof(err));
    ll_segment_parse("1/3:1", NULL, &b, err, sizeof(err));
    tu_check(ll_segment_scale(&a, INT64_MAX) == 3074457345618258602 &&
                 ll_segment_scale(&b, INT64_MAX) == 6148914691236517205,
             "Scale of INT64_MAX into thirds is exact");
    tu_check(ll_segment_scale(NULL, 42) == 42, "Scale without a segment is the value");
}

/* k6 TestExecutionSegmentStringSequences */
static void test_seq_parse(void) {
    static const struct {
        const char *seq;
        const char *segs; /* the segments, space-separated; NULL: an error */
        int reverse;      /* formats back to seq */
    } k6[] = {
        {"", "", 1},
        {"0.5", NULL, 0}, {"1,1", NULL, 0}, {"-0.5,1", NULL, 0}, {"1/2,1/2", NULL, 0}, {"1/2,1/3", NULL, 0},
        {"0,1,1/2", NULL, 0},
        {"0.5,1", "1/2:1", 0},
        {"1/2,1", "1/2:1", 1},
        {"1/3,2/3", "1/3:2/3", 1},
        {"0,1/3,2/3", "0:1/3 1/3:2/3", 1},
        {"0,1/3,2/3,1", "0:1/3 1/3:2/3 2/3:1", 1},
        {"0.5,0.7", "1/2:7/10", 0},
        {"0.5,0.7,1", "1/2:7/10 7/10:1", 0},
        {"0,1/13,2/13,1/3,1/2,3/4,1", "0:1/13 1/13:2/13 2/13:1/3 1/3:1/2 1/2:3/4 3/4:1", 1},
    };
    for (size_t i = 0; i < sizeof(k6) / sizeof(k6[0]); i++) {
        ll_segment_seq q;
        err[0] = 0;
        int rc = ll_segment_seq_parse(k6[i].seq, NULL, &q, err, sizeof(err));
        if (!k6[i].segs) {
            tu_check(rc != 0 && strstr(err, k6[i].seq), "k6 sequence \"%s\" is refused: %s", k6[i].seq, err);
            continue;
        }
        char got[512] = "", one[128], back[512];
        for (int j = 0; rc == 0 && j < q.n; j++) {
            ll_segment_format(&q.items[j], one, sizeof(one));
            strcat(got, j ? " " : "");
            strcat(got, one);
        }
        ll_segment_seq_format(&q, back, sizeof(back));
        tu_check(rc == 0 && strcmp(got, k6[i].segs) == 0 && (!k6[i].reverse || strcmp(back, k6[i].seq) == 0),
                 "k6 sequence \"%s\" is [%s] (got [%s], formats as \"%s\")", k6[i].seq, k6[i].segs, rc ? err : got,
                 back);
        ll_segment_seq_free(&q);
    }
    static const struct { const char *seq, *msg; } msgs[] = {
        {"0.5", "--execution-segment-sequence \"0.5\": expected at least 2 comma-separated points, like 0,1/2,1 "
                "(1 given)"},
        {"0,1,1/2", "--execution-segment-sequence \"0,1,1/2\": point 3 (1/2) must be above point 2 (1); points must "
                    "increase"},
        {"-0.5,1", "--execution-segment-sequence \"-0.5,1\": point 1 (-1/2) must be at least 0"},
        {"0,1/2,3/2", "--execution-segment-sequence \"0,1/2,3/2\": point 3 (3/2) must be at most 1"},
        {"0,,1", "--execution-segment-sequence \"0,,1\": \"\" is not a number (expected a fraction like 1/4, a "
                 "decimal like 0.25 or a whole percentage like 25%)"},
        {"0, 1/2,1", "--execution-segment-sequence \"0, 1/2,1\": \" 1/2\" is not a number (expected a fraction like "
                     "1/4, a decimal like 0.25 or a whole percentage like 25%)"},
        {"0,1/2,1,", "--execution-segment-sequence \"0,1/2,1,\": \"\" is not a number (expected a fraction like 1/4, "
                     "a decimal like 0.25 or a whole percentage like 25%)"},
    };
    for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++) {
        ll_segment_seq q;
        err[0] = 0;
        int rc = ll_segment_seq_parse(msgs[i].seq, NULL, &q, err, sizeof(err));
        tu_check(rc != 0 && strcmp(err, msgs[i].msg) == 0, "sequence message: %s", err);
    }
    ll_segment_seq q;
    tu_check(ll_segment_seq_parse("0,25%,0.5,3/4,1", NULL, &q, err, sizeof(err)) == 0 && q.n == 4, "mixed syntaxes");
    char back[128];
    ll_segment_seq_format(&q, back, sizeof(back));
    tu_check(strcmp(back, "0,1/4,1/2,3/4,1") == 0, "mixed syntaxes format as fractions: %s", back);
    ll_segment_seq_format(&q, back, 8);
    tu_check(strlen(back) < 8, "a short buffer truncates: %s", back);
    ll_segment_seq_free(&q);
}

/* k6 TestExecutionTupleScale, TestBigScale */
static void test_tuple_scale(void) {
    static const struct { const char *seg, *seq; int64_t value, want; } k6[] = {
        {"0.5", NULL, 2, 1}, {"0.5", NULL, 3, 2}, {"0.5:1.0", NULL, 2, 1}, {"0.5:1.0", NULL, 3, 1},
        {"0.5", "0,0.5,1", 2, 1}, {"0.5", "0,0.5,1", 3, 2}, {"0.5:1.0", "0,0.5,1", 2, 1}, {"0.5:1.0", "0,0.5,1", 3, 1},
        {"0:7/20", "0,7/20,7/10,1", 50, 18},
    };
    for (size_t i = 0; i < sizeof(k6) / sizeof(k6[0]); i++) {
        ll_segment_tuple t;
        int rc = make_tuple(&t, k6[i].seg, k6[i].seq);
        int64_t got = rc ? -1 : ll_segment_tuple_scale(&t, k6[i].value);
        tu_check(got == k6[i].want, "k6 tuple %s in %s: ScaleInt64(%lld) = %lld (got %lld %s)", k6[i].seg,
                 k6[i].seq ? k6[i].seq : "(none)", (long long)k6[i].value, (long long)k6[i].want, (long long)got,
                 rc ? err : "");
        if (rc == 0) ll_segment_tuple_free(&t);
    }
}

/* k6 TestGetStripedOffsets and TestSequenceLCD */
static void test_offsets(void) {
    static const struct {
        const char *seq, *seg;
        int64_t start, offsets[6];
        int noffsets;
        int64_t lcd;
    } k6[] = {
        /* full sequences */
        {"0,0.3,0.5,0.6,0.7,0.8,0.9,1", "0:0.3", 0, {4, 3, 3}, 3, 10},
        {"0,0.3,0.5,0.6,0.7,0.8,0.9,1", "0.3:0.5", 1, {4, 6}, 2, 10},
        {"0,0.3,0.5,0.6,0.7,0.8,0.9,1", "0.5:0.6", 2, {10}, 1, 10},
        {"0,0.3,0.5,0.6,0.7,0.8,0.9,1", "0.6:0.7", 3, {10}, 1, 10},
        {"0,0.3,0.5,0.6,0.7,0.8,0.9,1", "0.8:0.9", 8, {10}, 1, 10},
        {"0,0.3,0.5,0.6,0.7,0.8,0.9,1", "0.9:1", 9, {10}, 1, 10},
        {"0,0.2,0.5,0.6,0.7,0.8,0.9,1", "0.9:1", 9, {10}, 1, 10},
        {"0,0.2,0.5,0.6,0.7,0.8,0.9,1", "0:0.2", 1, {4, 6}, 2, 10},
        {"0,0.2,0.5,0.6,0.7,0.8,0.9,1", "0.6:0.7", 3, {10}, 1, 10},
        /* not full sequences */
        {"0,0.2,0.5", "0:0.2", 3, {6, 4}, 2, 10},
        {"0,0.2,0.5", "0.2:0.5", 1, {4, 2, 4}, 3, 10},
        {"0,2/5,4/5", "0:2/5", 0, {3, 2}, 2, 5},
        {"0,2/5,4/5", "2/5:4/5", 1, {3, 2}, 2, 5},
        /* no sequence */
        {"", "0:0.2", 1, {5}, 1, 5},
        {"", "0:1/5", 1, {5}, 1, 5},
        {"", "0:2/10", 1, {5}, 1, 5},
        {"", "0:0.4", 1, {2, 3}, 2, 5},
        {"", "0:2/5", 1, {2, 3}, 2, 5},
        {"", "2/5:4/5", 1, {3, 2}, 2, 5},
        {"", "0:4/10", 1, {2, 3}, 2, 5},
        {"", "1/10:5/10", 1, {2, 2, 4, 2}, 4, 10},
    };
    for (size_t i = 0; i < sizeof(k6) / sizeof(k6[0]); i++) {
        ll_segment_tuple t;
        int rc = make_tuple(&t, k6[i].seg, k6[i].seq);
        int64_t start = -1, lcd = -1, n = -1;
        const int64_t *off = NULL;
        if (rc == 0) n = ll_segment_tuple_offsets(&t, &start, &off, &lcd);
        int ok = rc == 0 && start == k6[i].start && lcd == k6[i].lcd && n == k6[i].noffsets;
        for (int j = 0; ok && j < n; j++) ok = off[j] == k6[i].offsets[j];
        char got[128] = "";
        for (int j = 0; rc == 0 && j < n && j < 8; j++)
            snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%lld", j ? "," : "", (long long)off[j]);
        tu_check(ok, "k6 striped offsets of %s in \"%s\": start %lld, lcd %lld (got start %lld, offsets [%s], "
                 "lcd %lld %s)",
                 k6[i].seg, k6[i].seq, (long long)k6[i].start, (long long)k6[i].lcd, (long long)start, got,
                 (long long)lcd, rc ? err : "");
        if (rc == 0) ll_segment_tuple_free(&t);
    }
    static const struct { const char *seq, *seg; int64_t lcd; } lcds[] = {
        {"0,0.3,0.5,0.6,0.7,0.8,0.9,1", "0:0.3", 10}, {"0,0.1,0.5,0.6,0.7,0.8,0.9,1", "0:0.1", 10},
        {"0,0.2,0.5,0.6,0.7,0.8,0.9,1", "0:0.2", 10}, {"0,1/3,5/6", "0:1/3", 6}, {"0,1/3,4/7", "0:1/3", 21},
    };
    for (size_t i = 0; i < sizeof(lcds) / sizeof(lcds[0]); i++) {
        ll_segment_tuple t;
        int rc = make_tuple(&t, lcds[i].seg, lcds[i].seq);
        tu_check(rc == 0 && t.lcd == lcds[i].lcd, "k6 LCD of %s is %lld (got %lld)", lcds[i].seq,
                 (long long)lcds[i].lcd, rc ? -1LL : (long long)t.lcd);
        if (rc == 0) ll_segment_tuple_free(&t);
    }
}

/* k6 TestNewExecutionTuple (scaleTests and newScaleTests) and
 * TestGetNewExecutionTupleBesedOnValue */
static void test_new_tuple(void) {
    static const struct {
        const char *seg, *seq;
        int64_t scale[5][2]; /* value, ScaleInt64(value) */
        int nscale;
        struct { int64_t value; int ok; int64_t s50, s1, s0; } rescale[6];
        int nrescale;
    } k6[] = {
        {NULL, NULL, {{50, 50}, {1, 1}, {0, 0}}, 3, {{50, 1, 50, 1, 0}, {1, 1, 50, 1, 0}, {0, 0, 0, 0, 0}}, 3},
        {"0:1", NULL, {{50, 50}, {1, 1}, {0, 0}}, 3, {{50, 1, 50, 1, 0}, {1, 1, 50, 1, 0}, {0, 0, 0, 0, 0}}, 3},
        {"0:1", "0,1", {{50, 50}, {1, 1}, {0, 0}}, 3, {{50, 1, 50, 1, 0}, {1, 1, 50, 1, 0}, {0, 0, 0, 0, 0}}, 3},
        {"0:1", "", {{50, 50}, {1, 1}, {0, 0}}, 3, {{50, 1, 50, 1, 0}, {1, 1, 50, 1, 0}, {0, 0, 0, 0, 0}}, 3},
        {"0:1/3", "0,1/3,2/3,1", {{50, 17}, {3, 1}, {2, 1}, {1, 1}, {0, 0}}, 5,
         {{50, 1, 17, 1, 0}, {20, 1, 18, 1, 0}, {3, 1, 17, 1, 0}, {2, 1, 25, 1, 0}, {1, 1, 50, 1, 0}, {0, 0, 0, 0, 0}},
         6},
        {"1/3:2/3", "0,1/3,2/3,1", {{50, 17}, {3, 1}, {2, 1}, {1, 0}, {0, 0}}, 5,
         {{50, 1, 17, 0, 0}, {20, 1, 17, 0, 0}, {3, 1, 17, 0, 0}, {2, 1, 25, 0, 0}, {1, 0, 0, 0, 0}, {0, 0, 0, 0, 0}},
         6},
        {"2/3:1", "0,1/3,2/3,1", {{50, 16}, {3, 1}, {2, 0}, {1, 0}, {0, 0}}, 5,
         {{50, 1, 16, 0, 0}, {20, 1, 15, 0, 0}, {3, 1, 16, 0, 0}, {2, 0, 0, 0, 0}, {1, 0, 0, 0, 0}, {0, 0, 0, 0, 0}},
         6},
    };
    for (size_t i = 0; i < sizeof(k6) / sizeof(k6[0]); i++) {
        const char *seg = k6[i].seg ? k6[i].seg : "(nil)", *seq = k6[i].seq ? k6[i].seq : "(nil)";
        ll_segment_tuple t;
        if (!tu_check(make_tuple(&t, k6[i].seg, k6[i].seq) == 0, "k6 tuple %s in %s: %s", seg, seq, err)) continue;
        for (int j = 0; j < k6[i].nscale; j++) {
            int64_t v = k6[i].scale[j][0], got = ll_segment_tuple_scale(&t, v);
            tu_check(got == k6[i].scale[j][1], "k6 tuple %s in %s: ScaleInt64(%lld) = %lld (got %lld)", seg, seq,
                     (long long)v, (long long)k6[i].scale[j][1], (long long)got);
        }
        for (int j = 0; j < k6[i].nrescale; j++) {
            ll_segment_tuple r;
            int64_t v = k6[i].rescale[j].value;
            int rc = ll_segment_tuple_rescale(&t, v, &r, err, sizeof(err));
            if (!k6[i].rescale[j].ok) {
                tu_check(rc != 0, "k6 tuple %s in %s: rescaled by %lld is refused: %s", seg, seq, (long long)v, err);
                continue;
            }
            int64_t g50 = rc ? -1 : ll_segment_tuple_scale(&r, 50), g1 = rc ? -1 : ll_segment_tuple_scale(&r, 1);
            int64_t g0 = rc ? -1 : ll_segment_tuple_scale(&r, 0);
            tu_check(rc == 0 && g50 == k6[i].rescale[j].s50 && g1 == k6[i].rescale[j].s1 && g0 == k6[i].rescale[j].s0,
                     "k6 tuple %s in %s rescaled by %lld: ScaleInt64 50, 1, 0 = %lld, %lld, %lld "
                     "(got %lld, %lld, %lld)",
                     seg, seq, (long long)v, (long long)k6[i].rescale[j].s50, (long long)k6[i].rescale[j].s1,
                     (long long)k6[i].rescale[j].s0, (long long)g50, (long long)g1, (long long)g0);
            if (rc == 0) ll_segment_tuple_free(&r);
        }
        ll_segment_tuple_free(&t);
    }

    ll_segment_tuple t, r;
    make_tuple(&t, "0:1/3", "0,1/3,2/3,1");
    int rc = ll_segment_tuple_rescale(&t, 20, &r, err, sizeof(err));
    char back[128] = "", one[64];
    if (rc == 0) ll_segment_seq_format(&r.seq, back, sizeof(back));
    if (rc == 0) ll_segment_format(&r.seq.items[r.index], one, sizeof(one));
    tu_check(rc == 0 && strcmp(back, "0,7/20,7/10,1") == 0 && strcmp(one, "0:7/20") == 0,
             "k6 0:1/3 in 0,1/3,2/3,1 rescaled by 20: 0:7/20 in 0,7/20,7/10,1 (got %s in %s)", rc ? err : one, back);
    if (rc == 0) ll_segment_tuple_free(&r);
    ll_segment_tuple_free(&t);

    make_tuple(&t, "2/3:1", "0,1/3,2/3,1");
    rc = ll_segment_tuple_rescale(&t, 2, &r, err, sizeof(err));
    tu_check(rc != 0 && strcmp(err, "segment 2/3:1 gets none of 2 (its share rounds to 0)") == 0, "message: %s", err);
    rc = ll_segment_tuple_rescale(&t, 0, &r, err, sizeof(err));
    tu_check(rc != 0 && strstr(err, "cannot split 0") != NULL, "message: %s", err);
    ll_segment_tuple_free(&t);
}

/* The ExecutionTuple doc comment's table (0,1/2,3/4,1): each segment's
 * global indexes and ScaleInt64(1..12); TestSegmentedIndex "full", "half"
 * and "the other half" as global indexes (k6's unscaled - 1). */
static void test_doc_table(void) {
    static const struct {
        const char *seg, *seq;
        int64_t globals[6];
        int nglobals;
        int64_t scale[12];
    } k6[] = {
        {"0:1/2", "0,1/2,3/4,1", {0, 2, 4, 6, 8, 10}, 6, {1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6}},
        {"1/2:3/4", "0,1/2,3/4,1", {1, 5, 9}, 3, {0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3}},
        {"3/4:1", "0,1/2,3/4,1", {3, 7, 11}, 3, {0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3}},
        {NULL, NULL, {0, 1, 2, 3}, 4, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
        {"0:1/2", "0,1/2,1", {0, 2, 4}, 3, {1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6}},
        {"1/2:1", "0,1/2,1", {1, 3, 5}, 3, {0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6}},
    };
    for (size_t i = 0; i < sizeof(k6) / sizeof(k6[0]); i++) {
        const char *seg = k6[i].seg ? k6[i].seg : "(nil)";
        ll_segment_tuple t;
        if (!tu_check(make_tuple(&t, k6[i].seg, k6[i].seq) == 0, "k6 doc tuple %s: %s", seg, err)) continue;
        int ok = 1;
        for (int k = 0; k < k6[i].nglobals; k++)
            ok &= ll_segment_tuple_global(&t, k) == k6[i].globals[k] && ll_segment_tuple_owns(&t, k6[i].globals[k]) &&
                  ll_segment_tuple_local(&t, k6[i].globals[k]) == k;
        tu_check(ok, "k6 doc: %s's global indexes start %lld, %lld, %lld", seg, (long long)k6[i].globals[0],
                 (long long)k6[i].globals[1], (long long)k6[i].globals[2]);
        ok = 1;
        for (int v = 1; v <= 12; v++) ok &= ll_segment_tuple_scale(&t, v) == k6[i].scale[v - 1];
        tu_check(ok, "k6 doc: %s's ScaleInt64(1..12)", seg);
        ll_segment_tuple_free(&t);
    }
}

/* lib/executor: TestSharedIterationsGlobalIters (vus 5, 50 iterations),
 * TestConstantArrivalRateGlobalIters (maxVUs 5, 22 iterations in all) and
 * TestRampingArrivalRateGlobalIters (maxVUs 5, 21 in all): the executors
 * stripe by the tuple rescaled by their VUs, so these are the global
 * indexes below the total of the tuple rescaled by 5. */
static void test_executor_iters(void) {
    static const struct {
        const char *seg;
        int64_t total;
        int64_t iters[32];
        int n;
    } k6[] = {
        {"0:1/4", 50, {1, 6, 11, 16, 21, 26, 31, 36, 41, 46}, 10},
        {"1/4:3/4", 50, {0, 2, 4, 5, 7, 9, 10, 12, 14, 15, 17, 19, 20, 22, 24, 25, 27, 29, 30, 32, 34, 35, 37, 39, 40,
                         42, 44, 45, 47, 49}, 30},
        {"3/4:1", 50, {3, 8, 13, 18, 23, 28, 33, 38, 43, 48}, 10},
        {"0:1/4", 22, {1, 6, 11, 16, 21}, 5},
        {"1/4:3/4", 22, {0, 2, 4, 5, 7, 9, 10, 12, 14, 15, 17, 19, 20}, 13},
        {"3/4:1", 22, {3, 8, 13, 18}, 4},
        {"0:1/4", 21, {1, 6, 11, 16}, 4},
        {"1/4:3/4", 21, {0, 2, 4, 5, 7, 9, 10, 12, 14, 15, 17, 19, 20}, 13},
        {"3/4:1", 21, {3, 8, 13, 18}, 4},
    };
    for (size_t i = 0; i < sizeof(k6) / sizeof(k6[0]); i++) {
        ll_segment_tuple t, r;
        int rc = make_tuple(&t, k6[i].seg, "0,1/4,3/4,1");
        rc = rc ? rc : ll_segment_tuple_rescale(&t, 5, &r, err, sizeof(err));
        if (!tu_check(rc == 0, "k6 executor tuple %s rescaled by 5: %s", k6[i].seg, err)) continue;
        int64_t count = ll_segment_tuple_scale(&r, k6[i].total);
        int ok = count == k6[i].n;
        for (int k = 0; ok && k < k6[i].n; k++) ok = ll_segment_tuple_global(&r, k) == k6[i].iters[k];
        int64_t owned = 0;
        for (int64_t g = 0; g < k6[i].total; g++) owned += ll_segment_tuple_owns(&r, g);
        tu_check(ok && owned == k6[i].n, "k6 executor iterations of %s (of %lld): %d from %lld (got %lld, owns %lld)",
                 k6[i].seg, (long long)k6[i].total, k6[i].n, (long long)k6[i].iters[0], (long long)count,
                 (long long)owned);
        ll_segment_tuple_free(&r);
        ll_segment_tuple_free(&t);
    }
}

/* k6's generateRandomSequence: n segments with lengths numerator/sum for
 * numerators 1..m, seeded (tu_rand) so runs repeat. */
static void random_seq(ll_segment_seq *q, int n, int64_t m) {
    int64_t num[16], sum = 0, acc = 0;
    for (int i = 0; i < n; i++) sum += num[i] = 1 + (int64_t)(tu_rand() % (uint64_t)m);
    q->items = malloc((size_t)n * sizeof(*q->items));
    q->n = n;
    for (int i = 0; i < n; i++) {
        ll_segment_rat_make(acc, sum, &q->items[i].from);
        acc += num[i];
        ll_segment_rat_make(acc, sum, &q->items[i].to);
    }
}

/* Every segment of seq's filled sequence: each global index below 1000
 * belongs to exactly one of them, local/global/offsets agree, and for every
 * N <= 1000 ScaleInt64(N) is how many of 0..N-1 a segment owns (so they add
 * up to N and never shrink); ExecutionSegment.Scale adds up to N too; the
 * tuples rescaled by a value scale it as before. */
static void check_partition(const char *name, const ll_segment_seq *given) {
    ll_segment_tuple base;
    if (!tu_check(ll_segment_tuple_init(&base, &given->items[0], given, err, sizeof(err)) == 0, "%s: %s", name, err))
        return;
    int n = base.seq.n;
    ll_segment_tuple *t = calloc((size_t)n, sizeof(*t));
    int64_t *count = calloc((size_t)n, sizeof(*count));
    int ok = 1;
    for (int i = 0; i < n; i++)
        ok &= ll_segment_tuple_init(&t[i], &base.seq.items[i], &base.seq, err, sizeof(err)) == 0;
    if (!tu_check(ok, "%s: a tuple for every segment: %s", name, err)) {
        for (int i = 0; i < n; i++) ll_segment_tuple_free(&t[i]);
        free(t);
        free(count);
        ll_segment_tuple_free(&base);
        return;
    }
    const char *bad = NULL;
    int64_t bad_at = -1;
    for (int64_t g = 0; g <= 1000 && !bad; g++) {
        int64_t sum = 0, ssum = 0;
        for (int i = 0; i < n && !bad; i++) {
            int64_t sc = ll_segment_tuple_scale(&t[i], g);
            sum += sc;
            ssum += ll_segment_scale(&base.seq.items[i], g);
            if (sc != count[i]) bad = "ScaleInt64(N) is not the count below N";
            if (sc != ll_segment_tuple_scale_at(&base, i, g)) bad = "scale and scale_at disagree";
        }
        if (!bad && sum != g) bad = "ScaleInt64 does not add up to N";
        if (!bad && ssum != g) bad = "Scale does not add up to N";
        int owners = 0;
        for (int i = 0; i < n && !bad && g < 1000; i++) {
            if (!ll_segment_tuple_owns(&t[i], g)) continue;
            owners++;
            if (ll_segment_tuple_local(&t[i], g) != count[i]) bad = "local index is not the count before it";
            else if (ll_segment_tuple_global(&t[i], count[i]) != g) bad = "global(local(g)) is not g";
            count[i]++;
        }
        if (!bad && g < 1000 && owners != 1) bad = "an index without exactly one owner";
        if (bad) bad_at = g;
    }
    for (int i = 0; i < n && !bad; i++) {
        int64_t start, lcd;
        const int64_t *off;
        int64_t no = ll_segment_tuple_offsets(&t[i], &start, &off, &lcd);
        if (start != ll_segment_tuple_global(&t[i], 0) || lcd != base.lcd) bad = "offsets' start or lcd";
        for (int64_t k = 0; k < 3 * no && !bad; k++)
            if (ll_segment_tuple_global(&t[i], k + 1) - ll_segment_tuple_global(&t[i], k) != off[k % no])
                bad = "offsets are not the gaps between global indexes";
    }
    tu_check(!bad, "%s: %d segments, lcd %lld, share 0..999 exactly%s%s (at %lld)", name, n, (long long)base.lcd,
             bad ? ": " : "", bad ? bad : "", (long long)bad_at);
    /* rescaling keeps each segment's part of the value */
    static const int64_t values[] = {1, 2, 3, 5, 7, 50, 99, 1000};
    bad = NULL;
    for (size_t v = 0; v < sizeof(values) / sizeof(values[0]) && !bad; v++) {
        int64_t total = 0;
        for (int i = 0; i < n && !bad; i++) {
            ll_segment_tuple r;
            int64_t want = ll_segment_tuple_scale(&t[i], values[v]);
            int rc = ll_segment_tuple_rescale(&t[i], values[v], &r, err, sizeof(err));
            if ((rc == 0) != (want > 0)) bad = "rescale refused a segment with a share (or took one without)";
            if (rc == 0 && ll_segment_tuple_scale(&r, values[v]) != want) bad = "rescaled tuple scales differently";
            for (int64_t g = 0; rc == 0 && g < 3 * values[v]; g++) total += ll_segment_tuple_owns(&r, g);
            if (rc == 0) ll_segment_tuple_free(&r);
        }
        if (!bad && total != 3 * values[v]) bad = "rescaled tuples do not share the indexes exactly";
        if (bad) bad_at = values[v];
    }
    tu_check(!bad, "%s: rescaled tuples keep each segment's part%s%s (value %lld)", name, bad ? ": " : "",
             bad ? bad : "", (long long)bad_at);
    for (int i = 0; i < n; i++) ll_segment_tuple_free(&t[i]);
    free(t);
    free(count);
    ll_segment_tuple_free(&base);
}

static void test_properties(void) {
    static const char *const seqs[] = {
        "0,1/4,1/2,3/4,1", "0,1/3,2/3,1", "0,0.1,0.25,0.5,1", "0,0.3,0.5,0.6,0.7,0.8,0.9,1",
        "0,1/13,2/13,1/3,1/2,3/4,1", "0,2/5,4/5", "0.5,0.7", "0,1/7,1/3,0.6,1", "0,1",
    };
    for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++) {
        ll_segment_seq q;
        if (!tu_check(ll_segment_seq_parse(seqs[i], NULL, &q, err, sizeof(err)) == 0, "parse %s: %s", seqs[i], err))
            continue;
        check_partition(seqs[i], &q);
        ll_segment_seq_free(&q);
    }
    tu_rng_state = 0x5EED5EED12345678ull;
    for (int i = 0; i < 10; i++) { /* k6 TestExecution{Segment,Tuple}ScaleConsistency, NoWobble */
        ll_segment_seq q;
        random_seq(&q, 2 + (int)(tu_rand() % 9), 100);
        char name[600];
        ll_segment_seq_format(&q, name, sizeof(name));
        check_partition(name, &q);
        ll_segment_seq_free(&q);
    }
}

static void test_shard(void) {
    static const struct { const char *in, *seg, *seq; } ok[] = {
        {"1/1", "0:1", "0,1"}, {"1/2", "0:1/2", "0,1/2,1"}, {"2/2", "1/2:1", "0,1/2,1"},
        {"1/3", "0:1/3", "0,1/3,2/3,1"}, {"2/3", "1/3:2/3", "0,1/3,2/3,1"}, {"3/3", "2/3:1", "0,1/3,2/3,1"},
        {"4/4", "3/4:1", "0,1/4,1/2,3/4,1"}, {"5/10", "2/5:1/2", "0,1/10,1/5,3/10,2/5,1/2,3/5,7/10,4/5,9/10,1"},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        ll_segment seg;
        ll_segment_seq q;
        char a[64] = "", b[256] = "";
        int rc = ll_segment_parse_shard(ok[i].in, NULL, &seg, &q, err, sizeof(err));
        if (rc == 0) ll_segment_format(&seg, a, sizeof(a));
        if (rc == 0) ll_segment_seq_format(&q, b, sizeof(b));
        tu_check(rc == 0 && strcmp(a, ok[i].seg) == 0 && strcmp(b, ok[i].seq) == 0,
                 "shard %s is %s in %s (got %s in %s)", ok[i].in, ok[i].seg, ok[i].seq, rc ? err : a, b);
        ll_segment_seq_free(&q);
    }
    static const struct { const char *in, *msg; } bad[] = {
        {"0/4", "shard \"0/4\": i (0) must be from 1 to N (4); shards count from 1"},
        {"5/4", "shard \"5/4\": i (5) must be from 1 to N (4); shards count from 1"},
        {"-1/4", "shard \"-1/4\": i (-1) must be from 1 to N (4); shards count from 1"},
        {"1/0", "shard \"1/0\": the number of parts N (0) must be at least 1"},
        {"1/20000000", "shard \"1/20000000\": the number of parts N (20000000) must be at most 10000000"},
        {"x", "shard \"x\": expected i/N with whole numbers, like 2/4 for the second of 4 equal parts"},
        {"", NULL}, {"1/", NULL}, {"/4", NULL}, {"1/4/5", NULL}, {"1.5/4", NULL}, {"1/4 ", NULL}, {"a/b", NULL},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ll_segment seg;
        ll_segment_seq q;
        err[0] = 0;
        int rc = ll_segment_parse_shard(bad[i].in, NULL, &seg, &q, err, sizeof(err));
        int match = bad[i].msg ? strcmp(err, bad[i].msg) == 0 : strstr(err, "expected i/N") != NULL;
        tu_check(rc != 0 && match && q.n == 0, "shard \"%s\" is refused: %s", bad[i].in, err);
    }
    ll_segment seg;
    ll_segment_seq q;
    ll_segment_tuple t;
    ll_segment_parse_shard("2/4", NULL, &seg, &q, err, sizeof(err));
    int rc = ll_segment_tuple_init(&t, &seg, &q, err, sizeof(err));
    int64_t start = -1, lcd = -1, n = -1;
    const int64_t *off = NULL;
    if (rc == 0) n = ll_segment_tuple_offsets(&t, &start, &off, &lcd);
    tu_check(rc == 0 && start == 1 && n == 1 && off[0] == 4 && lcd == 4 && ll_segment_tuple_global(&t, 2) == 9,
             "shard 2/4 runs global indexes 1, 5, 9, ...");
    if (rc == 0) ll_segment_tuple_free(&t);
    ll_segment_seq_free(&q);
}

static void test_tuple_errors(void) {
    ll_segment_tuple t;
    int rc = make_tuple(&t, "1/3:1/2", "0,1/4,1/2,1");
    tu_check(rc != 0 && strcmp(err, "--execution-segment \"1/3:1/2\" is not one of the segments of "
                                     "--execution-segment-sequence \"0,1/4,1/2,1\" (expected two consecutive points "
                                     "of it)") == 0, "message: %s", err);
    rc = make_tuple(&t, NULL, "0,1/2,1");
    tu_check(rc != 0 && strstr(err, "\"0:1\" is not one of the segments") != NULL, "no segment in a split sequence: %s",
             err);
    rc = make_tuple(&t, "0:1/2", "1/2,1");
    tu_check(rc != 0, "a segment in the sequence's filled-in gap is refused (k6's Options.Validate): %s", err);
    rc = make_tuple(&t, "0:1/9999991", "0,1/9999991,1/2,1");
    tu_check(rc != 0 && strstr(err, "common denominator above 10000000") != NULL, "lcd too big: %s", err);
    rc = make_tuple(&t, "0:1/9999991", NULL);
    tu_check(rc == 0 && t.lcd == 9999991 && ll_segment_tuple_global(&t, 1) == 9999991 + 1,
             "lcd 9999991 is allowed (got %lld)", rc ? -1LL : (long long)t.lcd);
    if (rc == 0) {
        int64_t big = INT64_MAX / 2;
        tu_check(ll_segment_tuple_global(&t, big) == -1 && ll_segment_tuple_global(&t, -1) == -1 &&
                     ll_segment_tuple_local(&t, -5) == -1,
                 "global index overflow and negatives give -1");
        tu_check(ll_segment_tuple_scale(&t, INT64_MAX) == 922338033790,
                 "ScaleInt64(INT64_MAX) of 1/9999991 (got %lld)", (long long)ll_segment_tuple_scale(&t, INT64_MAX));
        ll_segment_tuple_free(&t);
    }
}

int main(void) {
    test_rat();
    test_parse();
    test_scale();
    test_seq_parse();
    test_tuple_scale();
    test_offsets();
    test_new_tuple();
    test_doc_table();
    test_executor_iters();
    test_properties();
    test_shard();
    test_tuple_errors();
    return tu_summary();
}
