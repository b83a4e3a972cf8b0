/* modules.h -- the openers of luaload's C modules, and helpers they share. */
#ifndef LL_MODULES_H
#define LL_MODULES_H

typedef struct lua_State lua_State;
typedef struct ll_vu ll_vu;

int luaopen_luaload_core(lua_State *L);
int luaopen_luaload_http(lua_State *L);
int luaopen_luaload_metrics(lua_State *L);

/* The VU running on L, or raises "<what> is not available in the init
 * context" when called outside an iteration. */
ll_vu *ll_luaload_vu(lua_State *L, const char *what);
/* Records check name (in the VU's current group) as passed or failed. */
void ll_luaload_record_check(lua_State *L, ll_vu *vu, const char *name, int ok);
/* The same for the check "status is <status>" of http.checkstatus. */
void ll_luaload_record_status_check(lua_State *L, ll_vu *vu, int status, int ok);

#endif
