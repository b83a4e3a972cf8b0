/* exit.h -- the process exit codes, k6's numbers, shared by `luaload run`
 * and `luaload serve`. */
#ifndef LL_EXIT_H
#define LL_EXIT_H

#define LL_EXIT_OK 0
#define LL_EXIT_FAILURE 1          /* cannot start: listen, threads, memory */
#define LL_EXIT_THRESHOLDS 99
#define LL_EXIT_SETUP_TIMEOUT 100
#define LL_EXIT_TEARDOWN_TIMEOUT 101
#define LL_EXIT_CONFIG 104
#define LL_EXIT_EXTERNAL_ABORT 105
#define LL_EXIT_SCRIPT 107
#define LL_EXIT_ABORTED 108
#define LL_EXIT_CRASH 109          /* a fault caught by the crash guard (k6: GoPanic) */
#define LL_EXIT_MARKED_FAILED 110  /* luaload.execution test.fail() */

#endif
