/* addr.h -- a socket address (ll_addr), and one from its text: "127.0.0.1",
 * "::1", "[::1]" or "localhost" (127.0.0.1), for the sockets luaload
 * listens on (luaload serve --host, the REST status API's --address). */
#ifndef LL_ADDR_H
#define LL_ADDR_H

#include <stdint.h>
#include <sys/socket.h>

/* A socket address and its length (len 0: none). */
typedef struct ll_addr {
    struct sockaddr_storage ss;
    socklen_t len;
} ll_addr;

/* Fills *ss (and *len) with host and port. Returns 0, or -1 when host is
 * not an IPv4 or IPv6 address (names other than localhost are not looked
 * up). */
int ll_addr_parse(const char *host, uint16_t port, struct sockaddr_storage *ss, socklen_t *len);

#endif
