/* listen.h -- the small HTTP servers of a run (k6's status API, the web
 * dashboard): a listening socket on "host:port", and one request read with
 * http-parser within a deadline. */
#ifndef LL_LISTEN_H
#define LL_LISTEN_H

#include <stdatomic.h>
#include <stddef.h>

#define LL_LISTEN_MAX_BODY 65536

typedef struct ll_listen_req {
    char url[256];
    int method;                       /* http-parser's HTTP_GET, HTTP_PATCH, ... */
    char body[LL_LISTEN_MAX_BODY];
    size_t body_len;
    int done;                         /* a whole request was read */
} ll_listen_req;

/* Listens on address: "host:port", "port" or ":port" (the host default_host
 * when left out), "[::1]:port"; non-blocking. The fd, or -1 with "what
 * ADDRESS: reason" in err. */
int ll_listen_open(const char *address, const char *default_host, const char *what, char *err, size_t errlen);
/* Reads one request from fd (non-blocking) for at most ms milliseconds, or
 * until *stop is set; r->done tells whether it is whole. */
void ll_listen_read(int fd, int ms, atomic_int *stop, ll_listen_req *r);
/* Parses the n bytes a client sent so far: 1 when they hold a whole request
 * (in r), 0 when more must come, -1 when they are not a request. */
int ll_listen_parse(const char *p, size_t n, ll_listen_req *r);

#endif
