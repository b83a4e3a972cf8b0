/* list_token.h -- comma-separated token lists as HTTP writes them
 * (Connection, Upgrade, Sec-WebSocket-Protocol: "keep-alive, Upgrade"):
 * whether one holds a token, in any case (list_token.c). */
#ifndef LL_LIST_TOKEN_H
#define LL_LIST_TOKEN_H

#include <stddef.h>

/* 1 when the list v (n bytes, not NUL-terminated) has the token t (tn
 * bytes), compared in any case, spaces and tabs around it ignored; else 0. */
int ll_list_token_has(const char *v, size_t n, const char *t, size_t tn);

#endif
