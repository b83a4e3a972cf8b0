/* main.c -- the luaload program: every command is in commands.c's table.
 * SIGPIPE is ignored in the whole process: a closed stdout (luaload run
 * ... | head -1) or a peer gone from a TLS socket (OpenSSL writes with
 * write(2), not send(MSG_NOSIGNAL)) is then an EPIPE error that the code
 * handles, never a death that loses the summary export and the exit code
 * (docs/failures.md). */
#include <signal.h>

#include "commands.h"

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    return ll_commands_main(argc, argv);
}
