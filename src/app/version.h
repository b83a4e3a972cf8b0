/* version.h -- `luaload version [--json]`. */
#ifndef LL_VERSION_H
#define LL_VERSION_H

#include "flags.h"

/* argv[0] is "version". Returns the exit code. */
int ll_version_main(int argc, char **argv);

extern const ll_flag_group ll_version_flag_groups[1];

#endif
