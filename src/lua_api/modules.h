/* modules.h -- the openers of luaload's C modules, and helpers they share. */
#ifndef LL_MODULES_H
#define LL_MODULES_H

#include <stddef.h>
#include <stdint.h>

#include "metrics.h"

typedef struct lua_State lua_State;
typedef struct ll_vu ll_vu;
typedef struct ll_worker ll_worker;

int luaopen_luaload_core(lua_State *L);
int luaopen_luaload_http(lua_State *L);
int luaopen_luaload_metrics(lua_State *L);
int luaopen_luaload_data(lua_State *L);
/* The C stack guards (guard.c): raises "C stack overflow in what" at the
 * line of call level `level` when the thread's C stack is nearly used up;
 * the Lua function check(what) for Lua wrappers; installing the guarded
 * string.gsub and tostring in a state. */
void ll_guard_cstack(lua_State *L, int level, const char *what);
int ll_guard_lua_check(lua_State *L);
int ll_guard_install(lua_State *L, char *err, size_t errlen);
/* Sets the global `console` (console.c). */
void ll_console_install(lua_State *L);
int luaopen_luaload_encoding(lua_State *L);
int luaopen_luaload_crypto(lua_State *L);
int luaopen_luaload_jwt(lua_State *L);
int luaopen_luaload_html(lua_State *L);
int luaopen_luaload_execution(lua_State *L);
int luaopen_luaload_timers(lua_State *L);
int luaopen_luaload_ws(lua_State *L);
int luaopen_luaload_grpc(lua_State *L);
int luaopen_luaload_websockets(lua_State *L);
int luaopen_luaload_sse(lua_State *L);

/* The VU running on L, or raises "<what> is not available in the init
 * context" when called outside an iteration. */
ll_vu *ll_luaload_vu(lua_State *L, const char *what);
/* The same for a call that waits (a request, sleep, await): raises, too,
 * where the VU cannot wait (inside on_chunk, which runs outside its
 * coroutines). */
ll_vu *ll_luaload_waiting_vu(lua_State *L, const char *what);
/* Yields the VU for the wait just registered with ll_vu_wait, as the last
 * statement of a C function (return ll_luaload_wait(L, vu);): the first
 * yielded value is the wait token, which luaload.coroutine passes up
 * through the script's coroutines. Where the VU cannot yield (inside a C
 * function such as table.sort), it cancels the wait and raises. */
int ll_luaload_wait(lua_State *L, ll_vu *vu);
/* Pushes the wait token (a light userdata). */
void ll_luaload_push_wait_token(lua_State *L);
/* Installs luaload.coroutine's coroutine functions in the state (before
 * the init code). Returns 0, or -1 with the message in err. */
int ll_coroutine_install(lua_State *L, char *err, size_t errlen);
/* Records check name (in the VU's current group) as passed or failed. */
/* tags: stack index of a table of tags for the check's sample, 0: none */
void ll_luaload_record_check(lua_State *L, ll_vu *vu, const char *name, int ok, int tags);
/* The same for the check "status is <status>" of http.checkstatus. */
void ll_luaload_record_status_check(lua_State *L, ll_vu *vu, int status, int ok);

/* lua_class.c: the metatable name of a userdata type, once per state:
 * methods (may be NULL) as __index, gc (may be NULL) as __gc, and with
 * locked a __metatable of name, so getmetatable gives the name only. */
typedef struct luaL_Reg luaL_Reg;
void ll_lua_class(lua_State *L, const char *name, const luaL_Reg *methods, int (*gc)(lua_State *), int locked);

/* lua_tags.c: the script's tags table at idx as sample tags: key's value
 * (copied into buf), or NULL; and fn for each string key with a string or
 * number value (but skip, when not NULL), returning 1 when one is "group". */
const char *ll_lua_tags_get(lua_State *L, int idx, const char *key, char *buf, size_t len);
int ll_lua_tags_each(lua_State *L, int idx, const char *skip, ll_tag_fn *fn, void *ud);

/* random.c: replaces math.random and math.randomseed in L (right after the
 * standard libraries) and seeds the state's own generator, used outside
 * VUs' iterations, from the run's seed and w's index. */
void ll_random_open(lua_State *L, ll_worker *w);
/* Seeds L's own generator again from seed and its worker's index (the
 * lifecycle state, once the options have fixed the run's seed). */
void ll_random_seed_state(lua_State *L, uint64_t seed);

#endif
