/* http_png.c -- http.RandomPNG{ width =, height = } or { size = }: a new, valid
 * PNG of random RGB noise on each call (a Lua string), as an upload body
 * that no server-side cache or compressor recognises. Encoded with libpng
 * into memory: 8-bit RGB, filter NONE and zlib level 0 (noise does not
 * compress: stored blocks keep the size predictable and the speed near
 * memcpy's). The noise comes from splitmix64 seeded by two draws of
 * math.random, so it follows the caller's generator (the VU's inside an
 * iteration) and --seed repeats it. */
#include <png.h>

#include <lauxlib.h>
#include <lua.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_png.h"
#include "rng.h"
#include "size.h"

#define LL_PNG_MAX_SIDE 16384
#define LL_PNG_MIN_SIZE 100
#define LL_PNG_MAX_SIZE ((int64_t)256 << 20)
#define LL_PNG_IDAT_SIZE (64 * 1024) /* libpng's compression buffer: one IDAT chunk */
/* The output buffer is kept for the next call unless it grew past this. */
#define LL_PNG_KEEP_BUFFER ((size_t)64 << 20)
/* libpng's and zlib's allocations of one image (about 350 KiB: zlib's
 * window, hash chains and pending buffer, libpng's rows and IDAT buffer)
 * come from this arena; what does not fit goes to malloc. */
#define LL_PNG_ARENA_SIZE ((size_t)1 << 20)

/* Upvalue 2 of RandomPNG: the state's buffers, reused across calls (an
 * image is made in one C call, so no VU can interleave): fresh pages for
 * each image, and glibc trimming the heap after each, cost more than
 * encoding it. */
typedef struct ll_png_buf {
    char *p; /* the encoded PNG, malloc'd */
    size_t len, cap;
    char *arena; /* malloc'd, LL_PNG_ARENA_SIZE bytes, emptied at each image */
    size_t arena_used;
    char err[128]; /* libpng's error message */
    unsigned char row[3 * LL_PNG_MAX_SIDE];
} ll_png_buf;

/* libpng's errors go to the Lua error, not to stderr. */
static void ll_png_error(png_structp png, png_const_charp msg) {
    ll_png_buf *b = png_get_error_ptr(png);
    snprintf(b->err, sizeof(b->err), "%s", msg);
    png_longjmp(png, 1);
}

static void ll_png_warning(png_structp png, png_const_charp msg) {
    (void)png;
    (void)msg;
}

static png_voidp ll_png_alloc(png_structp png, png_alloc_size_t n) {
    ll_png_buf *b = png_get_mem_ptr(png);
    size_t need = (n + 63) & ~(size_t)63;
    if (!b->arena || LL_PNG_ARENA_SIZE - b->arena_used < need) return malloc(n);
    char *p = b->arena + b->arena_used;
    b->arena_used += need;
    return p;
}

static void ll_png_free(png_structp png, png_voidp p) {
    ll_png_buf *b = png_get_mem_ptr(png);
    if (b->arena && (char *)p >= b->arena && (char *)p < b->arena + LL_PNG_ARENA_SIZE) return;
    free(p);
}

static void ll_png_noise(uint64_t *x, unsigned char *p, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t r = ll_rng_splitmix64(x);
        memcpy(p + i, &r, 8);
    }
    if (i < n) {
        uint64_t r = ll_rng_splitmix64(x);
        memcpy(p + i, &r, n - i);
    }
}

static void ll_png_write(png_structp png, png_bytep data, size_t n) {
    ll_png_buf *o = png_get_io_ptr(png);
    if (n > o->cap - o->len) {
        size_t cap = o->cap * 2 > o->len + n ? o->cap * 2 : o->len + n;
        char *p = realloc(o->p, cap);
        if (!p) png_error(png, "out of memory");
        o->p = p;
        o->cap = cap;
    }
    memcpy(o->p + o->len, data, n);
    o->len += n;
}

static void ll_png_flush(png_structp png) { (void)png; }

/* The encoded size of a w x h image: the pixel rows (a filter byte and
 * 3 bytes a pixel), 68 bytes (signature 8, IHDR 25, IEND 12, the zlib
 * header and Adler-32 6, the first IDAT chunk's 12, the last stored
 * block's 5) and, measured, 21 bytes every 64 KiB (an IDAT chunk's 12 and
 * the headers of the stored blocks zlib cuts it into). */
static int64_t ll_png_encoded_size(int64_t w, int64_t h) {
    int64_t raw = h * (1 + 3 * w);
    return raw + 68 + raw * 21 / 65536;
}

/* Width and height (about 4:3) whose encoding is closest to size bytes. */
static void ll_png_fit(int64_t size, int *w, int *h) {
    double raw = (double)size * (1 - 21.0 / 65536) - 68;
    int64_t cw = (int64_t)(2.0 / 3.0 * sqrt(raw) + 0.5);
    if (cw < 1) cw = 1;
    if (cw > LL_PNG_MAX_SIDE) cw = LL_PNG_MAX_SIDE;
    int64_t best_h = 1, best_err = INT64_MAX;
    int64_t guess = (int64_t)(raw / (double)(1 + 3 * cw));
    for (int64_t ch = guess - 1; ch <= guess + 2; ch++) {
        if (ch < 1 || ch > LL_PNG_MAX_SIDE) continue;
        int64_t err = llabs(ll_png_encoded_size(cw, ch) - size);
        if (err < best_err) {
            best_err = err;
            best_h = ch;
        }
    }
    *w = (int)cw;
    *h = (int)best_h;
}

/* Encodes a w x h noise image seeded by seed into o. Returns 0, or -1 with
 * libpng's message in o->err. */
static int ll_png_encode(int w, int h, uint64_t seed, ll_png_buf *o) {
    o->arena_used = 0;
    snprintf(o->err, sizeof(o->err), "out of memory");
    png_structp png = png_create_write_struct_2(PNG_LIBPNG_VER_STRING, o, ll_png_error, ll_png_warning, o,
                                                ll_png_alloc, ll_png_free);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info) {
        png_destroy_write_struct(&png, NULL);
        return -1;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return -1;
    }
    png_set_write_fn(png, o, ll_png_write, ll_png_flush);
    png_set_compression_level(png, 0);
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
    png_set_compression_buffer_size(png, LL_PNG_IDAT_SIZE);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_BASE, PNG_FILTER_TYPE_BASE);
    png_write_info(png, info);
    uint64_t x = seed;
    for (int y = 0; y < h; y++) {
        ll_png_noise(&x, o->row, (size_t)w * 3);
        png_write_row(png, o->row);
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return 0;
}

/* The integer option at the top of the stack, in lo..hi, or raises. */
static int64_t ll_png_int(lua_State *L, const char *key, int64_t lo, int64_t hi, const char *range) {
    double d = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : -1;
    if (d != d || d < (double)lo || d > (double)hi || d != (double)(int64_t)d) { /* d != d: NaN */
        luaL_error(L, "http.RandomPNG: %s must be %s, got %s", key, range,
                   lua_type(L, -1) == LUA_TNUMBER ? lua_tostring(L, -1) : luaL_typename(L, -1));
    }
    return (int64_t)d;
}

/* size: a number of bytes or a string such as "200KB" (binary units). */
static int64_t ll_png_size(lua_State *L) {
    const char *range = "from 100 bytes to 256MiB";
    if (lua_type(L, -1) == LUA_TNUMBER) return ll_png_int(L, "size", LL_PNG_MIN_SIZE, LL_PNG_MAX_SIZE, range);
    int64_t v = 0;
    const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    if (!s || ll_size_parse(s, &v) != 0) {
        luaL_error(L, "http.RandomPNG: size must be a number of bytes or a string such as \"200KB\", got %s",
                   s ? lua_pushfstring(L, "'%s'", s) : luaL_typename(L, -1));
    }
    if (v < LL_PNG_MIN_SIZE || v > LL_PNG_MAX_SIZE) {
        luaL_error(L, "http.RandomPNG: size must be %s, got '%s'", range, s);
    }
    return v;
}

/* Reads the options table at 1 into *w and *h. */
static void ll_png_options(lua_State *L, int *w, int *h) {
    const char *side = "an integer from 1 to 16384";
    if (!lua_istable(L, 1)) {
        luaL_error(L, "http.RandomPNG: expected a table such as { width = 640, height = 480 } or { size = \"200KB\" }, "
                      "got %s",
                   luaL_typename(L, 1));
    }
    int64_t width = 0, height = 0, size = 0;
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "";
        if (strcmp(k, "width") == 0) {
            width = ll_png_int(L, "width", 1, LL_PNG_MAX_SIDE, side);
        } else if (strcmp(k, "height") == 0) {
            height = ll_png_int(L, "height", 1, LL_PNG_MAX_SIDE, side);
        } else if (strcmp(k, "size") == 0) {
            size = ll_png_size(L);
        } else {
            lua_pushvalue(L, -2);
            luaL_error(L, "http.RandomPNG: unknown option '%s'", lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
        }
        lua_pop(L, 1);
    }
    if (size && (width || height)) luaL_error(L, "http.RandomPNG: give width and height, or size, not both");
    if (size) {
        ll_png_fit(size, w, h);
        return;
    }
    if (!width || !height) luaL_error(L, "http.RandomPNG: needs both width and height (or size)");
    *w = (int)width;
    *h = (int)height;
}

/* A seed from two draws of math.random (upvalue 1): 53 + 53 bits. */
static uint64_t ll_png_seed(lua_State *L) {
    uint64_t seed = 0;
    for (int i = 0; i < 2; i++) {
        lua_pushvalue(L, lua_upvalueindex(1));
        lua_call(L, 0, 1);
        uint64_t bits = (uint64_t)(lua_tonumber(L, -1) * 9007199254740992.0);
        seed = (seed << 32) ^ bits;
        lua_pop(L, 1);
    }
    return seed;
}

static int ll_png_buf_gc(lua_State *L) {
    ll_png_buf *b = lua_touserdata(L, 1);
    free(b->p);
    free(b->arena);
    memset(b, 0, sizeof(*b));
    return 0;
}

static int ll_png_random(lua_State *L) {
    int w = 0, h = 0;
    ll_png_options(L, &w, &h);
    uint64_t seed = ll_png_seed(L);
    ll_png_buf *b = lua_touserdata(L, lua_upvalueindex(2));
    int64_t size = ll_png_encoded_size(w, h);
    size_t want = (size_t)(size + size / 256 + 1024); /* above the estimate: one allocation */
    if (b->cap < want) {
        free(b->p);
        b->p = malloc(want);
        b->cap = b->p ? want : 0;
    }
    if (!b->arena) b->arena = malloc(LL_PNG_ARENA_SIZE); /* without it, libpng uses malloc */
    b->len = 0;
    snprintf(b->err, sizeof(b->err), "out of memory");
    int rc = b->p ? ll_png_encode(w, h, seed, b) : -1;
    if (rc == 0) lua_pushlstring(L, b->p, b->len);
    if (b->cap > LL_PNG_KEEP_BUFFER) {
        free(b->p);
        b->p = NULL;
        b->cap = 0;
    }
    if (rc != 0) return luaL_error(L, "http.RandomPNG: %s (a %dx%d image)", b->err, w, h);
    return 1;
}

void ll_http_png_register(lua_State *L, int module) {
    lua_getglobal(L, "math");
    lua_getfield(L, -1, "random"); /* random.c's generator: the VU's or the state's */
    lua_remove(L, -2);
    ll_png_buf *b = lua_newuserdata(L, sizeof(*b));
    memset(b, 0, sizeof(*b));
    lua_newtable(L);
    lua_pushcfunction(L, ll_png_buf_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    lua_pushcclosure(L, ll_png_random, 2);
    lua_setfield(L, module, "RandomPNG");
}
