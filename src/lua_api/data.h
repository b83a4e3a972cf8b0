/* data.h -- what luaload.data's files share: data.c (data.csv, data.json
 * and the module) and data_stream.c (data.stream). */
#ifndef LL_DATA_H
#define LL_DATA_H

typedef struct lua_State lua_State;

/* Raises unless L runs init code (fn names the caller): files are opened
 * with blocking I/O, which an iteration must never do. */
void ll_data_check_init(lua_State *L, const char *fn);
/* Pushes path as it is opened: relative to the script's folder (as
 * ll.open), absolute as it is. */
void ll_data_push_path(lua_State *L, const char *path);
/* data.stream(path[, options]) -> a reader (data_stream.c) */
int ll_data_stream_open(lua_State *L);

#endif
