/* body_compress.h -- request body compression, as k6's params.compression:
 * a body in memory replaced by its gzip, deflate (zlib), br or zstd
 * encoding (body_compress.c); and bytes compressed the same ways (gRPC's
 * compressed messages, grpc_wire.c). */
#ifndef LL_BODY_COMPRESS_H
#define LL_BODY_COMPRESS_H

#include "body.h"

typedef enum { LL_COMPRESS_NONE, LL_COMPRESS_GZIP, LL_COMPRESS_DEFLATE, LL_COMPRESS_BR, LL_COMPRESS_ZSTD } ll_compress;

/* The algorithm called name ("gzip", "deflate", "br", "zstd"), or -1. */
int ll_compress_parse(const char *name);
/* The Content-Encoding value of algo ("gzip", "deflate", "br", "zstd"). */
const char *ll_compress_name(int algo);
/* The n bytes at in encoded by algo (not NONE) into *out (malloc'd,
 * *outlen bytes). Returns 0, or -1 with a message in err. */
int ll_compress_bytes(const char *in, size_t n, int algo, char **out, size_t *outlen, char *err, size_t errlen);
/* Replaces the memory body b with its encoding by algo. Returns 0, or -1
 * with a message in err (b not a memory body, or the library failed, or
 * out of memory); b is unchanged then. */
int ll_body_compress(ll_body *b, int algo, char *err, size_t errlen);

#endif
