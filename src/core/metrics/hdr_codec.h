/* hdr_codec.h -- HdrHistogram's "V2 compressed" encoding of an ll_histogram,
 * the base64 text of one interval in an HdrHistogram log (format 1.2), as
 * Java's HistogramLogWriter writes it and HistogramLogReader reads it.
 *
 * Only the counts and the lowest/highest/sig_digits parameters travel; the
 * exact min/max/sum an ll_histogram keeps do not. A decoded (or subtracted)
 * histogram therefore gets them from its counts:
 *   min = lowest value equivalent to the first non-empty slot (INT64_MAX if empty)
 *   max = highest value equivalent to the last non-empty slot (0 if empty)
 *   sum = sum of count * median equivalent value of each slot (0 if empty)
 * as Java's getMinValue/getMaxValue/getMean see them. Callers that know the
 * exact values overwrite these fields. */
#ifndef LL_HDR_CODEC_H
#define LL_HDR_CODEC_H

#include <stddef.h>
#include "histogram.h"

/* The base64 text (it starts with "HISTF"), NUL-terminated, malloc'd; free()
 * it. NULL only if zlib fails. */
char *ll_hdr_codec_encode(const ll_histogram *h);

/* Parses len bytes of base64 (no NUL needed, no whitespace allowed) holding a
 * compressed V2 histogram. With like, a histogram of another layout (lowest,
 * highest, significant digits) is refused before anything is allocated for
 * it. NULL with a one-line message in err on any bad input; never reads
 * outside b64[0..len). Free the result with ll_histogram_free. */
ll_histogram *ll_hdr_codec_decode(const char *b64, size_t len, const ll_histogram *like, char *err, size_t errlen);

/* dst = a - b slot by slot (a cumulative snapshot minus an earlier one); dst
 * may be a or b. -1, dst untouched, if the three differ in lowest/highest/
 * sig_digits or a slot of b exceeds a's. total_count, min and max follow
 * the counts (as above); sum = a->sum - b->sum. */
int ll_hdr_codec_subtract(ll_histogram *dst, const ll_histogram *a, const ll_histogram *b);

#endif
