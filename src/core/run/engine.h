/* engine.h -- one run: init, setup, the workers, teardown, summary. */
#ifndef LL_ENGINE_H
#define LL_ENGINE_H

#include "config.h"

/* Runs the test described by cfg; returns the process exit code. */
int ll_engine_run(ll_config *cfg);

#endif
