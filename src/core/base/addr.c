/* addr.c -- numeric socket addresses from text (see addr.h). */
#include "addr.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

int ll_addr_parse(const char *host, uint16_t port, struct sockaddr_storage *ss, socklen_t *len) {
    char buf[INET6_ADDRSTRLEN + 2];
    size_t n = strlen(host);
    if (n >= sizeof(buf)) return -1;
    memcpy(buf, host, n + 1);
    if (n >= 2 && buf[0] == '[' && buf[n - 1] == ']') { /* [::1] */
        memmove(buf, buf + 1, n - 2);
        buf[n - 2] = '\0';
    }
    if (strcmp(buf, "localhost") == 0) strcpy(buf, "127.0.0.1");
    struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
    memset(ss, 0, sizeof(*ss));
    if (inet_pton(AF_INET, buf, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons(port);
        *len = sizeof(*a4);
        return 0;
    }
    if (inet_pton(AF_INET6, buf, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons(port);
        *len = sizeof(*a6);
        return 0;
    }
    return -1;
}
