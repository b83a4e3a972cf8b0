/* commands.c -- the luaload command: its table of commands, each with the
 * flag tables its parser uses (cli.c, quick.c, k8s.c, serve.c, new.c,
 * version.c), and what is made from that table: the top-level usage,
 * `luaload help [COMMAND]`, the nearest command to a mistyped one,
 * `luaload completion bash|zsh|fish` and the command reference
 * (`luaload help --markdown`, docs/commands.md), so none of them can drift
 * from what the parsers accept.
 *
 * Owns: the command table, the run, merge and inspect entry points, help,
 * completion scripts and the Markdown reference. */
#include "commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "convert_cmd.h"
#include "engine.h"
#include "exit.h"
#include "jwt_cache.h"
#include "k8s.h"
#include "lua_api.h"
#include "merge.h"
#include "new.h"
#include "quick_mode.h"
#include "serve.h"
#include "version.h"
#include "xmalloc.h"

static int run_main(int argc, char **argv);
static int inspect_main(int argc, char **argv);
static int help_main(int argc, char **argv);
static int completion_main(int argc, char **argv);
static int clear_cache_main(int argc, char **argv);
static int merge_main(int argc, char **argv);

static const ll_flag INSPECT_FLAGS[] = {
    {NULL, "--execution-requirements", NULL, NULL, NULL,
     "add what the scenarios need: each one's VUs and duration, and the test's (maxVUs, totalDuration)"},
};

static const ll_flag HELP_FLAGS[] = {
    {NULL, "--markdown", NULL, NULL, NULL, "print the reference of every command as Markdown (docs/commands.md)"},
};
static const ll_flag_group HELP_GROUPS[1] = {{NULL, HELP_FLAGS, 1}};
static const ll_flag CLEAR_FLAGS[] = {
    {NULL, "--jwt-cache", NULL, "DIR", "@dir", "the cache directory (default ~/.cache/luaload/jwt)"},
    {"-h", "--help", NULL, NULL, NULL, "show this help"},
};
static const ll_flag_group CLEAR_GROUPS[1] = {{NULL, CLEAR_FLAGS, 2}};

typedef struct command {
    const char *name;
    const char *synopsis; /* after "luaload NAME " */
    const char *summary;
    const char *args;     /* completion of its arguments: "@lua", "@hlog", "@file", words, or NULL */
    int (*main)(int argc, char **argv);
    const ll_flag_group *groups; /* its flags (the parser's own table); inspect's are made by groups_of */
    int ngroups;
    const char *notes;    /* a paragraph after the flags in the reference, or NULL */
} command;

static const command COMMANDS[] = {
    {"run", "[flags] SCRIPT.lua | URL", "run a load test (a script, or a URL: quick mode)", "@lua", run_main, ll_cli_run_groups, 2, NULL},
    {"inspect", "[flags] SCRIPT.lua", "print the options a run would use, resolved, as JSON (k6 inspect)", "@lua",
     inspect_main, NULL, 3, NULL},
    {"new", "[FILE] [--template NAME] [--force]", "write a commented, runnable script (and .luarc.json)", "@file",
     ll_new_main, ll_new_flag_groups, 1, NULL},
    {"convert", "FILE [-o SCRIPT.lua] [flags]", "write a script from a HAR recording, an OpenAPI/Swagger spec or a Postman collection",
     "@file", ll_convert_cmd_main, ll_convert_cmd_flag_groups, 1, NULL},
    {"merge", "[flags] [SCRIPT.lua] PART.hlog...", "add up the parts of a split test", "@hlog", merge_main, ll_cli_merge_groups, 1, NULL},
    {"k8s", "SCRIPT.lua --instances N [flags] [-- RUN FLAGS]", "Kubernetes manifests that run a test in N parts",
     "@lua", ll_k8s_main, ll_k8s_flag_groups, 1, NULL},
    {"serve", "[flags]", "start the built-in target server", NULL, ll_serve_main, ll_serve_flag_groups, 1,
     ll_serve_h2_notes},
    {"completion", "bash | zsh | fish", "print a shell completion script", "bash zsh fish", completion_main, NULL, 0, NULL},
    {"version", "[--json]", "print luaload's version and its libraries'", NULL, ll_version_main, ll_version_flag_groups, 1, NULL},
    {"clear-cache", "[DIR | --jwt-cache DIR]", "remove the JWT token cache", "@dir", clear_cache_main, CLEAR_GROUPS, 1, NULL},
    {"help", "[COMMAND] [--markdown]", "show a command's help (the same as COMMAND --help)",
     "run inspect new convert merge k8s serve completion version clear-cache help", help_main, HELP_GROUPS, 1, NULL},
};
#define NCOMMANDS (int)(sizeof(COMMANDS) / sizeof(COMMANDS[0]))

/* The flag groups of command c (n of them): its table's, and for inspect
 * its own flag then run's (scratch holds them). */
static const ll_flag_group *groups_of(const command *c, int *n, ll_flag_group *scratch) {
    *n = c->ngroups;
    if (c->groups || c->main != inspect_main) return c->groups;
    scratch[0] = (ll_flag_group){NULL, INSPECT_FLAGS, 1};
    scratch[1] = ll_cli_run_groups[0];
    scratch[1].title = "the flags of luaload run, resolved as run would";
    scratch[2] = ll_cli_run_groups[1];
    return scratch;
}

static const command *find_command(const char *name) {
    for (int i = 0; i < NCOMMANDS; i++)
        if (strcmp(COMMANDS[i].name, name) == 0) return &COMMANDS[i];
    return NULL;
}

void ll_commands_usage(FILE *f) {
    fputs("usage: luaload <command> [flags]\n", f);
    for (int i = 0; i < NCOMMANDS; i++) fprintf(f, "  %-12s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
    fputs("luaload help COMMAND (or luaload COMMAND --help) shows a command's flags\n", f);
}

/* ---- run, merge and inspect ---- */

static int run_main(int argc, char **argv) {
    ll_config cfg;
    int rc = ll_cli_parse_run(argc, argv, &cfg);
    if (rc == 0) rc = ll_engine_run(&cfg, &ll_lua_script, cfg.quick_url ? &ll_quick_mode_ops : &ll_script_mode_ops);
    else if (rc < 0) rc = LL_EXIT_OK;
    ll_config_free(&cfg);
    return rc;
}

static int merge_main(int argc, char **argv) {
    ll_config cfg;
    char **parts = NULL;
    int nparts = 0, rc = ll_cli_parse_merge(argc, argv, &cfg, &parts, &nparts);
    if (rc == 0) rc = ll_merge_run(&cfg, &ll_lua_script, parts, nparts);
    else if (rc < 0) rc = LL_EXIT_OK;
    free(parts);
    ll_config_free(&cfg);
    return rc;
}

static int inspect_main(int argc, char **argv) {
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        ll_flag_group scratch[3];
        int n;
        const ll_flag_group *g = groups_of(find_command("inspect"), &n, scratch);
        puts("usage: luaload inspect [flags] SCRIPT.lua\n"
             "prints the options luaload run would use (the script's, then the environment's and the flags'),\n"
             "resolved, as JSON; the script's init code runs, no test does");
        ll_flag_usage(stdout, g, n);
        return LL_EXIT_OK;
    }
    char **rest = ll_xcalloc((size_t)argc + 1, sizeof(*rest));
    int n = 0, requirements = 0;
    for (int i = 0; i < argc; i++) {
        if (i > 0 && strcmp(argv[i], "--execution-requirements") == 0) requirements = 1;
        else rest[n++] = argv[i];
    }
    ll_config cfg;
    int rc = ll_cli_parse_run(n, rest, &cfg);
    if (rc == 0) {
        cfg.inspect = 1 + requirements;
        rc = ll_engine_run(&cfg, &ll_lua_script, cfg.quick_url ? &ll_quick_mode_ops : &ll_script_mode_ops);
    } else if (rc < 0) {
        rc = LL_EXIT_OK;
    }
    ll_config_free(&cfg);
    free(rest);
    return rc;
}

/* luaload clear-cache [DIR | --jwt-cache DIR] */
static int clear_cache_main(int argc, char **argv) {
    argc--, argv++;
    const char *dir = argc == 1 ? argv[0] : argc == 2 && strcmp(argv[0], "--jwt-cache") == 0 ? argv[1] : NULL;
    if (argc == 1 && strncmp(argv[0], "--jwt-cache=", 12) == 0) dir = argv[0] + 12;
    char def[4096], err[512];
    if (argc == 1 && (strcmp(argv[0], "-h") == 0 || strcmp(argv[0], "--help") == 0)) {
        puts("usage: luaload clear-cache [DIR | --jwt-cache DIR]: removes the JWT token cache's files\n"
             "(default $XDG_CACHE_HOME/luaload/jwt, else ~/.cache/luaload/jwt)");
        return LL_EXIT_OK;
    }
    if (argc > 2 || (argc > 0 && (!dir || !*dir || dir[0] == '-'))) {
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

/* ---- help and the Markdown reference ---- */

/* "--vus N" of f, in Markdown code. */
static void md_flag(FILE *out, const ll_flag *f) {
    fputs("| ", out);
    if (f->short_name) fprintf(out, "`%s`, ", f->short_name);
    fprintf(out, "`%s%s%s`", f->name, f->arg ? " " : "", f->arg ? f->arg : "");
    if (f->alias) fprintf(out, ", `%s`", f->alias);
    fputs(" | ", out);
    for (const char *p = f->help; *p; p++) {
        if (strchr("|*_`<[\\", *p)) fputc('\\', out); /* Markdown's own characters, as text */
        fputc(*p, out);
    }
    fputs(" |\n", out);
}

static void markdown(FILE *out) {
    fputs("# Command reference\n\n"
          "<!-- generated by `luaload help --markdown` from the flag tables the commands parse with;\n"
          "     tests/e2e/test_commands.sh fails when this file and the binary differ -->\n\n"
          "An unknown command or flag is refused with exit code 104 and names the nearest one\n"
          "(`did you mean run?`). Every command takes `-h`/`--help`; `luaload help COMMAND` is the same.\n"
          "Flags that take a value accept `--flag value` and `--flag=value`.\n\n",
          out);
    for (int i = 0; i < NCOMMANDS; i++) fprintf(out, "- [`luaload %s`](#luaload-%s): %s\n", COMMANDS[i].name,
                                                COMMANDS[i].name, COMMANDS[i].summary);
    for (int i = 0; i < NCOMMANDS; i++) {
        const command *c = &COMMANDS[i];
        ll_flag_group scratch[3];
        int n;
        const ll_flag_group *g = groups_of(c, &n, scratch);
        fprintf(out, "\n## luaload %s\n\n%s.\n\n    luaload %s %s\n", c->name, c->summary, c->name, c->synopsis);
        for (int k = 0; k < n; k++) {
            if (g[k].n == 0) continue;
            if (g[k].title) fprintf(out, "\n%c%s:\n", g[k].title[0] - ('a' - 'A') * (g[k].title[0] >= 'a'),
                                    g[k].title + 1);
            fputs("\n| flag | meaning |\n|---|---|\n", out);
            for (int j = 0; j < g[k].n; j++) md_flag(out, &g[k].flags[j]);
        }
        if (c->notes) fprintf(out, "\n%s", c->notes);
    }
}

static int help_main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--markdown") == 0) {
        markdown(stdout);
        return LL_EXIT_OK;
    }
    if (argc == 1 || (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))) {
        ll_commands_usage(stdout);
        return LL_EXIT_OK;
    }
    const command *c = argc == 2 ? find_command(argv[1]) : NULL;
    if (!c && argc == 2 && argv[1][0] != '-') return ll_commands_main(argc, argv); /* an unknown command, named */
    if (!c) {
        fprintf(stderr, "luaload: help: expected a command or --markdown (luaload help [COMMAND] [--markdown])\n");
        return LL_EXIT_CONFIG;
    }
    if (c->main == help_main) {
        puts("usage: luaload help [COMMAND] [--markdown]");
        ll_flag_usage(stdout, HELP_GROUPS, 1);
        return LL_EXIT_OK;
    }
    char *args[] = {(char *)c->name, "--help", NULL};
    return c->main(2, args);
}

/* ---- shell completion ---- */

/* The words of a flag list: every name, alias and short name. */
static void flag_words(FILE *out, const ll_flag_group *g, int n) {
    for (int k = 0; k < n; k++)
        for (int j = 0; j < g[k].n; j++) {
            const ll_flag *f = &g[k].flags[j];
            fprintf(out, " %s", f->name);
            if (f->alias) fprintf(out, " %s", f->alias);
            if (f->short_name) fprintf(out, " %s", f->short_name);
        }
}

static void bash(FILE *out) {
    fputs("# bash completion for luaload: source it, or put it in\n"
          "# /usr/share/bash-completion/completions/luaload (luaload completion bash)\n"
          "_luaload() {\n"
          "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
          "  COMPREPLY=()\n"
          "  if [[ $COMP_CWORD -eq 1 ]]; then\n"
          "    COMPREPLY=($(compgen -W \"",
          out);
    for (int i = 0; i < NCOMMANDS; i++) fprintf(out, "%s%s", i ? " " : "", COMMANDS[i].name);
    fputs("\" -- \"$cur\"))\n    return\n  fi\n  case ${COMP_WORDS[1]} in\n", out);
    for (int i = 0; i < NCOMMANDS; i++) {
        const command *c = &COMMANDS[i];
        ll_flag_group scratch[3];
        int n;
        const ll_flag_group *g = groups_of(c, &n, scratch);
        fprintf(out, "  %s)\n    case $prev in\n", c->name);
        for (int k = 0; k < n; k++)
            for (int j = 0; j < g[k].n; j++) {
                const ll_flag *f = &g[k].flags[j];
                if (!f->arg) continue;
                fprintf(out, "    %s%s%s%s%s)", f->name, f->alias ? "|" : "", f->alias ? f->alias : "",
                        f->short_name ? "|" : "", f->short_name ? f->short_name : "");
                if (f->values && !strcmp(f->values, "@file")) fputs(" COMPREPLY=($(compgen -f -- \"$cur\"));", out);
                else if (f->values && !strcmp(f->values, "@dir")) fputs(" COMPREPLY=($(compgen -d -- \"$cur\"));", out);
                else if (f->values) {
                    fprintf(out, " COMPREPLY=($(compgen -W \"%s\" -- \"$cur\"));", f->values);
                    if (strchr(f->values, '=')) fputs(" compopt -o nospace 2>/dev/null;", out);
                }
                fputs(" return;;\n", out);
            }
        fputs("    esac\n    if [[ $cur == -* ]]; then\n      COMPREPLY=($(compgen -W \"", out);
        flag_words(out, g, n);
        fputs("\" -- \"$cur\"))\n", out);
        const char *a = c->args;
        if (!a) fputs("    fi;;\n", out);
        else if (!strcmp(a, "@lua")) fputs("    else\n      COMPREPLY=($(compgen -f -X '!*.lua' -- \"$cur\") $(compgen -d -- \"$cur\"))\n    fi;;\n", out);
        else if (!strcmp(a, "@hlog")) fputs("    else\n      COMPREPLY=($(compgen -f -X '!*.hlog' -- \"$cur\") $(compgen -f -X '!*.lua' -- \"$cur\") $(compgen -d -- \"$cur\"))\n    fi;;\n", out);
        else if (!strcmp(a, "@file")) fputs("    else\n      COMPREPLY=($(compgen -f -- \"$cur\"))\n    fi;;\n", out);
        else if (!strcmp(a, "@dir")) fputs("    else\n      COMPREPLY=($(compgen -d -- \"$cur\"))\n    fi;;\n", out);
        else fprintf(out, "    else\n      COMPREPLY=($(compgen -W \"%s\" -- \"$cur\"))\n    fi;;\n", a);
    }
    fputs("  esac\n}\ncomplete -F _luaload luaload\n", out);
}

/* text with the characters zsh's _arguments specs give meaning to escaped,
 * inside a single-quoted word. */
static void zsh_text(FILE *out, const char *text) {
    for (const char *p = text; *p; p++) {
        if (*p == '\'') fputs("'\\''", out);
        else if (*p == '[' || *p == ']' || *p == ':' || *p == '\\') fprintf(out, "\\%c", *p);
        else fputc(*p, out);
    }
}

static void zsh_action(FILE *out, const char *values) {
    if (!values) fputs(" ", out);
    else if (!strcmp(values, "@file")) fputs("_files", out);
    else if (!strcmp(values, "@dir")) fputs("_files -/", out);
    else if (!strcmp(values, "@lua")) fputs("_files -g \"*.lua\"", out);
    else if (!strcmp(values, "@hlog")) fputs("_files -g \"*.(hlog|lua)\"", out);
    else fprintf(out, "(%s)", values);
}

static void zsh(FILE *out) {
    fputs("#compdef luaload\n"
          "# zsh completion for luaload: put it in a directory of $fpath as _luaload\n"
          "# (luaload completion zsh > \"${fpath[1]}/_luaload\"), or source it\n"
          "_luaload() {\n"
          "  local -a commands\n"
          "  commands=(\n",
          out);
    for (int i = 0; i < NCOMMANDS; i++) {
        fprintf(out, "    '%s:", COMMANDS[i].name);
        zsh_text(out, COMMANDS[i].summary);
        fputs("'\n", out);
    }
    fputs("  )\n"
          "  if (( CURRENT == 2 )); then\n"
          "    _describe 'command' commands\n"
          "    return\n"
          "  fi\n"
          "  local cmd=$words[2]\n"
          "  shift words\n"
          "  (( CURRENT-- ))\n"
          "  case $cmd in\n",
          out);
    for (int i = 0; i < NCOMMANDS; i++) {
        const command *c = &COMMANDS[i];
        ll_flag_group scratch[3];
        int n;
        const ll_flag_group *g = groups_of(c, &n, scratch);
        fprintf(out, "  %s)\n    _arguments -s", c->name);
        for (int k = 0; k < n; k++)
            for (int j = 0; j < g[k].n; j++) {
                const ll_flag *f = &g[k].flags[j];
                const char *names[3] = {f->short_name, f->name, f->alias};
                for (int m = 0; m < 3; m++) {
                    if (!names[m]) continue;
                    /* '*': it may come again; "--out=": its value after '=' or as the next word */
                    fprintf(out, " \\\n      '*%s%s[", names[m], f->arg && m > 0 ? "=" : "");
                    zsh_text(out, f->help);
                    fputs("]", out);
                    if (f->arg) {
                        fputs(":", out);
                        zsh_text(out, f->arg);
                        fputs(":", out);
                        zsh_action(out, f->values);
                    }
                    fputs("'", out);
                }
            }
        if (c->args) {
            fputs(" \\\n      '*:argument:", out);
            zsh_action(out, c->args);
            fputs("'", out);
        }
        fputs(";;\n", out);
    }
    fputs("  esac\n"
          "}\n"
          "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n"
          "  _luaload \"$@\"\n"
          "else\n"
          "  compdef _luaload luaload\n"
          "fi\n",
          out);
}

static void fish_text(FILE *out, const char *text) {
    for (const char *p = text; *p; p++) {
        if (*p == '\'' || *p == '\\') fputc('\\', out);
        fputc(*p, out);
    }
}

static void fish(FILE *out) {
    fputs("# fish completion for luaload: luaload completion fish > ~/.config/fish/completions/luaload.fish\n"
          "complete -c luaload -f\n",
          out);
    for (int i = 0; i < NCOMMANDS; i++) {
        fprintf(out, "complete -c luaload -n __fish_use_subcommand -a %s -d '", COMMANDS[i].name);
        fish_text(out, COMMANDS[i].summary);
        fputs("'\n", out);
    }
    for (int i = 0; i < NCOMMANDS; i++) {
        const command *c = &COMMANDS[i];
        ll_flag_group scratch[3];
        int n;
        const ll_flag_group *g = groups_of(c, &n, scratch);
        for (int k = 0; k < n; k++)
            for (int j = 0; j < g[k].n; j++) {
                const ll_flag *f = &g[k].flags[j];
                fprintf(out, "complete -c luaload -n '__fish_seen_subcommand_from %s'", c->name);
                if (f->short_name) fprintf(out, " -s %s", f->short_name + 1);
                fprintf(out, " -l %s", f->name + 2);
                if (f->alias) fprintf(out, " -l %s", f->alias + 2);
                if (f->arg && f->values && !strcmp(f->values, "@file")) fputs(" -r -F", out);
                else if (f->arg && f->values && !strcmp(f->values, "@dir")) fputs(" -x -a '(__fish_complete_directories)'", out);
                else if (f->arg && f->values) fprintf(out, " -x -a '%s'", f->values);
                else if (f->arg) fputs(" -x", out);
                fputs(" -d '", out);
                fish_text(out, f->help);
                fputs("'\n", out);
            }
        const char *a = c->args;
        if (!a) continue;
        fprintf(out, "complete -c luaload -n '__fish_seen_subcommand_from %s'", c->name);
        if (!strcmp(a, "@lua")) fputs(" -k -a '(__fish_complete_suffix .lua)'\n", out);
        else if (!strcmp(a, "@hlog")) fputs(" -k -a '(__fish_complete_suffix .hlog)'\n", out);
        else if (!strcmp(a, "@file")) fputs(" -F\n", out);
        else if (!strcmp(a, "@dir")) fputs(" -a '(__fish_complete_directories)'\n", out);
        else fprintf(out, " -a '%s'\n", a);
    }
}

static int completion_main(int argc, char **argv) {
    const char *shell = argc == 2 ? argv[1] : NULL;
    if (shell && (!strcmp(shell, "-h") || !strcmp(shell, "--help"))) {
        puts("usage: luaload completion bash | zsh | fish: prints the completion script for that shell\n"
             "  bash:  luaload completion bash > /etc/bash_completion.d/luaload   (or: source <(luaload completion bash))\n"
             "  zsh:   luaload completion zsh > \"${fpath[1]}/_luaload\"\n"
             "  fish:  luaload completion fish > ~/.config/fish/completions/luaload.fish");
        return LL_EXIT_OK;
    }
    if (shell && !strcmp(shell, "bash")) bash(stdout);
    else if (shell && !strcmp(shell, "zsh")) zsh(stdout);
    else if (shell && !strcmp(shell, "fish")) fish(stdout);
    else {
        fprintf(stderr, "luaload: completion: expected bash, zsh or fish%s%s%s\n", shell ? ", got '" : "",
                shell ? shell : "", shell ? "'" : "");
        return LL_EXIT_CONFIG;
    }
    return LL_EXIT_OK;
}

/* ---- the command ---- */

int ll_commands_main(int argc, char **argv) {
    if (argc < 2) {
        ll_commands_usage(stderr);
        return LL_EXIT_CONFIG;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--version")) name = "version";
    if (!strcmp(name, "-h") || !strcmp(name, "--help")) name = "help";
    const command *c = find_command(name);
    if (c) return c->main(argc - 1, argv + 1);
    const char *near = NULL;
    int best = 3;
    for (int i = 0; i < NCOMMANDS; i++) {
        int d = ll_flag_distance(name, COMMANDS[i].name);
        if (strlen(name) >= 3 && strncmp(COMMANDS[i].name, name, strlen(name)) == 0) d = 1;
        if (d < best) best = d, near = COMMANDS[i].name;
    }
    fprintf(stderr, "luaload: unknown command '%s'%s%s%s (luaload help lists them)\n", name,
            near ? " (did you mean " : "", near ? near : "", near ? "?)" : "");
    return LL_EXIT_CONFIG;
}
