/* hints.c -- the hints of hints.h: each a pattern of Lua's message and the
 * line that names the fix. */
#include "hints.h"

#include <stdio.h>
#include <string.h>

/* k6's modules and luaload's (docs/from-k6.md). */
static const char *const MODULES[][2] = {
    {"k6", "luaload"},
    {"k6/http", "luaload.http"},
    {"k6/metrics", "luaload.metrics"},
    {"k6/execution", "luaload.execution"},
    {"k6/crypto", "luaload.crypto"},
    {"k6/encoding", "luaload.encoding"},
    {"k6/html", "luaload.html"},
    {"k6/data", "luaload.data"},
};

/* Globals a script uses without requiring them: http.get(...), check(...). */
static const char *const INDEXED[] = {"http", "metrics", "execution", "crypto", "encoding", "html", "data", "jwt", "json"};
static const char *const CALLED[] = {"check", "group", "sleep", "fail", "open"};

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static void add(char *err, size_t len, const char *hint) {
    size_t n = strlen(err);
    if (n < len) snprintf(err + n, len - n, "\n  hint: %s", hint);
}

/* The name between quotes after prefix in msg ("global 'http'"), into out. */
static int quoted_after(const char *msg, const char *prefix, char *out, size_t len) {
    const char *p = strstr(msg, prefix);
    if (!p) return 0;
    p += strlen(prefix);
    const char *end = strchr(p, '\'');
    if (!end || (size_t)(end - p) >= len) return 0;
    snprintf(out, len, "%.*s", (int)(end - p), p);
    return 1;
}

static int module_hint(char *err, size_t len) {
    char name[64], hint[256];
    if (!quoted_after(err, "module '", name, sizeof(name)) || strncmp(name, "k6", 2) != 0 ||
        (name[2] && name[2] != '/'))
        return 0;
    char *dump = strstr(err, " not found:");
    if (dump) dump[10] = 0; /* the search path says nothing here */
    for (size_t i = 0; i < sizeof(MODULES) / sizeof(MODULES[0]); i++) {
        if (strcmp(name, MODULES[i][0]) != 0) continue;
        snprintf(hint, sizeof(hint), "k6's \"%s\" is require(\"%s\") in luaload (docs/from-k6.md)", name, MODULES[i][1]);
        add(err, len, hint);
        return 1;
    }
    snprintf(hint, sizeof(hint), "\"%s\" is a k6 module; docs/from-k6.md says what luaload has in its place", name);
    add(err, len, hint);
    return 1;
}

static int global_hint(char *err, size_t len) {
    char name[64], hint[256];
    if (quoted_after(err, "attempt to index global '", name, sizeof(name))) {
        for (size_t i = 0; i < sizeof(INDEXED) / sizeof(INDEXED[0]); i++) {
            if (strcmp(name, INDEXED[i]) != 0) continue;
            snprintf(hint, sizeof(hint), "%s is a module: local %s = require(\"luaload.%s\")", name, name, name);
            add(err, len, hint);
            return 1;
        }
        if (strcmp(name, "ll") == 0 || strcmp(name, "k6") == 0) {
            snprintf(hint, sizeof(hint), "local %s = require(\"luaload\")", name);
            add(err, len, hint);
            return 1;
        }
        return 0;
    }
    if (!quoted_after(err, "attempt to call global '", name, sizeof(name))) return 0;
    for (size_t i = 0; i < sizeof(CALLED) / sizeof(CALLED[0]); i++) {
        if (strcmp(name, CALLED[i]) != 0) continue;
        snprintf(hint, sizeof(hint), "%s is ll.%s: local ll = require(\"luaload\")", name, name);
        add(err, len, hint);
        return 1;
    }
    return 0;
}

/* res.json("token"): the object is missing, its first argument taken for it. */
static int colon_hint(char *err, size_t len) {
    char name[64], hint[256];
    if (!quoted_after(err, "bad argument #1 to '", name, sizeof(name))) return 0;
    const char *why = strstr(err, "' (");
    if (!why || !strstr(why, " expected, got ")) return 0;
    why += 3;
    const char *space = strchr(why, ' ');
    size_t n = space ? (size_t)(space - why) : 0;
    int object = (n == 5 && strncmp(why, "table", 5) == 0) || (n == 8 && strncmp(why, "userdata", 8) == 0) ||
                 memchr(why, '.', n) != NULL; /* a type such as luaload.Client */
    if (!object) return 0;
    snprintf(hint, sizeof(hint), "a method is called with a colon: res:%s(...), not res.%s(...)", name, name);
    add(err, len, hint);
    return 1;
}

/* JavaScript's operators in Lua: the compiler stops at their first character. */
static int operator_hint(char *err, size_t len) {
    if (strstr(err, "near '!'")) add(err, len, "Lua writes != as ~= and !x as not x");
    else if (strstr(err, "near '&'")) add(err, len, "Lua writes && as and");
    else if (strstr(err, "near '|'")) add(err, len, "Lua writes || as or");
    else return 0;
    return 1;
}

void ll_hint_append(char *err, size_t len, int loading, const char *path) {
    if (!err || !len) return;
    if (module_hint(err, len) || global_hint(err, len) || colon_hint(err, len)) return;
    if (loading && path && (ends_with(path, ".js") || ends_with(path, ".mjs") || ends_with(path, ".ts"))) {
        add(err, len, "luaload runs Lua scripts: port the k6 script as docs/from-k6.md shows, side by side "
                      "(luaload new makes a Lua script to start from)");
        return;
    }
    operator_hint(err, len);
}
