/* output_text.h -- what the text sinks (json, csv) share to write a sample
 * in a few copies: the text of each tag set made once (tag sets are bounded,
 * tagset.h, so is this) and numbers without printf in the usual case. */
#ifndef LL_OUTPUT_TEXT_H
#define LL_OUTPUT_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

typedef struct ll_tagtext {
    ll_buf *texts; /* by tag set id; p NULL: not made yet */
    int n;
} ll_tagtext;

/* Set id's text, or NULL when it is not made yet. */
const ll_buf *ll_tagtext_get(const ll_tagtext *t, int id);
/* The empty text of set id (id >= 0), for the caller to fill. */
ll_buf *ll_tagtext_make(ll_tagtext *t, int id);
void ll_tagtext_free(ll_tagtext *t);

/* x, when it is a whole number of thousandths below 1e8 in size (every
 * time and count luaload records), into out (32 bytes): the shortest
 * decimals that read back as x ("12", "1.5", "0.123"), or six of them when
 * six is set (what "%.6f" prints). Returns the length, 0 for any other x
 * (the caller prints it with printf). */
size_t ll_text_milli(double x, int six, char *out);
/* v in decimal into out (21 bytes); returns the length. */
size_t ll_text_int(int64_t v, char *out);

#endif
