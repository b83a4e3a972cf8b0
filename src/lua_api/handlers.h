/* handlers.h -- the event handlers of a luaload object that events come
 * to from the loop (a WebSocket, a gRPC stream): a registry table
 * event -> { fn, ... }, and one event's list run as tasks of the VU
 * (handlers.c). */
#ifndef LL_HANDLERS_H
#define LL_HANDLERS_H

#include "script_host.h"

typedef struct lua_State lua_State;

/* Appends the function at stack index fn to the list of event in the
 * table of registry reference handlers_ref. */
void ll_handlers_add(lua_State *L, int handlers_ref, const char *event, int fn);
/* Runs each function of the list (a table at stack index list, below the
 * arguments; its array part, other values skipped) as a task of vu, with
 * the nargs values on top of L (popped; the list stays). *gone is the
 * object's slot its free sets to 1 (0 when none): while this runs it
 * points here. Returns 1, or 0 when the object is gone: a handler failed
 * the iteration, which cancelled it (the VU may be in its next iteration
 * already, so ll_vu_in_iteration cannot tell). */
int ll_handlers_run(ll_vu *vu, lua_State *L, int list, int nargs, int **gone);

#endif
