/* flags.h -- a command's flags as a table: what parses them (is it a
 * flag, does it take a value), its --help, the nearest flag to a mistyped
 * one, and what shell completion and the command reference are made from
 * (app/commands.c). Each command keeps its table beside its parser. */
#ifndef LL_FLAGS_H
#define LL_FLAGS_H

#include <stddef.h>
#include <stdio.h>

typedef struct ll_flag {
    const char *short_name; /* "-u", or NULL */
    const char *name;       /* "--vus" */
    const char *alias;      /* another long name ("--insecure"), or NULL */
    const char *arg;        /* the value's name ("N", "FILE"); NULL: a switch */
    const char *values;     /* completion: the values, space-separated ("native curl"),
                             * "@file", "@dir", or NULL: anything */
    const char *help;       /* one sentence; wrapped when printed */
} ll_flag;

/* A group of a command's flags under a title (NULL: none). */
typedef struct ll_flag_group {
    const char *title;
    const ll_flag *flags;
    int n;
} ll_flag_group;

/* The flag of groups that name is ("-u", "--vus" or an alias); NULL when
 * none is. */
const ll_flag *ll_flag_find(const ll_flag_group *groups, int ngroups, const char *name);
/* The long name nearest to name (an edit or two away, or a prefix of
 * it), NULL when none is near. */
const char *ll_flag_nearest(const ll_flag_group *groups, int ngroups, const char *name);
/* " (did you mean --vus?)" for name into buf, or "" when no flag is near;
 * returns buf. */
const char *ll_flag_hint(char *buf, size_t len, const ll_flag_group *groups, int ngroups, const char *name);
/* "luaload: CMD: unknown WHAT NAME (did you mean ...?) (see luaload CMD
 * --help)" on stderr; returns LL_EXIT_CONFIG. */
int ll_flag_unknown(const char *cmd, const char *what, const char *name, const ll_flag_group *groups, int ngroups);
/* arg split into its flag ("--out" of "--out=json=x") and the value after
 * '=' (NULL when none: the value is the next argument, if the flag takes
 * one). */
const char *ll_flag_split(const char *arg, char *flag, size_t len);
/* The flags' help, one line each (long help wrapped under it), for --help. */
void ll_flag_usage(FILE *f, const ll_flag_group *groups, int ngroups);
/* v as a boolean the way k6 reads its flags and K6_* variables (Go's
 * strconv.ParseBool): 1, t, T, TRUE, true, True are 1; 0, f, F, FALSE,
 * false, False are 0; anything else (NULL too) is -1. */
int ll_flag_bool(const char *v);
/* Whether a name d edits away from name is near enough to suggest (one
 * edit for a short name, up to three for a long one). */
int ll_flag_near(const char *name, int d);
/* The edit distance of a and b (insertions, deletions, substitutions),
 * counted up to 9. */
int ll_flag_distance(const char *a, const char *b);

#endif
