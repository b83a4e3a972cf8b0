/* main.c -- the luaload program: every command is in commands.c's table. */
#include "commands.h"

int main(int argc, char **argv) { return ll_commands_main(argc, argv); }
