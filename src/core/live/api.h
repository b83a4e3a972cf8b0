/* api.h -- k6's REST status API, the part distributed runs use: GET
 * /v1/status and PATCH /v1/status on --address, so that k6-operator's
 * starter (or curl) releases instances started with --paused together. */
#ifndef LL_API_H
#define LL_API_H

#include <stddef.h>

#include <stdatomic.h>

/* k6's ExecutionStatus values, as GET /v1/status reports them */
enum {
    LL_API_STATUS_INIT_DONE = 3,
    LL_API_STATUS_PAUSED_BEFORE_RUN = 4,
    LL_API_STATUS_SETUP = 6,
    LL_API_STATUS_RUNNING = 7,
    LL_API_STATUS_TEARDOWN = 8,
    LL_API_STATUS_ENDED = 9,
    LL_API_STATUS_INTERRUPTED = 10
};

typedef struct ll_api ll_api;

/* Serves the API on address ("host:port", "port" or ":port"; the host 127.0.0.1
 * when left out), in a thread of its own. paused: the run waits in
 * ll_api_wait_resume until a PATCH sets paused to false. interrupt and
 * marked_failed are the run's flags (a signal came, test.fail()), read
 * while it serves. NULL with a one-line message in err
 * when the address is bad or taken. */
ll_api *ll_api_start(const char *address, const atomic_int *interrupt, const atomic_int *marked_failed, int paused,
                     char *err, size_t errlen);
/* Waits until the API is told to resume (at once when not paused). 0, or
 * -1 when the run was interrupted (SIGINT) while it waited. */
int ll_api_wait_resume(ll_api *a);
void ll_api_set_status(ll_api *a, int status);
/* The VUs the status reports (vus-max; vus while it runs). */
void ll_api_set_vus_max(ll_api *a, long long vus);
/* Stops the thread and closes the socket; NULL is fine. */
void ll_api_stop(ll_api *a);

#endif
