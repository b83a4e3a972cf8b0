/* script.h -- the one door from run/ down to Lua (as wrk's script.h): a
 * table of operations the app hands to the engine (ll_engine_run), which
 * keeps it in ll_run.script. lua_api/script.c implements it over LuaJIT
 * (ll_lua_script); the engine's unit tests drive it with a fake script
 * (tests/unit/fake_script.c), as http/'s drive a fake transport. Nothing
 * in run/ includes a Lua header or links Lua: values living in a worker's
 * Lua state are handed around as integer references (LL_SCRIPT_NOREF for
 * none). */
#ifndef LL_SCRIPT_H
#define LL_SCRIPT_H

#include <stddef.h>

#include "config.h"

typedef struct cJSON cJSON;
typedef struct ll_worker ll_worker;
typedef struct ll_vu ll_vu;

#define LL_SCRIPT_NOREF (-2)

/* What resuming a VU's coroutine came to. LL_SCRIPT_STOPPED: unwound by
 * stop, not a script error. */
enum { LL_SCRIPT_YIELDED, LL_SCRIPT_RETURNED, LL_SCRIPT_FAILED, LL_SCRIPT_STOPPED };

typedef struct ll_script_ops {
    /* Creates w's Lua state (libraries, luaload modules, require path, __ENV)
     * and runs the script's init code in it. Returns 0, or an exit code with
     * the error (file:line: message) in w->errmsg. */
    int (*open)(ll_worker *w);
    /* The same state without the script: enough for the default summary when
     * the script's own state is lost. Returns 0, or an exit code. */
    int (*open_bare)(ll_worker *w);
    void (*close)(ll_worker *w);

    /* Asks the Lua code running in w's state to stop: from any thread, at any
     * time (lua_sethook is async-safe), it makes the code raise within a few
     * thousand instructions, and every resume of a VU comes to
     * LL_SCRIPT_STOPPED. LuaJIT runs no hooks inside a compiled trace, so a
     * loop that was compiled may still never stop: the caller must be ready to
     * give up on the thread. stop_clear undoes it (on w's thread, or
     * while nothing runs in w's state). */
    void (*stop)(ll_worker *w);
    void (*stop_clear)(ll_worker *w);

    /* A full garbage collection of w's state, once its thread is done: what the
     * iterations left goes back before the summary is made (a script that ran
     * out of memory leaves the summary little). */
    void (*collect)(ll_worker *w);

    /* Reads the script's `options` into cfg and reg (what the CLI and the
     * environment left unset). Returns 0, or LL_EXIT_CONFIG with err set. */
    int (*read_options)(ll_worker *w, ll_config *cfg, ll_registry *reg, char *err, size_t errlen);

    /* Whether the module name was required in w's state (package.loaded). */
    int (*loaded)(ll_worker *w, const char *name);
    /* Whether the global name is a function; *ref (when not NULL) gets a
     * reference to it. Otherwise *type (when not NULL) names what it is. */
    int (*function)(ll_worker *w, const char *name, int *ref, const char **type);
    /* A new __ENV for a scenario: the run's with the scenario's env on top. */
    int (*scenario_env)(ll_worker *w, const ll_scenario *sc);
    /* Makes the __ENV of env_ref the global one. */
    void (*use_env)(ll_worker *w, int env_ref);
    /* Decodes JSON into a value of w's state: returns 0 and sets *ref, or -1
     * with err set. */
    int (*decode)(ll_worker *w, const char *json, int *ref, char *err, size_t errlen);
    /* The value of ref as JSON (malloc'd), NULL for nil (err "") or for a value
     * JSON cannot hold (err set). */
    char *(*encode)(ll_worker *w, int ref, char *err, size_t errlen);
    void (*unref)(ll_worker *w, int ref);

    /* A VU's coroutine: made, dropped (after an error or an interrupt: a
     * coroutine that raised cannot be resumed), started with fn_ref(arg_ref)
     * (arg_ref may be NOREF), resumed. vu_resume puts the error
     * message in err when it returns LL_SCRIPT_FAILED. */
    void (*vu_open)(ll_vu *vu);
    void (*vu_close)(ll_vu *vu);
    int (*vu_call)(ll_vu *vu, int fn_ref, int arg_ref); /* returns nargs */
    int (*vu_resume)(ll_vu *vu, int nargs, char *err, size_t errlen);
    /* After LL_SCRIPT_RETURNED: a reference to the first value returned (NOREF
     * when none); clears the coroutine's stack either way. */
    int (*vu_result)(ll_vu *vu, int keep);

    /* Prints or writes the end-of-test summary: handle_summary(data) when the
     * script has one, else luaload.summary's text on stdout. Returns 0 or -1. */
    int (*summary)(ll_worker *w, const cJSON *data);
} ll_script_ops;

#endif
