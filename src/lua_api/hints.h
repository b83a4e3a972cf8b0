/* hints.h -- one more line under the Lua errors a k6 user meets first (a
 * JavaScript file, require("k6/http"), res.json() with a dot, !=, a
 * missing require), naming the fix; Lua's own message is kept. */
#ifndef LL_HINTS_H
#define LL_HINTS_H

#include <stddef.h>

/* Appends "\n  hint: ..." to err (a script error as Lua wrote it, NUL-
 * terminated in len bytes) when it is one of those mistakes. loading: the
 * error came from compiling or running the script's init code; path: the
 * script's file (NULL for a script given inline). A module search-path
 * dump under "module 'k6/...' not found" is cut to its first line. */
void ll_hint_append(char *err, size_t len, int loading, const char *path);

#endif
