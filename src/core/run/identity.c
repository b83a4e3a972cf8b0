/* identity.c -- the description of one part of a test for the hdrlog
 * sidecar (see identity.h). */
#include "identity.h"

#include <cJSON.h>
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"

int ll_identity_sha256_file(const char *path, char hex[65], char *err, size_t errlen) {
    ll_buf text = {0};
    if (ll_buf_read_file(&text, path) != 0) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        ll_buf_free(&text);
        return -1;
    }
    unsigned char d[32];
    unsigned int n = 0;
    int ok = EVP_Digest(text.p ? text.p : "", text.len, d, &n, EVP_sha256(), NULL) == 1 && n == 32;
    ll_buf_free(&text);
    if (!ok) {
        snprintf(err, errlen, "cannot hash %s", path);
        return -1;
    }
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
    return 0;
}

cJSON *ll_identity_json(const ll_config *cfg, const char *target, const char *whole_options, char *err,
                        size_t errlen) {
    cJSON *o = cJSON_CreateObject();
    cJSON *script = cJSON_AddObjectToObject(o, "script");
    if (!cfg->script_path && target) {
        cJSON_AddStringToObject(script, "url", target);
    } else if (cfg->script_path) {
        char hex[65];
        if (ll_identity_sha256_file(cfg->script_path, hex, err, errlen) != 0) {
            cJSON_Delete(o);
            return NULL;
        }
        cJSON_AddStringToObject(script, "path", cfg->script_path);
        cJSON_AddStringToObject(script, "sha256", hex);
    }
    cJSON *opts = cJSON_Parse(whole_options ? whole_options : "{}");
    cJSON_AddItemToObject(o, "options", opts ? opts : cJSON_CreateObject());
    char buf[4096];
    ll_segment_format(cfg->dist.segment_set ? &cfg->dist.segment : &(ll_segment){{0, 1}, {1, 1}}, buf, sizeof(buf));
    cJSON_AddStringToObject(o, "segment", buf);
    buf[0] = 0;
    if (cfg->dist.sequence.n) ll_segment_seq_format(&cfg->dist.sequence, buf, sizeof(buf));
    cJSON_AddStringToObject(o, "sequence", buf);
    if (!cJSON_GetObjectItem(o, "sequence")) {
        snprintf(err, errlen, "out of memory");
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}
