/* main.c -- the luaload command: run, serve, version. */
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "engine.h"
#include "serve.h"

static void usage(FILE *f) {
    fputs("usage: luaload <command> [flags]\n"
          "  run SCRIPT.lua | URL   run a load test (luaload run --help)\n"
          "  serve                  start the built-in target server (luaload serve --help)\n"
          "  version                print the version\n",
          f);
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
        if (rc == 0) {
            curl_global_init(CURL_GLOBAL_DEFAULT);
            rc = ll_engine_run(&cfg);
            curl_global_cleanup();
        } else if (rc < 0) {
            rc = 0;
        }
        ll_config_free(&cfg);
        return rc;
    }
    if (strcmp(cmd, "serve") == 0) return ll_serve_main(argc - 1, argv + 1);
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("luaload %s (%s)\n", LUALOAD_VERSION, curl_version());
        return 0;
    }
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "luaload: unknown command '%s'\n", cmd);
    usage(stderr);
    return LL_EXIT_CONFIG;
}
