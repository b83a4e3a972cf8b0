/* base64.h -- standard base64 with padding (RFC 4648). */
#ifndef LL_BASE64_H
#define LL_BASE64_H

#include <stddef.h>
#include <stdint.h>

/* n bytes as base64 text, NUL-terminated, malloc'd; *outlen (when not NULL)
 * gets its length. */
char *ll_base64_encode(const void *data, size_t n, size_t *outlen);

/* Strict: a length that is a multiple of 4, '=' only as the last one or two
 * characters (with zero bits before them), no whitespace. Returns malloc'd
 * bytes (*outlen of them), or NULL with a one-line reason in err. */
uint8_t *ll_base64_decode(const char *s, size_t len, size_t *outlen, char *err, size_t errlen);

#endif
