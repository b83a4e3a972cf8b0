/* commands.h -- the luaload command: its commands, their help, shell
 * completion and the command reference, from one table. */
#ifndef LL_COMMANDS_H
#define LL_COMMANDS_H

#include <stdio.h>

/* The whole command line (argv[0] is the program). Returns the exit code:
 * 104 for an unknown command, with the nearest one named. */
int ll_commands_main(int argc, char **argv);
/* The list of commands. */
void ll_commands_usage(FILE *f);

#endif
