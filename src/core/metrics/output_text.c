/* output_text.c -- tag set texts and numbers for the text sinks (see
 * output_text.h). */
#include "output_text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

const ll_buf *ll_tagtext_get(const ll_tagtext *t, int id) {
    return id >= 0 && id < t->n && t->texts[id].p ? &t->texts[id] : NULL;
}

ll_buf *ll_tagtext_make(ll_tagtext *t, int id) {
    if (id >= t->n) {
        int n = id + 256;
        t->texts = ll_xrealloc(t->texts, (size_t)n * sizeof(*t->texts));
        memset(t->texts + t->n, 0, (size_t)(n - t->n) * sizeof(*t->texts));
        t->n = n;
    }
    ll_buf *b = &t->texts[id];
    b->len = 0;
    ll_buf_reserve(b, 64); /* made, even while empty */
    return b;
}

void ll_tagtext_free(ll_tagtext *t) {
    for (int i = 0; i < t->n; i++) ll_buf_free(&t->texts[i]);
    free(t->texts);
    memset(t, 0, sizeof(*t));
}

size_t ll_text_int(int64_t v, char *out) {
    char tmp[24];
    int n = 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do tmp[n++] = (char)('0' + u % 10);
    while (u /= 10);
    size_t len = 0;
    if (v < 0) out[len++] = '-';
    while (n) out[len++] = tmp[--n];
    out[len] = 0;
    return len;
}

size_t ll_text_milli(double x, int six, char *out) {
    if (!(fabs(x) < 1e8)) return 0; /* NaN too */
    double r = nearbyint(x * 1000.0);
    /* x is the double nearest k/1000: k/1000 in decimal reads back as x, and
     * below 1e8 rounding x to six decimals gives k/1000 too */
    if ((double)(int64_t)r / 1000.0 != x) return 0;
    int64_t k = (int64_t)r;
    size_t len = 0;
    if (k < 0) {
        out[len++] = '-';
        k = -k;
    }
    len += ll_text_int(k / 1000, out + len);
    int frac = (int)(k % 1000), digits = 3;
    if (!six) {
        for (; digits && frac % 10 == 0; digits--) frac /= 10;
        if (!digits) return len;
    }
    out[len++] = '.';
    for (int i = digits - 1; i >= 0; i--, frac /= 10) out[len + (size_t)i] = (char)('0' + frac % 10);
    len += (size_t)digits;
    if (six) {
        memcpy(out + len, "000", 3);
        len += 3;
    }
    out[len] = 0;
    return len;
}
