/* poster.c -- blocking POSTs with one reused libcurl easy handle (so the
 * connection is kept alive between writes), 10 s timeout unless the
 * request says less, no proxy; the caller's headers and basic auth per
 * request. */
#include "poster.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>

static size_t discard(char *p, size_t size, size_t n, void *ud) {
    (void)p;
    (void)ud;
    return size * n;
}

static pthread_once_t global_once = PTHREAD_ONCE_INIT;

static void global_init(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

static void *poster_open(void) {
    pthread_once(&global_once, global_init);
    CURL *c = curl_easy_init();
    if (!c) return NULL;
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_PROXY, "");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
    return c;
}

static long poster_post(void *conn, const ll_output_post *to, const char *body, size_t len, char *err, size_t errlen) {
    CURL *c = conn;
    struct curl_slist *hs = NULL;
    for (const char *const *h = to->headers; h && *h; h++) {
        struct curl_slist *more = curl_slist_append(hs, *h);
        if (!more) {
            curl_slist_free_all(hs);
            snprintf(err, errlen, "out of memory");
            return 0;
        }
        hs = more;
    }
    curl_easy_setopt(c, CURLOPT_URL, to->url);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, to->timeout_ms > 0 && to->timeout_ms < 10000 ? to->timeout_ms : 10000L);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hs);
    curl_easy_setopt(c, CURLOPT_USERPWD, to->userpwd);
    curl_easy_setopt(c, CURLOPT_HTTPAUTH, to->userpwd ? (long)CURLAUTH_BASIC : (long)CURLAUTH_NONE);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, to->insecure ? 0L : 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, to->insecure ? 0L : 2L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    CURLcode rc = curl_easy_perform(c);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(hs);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (rc != CURLE_OK) {
        snprintf(err, errlen, "%s", curl_easy_strerror(rc));
        return 0;
    }
    if (status / 100 != 2) snprintf(err, errlen, "the server answered with status %ld", status);
    return status;
}

static void poster_close(void *conn) {
    if (conn) curl_easy_cleanup(conn);
}

const ll_output_http ll_poster_http = {poster_open, poster_post, poster_close};
