/* script.h -- the one door from run/ to Lua (as wrk's script.h); the Lua
 * side (src/lua_api/script.c) implements it. Nothing else in run/ includes
 * a Lua header: values living in a worker's Lua state are handed around as
 * integer references (LL_SCRIPT_NOREF for none). */
#ifndef LL_SCRIPT_H
#define LL_SCRIPT_H

#include <stddef.h>

#include "config.h"
#include "worker.h"

typedef struct cJSON cJSON;

#define LL_SCRIPT_NOREF (-2)

/* What resuming a VU's coroutine came to. LL_SCRIPT_STOPPED: unwound by
 * ll_script_stop, not a script error. */
enum { LL_SCRIPT_YIELDED, LL_SCRIPT_RETURNED, LL_SCRIPT_FAILED, LL_SCRIPT_STOPPED };

/* Creates w's Lua state (libraries, luaload modules, require path, __ENV)
 * and runs the script's init code in it. Returns 0, or an exit code with
 * the error (file:line: message) in w->errmsg. */
int ll_script_open(ll_worker *w);
/* The same state without the script: enough for the default summary when
 * the script's own state is lost. Returns 0, or an exit code. */
int ll_script_open_bare(ll_worker *w);
void ll_script_close(ll_worker *w);
/* "LuaJIT 2.1.0-beta3": the Lua that runs the scripts (the library's
 * jit.version; not thread-safe, for luaload version). */
const char *ll_script_luajit_version(void);

/* Asks the Lua code running in w's state to stop: from any thread, at any
 * time (lua_sethook is async-safe), it makes the code raise within a few
 * thousand instructions, and every resume of a VU comes to
 * LL_SCRIPT_STOPPED. LuaJIT runs no hooks inside a compiled trace, so a
 * loop that was compiled may still never stop: the caller must be ready to
 * give up on the thread. ll_script_stop_clear undoes it (on w's thread, or
 * while nothing runs in w's state). */
void ll_script_stop(ll_worker *w);
void ll_script_stop_clear(ll_worker *w);

/* A full garbage collection of w's state, once its thread is done: what the
 * iterations left goes back before the summary is made (a script that ran
 * out of memory leaves the summary little). */
void ll_script_collect(ll_worker *w);

/* Reads the script's `options` into cfg and reg (what the CLI and the
 * environment left unset). Returns 0, or LL_EXIT_CONFIG with err set. */
int ll_script_read_options(ll_worker *w, ll_config *cfg, ll_registry *reg, char *err, size_t errlen);

/* Whether the module name was required in w's state (package.loaded). */
int ll_script_loaded(ll_worker *w, const char *name);
/* Whether the global name is a function; *ref (when not NULL) gets a
 * reference to it. Otherwise *type (when not NULL) names what it is. */
int ll_script_function(ll_worker *w, const char *name, int *ref, const char **type);
/* A new __ENV for a scenario: the run's with the scenario's env on top. */
int ll_script_scenario_env(ll_worker *w, const ll_scenario *sc);
/* Makes the __ENV of env_ref the global one. */
void ll_script_use_env(ll_worker *w, int env_ref);
/* Decodes JSON into a value of w's state: returns 0 and sets *ref, or -1
 * with err set. */
int ll_script_decode(ll_worker *w, const char *json, int *ref, char *err, size_t errlen);
/* The value of ref as JSON (malloc'd), NULL for nil (err "") or for a value
 * JSON cannot hold (err set). */
char *ll_script_encode(ll_worker *w, int ref, char *err, size_t errlen);
void ll_script_unref(ll_worker *w, int ref);

/* A VU's coroutine: made, dropped (after an error or an interrupt: a
 * coroutine that raised cannot be resumed), started with fn_ref(arg_ref)
 * (arg_ref may be NOREF), resumed. ll_script_vu_resume puts the error
 * message in err when it returns LL_SCRIPT_FAILED. */
void ll_script_vu_open(ll_vu *vu);
void ll_script_vu_close(ll_vu *vu);
int ll_script_vu_call(ll_vu *vu, int fn_ref, int arg_ref); /* returns nargs */
int ll_script_vu_resume(ll_vu *vu, int nargs, char *err, size_t errlen);
/* After LL_SCRIPT_RETURNED: a reference to the first value returned (NOREF
 * when none); clears the coroutine's stack either way. */
int ll_script_vu_result(ll_vu *vu, int keep);

/* Prints or writes the end-of-test summary: handle_summary(data) when the
 * script has one, else luaload.summary's text on stdout. Returns 0 or -1. */
int ll_script_summary(ll_worker *w, const cJSON *data);

#endif
