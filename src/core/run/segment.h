/* segment.h -- k6's execution segments: which part of the whole test's work
 * (VUs, iterations) one instance runs when a test is split between several
 * instances (k6's lib/execution_segment.go).
 *
 * Owns: exact fractions, the segment ("1/4:1/2") and sequence
 * ("0,1/4,1/2,1") syntaxes with k6's errors, the "i/N" shard shortcut, the
 * scaling of a count to one segment, and k6's striping, which decides which
 * global iteration indexes belong to which segment so that the segments of
 * one sequence share 0..n-1 with no gap and no overlap.
 *
 * API (NULL for a segment means the whole test, 0:1; a sequence with n == 0
 * means none was given; err/errlen receive a one-line message on failure):
 *
 *   ll_segment_rat_make       num/den reduced to lowest terms (-1 on overflow)
 *   ll_segment_rat_cmp        -1, 0 or 1, like strcmp
 *   ll_segment_rat_format     "1/4", "0", "1" (k6's RatString)
 *   ll_segment_parse          "1/4:1/2", "25%:50%", "0.25" (= 0:0.25), "" (= 0:1)
 *   ll_segment_format         "1/4:1/2" (k6's String)
 *   ll_segment_equal          same start and end
 *   ll_segment_length         the segment's length as a double (k6's FloatLength)
 *   ll_segment_scale          k6's ExecutionSegment.Scale: this segment's part of value
 *   ll_segment_seq_parse      "0,1/4,1/2,1" (points strictly increasing, within [0,1])
 *   ll_segment_seq_format     "0,1/4,1/2,1" (k6's String)
 *   ll_segment_seq_free       frees a parsed sequence's segments
 *   ll_segment_parse_shard    "i/N": the i-th of N equal segments and their sequence
 *   ll_segment_tuple_init     k6's NewExecutionTuple: segment + sequence + striping
 *   ll_segment_tuple_free     frees what ll_segment_tuple_init allocated
 *   ll_segment_tuple_scale    k6's ExecutionTuple.ScaleInt64: this segment's part of value
 *   ll_segment_tuple_scale_at the same for the sequence's i-th segment
 *   ll_segment_tuple_offsets  k6's GetStripedOffsets: start, offsets, lcd
 *   ll_segment_tuple_owns     whether a global index belongs to this segment
 *   ll_segment_tuple_local    a global index's position among this segment's, or -1
 *   ll_segment_tuple_global   this segment's k-th global index (k6's SegmentedIndex)
 *   ll_segment_tuple_rescale  k6's GetNewExecutionTupleFromValue
 */
#ifndef LL_SEGMENT_H
#define LL_SEGMENT_H

#include <stddef.h>
#include <stdint.h>

/* An exact fraction: den > 0, num/den in lowest terms. */
typedef struct ll_segment_rat {
    int64_t num, den;
} ll_segment_rat;

/* The part (from, to] of the work, 0 <= from < to <= 1. */
typedef struct ll_segment {
    ll_segment_rat from, to;
} ll_segment;

/* Consecutive segments, each starting where the one before ends; n == 0
 * when no sequence was given. items is malloc'd. */
typedef struct ll_segment_seq {
    ll_segment *items;
    int n;
} ll_segment_seq;

/* A segment within its sequence, filled to run from 0 to 1 (k6's
 * ExecutionTuple with its ExecutionSegmentSequenceWrapper). Every lcd
 * consecutive global indexes, the i-th segment of seq owns the positions
 * pos[first[i]] .. pos[first[i + 1] - 1] of them (ascending, relative to the
 * cycle's start). Read it through the functions below. */
typedef struct ll_segment_tuple {
    ll_segment_seq seq;     /* the filled sequence, owned */
    int index;              /* this segment's position in seq */
    int64_t lcd;            /* least common denominator of the lengths */
    int64_t *first;         /* seq.n + 1 entries */
    int64_t *pos;           /* lcd entries */
    int64_t *offsets;       /* this segment's k6 offsets: first[index + 1] - first[index] entries */
} ll_segment_tuple;

/* num/den in lowest terms with a positive denominator. Returns 0, or -1 when
 * den is 0 or the result does not fit int64. */
int ll_segment_rat_make(int64_t num, int64_t den, ll_segment_rat *out);

/* Compares a and b exactly: -1, 0 or 1. */
int ll_segment_rat_cmp(ll_segment_rat a, ll_segment_rat b);

/* Writes "num/den", or "num" when den is 1 (48 bytes always suffice). */
void ll_segment_rat_format(ll_segment_rat r, char *buf, size_t len);

/* k6's NewExecutionSegmentFromString: "a:b", or "b" alone for 0:b, or ""
 * for 0:1. Each side is a fraction ("1/4"), a decimal ("0.25", "2.5e-1") or
 * a whole percentage ("25%"). Returns 0, or -1 with a message in err that
 * names what s came from (NULL: "--execution-segment"), such as
 * `--execution-segment "1/2:1/4": the start (1/2) must be below the end (1/4)`. */
int ll_segment_parse(const char *s, const char *what, ll_segment *out, char *err, size_t errlen);

/* Writes "from:to" with k6's fractions ("1/4:1/2"); "0:1" for NULL (100
 * bytes always suffice). */
void ll_segment_format(const ll_segment *seg, char *buf, size_t len);

/* 1 when a and b have the same start and end (NULL is 0:1), else 0. */
int ll_segment_equal(const ll_segment *a, const ll_segment *b);

/* to - from as a double; 1.0 for NULL. */
double ll_segment_length(const ll_segment *seg);

/* k6's ExecutionSegment.Scale: round(value * to - round(value * from)),
 * rounding halves up. The parts of one sequence's segments add up to value,
 * but unlike ll_segment_tuple_scale a segment's part can shrink as value
 * grows. value itself for NULL. */
int64_t ll_segment_scale(const ll_segment *seg, int64_t value);

/* k6's NewExecutionSegmentSequenceFromString: at least two comma-separated
 * points (same syntax as ll_segment_parse's sides), strictly increasing,
 * from at least 0 to at most 1; it need not start at 0 or end at 1. ""
 * gives n == 0 (no sequence). Returns 0, or -1 with a message in err that
 * names what (NULL: "--execution-segment-sequence"). The caller frees out
 * with ll_segment_seq_free. */
int ll_segment_seq_parse(const char *s, const char *what, ll_segment_seq *out, char *err, size_t errlen);

/* Writes "p0,p1,...,pn" with k6's fractions; "" when n == 0. Truncated to len. */
void ll_segment_seq_format(const ll_segment_seq *seq, char *buf, size_t len);

/* Frees seq's segments and empties it. */
void ll_segment_seq_free(ll_segment_seq *seq);

/* "i/N" (whole numbers, 1 <= i <= N <= 10000000): seg = (i-1)/N:i/N and
 * seq = 0,1/N,...,1 (N equal parts). Returns 0, or -1 with a message in err
 * that names what (NULL: "shard"). The caller frees seq with
 * ll_segment_seq_free. */
int ll_segment_parse_shard(const char *s, const char *what, ll_segment *seg, ll_segment_seq *seq, char *err,
                           size_t errlen);

/* k6's NewExecutionTuple: fills seq to run from 0 to 1 (no sequence: 0:1
 * for a NULL or whole segment, else the segment with the gaps before and
 * after it), finds seg in it and stripes it. seg and seq may be NULL and
 * are copied. Returns 0, or -1 with a message in err when seg is not one of
 * seq's segments, when the lengths' common denominator is above 10000000,
 * or on out of memory. */
int ll_segment_tuple_init(ll_segment_tuple *t, const ll_segment *seg, const ll_segment_seq *seq, char *err,
                          size_t errlen);

/* Frees t's allocations and empties it. */
void ll_segment_tuple_free(ll_segment_tuple *t);

/* k6's ExecutionTuple.ScaleInt64: how many of the global indexes 0..value-1
 * belong to this segment. Never shrinks as value grows; the parts of all
 * the sequence's segments add up to value. */
int64_t ll_segment_tuple_scale(const ll_segment_tuple *t, int64_t value);

/* The same for the i-th segment of t->seq (k6's wrapper ScaleInt64). */
int64_t ll_segment_tuple_scale_at(const ll_segment_tuple *t, int i, int64_t value);

/* k6's GetStripedOffsets: *start is this segment's first global index,
 * *offsets the gaps from each of its indexes to the next, repeating every
 * *lcd global indexes. Returns the number of offsets. */
int64_t ll_segment_tuple_offsets(const ll_segment_tuple *t, int64_t *start, const int64_t **offsets, int64_t *lcd);

/* 1 when the global index g (0-based) belongs to this segment, else 0. */
int ll_segment_tuple_owns(const ll_segment_tuple *t, int64_t g);

/* This segment's local index (0-based) of the global index g, or -1 when g
 * is negative or another segment's. */
int64_t ll_segment_tuple_local(const ll_segment_tuple *t, int64_t g);

/* This segment's k-th (0-based) global index: what k6's SegmentedIndex.Next
 * returns as unscaled, minus 1. -1 for a negative k or on overflow. */
int64_t ll_segment_tuple_global(const ll_segment_tuple *t, int64_t k);

/* k6's GetNewExecutionTupleFromValue: the tuple for splitting value things
 * (VUs) exactly as ll_segment_tuple_scale does, each segment becoming
 * scale_at(i, value)/value long, the ones that get none left out. The
 * executors stripe their iterations by this tuple for maxVUs (arrival
 * rate) or vus (shared iterations). Returns 0, or -1 with a message in err
 * when value < 1 or this segment gets none of value. */
int ll_segment_tuple_rescale(const ll_segment_tuple *t, int64_t value, ll_segment_tuple *out, char *err,
                             size_t errlen);

#endif
