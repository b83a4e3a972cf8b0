/* fuzz_check.h -- CHECK(cond) for the fuzz targets: abort with the file,
 * line and condition when cond is false. Not assert(): Release builds
 * define NDEBUG. */
#ifndef LL_FUZZ_CHECK_H
#define LL_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                 \
        }                                                                            \
    } while (0)

#endif
