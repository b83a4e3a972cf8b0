/* random.c -- math.random and math.randomseed on base/rng.h's xoshiro256**
 * generators. Each VU has its own (ll_vu.rng, seeded by vu.c from the
 * run's seed and its id, stream = id), so VUs never share or perturb a
 * sequence; the code that runs outside a VU's iterations (init code,
 * setup(), teardown(), handle_summary) uses its state's generator, a
 * userdata owned by this file, seeded from the run's seed and the
 * worker's index. The Lua side keeps Lua 5.1's contract: random() in
 * [0,1), random(m) in [1,m], random(m,n) in [m,n]. */
#include <lauxlib.h>
#include <lua.h>
#include <math.h>
#include <string.h>

#include "modules.h"
#include "rng.h"
#include "script_host.h"

/* Seed streams: VU id k uses stream k, math.randomseed stream 0, and the
 * state of worker index i (-1: the lifecycle worker) stream 2^63 + i + 1. */
#define LL_RANDOM_STREAM_STATE 0x8000000000000000ull
#define LL_RANDOM_STREAM_RESEED 0ull

/* Integer arguments must be exact as Lua numbers: |m|, |n| <= 2^53. */
#define LL_RANDOM_MAX_ARG 9007199254740992.0

typedef struct ll_random_state {
    uint64_t s[4];  /* the state's generator */
    ll_worker *w;   /* whose current VU, if any, has its own */
} ll_random_state;

static char ll_random_key; /* registry[&ll_random_key] = the state's ll_random_state */

static uint64_t ll_random_state_stream(const ll_worker *w) {
    return LL_RANDOM_STREAM_STATE + (uint64_t)((int64_t)ll_worker_index(w) + 1);
}

/* The generator of the code calling: its VU's, or the state's outside a
 * VU's iterations and in setup()/teardown() (the lifecycle VU, id 0). */
static uint64_t *ll_random_pick(lua_State *L) {
    ll_random_state *st = lua_touserdata(L, lua_upvalueindex(1));
    ll_vu *vu = ll_worker_current(st->w);
    if (vu && ll_vu_id(vu) > 0) return ll_vu_rng(vu);
    return st->s;
}

/* Argument i as an integer, truncated toward zero as Lua 5.1 does. */
static int64_t ll_random_check_int(lua_State *L, int i) {
    double d = trunc(luaL_checknumber(L, i));
    luaL_argcheck(L, fabs(d) <= LL_RANDOM_MAX_ARG, i, "number out of range");
    return (int64_t)d;
}

static int ll_random_random(lua_State *L) {
    uint64_t *s = ll_random_pick(L);
    int n = lua_gettop(L);
    if (n == 0) {
        lua_pushnumber(L, (double)(ll_rng_next(s) >> 11) * (1.0 / 9007199254740992.0));
        return 1;
    }
    if (n > 2) return luaL_error(L, "wrong number of arguments");
    int64_t lo = 1, hi;
    if (n == 1) {
        hi = ll_random_check_int(L, 1);
    } else {
        lo = ll_random_check_int(L, 1);
        hi = ll_random_check_int(L, 2);
    }
    luaL_argcheck(L, lo <= hi, n, "interval is empty");
    uint64_t r = ll_rng_below(s, (uint64_t)(hi - lo) + 1);
    lua_pushnumber(L, (double)(lo + (int64_t)r));
    return 1;
}

/* math.randomseed(x): the same x gives the same sequence, in any VU. An
 * integer is taken as it is, any other number by its bits. */
static int ll_random_randomseed(lua_State *L) {
    double d = luaL_checknumber(L, 1);
    uint64_t seed;
    if (d == floor(d) && fabs(d) < 9223372036854775808.0) {
        seed = (uint64_t)(int64_t)d;
    } else {
        memcpy(&seed, &d, sizeof(seed));
    }
    ll_rng_seed(ll_random_pick(L), seed, LL_RANDOM_STREAM_RESEED);
    return 0;
}

void ll_random_open(lua_State *L, ll_worker *w) {
    ll_random_state *st = lua_newuserdata(L, sizeof(*st));
    st->w = w;
    ll_rng_seed(st->s, ll_worker_seed(w), ll_random_state_stream(w));
    lua_pushlightuserdata(L, &ll_random_key);
    lua_pushvalue(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
    lua_getglobal(L, "math");
    lua_pushvalue(L, -2);
    lua_pushcclosure(L, ll_random_random, 1);
    lua_setfield(L, -2, "random");
    lua_pushvalue(L, -2);
    lua_pushcclosure(L, ll_random_randomseed, 1);
    lua_setfield(L, -2, "randomseed");
    lua_pop(L, 2);
}

void ll_random_seed_state(lua_State *L, uint64_t seed) {
    lua_pushlightuserdata(L, &ll_random_key);
    lua_rawget(L, LUA_REGISTRYINDEX);
    ll_random_state *st = lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (st) ll_rng_seed(st->s, seed, ll_random_state_stream(st->w));
}
