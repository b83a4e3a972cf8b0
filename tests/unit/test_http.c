/* test_http.c -- the http module (Client, Request, params, one-off calls,
 * the Response table, errors, throw, cancellation through the VU's
 * pending-operation slot) and the HTTP metrics and tags it records, run on
 * the fake transport: no sockets. Each case is a function of the script
 * below, run once on a lifecycle worker; it returns a table that comes back
 * as JSON. */
/* links: ll_lua_api */
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_transport.h"
#include "lua_api.h"
#include "test_util.h"
#include "worker.h"

static const char *SCRIPT =
    "local http = require('luaload.http')\n"
    "local ll = require('luaload')\n"
    "local req = http.Request('http://fake/a', { headers = { ['X-A'] = '1' }, tags = { name = 'tagged' } })\n"
    "local put = http.Request('http://fake/p', { method = 'put', body = 'hello body', cookies = { c = 'v' },\n"
    "                                            host = 'example.test' })\n"
    "local none = http.Request('http://fake/n', { response_type = 'none' })\n"
    "local client = http.Client{}\n"
    "local other = http.Client{ user_agent = 'x' }\n"
    "function get_prepared()\n"
    "  local res = client:get(req)\n"
    "  local t = res.timings\n"
    "  return { status = res.status, proto = res.proto, body = res.body, fake = res.headers['X-Fake'],\n"
    "           ct = res.headers['Content-Type'], dur = t.duration, wait = t.waiting, blocked = t.blocked,\n"
    "           url = res.url, error = res.error, code = res.error_code }\n"
    "end\n"
    "function request_params() return { body = client:request(put).body } end\n"
    "function oneoff_post()\n"
    "  local res = http.post('http://fake/o', 'data=1', { headers = { ['Content-Type'] = 'text/x' },\n"
    "                                                      tags = { name = 'oneoff' } })\n"
    "  return { body = res.body }\n"
    "end\n"
    "function custom_method() return { body = client:request('propfind', 'http://fake/c').body } end\n"
    "function override_prepared()\n"
    "  local a = client:get(req, { headers = { ['X-B'] = '2' } })\n"
    "  local b = client:get(req)\n"
    "  return { first = a.body, second = b.body }\n"
    "end\n"
    "function status_404()\n"
    "  local res = http.get('http://fake/status/404')\n"
    "  return { status = res.status, code = res.error_code, ok = http.checkstatus(200, res) }\n"
    "end\n"
    "function transport_error()\n"
    "  local res = http.get('http://fake/fail')\n"
    "  local ok, err = pcall(function() return http.get('http://fake/fail', { throw = true }) end)\n"
    "  return { status = res.status, code = res.error_code, error = res.error, raised = not ok, msg = tostring(err) }\n"
    "end\n"
    "function response_none() local res = client:get(none) return { has_body = res.body ~= nil, status = res.status } end\n"
    "function response_json() local j = http.get('http://fake/json'):json() return { b = j.a[3].b, n = #j.a } end\n"
    "function two_clients() client:get(req) other:get(req) return {} end\n"
    "function bad_param() local ok, err = pcall(http.get, 'http://fake/x', { nope = 1 }) return { ok = ok, err = err } end\n"
    "function hang() http.get('http://fake/hang') end\n"
    "function sleepy() ll.sleep(30) end\n";

static ll_run run;
static ll_worker w;

/* Runs case fname; returns its result parsed (NULL when it failed). */
static cJSON *call(const char *fname) {
    char *out = NULL;
    int rc = ll_worker_call(&w, fname, NULL, &out, 5000000, 100);
    if (!tu_check(rc == 0, "%s() runs (rc %d%s%s)", fname, rc, rc ? ": " : "", rc ? w.errmsg : "")) return NULL;
    cJSON *j = out ? cJSON_Parse(out) : NULL;
    free(out);
    return j;
}

static const char *str(const cJSON *j, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static double num(const cJSON *j, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static int is_true(const cJSON *j, const char *k) { return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, k)); }

/* Checks an echoed body; prints it only when it is not the expected one. */
static void body_is(const char *got, const char *want, const char *what) {
    if (!tu_check(strcmp(got, want) == 0, "%s", what)) printf("     got:\n%s\n     expected:\n%s\n", got, want);
}

static int sub(int parent, const char *key, const char *value) {
    return ll_registry_submetric(run.reg, parent, &key, &value, 1);
}

static void test_responses(void) {
    cJSON *j = call("get_prepared");
    tu_check(num(j, "status") == 200 && strcmp(str(j, "proto"), "HTTP/1.1") == 0, "status and proto");
    body_is(str(j, "body"), "GET http://fake/a\nX-A: 1\n\n", "a prepared GET sends its headers");
    tu_check(strcmp(str(j, "fake"), "1, 2") == 0, "repeated headers joined under the canonical name: %s",
             str(j, "fake"));
    tu_check(strcmp(str(j, "ct"), "text/plain") == 0, "Content-Type header");
    tu_check(num(j, "dur") == 2.4 && num(j, "wait") == 2.0 && num(j, "blocked") == 1.0, "timings in ms");
    tu_check(strcmp(str(j, "url"), "http://fake/a") == 0 && strcmp(str(j, "error"), "") == 0 && num(j, "code") == 0,
             "url, no error");
    cJSON_Delete(j);

    j = call("request_params");
    /* params are a Lua table: the Host and Cookie headers come in its order */
    const char *b = str(j, "body");
    if (strstr(b, "Cookie") < strstr(b, "Host"))
        body_is(b, "PUT http://fake/p\nCookie: c=v\nHost: example.test\n\nhello body",
                "method upper-cased, cookies, host and body from the params");
    else
        body_is(b, "PUT http://fake/p\nHost: example.test\nCookie: c=v\n\nhello body",
                "method upper-cased, cookies, host and body from the params");
    cJSON_Delete(j);

    j = call("oneoff_post");
    body_is(str(j, "body"), "POST http://fake/o\nContent-Type: text/x\n\ndata=1", "one-off POST");
    cJSON_Delete(j);

    j = call("custom_method");
    body_is(str(j, "body"), "PROPFIND http://fake/c\n\n", "a method of the user's");
    cJSON_Delete(j);

    j = call("override_prepared");
    body_is(str(j, "first"), "GET http://fake/a\nX-A: 1\nX-B: 2\n\n", "per-call params add to a prepared request");
    body_is(str(j, "second"), "GET http://fake/a\nX-A: 1\n\n", "and leave it as it was");
    cJSON_Delete(j);

    j = call("status_404");
    tu_check(num(j, "status") == 404 && num(j, "code") == 1404 && !is_true(j, "ok"),
             "404: error_code 1404, checkstatus fails");
    cJSON_Delete(j);

    j = call("transport_error");
    tu_check(num(j, "status") == 0 && num(j, "code") == 1212 && strcmp(str(j, "error"), "connection refused") == 0,
             "transport error: status 0, error_code, error");
    tu_check(is_true(j, "raised") && strstr(str(j, "msg"), "GET http://fake/fail: connection refused (error_code 1212)"),
             "throw = true raises: %s", str(j, "msg"));
    cJSON_Delete(j);

    j = call("response_none");
    tu_check(num(j, "status") == 200 && !is_true(j, "has_body"), "response_type none: no body");
    cJSON_Delete(j);

    j = call("response_json");
    tu_check(strcmp(str(j, "b"), "c") == 0 && num(j, "n") == 3, "res:json()");
    cJSON_Delete(j);

    j = call("bad_param");
    tu_check(!is_true(j, "ok") && strstr(str(j, "err"), "unknown parameter 'nope'"), "unknown param: %s",
             str(j, "err"));
    cJSON_Delete(j);

    int before = fake_transport_stats.transfers;
    j = call("two_clients");
    cJSON_Delete(j);
    tu_check(fake_transport_stats.transfers == before + 1, "a second Client gets its own transfer (%d new)",
             fake_transport_stats.transfers - before);
}

static void test_cancel(void) {
    char *out = NULL;
    int cancels = fake_transport_stats.cancels;
    int rc = ll_worker_call(&w, "hang", NULL, &out, 50000, 100);
    tu_check(rc == 100, "a request that never completes is cut at the call's timeout (rc %d)", rc);
    tu_check(fake_transport_stats.cancels == cancels + 1, "through the pending slot: the transfer was cancelled");
    rc = ll_worker_call(&w, "sleepy", NULL, &out, 50000, 100);
    tu_check(rc == 100, "a sleep is cut at the call's timeout (rc %d)", rc);
    cJSON *j = call("get_prepared"); /* the VU works again after both */
    tu_check(num(j, "status") == 200, "the VU runs again after an interrupt");
    cJSON_Delete(j);
}

static double counter(int id) { return w.shard->values[id].sum; }

static void test_metrics(int tagged, int put, int propfind, int s404, int e1212, int unexpected, int oneoff) {
    ll_value *reqs = &w.shard->values[LL_M_HTTP_REQS];
    ll_value *failed = &w.shard->values[LL_M_HTTP_REQ_FAILED];
    ll_value *dur = &w.shard->values[LL_M_HTTP_REQ_DURATION];
    /* 1 + 1 + 1 + 1 + 2 + 1 + 2 + 1 + 1 + 2 in test_responses, 2 in test_cancel:
     * the hanging request reached the (fake) server, so it counts, failed */
    tu_check(reqs->sum == 15, "http_reqs counts every request that reached the server (%g)", reqs->sum);
    tu_check(counter(tagged) == 6, "tags.name replaces the url as name (%g)", counter(tagged));
    tu_check(counter(oneoff) == 1, "one-off calls carry their tags (%g)", counter(oneoff));
    tu_check(counter(put) == 1 && counter(propfind) == 1, "method tag");
    tu_check(counter(s404) == 1, "status tag");
    tu_check(counter(e1212) == 2, "error_code tag (%g)", counter(e1212));
    tu_check(counter(unexpected) == 4, "expected_response tag (%g)", counter(unexpected));
    tu_check(failed->total == 15 && failed->passes == 4, "http_req_failed: 4 of 15, the cut one too (%lld of %lld)",
             (long long)failed->passes, (long long)failed->total);
    tu_check(dur->hist && ll_histogram_min(dur->hist) == FAKE_DURATION_US && ll_histogram_max(dur->hist) == FAKE_DURATION_US,
             "http_req_duration from the transport's timings");
    /* 100 per response but the 2 transport errors */
    tu_check(w.shard->values[LL_M_DATA_SENT].sum == 1200, "data_sent (%g)", w.shard->values[LL_M_DATA_SENT].sum);
    tu_check(w.shard->values[LL_M_CHECKS].total == 1 && w.shard->values[LL_M_CHECKS].passes == 0,
             "checkstatus recorded a failed check");
}

static void test_init_error(void) {
    ll_run r2 = run;
    r2.script_source = "local http = require('luaload.http')\nlocal r = http.Request('ftp://x')\n";
    ll_worker w2;
    int rc = ll_worker_init(&w2, &r2, -1);
    tu_check(rc == 107 && strstr(w2.errmsg, "test:2:") && strstr(w2.errmsg, "invalid URL 'ftp://x'"),
             "a bad Request at init is a script error naming the line: %s", w2.errmsg);
    ll_worker_free(&w2);
}

/* A transport without HTTP/3 (the fake one) refuses a Client asking for it
 * at init, before any test runs, naming the transport. */
static void test_no_http3(void) {
    ll_run r2 = run;
    r2.script_source = "local http = require('luaload.http')\nlocal c = http.Client{ http_version = '3' }\n";
    ll_worker w2;
    int rc = ll_worker_init(&w2, &r2, -1);
    tu_check(rc == 107 && strstr(w2.errmsg, "test:2:") && strstr(w2.errmsg, "http_version \"3\" is not available") &&
                 strstr(w2.errmsg, "fake transport"),
             "HTTP/3 from a transport without it is a clear init error: %s", w2.errmsg);
    ll_worker_free(&w2);
    r2.script_source = "local http = require('luaload.http')\nlocal c = http.Client{ http_version = '2' }\n";
    rc = ll_worker_init(&w2, &r2, -1);
    tu_check(rc == 0, "HTTP/2 is fine (%s)", w2.errmsg);
    ll_worker_free(&w2);
}

int main(void) {
    ll_scenarios none = {0};
    run.script_source = SCRIPT;
    run.script = &ll_lua_script;
    run.chunkname = "=test";
    run.lib_dir = LUALOAD_SOURCE_LUA_DIR;
    run.scenarios = &none;
    run.nworkers = 1;
    run.reg = ll_registry_new(3);
    run.transport = &fake_transport_ops;
    int tagged = sub(LL_M_HTTP_REQS, "name", "tagged"), put = sub(LL_M_HTTP_REQS, "method", "PUT");
    int propfind = sub(LL_M_HTTP_REQS, "method", "PROPFIND"), s404 = sub(LL_M_HTTP_REQS, "status", "404");
    int e1212 = sub(LL_M_HTTP_REQS, "error_code", "1212"), oneoff = sub(LL_M_HTTP_REQS, "name", "oneoff");
    int unexpected = sub(LL_M_HTTP_REQS, "expected_response", "false");
    int rc = ll_worker_init(&w, &run, -1);
    if (!tu_check(rc == 0, "the script loads (%s)", w.errmsg)) return tu_summary();
    test_responses();
    test_cancel();
    test_metrics(tagged, put, propfind, s404, e1212, unexpected, oneoff);
    test_init_error();
    test_no_http3();
    ll_worker_free(&w);
    ll_registry_free(run.reg);
    return tu_summary();
}
