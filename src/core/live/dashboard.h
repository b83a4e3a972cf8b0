/* dashboard.h -- k6's `-o web-dashboard` (and K6_WEB_DASHBOARD=true): the
 * HTML report's page served live on K6_WEB_DASHBOARD_HOST:_PORT (default
 * 127.0.0.1:5665), its data pushed every _PERIOD (default 10s) as
 * server-sent events on /events, and the report written at the end to
 * _EXPORT when set. */
#ifndef LL_DASHBOARD_H
#define LL_DASHBOARD_H

#include <stdint.h>

#include <stddef.h>

typedef struct cJSON cJSON;
typedef struct ll_dashboard ll_dashboard;

typedef struct ll_dashboard_settings {
    int on;                  /* asked for */
    char host[256];
    int port;                /* -1: no server, only the export */
    uint64_t period_us;
    char export_file[4096];  /* "" for none */
} ll_dashboard_settings;

/* From the -o outputs' web-dashboard[=host=H&port=P&period=D&export=F] and the
 * environment. 0 (s->on tells whether it is asked for), or -1 with a
 * one-line reason in err. */
int ll_dashboard_read_settings(char *const *outputs, int noutputs, ll_dashboard_settings *s, char *err,
                               size_t errlen);
/* Listens and starts the server thread. NULL with err set. */
ll_dashboard *ll_dashboard_start(const ll_dashboard_settings *s, char *err, size_t errlen);
/* The port it listens on (the one picked for port 0). */
int ll_dashboard_port(const ll_dashboard *d);
/* New data (the report's, ll_report_data; taken over) for the page and the
 * event streams. d may be NULL (data is freed). */
void ll_dashboard_update(ll_dashboard *d, cJSON *data);
/* Sends the last data and a "stop" event, closes every stream, frees d. */
void ll_dashboard_stop(ll_dashboard *d);

#endif
