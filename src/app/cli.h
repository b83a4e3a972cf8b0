/* cli.h -- the flags of `luaload run` (then quick mode's) and of `luaload
 * merge`: parsing them into an ll_config, and their table for help,
 * completion and the command reference (commands.c). */
#ifndef LL_CLI_H
#define LL_CLI_H

#include "config.h"
#include "flags.h"

/* Parses `luaload run` arguments (argv[0] is "run"). Returns 0, -1 when
 * help was printed, or LL_EXIT_CONFIG after printing a one-line error. */
int ll_cli_parse_run(int argc, char **argv, ll_config *cfg);
/* Parses `luaload merge` arguments (argv[0] is "merge"): the summary and
 * output flags into cfg, a SCRIPT.lua into cfg->script_path, the parts'
 * paths into *parts (malloc'd, pointing into argv). Returns like
 * ll_cli_parse_run. */
int ll_cli_parse_merge(int argc, char **argv, ll_config *cfg, char ***parts, int *nparts);
extern const ll_flag_group ll_cli_run_groups[2];
extern const ll_flag_group ll_cli_merge_groups[1];

#endif
