/* new.h -- `luaload new`: a script from a template, and .luarc.json for
 * editor completion. */
#ifndef LL_NEW_H
#define LL_NEW_H

#include "flags.h"

/* argv[0] is "new". Returns the exit code (104 for bad flags or an
 * existing file without --force). */
int ll_new_main(int argc, char **argv);

extern const ll_flag_group ll_new_flag_groups[1];

#endif
