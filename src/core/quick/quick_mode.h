/* quick_mode.h -- quick mode as the engine runs it: the table of
 * operations (run/mode.h) the app hands to ll_engine_run for `luaload run
 * URL` (quick_mode.c). */
#ifndef LL_QUICK_MODE_H
#define LL_QUICK_MODE_H

#include "mode.h"
#include "quick_native.h"

extern const ll_mode_ops ll_quick_mode_ops;

/* The plan of the run whose mode is m (quick_native.c's iterations). */
const ll_quick_plan *ll_quick_mode_plan(const ll_mode *m);

#endif
