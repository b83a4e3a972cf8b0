/* convert.c -- `luaload convert`'s whole run (see convert.h): read the
 * input, find its kind, hand it to its converter, write the script and
 * the files beside it.
 *
 * Owns: kind detection, ll_convert_out and writing the output. */
#include "convert.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert_doc.h"
#include "xmalloc.h"

ll_convert_kind ll_convert_detect(const cJSON *doc) {
    if (!cJSON_IsObject(doc)) return LL_CONVERT_UNKNOWN;
    const cJSON *log = cJSON_GetObjectItemCaseSensitive(doc, "log");
    if (cJSON_IsObject(log) && cJSON_GetObjectItemCaseSensitive(log, "entries")) return LL_CONVERT_HAR;
    if (cJSON_GetObjectItemCaseSensitive(doc, "openapi") || cJSON_GetObjectItemCaseSensitive(doc, "swagger"))
        return LL_CONVERT_OPENAPI;
    const cJSON *info = cJSON_GetObjectItemCaseSensitive(doc, "info");
    if (cJSON_IsObject(info) && cJSON_GetObjectItemCaseSensitive(info, "schema") &&
        cJSON_GetObjectItemCaseSensitive(doc, "item"))
        return LL_CONVERT_POSTMAN;
    /* Postman's v1 (a "requests" list, folders by "order"): refused by its converter by name */
    if (cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(doc, "requests")) &&
        (cJSON_GetObjectItemCaseSensitive(doc, "order") || cJSON_GetObjectItemCaseSensitive(doc, "folders")))
        return LL_CONVERT_POSTMAN;
    return LL_CONVERT_UNKNOWN;
}

const char *ll_convert_out_file(ll_convert_out *out, const char *hint, const void *data, size_t len) {
    char name[256];
    const char *dot = strrchr(hint, '.');
    size_t stem = dot && dot != hint ? (size_t)(dot - hint) : strlen(hint);
    snprintf(name, sizeof(name), "%s", hint);
    for (int k = 2;; k++) {
        int taken = 0;
        for (int i = 0; i < out->nfiles && !taken; i++) taken = strcmp(out->files[i].name, name) == 0;
        if (!taken) break;
        snprintf(name, sizeof(name), "%.*s-%d%s", (int)(stem > 200 ? 200 : stem), hint, k, dot && dot != hint ? dot : "");
    }
    ll_xgrow((void **)&out->files, &out->cap, out->nfiles + 1, sizeof(ll_convert_file));
    ll_convert_file *f = &out->files[out->nfiles++];
    memset(f, 0, sizeof(*f));
    f->name = ll_xstrdup(name);
    ll_buf_append(&f->data, data, len);
    return f->name;
}

void ll_convert_out_free(ll_convert_out *out) {
    ll_buf_free(&out->script);
    for (int i = 0; i < out->nfiles; i++) {
        free(out->files[i].name);
        ll_buf_free(&out->files[i].data);
    }
    free(out->files);
    memset(out, 0, sizeof(*out));
}

/* Writes n bytes of p to path. 0, or -1 with err. */
static int write_whole(const char *path, const void *p, size_t n, char *err, size_t errlen) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* The script to o->output or stdout, its files in the output's folder
 * (the current one for stdout). */
static int write_out(const ll_convert_opts *o, const ll_convert_out *out, char *err, size_t errlen) {
    if (out->script.failed) {
        snprintf(err, errlen, "%s: out of memory", o->input);
        return -1;
    }
    const char *slash = o->output ? strrchr(o->output, '/') : NULL;
    for (int i = 0; i < out->nfiles; i++) {
        char path[4096];
        snprintf(path, sizeof(path), "%.*s%s", slash ? (int)(slash - o->output + 1) : 0, o->output ? o->output : "",
                 out->files[i].name);
        if (write_whole(path, out->files[i].data.p, out->files[i].data.len, err, errlen) < 0) return -1;
    }
    if (o->output) return write_whole(o->output, out->script.p, out->script.len, err, errlen);
    if (fwrite(out->script.p, 1, out->script.len, stdout) != out->script.len || fflush(stdout) != 0) {
        snprintf(err, errlen, "stdout: cannot write: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int ll_convert_file_run(const ll_convert_opts *o, char *err, size_t errlen) {
    ll_buf text = {0};
    if (ll_buf_read_file(&text, o->input) < 0) {
        snprintf(err, errlen, "%s: cannot read: %s", o->input, strerror(errno));
        ll_buf_free(&text);
        return -1;
    }
    cJSON *doc = ll_convert_doc_parse(o->input, text.p ? text.p : "", text.len, err, errlen);
    ll_buf_free(&text);
    if (!doc) return -1;
    ll_convert_out out = {0};
    int rc = -1;
    switch (ll_convert_detect(doc)) {
    case LL_CONVERT_HAR: rc = ll_convert_har(doc, o, &out, err, errlen); break;
    case LL_CONVERT_OPENAPI: rc = ll_convert_openapi(doc, o, &out, err, errlen); break;
    case LL_CONVERT_POSTMAN: rc = ll_convert_postman(doc, o, &out, err, errlen); break;
    default:
        snprintf(err, errlen,
                 "%s: not a HAR file (log.entries), an OpenAPI or Swagger description (openapi, swagger) "
                 "or a Postman collection (info.schema, item)",
                 o->input);
    }
    if (rc == 0) rc = write_out(o, &out, err, errlen);
    ll_convert_out_free(&out);
    cJSON_Delete(doc);
    return rc;
}
