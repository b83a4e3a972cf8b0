/* duration.h -- parsing of durations ("1m30s", "250ms", "1.5h"). */
#ifndef LL_DURATION_H
#define LL_DURATION_H

#include <stddef.h>
#include <stdint.h>

/* Go/k6 syntax: one or more <number><unit> with units ns us µs ms s m h;
 * "0" alone is allowed without a unit. Returns 0 and sets *us (microseconds,
 * rounded down) or -1 when s is not a duration. */
int ll_duration_parse(const char *s, uint64_t *us);

/* Formats us as Go's time.Duration prints it, as k6 shows durations:
 * "0s", "250ms", "1.5s", "1m30s", "10m0s", "1h0m0s". */
void ll_duration_format(uint64_t us, char *buf, size_t len);

/* Parses a non-negative integer that fits in int64 (decimal, no sign, no
 * suffix). Returns 0 or -1. */
int ll_duration_parse_int(const char *s, int64_t *out);

#endif
