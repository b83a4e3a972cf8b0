/* main.c -- the luaload command: run, serve, version. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "engine.h"
#include "serve.h"
#include "transport_curl.h"

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
        if (rc == 0) rc = ll_engine_run(&cfg);
        else if (rc < 0) rc = LL_EXIT_OK;
        ll_config_free(&cfg);
        return rc;
    }
    if (strcmp(cmd, "serve") == 0) return ll_serve_main(argc - 1, argv + 1);
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
