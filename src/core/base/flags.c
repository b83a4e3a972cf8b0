/* flags.c -- looking up, suggesting and printing a command's flags (see
 * flags.h). */
#include "flags.h"

#include <string.h>

#include "exit.h"

#define HELP_COLUMN 28
#define LINE_WIDTH 100

static int is(const ll_flag *f, const char *name) {
    return (f->short_name && strcmp(f->short_name, name) == 0) || strcmp(f->name, name) == 0 ||
           (f->alias && strcmp(f->alias, name) == 0);
}

const ll_flag *ll_flag_find(const ll_flag_group *groups, int ngroups, const char *name) {
    for (int g = 0; g < ngroups; g++)
        for (int i = 0; i < groups[g].n; i++)
            if (is(&groups[g].flags[i], name)) return &groups[g].flags[i];
    return NULL;
}

int ll_flag_distance(const char *a, const char *b) {
    /* optimal string alignment: a swap of two neighbours ("--prot") is one edit */
    size_t n = strlen(a), m = strlen(b);
    if (n > 40 || m > 40) return 9;
    int d[41][41];
    for (size_t i = 0; i <= n; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= m; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++) {
        for (size_t j = 1; j <= m; j++) {
            int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[n][m] > 9 ? 9 : d[n][m];
}

const char *ll_flag_nearest(const ll_flag_group *groups, int ngroups, const char *name) {
    const char *best = NULL;
    int best_d = 9;
    size_t len = strlen(name);
    if (len < 2) return NULL;
    for (int g = 0; g < ngroups; g++) {
        for (int i = 0; i < groups[g].n; i++) {
            const ll_flag *f = &groups[g].flags[i];
            const char *names[2] = {f->name, f->alias};
            for (int k = 0; k < 2 && names[k]; k++) {
                int d = ll_flag_distance(name, names[k]);
                if (len >= 4 && strncmp(names[k], name, len) == 0) d = 1; /* "--summ" */
                if (d < best_d) best_d = d, best = f->name;
            }
        }
    }
    return best && ll_flag_near(name, best_d) ? best : NULL;
}

int ll_flag_near(const char *name, int d) {
    size_t len = strlen(name);
    return d <= (len <= 6 ? 1 : len <= 10 ? 2 : 3);
}

int ll_flag_bool(const char *v) {
    static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};
    for (int i = 0; v && i < 6; i++) {
        if (strcmp(v, yes[i]) == 0) return 1;
        if (strcmp(v, no[i]) == 0) return 0;
    }
    return -1;
}

const char *ll_flag_hint(char *buf, size_t len, const ll_flag_group *groups, int ngroups, const char *name) {
    const char *near = ll_flag_nearest(groups, ngroups, name);
    snprintf(buf, len, "%s%s%s", near ? " (did you mean " : "", near ? near : "", near ? "?)" : "");
    return buf;
}

int ll_flag_unknown(const char *cmd, const char *what, const char *name, const ll_flag_group *groups, int ngroups) {
    char hint[96];
    fprintf(stderr, "luaload: %s: unknown %s %s%s (see luaload %s --help)\n", cmd, what, name,
            ll_flag_hint(hint, sizeof(hint), groups, ngroups, name), cmd);
    return LL_EXIT_CONFIG;
}

const char *ll_flag_split(const char *arg, char *flag, size_t len) {
    const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
    size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
    if (n >= len) n = len - 1;
    memcpy(flag, arg, n);
    flag[n] = 0;
    return eq ? eq + 1 : NULL;
}

/* text from column col to LINE_WIDTH, continued lines at HELP_COLUMN. */
static void wrapped(FILE *f, const char *text, int col) {
    const char *p = text;
    while (*p) {
        int room = LINE_WIDTH - col;
        size_t n = strlen(p);
        if ((int)n > room) {
            n = (size_t)room;
            while (n > 0 && p[n] != ' ') n--;
            if (n == 0) n = strcspn(p, " ");
        }
        fprintf(f, "%.*s\n", (int)n, p);
        p += n;
        while (*p == ' ') p++;
        if (*p) fprintf(f, "%*s", HELP_COLUMN, "");
        col = HELP_COLUMN;
    }
}

void ll_flag_usage(FILE *f, const ll_flag_group *groups, int ngroups) {
    for (int g = 0; g < ngroups; g++) {
        if (groups[g].title) fprintf(f, "\n%s:\n", groups[g].title);
        for (int i = 0; i < groups[g].n; i++) {
            const ll_flag *fl = &groups[g].flags[i];
            char head[128];
            int n = snprintf(head, sizeof(head), "  %s%s%s%s%s%s%s", fl->short_name ? fl->short_name : "",
                             fl->short_name ? ", " : "    ", fl->name, fl->alias ? ", " : "",
                             fl->alias ? fl->alias : "", fl->arg ? " " : "", fl->arg ? fl->arg : "");
            fputs(head, f);
            if (n + 1 >= HELP_COLUMN) {
                fprintf(f, "\n%*s", HELP_COLUMN, "");
                n = HELP_COLUMN;
            } else {
                fprintf(f, "%*s", HELP_COLUMN - n, "");
            }
            wrapped(f, fl->help, HELP_COLUMN);
        }
    }
}
