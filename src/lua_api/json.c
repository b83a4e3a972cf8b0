/* json.c -- luaload.json: encode/decode between Lua values and JSON text,
 * on top of cJSON. Tables whose keys are exactly 1..n encode as arrays,
 * other tables as objects; json.null stands for JSON null. */
#include "json.h"

#include <cJSON.h>
#include <lauxlib.h>
#include <lua.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 128

static char null_key; /* address used as the json.null sentinel */

static void push_null(lua_State *L) { lua_pushlightuserdata(L, &null_key); }

void ll_json_push_cjson(lua_State *L, const cJSON *j) {
    if (cJSON_IsNull(j)) {
        push_null(L);
    } else if (cJSON_IsBool(j)) {
        lua_pushboolean(L, cJSON_IsTrue(j));
    } else if (cJSON_IsNumber(j)) {
        lua_pushnumber(L, j->valuedouble);
    } else if (cJSON_IsString(j)) {
        lua_pushstring(L, j->valuestring);
    } else if (cJSON_IsArray(j)) {
        lua_createtable(L, cJSON_GetArraySize(j), 0);
        int i = 1;
        for (const cJSON *c = j->child; c; c = c->next) {
            ll_json_push_cjson(L, c);
            lua_rawseti(L, -2, i++);
        }
    } else if (cJSON_IsObject(j)) {
        lua_createtable(L, 0, cJSON_GetArraySize(j));
        for (const cJSON *c = j->child; c; c = c->next) {
            ll_json_push_cjson(L, c);
            lua_setfield(L, -2, c->string);
        }
    } else {
        lua_pushnil(L);
    }
}

int ll_json_push(lua_State *L, const char *s, size_t len, char *err, size_t errlen) {
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(s, len, &end, 0);
    if (!j) {
        size_t at = end && end >= s ? (size_t)(end - s) : 0;
        snprintf(err, errlen, "invalid JSON at byte %zu", at);
        return -1;
    }
    ll_json_push_cjson(L, j);
    cJSON_Delete(j);
    return 0;
}

/* Array length when the table's keys are exactly 1..n, else -1. */
static int array_len(lua_State *L, int idx) {
    int n = 0, max = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TNUMBER) {
            lua_pop(L, 1);
            return -1;
        }
        double k = lua_tonumber(L, -1);
        if (k < 1 || k != floor(k)) {
            lua_pop(L, 1);
            return -1;
        }
        if (k > max) max = (int)k;
        n++;
    }
    return n == max ? n : -1;
}

static cJSON *to_cjson(lua_State *L, int idx, int depth, char *err, size_t errlen) {
    if (idx < 0) idx = lua_gettop(L) + idx + 1;
    if (depth > MAX_DEPTH) {
        snprintf(err, errlen, "nesting deeper than %d (a cycle?)", MAX_DEPTH);
        return NULL;
    }
    switch (lua_type(L, idx)) {
    case LUA_TNIL: return cJSON_CreateNull();
    case LUA_TBOOLEAN: return cJSON_CreateBool(lua_toboolean(L, idx));
    case LUA_TNUMBER: {
        double d = lua_tonumber(L, idx);
        if (!isfinite(d)) return cJSON_CreateNull();
        return cJSON_CreateNumber(d);
    }
    case LUA_TSTRING: return cJSON_CreateString(lua_tostring(L, idx));
    case LUA_TLIGHTUSERDATA:
        if (lua_touserdata(L, idx) == &null_key) return cJSON_CreateNull();
        break;
    case LUA_TTABLE: {
        int n = array_len(L, idx); /* an empty table is an object, like lua-cjson */
        cJSON *out = n > 0 ? cJSON_CreateArray() : cJSON_CreateObject();
        for (int i = 1; i <= n; i++) {
            lua_rawgeti(L, idx, i);
            cJSON *v = to_cjson(L, -1, depth + 1, err, errlen);
            lua_pop(L, 1);
            if (!v) goto fail;
            cJSON_AddItemToArray(out, v);
        }
        if (n > 0) return out;
        lua_pushnil(L);
        while (lua_next(L, idx)) {
            char kbuf[64];
            const char *k;
            if (lua_type(L, -2) == LUA_TSTRING) {
                k = lua_tostring(L, -2);
            } else if (lua_type(L, -2) == LUA_TNUMBER) {
                snprintf(kbuf, sizeof(kbuf), "%.14g", lua_tonumber(L, -2));
                k = kbuf;
            } else {
                snprintf(err, errlen, "cannot encode a table key of type %s", luaL_typename(L, -2));
                lua_pop(L, 2);
                goto fail;
            }
            cJSON *v = to_cjson(L, -1, depth + 1, err, errlen);
            lua_pop(L, 1);
            if (!v) {
                lua_pop(L, 1);
                goto fail;
            }
            cJSON_AddItemToObject(out, k, v);
        }
        return out;
    fail:
        cJSON_Delete(out);
        return NULL;
    }
    default: break;
    }
    snprintf(err, errlen, "cannot encode a %s value", luaL_typename(L, idx));
    return NULL;
}

char *ll_json_encode(lua_State *L, int idx, char *err, size_t errlen) {
    err[0] = 0;
    cJSON *j = to_cjson(L, idx, 0, err, errlen);
    if (!j) return NULL;
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    if (!s) snprintf(err, errlen, "out of memory");
    return s;
}

static int l_encode(lua_State *L) {
    char err[256];
    luaL_checkany(L, 1);
    char *s = ll_json_encode(L, 1, err, sizeof(err));
    if (!s) return luaL_error(L, "json.encode: %s", err);
    lua_pushstring(L, s);
    cJSON_free(s);
    return 1;
}

static int l_decode(lua_State *L) {
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    char err[128];
    if (ll_json_push(L, s, len, err, sizeof(err)) != 0) return luaL_error(L, "json.decode: %s", err);
    return 1;
}

int luaopen_luaload_json(lua_State *L) {
    static const luaL_Reg fns[] = {{"encode", l_encode}, {"decode", l_decode}, {NULL, NULL}};
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    push_null(L);
    lua_setfield(L, -2, "null");
    return 1;
}
