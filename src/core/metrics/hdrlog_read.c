/* hdrlog_read.c -- `--out hdrlog` read back: the sidecar checked to be
 * luaload's, the interval log's lines (Tag=TAG,START,LENGTH,MAX,HISTFAAA...)
 * parsed and decoded (hdr_codec.c). output_hdrlog.c writes both. */
#include "hdrlog_read.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "hdr_codec.h"
#include "output_hdrlog.h"

cJSON *ll_hdrlog_read_sidecar(const char *path, char *err, size_t errlen) {
    ll_buf text = {0};
    if (ll_buf_read_file(&text, path) != 0) {
        snprintf(err, errlen, "%s: %s (each part is --out hdrlog=FILE and FILE.json beside it)", path,
                 strerror(errno));
        ll_buf_free(&text);
        return NULL;
    }
    cJSON *side = cJSON_Parse(text.p ? text.p : "");
    ll_buf_free(&text);
    const cJSON *format = cJSON_GetObjectItemCaseSensitive(side, "format");
    if (!cJSON_IsString(format) || strcmp(format->valuestring, LL_HDRLOG_FORMAT) != 0) {
        snprintf(err, errlen, "%s: not a sidecar of luaload's --out hdrlog (expected \"format\": \"%s\")", path,
                 LL_HDRLOG_FORMAT);
        cJSON_Delete(side);
        return NULL;
    }
    return side;
}

int ll_hdrlog_read(const char *path, const ll_histogram *like, const char *tags_from, ll_hdrlog_tag_fn *tag,
                   ll_hdrlog_line_fn *fn, void *ud, char *err, size_t errlen) {
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = 0, lineno = 0;
    while (!rc && (len = getline(&line, &cap, f)) > 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        if (len == 0 || line[0] == '#' || line[0] == '"') continue;
        char *comma = strncmp(line, "Tag=", 4) == 0 ? strchr(line, ',') : NULL;
        char *b64 = strrchr(line, ',');
        ll_hdrlog_line iv = {-1, 0, 0, NULL, NULL};
        char why[300];
        if (comma) iv.id = tag(ud, line + 4, (size_t)(comma - line - 4));
        if (!comma || iv.id < 0 || sscanf(comma + 1, "%lf,%lf", &iv.start_s, &iv.len_s) != 2) {
            snprintf(err, errlen, "%s:%d: expected Tag=TAG,START,LENGTH,MAX,HISTFAAA... with a tag of %s", path,
                     lineno, tags_from);
            rc = -1;
            break;
        }
        ll_histogram *h = ll_hdr_codec_decode(b64 + 1, strlen(b64 + 1), like, why, sizeof(why));
        if (!h) {
            snprintf(err, errlen, "%s:%d: %s", path, lineno, why);
            rc = -1;
            break;
        }
        iv.h = h;
        iv.b64 = b64 + 1;
        rc = fn(ud, &iv);
        ll_histogram_free(h);
    }
    if (!rc && ferror(f)) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        rc = -1;
    }
    free(line);
    fclose(f);
    return rc;
}
