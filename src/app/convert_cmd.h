/* convert_cmd.h -- `luaload convert FILE [-o SCRIPT]`: its flags and entry
 * point (the work is src/core/convert's). */
#ifndef LL_CONVERT_CMD_H
#define LL_CONVERT_CMD_H

#include "flags.h"

/* argv[0] is "convert". Returns the exit code: 0, or 104 for a bad flag
 * or an input that cannot be converted (the message names the file and
 * where), 1 when the output cannot be written. */
int ll_convert_cmd_main(int argc, char **argv);

extern const ll_flag_group ll_convert_cmd_flag_groups[1];

#endif
