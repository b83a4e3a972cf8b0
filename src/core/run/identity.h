/* identity.h -- what one part of a (possibly split) test is, as the
 * hdrlog sidecar records it and `luaload merge` compares it: the script
 * (path and SHA-256 of its text, or the quick-mode URL), the whole test's
 * options before the split, and the execution segment and sequence. */
#ifndef LL_IDENTITY_H
#define LL_IDENTITY_H

#include <stddef.h>

#include "config.h"

typedef struct cJSON cJSON;

/* {"script":{"path","sha256"} | {"url"}, "options":{...}, "segment":"0:1/4",
 * "sequence":"0,1/4,...,1" or ""}: the path of cfg's script, or else the
 * url target (a mode's: quick mode's URL). whole_options is the options JSON taken
 * before the scenarios were split. NULL when out of memory or the script
 * cannot be read (err set). */
cJSON *ll_identity_json(const ll_config *cfg, const char *target, const char *whole_options, char *err,
                        size_t errlen);

/* The SHA-256 of path's bytes as 64 hex digits. 0, or -1 with err set. */
int ll_identity_sha256_file(const char *path, char hex[65], char *err, size_t errlen);

#endif
