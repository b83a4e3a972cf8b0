/* duration.h -- parsing of durations ("1m30s", "250ms", "1.5h"). */
#ifndef LL_DURATION_H
#define LL_DURATION_H

#include <stddef.h>
#include <stdint.h>

/* The longest duration: what Go's time.Duration (k6's) holds, 2^63-1 ns
 * (about 292 years), in microseconds. Every duration of a run is at most
 * this, so that any of them in nanoseconds, added to the clock, fits in 64
 * bits. */
#define LL_DURATION_MAX_US 9223372036854775ull

/* Go/k6 syntax: one or more <number><unit> with units ns us µs ms s m h;
 * "0" alone is allowed without a unit. Returns 0 and sets *us (microseconds,
 * rounded down) or -1 when s is not a duration or is longer than
 * LL_DURATION_MAX_US (Go: "invalid duration"). */
int ll_duration_parse(const char *s, uint64_t *us);

/* A duration given as a number of milliseconds (k6 takes numbers so):
 * 0 and *us, or -1 when ms is negative, not a number or longer than
 * LL_DURATION_MAX_US. */
int ll_duration_from_ms(double ms, uint64_t *us);

/* a + b, or LL_DURATION_MAX_US + 1 when the sum is past LL_DURATION_MAX_US
 * (sums of durations: a scenario's end). */
uint64_t ll_duration_add(uint64_t a, uint64_t b);

/* Formats us as Go's time.Duration prints it, as k6 shows durations:
 * "0s", "250ms", "1.5s", "1m30s", "10m0s", "1h0m0s". */
void ll_duration_format(uint64_t us, char *buf, size_t len);

/* Parses a non-negative integer that fits in int64 (decimal, no sign, no
 * suffix). Returns 0 or -1. */
int ll_duration_parse_int(const char *s, int64_t *out);

#endif
