/* new.c -- `luaload new [FILE] [--template NAME] [--force]`: a commented,
 * runnable script from a template (templates/NAME.lua, built in by
 * cmake/embed.cmake), and a .luarc.json beside it that points
 * lua-language-server at the shipped annotations (lib/lua/meta).
 *
 * Owns: the template table, the new command's flags, writing the two
 * files (never over an existing script without --force; an existing
 * .luarc.json is kept). */
#include "new.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "buf.h"
#include "engine.h"
#include "exit.h"

extern const char ll_template_minimal[], ll_template_protocols[], ll_template_upload[], ll_template_ci[];

static const struct {
    const char *name;
    const char *text;
    const char *what;
} TEMPLATES[] = {
    {"minimal", ll_template_minimal, "GET a page, a check, two thresholds"},
    {"protocols", ll_template_protocols, "a Client for HTTP/1.1, HTTP/2 or HTTP/3, prepared requests, batch"},
    {"upload", ll_template_upload, "a multipart form and a file streamed from disk, checked by digest"},
    {"ci", ll_template_ci, "an arrival-rate scenario whose thresholds gate CI, handle_summary to a file"},
};
#define NTEMPLATES (int)(sizeof(TEMPLATES) / sizeof(TEMPLATES[0]))

static const ll_flag NEW_FLAGS[] = {
    {"-t", "--template", NULL, "NAME", "minimal protocols upload ci",
     "the kind of script: minimal (default), protocols, upload or ci"},
    {"-f", "--force", NULL, NULL, NULL, "overwrite FILE if it exists"},
    {"-h", "--help", NULL, NULL, NULL, "show this help"},
};

const ll_flag_group ll_new_flag_groups[1] = {{NULL, NEW_FLAGS, (int)(sizeof(NEW_FLAGS) / sizeof(NEW_FLAGS[0]))}};

static void usage(FILE *f) {
    fputs("usage: luaload new [FILE] [--template NAME] [--force]\n"
          "writes FILE (default script.lua), a commented script that runs against luaload serve\n"
          "(the target from -e BASE_URL=...), and .luarc.json beside it for editor completion\n",
          f);
    ll_flag_usage(f, ll_new_flag_groups, 1);
    fputs("\ntemplates:\n", f);
    for (int i = 0; i < NTEMPLATES; i++) fprintf(f, "  %-24s  %s\n", TEMPLATES[i].name, TEMPLATES[i].what);
}

/* text with every @NAME@ replaced by name, into out. */
static void fill(ll_buf *out, const char *text, const char *name) {
    const char *at;
    while ((at = strstr(text, "@NAME@"))) {
        ll_buf_append(out, text, (size_t)(at - text));
        ll_buf_puts(out, name);
        text = at + 6;
    }
    ll_buf_puts(out, text);
}

static int write_file(const char *path, const char *text, size_t len, int exclusive) {
    FILE *f = fopen(path, exclusive ? "wx" : "w");
    if (!f) return -1;
    int ok = fwrite(text, 1, len, f) == len;
    if (fclose(f) != 0) ok = 0;
    return ok ? 0 : -1;
}

/* .luarc.json in dir: the annotations' folder as a library, LuaJIT as the
 * runtime. 1 when written, 0 when one was there, -1 on error. */
static int write_luarc(const char *dir) {
    char path[4200], libbuf[4200], meta[4300], real[4096];
    snprintf(path, sizeof(path), "%s/.luarc.json", dir);
    struct stat st;
    if (stat(path, &st) == 0) return 0;
    const char *lib = ll_engine_lib_dir(libbuf, sizeof(libbuf));
    snprintf(meta, sizeof(meta), "%s/meta", realpath(lib, real) ? real : lib);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "runtime.version", "LuaJIT");
    cJSON *libs = cJSON_AddArrayToObject(o, "workspace.library");
    cJSON_AddItemToArray(libs, cJSON_CreateString(meta));
    cJSON_AddBoolToObject(o, "workspace.checkThirdParty", 0);
    char *json = cJSON_Print(o);
    cJSON_Delete(o);
    ll_buf text = {0};
    ll_buf_puts(&text, json ? json : "");
    ll_buf_puts(&text, "\n");
    int rc = json ? write_file(path, text.p, text.len, 1) : -1;
    free(json);
    ll_buf_free(&text);
    return rc ? -1 : 1;
}

int ll_new_main(int argc, char **argv) {
    const char *file = NULL, *tmpl = "minimal";
    int force = 0;
    for (int i = 1; i < argc; i++) {
        char flag[64];
        const char *v = ll_flag_split(argv[i], flag, sizeof(flag));
        const ll_flag *f = argv[i][0] == '-' && argv[i][1] ? ll_flag_find(ll_new_flag_groups, 1, flag) : NULL;
        if (argv[i][0] == '-' && argv[i][1] && !f) return ll_flag_unknown("new", "flag", flag, ll_new_flag_groups, 1);
        if (f && !f->arg && v) {
            fprintf(stderr, "luaload: new: flag %s takes no value\n", flag);
            return LL_EXIT_CONFIG;
        }
        if (f && f->arg && !v) {
            if (i + 1 >= argc) {
                fprintf(stderr, "luaload: new: flag %s needs a value\n", flag);
                return LL_EXIT_CONFIG;
            }
            v = argv[++i];
        }
        if (f && strcmp(f->name, "--help") == 0) {
            usage(stdout);
            return LL_EXIT_OK;
        } else if (f && strcmp(f->name, "--template") == 0) {
            tmpl = v;
        } else if (f && strcmp(f->name, "--force") == 0) {
            force = 1;
        } else if (file) {
            fprintf(stderr, "luaload: new: more than one file given: '%s'\n", argv[i]);
            return LL_EXIT_CONFIG;
        } else {
            file = argv[i];
        }
    }
    int t = 0;
    while (t < NTEMPLATES && strcmp(TEMPLATES[t].name, tmpl) != 0) t++;
    if (t == NTEMPLATES) {
        fprintf(stderr, "luaload: new: invalid value for --template: '%s' (expected minimal, protocols, upload or ci)\n",
                tmpl);
        return LL_EXIT_CONFIG;
    }
    if (!file) file = "script.lua";
    struct stat st;
    if (!force && stat(file, &st) == 0) {
        fprintf(stderr, "luaload: new: %s exists (--force to overwrite it)\n", file);
        return LL_EXIT_CONFIG;
    }
    const char *slash = strrchr(file, '/');
    ll_buf text = {0};
    fill(&text, TEMPLATES[t].text, slash ? slash + 1 : file);
    int rc = write_file(file, text.p, text.len, !force);
    ll_buf_free(&text);
    if (rc) {
        fprintf(stderr, "luaload: new: cannot write %s: %s\n", file, strerror(errno));
        return LL_EXIT_FAILURE;
    }
    char dir[4096];
    snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - file) : 1, slash ? file : ".");
    if (slash == file) snprintf(dir, sizeof(dir), "/");
    int lrc = write_luarc(dir);
    if (lrc < 0) fprintf(stderr, "luaload: new: cannot write %s/.luarc.json: %s\n", dir, strerror(errno));
    printf("wrote %s (the %s template)%s%s%s\nrun it: luaload serve --port 8080 & luaload run %s\n", file,
           TEMPLATES[t].name, lrc > 0 ? " and " : "", lrc > 0 ? dir : "", lrc > 0 ? "/.luarc.json" : "", file);
    return lrc < 0 ? LL_EXIT_FAILURE : LL_EXIT_OK;
}
