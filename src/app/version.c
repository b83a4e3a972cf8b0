/* version.c -- `luaload version [--json]`: luaload's version and commit,
 * and the versions of what it runs on (LuaJIT, libcurl with its protocols
 * and features, OpenSSL, nghttp2, ngtcp2, nghttp3 and c-ares), read at run
 * time.
 *
 * Owns: the version command's flags and both of its formats. */
#include "version.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commit.h"
#include "exit.h"
#include "http_versions.h"
#include "lua_api.h"

static const ll_flag VERSION_FLAGS[] = {
    {NULL, "--json", NULL, NULL, NULL, "print it as one JSON object"},
    {"-h", "--help", NULL, NULL, NULL, "show this help"},
};

const ll_flag_group ll_version_flag_groups[1] = {
    {NULL, VERSION_FLAGS, (int)(sizeof(VERSION_FLAGS) / sizeof(VERSION_FLAGS[0]))}};

static cJSON *versions(void) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "luaload", LUALOAD_VERSION);
    cJSON_AddStringToObject(o, "commit", LUALOAD_COMMIT);
    const char *jit = ll_lua_luajit_version();
    cJSON_AddStringToObject(o, "luajit", strncmp(jit, "LuaJIT ", 7) == 0 ? jit + 7 : jit);
    ll_http_versions(o);
    return o;
}

static const char *str(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "none";
}

static void join(FILE *f, const cJSON *a) {
    const cJSON *v;
    int first = 1;
    cJSON_ArrayForEach(v, a) {
        fprintf(f, "%s%s", first ? "" : " ", v->valuestring);
        first = 0;
    }
    fputc('\n', f);
}

static void text(FILE *f, const cJSON *o) {
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "libcurl");
    fprintf(f, "luaload %s (commit %s)\n", str(o, "luaload"), str(o, "commit"));
    fprintf(f, "  LuaJIT    %s\n", str(o, "luajit"));
    fprintf(f, "  libcurl   %s (TLS: %s; QUIC: %s)\n", str(c, "version"), str(c, "ssl"), str(c, "quic"));
    fprintf(f, "            protocols: ");
    join(f, cJSON_GetObjectItemCaseSensitive(c, "protocols"));
    fprintf(f, "            features: ");
    join(f, cJSON_GetObjectItemCaseSensitive(c, "features"));
    fprintf(f, "  OpenSSL   %s\n", str(o, "openssl"));
    fprintf(f, "  nghttp2   %s\n", str(o, "nghttp2"));
    fprintf(f, "  ngtcp2    %s\n", str(c, "ngtcp2"));
    fprintf(f, "  nghttp3   %s\n", str(c, "nghttp3"));
    fprintf(f, "  c-ares    %s\n", str(o, "c-ares"));
}

int ll_version_main(int argc, char **argv) {
    int json = 0;
    for (int i = 1; i < argc; i++) {
        const ll_flag *f = ll_flag_find(ll_version_flag_groups, 1, argv[i]);
        if (f && strcmp(f->name, "--json") == 0) {
            json = 1;
        } else if (f) {
            puts("usage: luaload version [--json]: luaload's version and commit, and its libraries'");
            ll_flag_usage(stdout, ll_version_flag_groups, 1);
            return LL_EXIT_OK;
        } else {
            return ll_flag_unknown("version", "argument", argv[i], ll_version_flag_groups, 1);
        }
    }
    cJSON *o = versions();
    if (json) {
        char *s = cJSON_PrintUnformatted(o);
        puts(s ? s : "{}");
        free(s);
    } else {
        text(stdout, o);
    }
    cJSON_Delete(o);
    return LL_EXIT_OK;
}
