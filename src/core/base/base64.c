/* base64.c -- standard base64 (RFC 4648, with padding): an encoder, and a
 * strict decoder for text that comes from outside (see base64.h). */
#include "base64.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "xmalloc.h"
#include "errmsg.h"

static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *ll_base64_encode(const void *data, size_t n, size_t *outlen) {
    const uint8_t *p = data;
    char *out = ll_xmalloc((n + 2) / 3 * 4 + 1), *o = out;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n) v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n) v |= p[i + 2];
        *o++ = chars[v >> 18];
        *o++ = chars[(v >> 12) & 63];
        *o++ = i + 1 < n ? chars[(v >> 6) & 63] : '=';
        *o++ = i + 2 < n ? chars[v & 63] : '=';
    }
    *o = '\0';
    if (outlen) *outlen = (size_t)(o - out);
    return out;
}

static int digit(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

uint8_t *ll_base64_decode(const char *s, size_t len, size_t *outlen, char *err, size_t errlen) {
    if (len == 0 || len % 4 != 0) {
        ll_errmsg(err, errlen, "base64 length %zu is not a positive multiple of 4", len);
        return NULL;
    }
    size_t pad = s[len - 1] == '=' ? (s[len - 2] == '=' ? 2 : 1) : 0;
    uint8_t *out = ll_xmalloc(len / 4 * 3), *o = out;
    for (size_t i = 0; i < len; i += 4) {
        uint32_t v = 0;
        for (size_t j = i; j < i + 4; j++) {
            int d = j >= len - pad ? 0 : digit(s[j]);
            if (d < 0) {
                ll_errmsg(err, errlen, "invalid base64 character at offset %zu", j);
                free(out);
                return NULL;
            }
            v = v << 6 | (uint32_t)d;
        }
        *o++ = (uint8_t)(v >> 16);
        *o++ = (uint8_t)(v >> 8);
        *o++ = (uint8_t)v;
    }
    if (pad && (out[len / 4 * 3 - pad] != 0)) { /* the bits after the last byte must be 0 */
        ll_errmsg(err, errlen, "base64 has stray bits before its padding");
        free(out);
        return NULL;
    }
    *outlen = len / 4 * 3 - pad;
    return out;
}
