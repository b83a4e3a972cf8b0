/* serve.h -- `luaload serve`: the built-in HTTP/1.1 keep-alive target server
 * (httpbin-like routes, one epoll loop and SO_REUSEPORT listener per thread),
 * with a gRPC echo over h2c on the same port. */
#ifndef LL_SERVE_H
#define LL_SERVE_H

#include "flags.h"

/* Parses the serve subcommand's arguments (argv[0] is "serve") and runs until
 * SIGINT/SIGTERM or --die-after, then prints its counters on stderr
 * ("luaload serve: stats {...}"). Returns the process exit code: 0 after a
 * clean stop or --help, 104 for an unknown flag or a bad value, 1 when it
 * cannot listen or start its threads. */
int ll_serve_main(int argc, char **argv);

/* Its flags, for luaload's help, completion and command reference. */
extern const ll_flag_group ll_serve_flag_groups[1];
/* What it answers over HTTP/2 (h2c), a paragraph for --help and the
 * command reference. */
extern const char ll_serve_h2_notes[];

#endif
