/* convert_cmd.c -- `luaload convert FILE [-o SCRIPT] [flags]`: the flags
 * and their checks; src/core/convert reads FILE and writes the script.
 *
 * Owns: the convert command's flag table, usage and parsing. */
#include "convert_cmd.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "convert.h"
#include "exit.h"

static const ll_flag CONVERT_FLAGS[] = {
    {"-o", "--output", NULL, "FILE", "@file", "write the script to FILE (default: stdout); recorded binary bodies go beside it"},
    {NULL, "--base-url", NULL, "URL", NULL, "OpenAPI/Swagger: the base URL of the requests (default: the spec's first server)"},
    {NULL, "--tags", NULL, "TAGS", NULL, "OpenAPI/Swagger: only the operations with one of these tags (comma-separated)"},
    {NULL, "--only-domains", NULL, "HOSTS", NULL, "HAR: only the requests to these hosts (comma-separated)"},
    {NULL, "--skip-static", NULL, NULL, NULL, "HAR: drop requests for images, style sheets, scripts, fonts and media"},
    {NULL, "--no-think-time", NULL, NULL, NULL, "HAR: no sleeps for the gaps between the recorded requests"},
    {"-f", "--force", NULL, NULL, NULL, "overwrite the output file if it exists"},
    {"-h", "--help", NULL, NULL, NULL, "show this help"},
};

const ll_flag_group ll_convert_cmd_flag_groups[1] = {
    {NULL, CONVERT_FLAGS, (int)(sizeof(CONVERT_FLAGS) / sizeof(CONVERT_FLAGS[0]))}};

static void usage(FILE *f) {
    fputs("usage: luaload convert FILE [-o SCRIPT.lua] [flags]\n"
          "writes a script from FILE: a HAR recording (HAR 1.2, as browsers export it), an OpenAPI 3.0/3.1\n"
          "or Swagger 2.0 description (JSON or YAML), or a Postman collection (v2.1, v2.0); the kind is found\n"
          "from the file's contents\n",
          f);
    ll_flag_usage(f, ll_convert_cmd_flag_groups, 1);
}

int ll_convert_cmd_main(int argc, char **argv) {
    ll_convert_opts o = {0};
    int force = 0;
    for (int i = 1; i < argc; i++) {
        char flag[64];
        const char *v = ll_flag_split(argv[i], flag, sizeof(flag));
        const ll_flag *f = argv[i][0] == '-' && argv[i][1] ? ll_flag_find(ll_convert_cmd_flag_groups, 1, flag) : NULL;
        if (argv[i][0] == '-' && argv[i][1] && !f)
            return ll_flag_unknown("convert", "flag", flag, ll_convert_cmd_flag_groups, 1);
        if (f && !f->arg && v) {
            fprintf(stderr, "luaload: convert: flag %s takes no value\n", flag);
            return LL_EXIT_CONFIG;
        }
        if (f && f->arg && !v) {
            if (i + 1 >= argc) {
                fprintf(stderr, "luaload: convert: flag %s needs a value\n", flag);
                return LL_EXIT_CONFIG;
            }
            v = argv[++i];
        }
        const char *name = f ? f->name : "";
        if (strcmp(name, "--help") == 0) {
            usage(stdout);
            return LL_EXIT_OK;
        } else if (strcmp(name, "--output") == 0) {
            o.output = v;
        } else if (strcmp(name, "--base-url") == 0) {
            o.base_url = v;
        } else if (strcmp(name, "--tags") == 0) {
            o.tags = v;
        } else if (strcmp(name, "--only-domains") == 0) {
            o.only_domains = v;
        } else if (strcmp(name, "--skip-static") == 0) {
            o.skip_static = 1;
        } else if (strcmp(name, "--no-think-time") == 0) {
            o.no_think_time = 1;
        } else if (strcmp(name, "--force") == 0) {
            force = 1;
        } else if (o.input) {
            fprintf(stderr, "luaload: convert: more than one file given: '%s'\n", argv[i]);
            return LL_EXIT_CONFIG;
        } else {
            o.input = argv[i];
        }
    }
    if (!o.input) {
        fprintf(stderr, "luaload: convert: expected a file to convert (luaload convert FILE [-o SCRIPT.lua])\n");
        return LL_EXIT_CONFIG;
    }
    struct stat st;
    if (o.output && !force && stat(o.output, &st) == 0) {
        fprintf(stderr, "luaload: convert: %s exists (--force to overwrite it)\n", o.output);
        return LL_EXIT_CONFIG;
    }
    char err[1024];
    if (ll_convert_file_run(&o, err, sizeof(err)) < 0) {
        fprintf(stderr, "luaload: convert: %s\n", err);
        return strstr(err, "cannot write") ? LL_EXIT_FAILURE : LL_EXIT_CONFIG;
    }
    if (o.output) fprintf(stderr, "wrote %s\n", o.output);
    return LL_EXIT_OK;
}
