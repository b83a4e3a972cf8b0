/* state.h -- creating a worker's Lua state: standard libraries, the luaload
 * modules, require paths, __ENV, and running the script's init code. */
#ifndef LL_STATE_H
#define LL_STATE_H

#include <stddef.h>
#include <stdio.h>

typedef struct lua_State lua_State;
typedef struct ll_worker ll_worker;

/* Creates w's Lua state (ll_worker_set_lua) and runs the script's init
 * code in it (not when bare). Returns 0, or LL_EXIT_SCRIPT with the Lua
 * error (file:line: message) in err. */
int ll_state_open(ll_worker *w, int bare, char *err, size_t errlen);

/* The ll_worker a Lua state belongs to. */
ll_worker *ll_state_worker(lua_State *L);

/* What every request would otherwise read from a state's registry, kept
 * in its worker (ll_worker_lua_cache) from ll_state_open to the state's
 * close. */
typedef struct ll_lua_cache {
    lua_State *response_maker;  /* http_response.c: the Response constructor's
                                 * thread, NULL until first used */
    const struct ll_http_expected *expected; /* http_expected.c: the state's
                                 * response callback (set_response_callback) */
    int expected_counted;       /* 0 after set_response_callback(nil) */
    int status_check_id;        /* luaload.c: http.checkstatus's last check,
                                 * -1: none; for this group and status, */
    int status_check_group;     /* which most scripts repeat (a check's id
                                 * depends only on them) */
    int status_check_status;
} ll_lua_cache;

/* L's cache, or NULL for a state without a worker. */
ll_lua_cache *ll_state_cache(lua_State *L);
/* Closes a state: every state is closed here (ll_state_worker's cache
 * must know). */
void ll_state_close(lua_State *L);
/* Writes the string at the top of L's stack (popped) to f in one write
 * under f's lock, so the workers' lines never mix (print, console). */
void ll_state_write_line(lua_State *L, FILE *f);

#endif
