/* main.c -- the luaload command: run, merge, k8s, serve, clear-cache, version. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "engine.h"
#include "jwt_cache.h"
#include "k8s.h"
#include "merge.h"
#include "serve.h"
#include "transport_curl.h"

static void usage(FILE *f) {
    fputs("usage: luaload <command> [flags]\n"
          "  run SCRIPT.lua | URL   run a load test (luaload run --help)\n"
          "  merge PART.hlog...     add up the parts of a split test (luaload merge --help)\n"
          "  k8s SCRIPT.lua -n N    Kubernetes manifests that run it in N parts (luaload k8s --help)\n"
          "  serve                  start the built-in target server (luaload serve --help)\n"
          "  clear-cache [DIR]      remove the JWT token cache (default ~/.cache/luaload/jwt)\n"
          "  version                print the version\n",
          f);
}

/* luaload clear-cache [DIR | --jwt-cache DIR] */
static int clear_cache(int argc, char **argv) {
    const char *dir = argc == 1 ? argv[0] : argc == 2 && strcmp(argv[0], "--jwt-cache") == 0 ? argv[1] : NULL;
    char def[4096], err[512];
    if (argc == 1 && (strcmp(argv[0], "-h") == 0 || strcmp(argv[0], "--help") == 0)) {
        puts("usage: luaload clear-cache [DIR | --jwt-cache DIR]: removes the JWT token cache's files\n"
             "(default $XDG_CACHE_HOME/luaload/jwt, else ~/.cache/luaload/jwt)");
        return LL_EXIT_OK;
    }
    if (argc > 2 || (argc > 0 && (!dir || dir[0] == '-'))) {
        fprintf(stderr, "luaload: clear-cache: expected no argument, a directory or --jwt-cache DIR\n");
        return LL_EXIT_CONFIG;
    }
    if (!dir && ll_jwt_cache_default_dir(def, sizeof(def)) == 0) dir = def;
    int n = ll_jwt_cache_clear(dir, err, sizeof(err));
    if (n < 0) fprintf(stderr, "luaload: clear-cache: %s\n", err);
    else if (n == 0) fprintf(stderr, "luaload: no JWT cache in %s\n", dir);
    else fprintf(stderr, "luaload: removed the JWT cache %s (%d files)\n", dir, n);
    return n < 0 ? LL_EXIT_FAILURE : LL_EXIT_OK;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return LL_EXIT_CONFIG;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "run") == 0) {
        ll_config cfg;
        int rc = ll_cli_parse_run(argc - 1, argv + 1, &cfg);
        if (rc == 0) rc = ll_engine_run(&cfg);
        else if (rc < 0) rc = LL_EXIT_OK;
        ll_config_free(&cfg);
        return rc;
    }
    if (strcmp(cmd, "merge") == 0) return ll_merge_main(argc - 1, argv + 1);
    if (strcmp(cmd, "k8s") == 0) return ll_k8s_main(argc - 1, argv + 1);
    if (strcmp(cmd, "serve") == 0) return ll_serve_main(argc - 1, argv + 1);
    if (strcmp(cmd, "clear-cache") == 0) return clear_cache(argc - 2, argv + 2);
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("luaload %s (%s)\n", LUALOAD_VERSION, ll_transport_curl_version());
        return LL_EXIT_OK;
    }
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return LL_EXIT_OK;
    }
    fprintf(stderr, "luaload: unknown command '%s'\n", cmd);
    usage(stderr);
    return LL_EXIT_CONFIG;
}
