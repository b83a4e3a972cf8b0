/* size.h -- parsing of byte sizes ("4096", "64k", "512MiB", "1GB"). */
#ifndef LL_SIZE_H
#define LL_SIZE_H

#include <stdint.h>

/* A decimal integer, optionally followed by a unit: k, K, KB, KiB (1024),
 * m, M, MB, MiB (1024^2), g, G, GB, GiB (1024^3). Returns 0 and sets *out,
 * or -1 when s is not such a size or does not fit in 63 bits. */
int ll_size_parse(const char *s, int64_t *out);

#endif
