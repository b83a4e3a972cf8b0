/* convert_har.h -- what the HAR converter's files share: the reading
 * state (steps, the candidates responses offered) and correlation's
 * functions (convert_har_corr.c), used by convert_har.c's writing. */
#ifndef LL_CONVERT_HAR_H
#define LL_CONVERT_HAR_H

#include <cJSON.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "convert.h"

#define MIN_VALUE 8       /* a shorter response value is correlated only under an id-like name */
#define MAX_VALUE 2048    /* nor a longer one */
#define MAX_CANDS 4000    /* values taken from one response at most */
#define INLINE_BODY 4096  /* a longer (or binary) body goes to a file beside the script */
#define MIN_SLEEP 0.1     /* shorter recorded pauses are the browser's, not the user's */
#define MAX_LOCALS 40     /* more values from responses go in a table, v */

/* A value a response offered, which a later request may send back. */
typedef struct har_cand {
    char *value;
    char *how;   /* the Lua code that takes it from `res` (or `doc` for HTML) */
    char *where; /* "the JSON field token", for the comment */
    char *name;  /* the variable's name, unique once used */
    int html;    /* taken from res:html() */
    int number;  /* a JSON number */
    int step;    /* the step whose response has it */
    int used;
    size_t len;     /* of value */
    int next;       /* the next candidate in its hash bucket, or -1 */
    int first_sent; /* the first step whose request had the value, or INT_MAX */
} har_cand;

/* One request as the script sends it: an entry, and the entries of the
 * redirects the browser followed from it (the script follows them too). */
typedef struct har_step {
    const cJSON *entry, *last;
    int index; /* the entry's index, for messages */
    const char *pageref;
    double start, end; /* seconds; 0 when the HAR has no time */
} har_step;

typedef struct har {
    const ll_convert_opts *o;
    ll_convert_out *out;
    har_step *steps;
    int nsteps, scap;
    har_cand *cands;
    int ncands, ccap;
    char base[512]; /* the origin the `base` variable stands for */
    int skipped_static, skipped_domain, skipped_other;
    int *buckets; /* candidates by their value's hash: the first of each chain, or -1 */
    size_t nbuckets;
    unsigned char *has_len; /* [n]: some candidate is n bytes long */
    size_t max_len;         /* the longest candidate */
    int step_count;         /* candidates of the response being read */
    int *subs; /* the candidates the step being written sends back */
    int nsubs, subcap;
    ll_buf init;   /* init code: files read beside the script */
    ll_buf code;   /* default()'s body */
    int need_json; /* a body uses json.encode */
    int vars_table; /* the values from responses are fields of v */
    char *err;
    size_t errlen;
} har;

static inline const char *jstr(const cJSON *o, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static inline const cJSON *jobj(const cJSON *o, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsObject(v) ? v : NULL;
}

static inline int ends_with(const char *s, size_t n, const char *suffix) {
    size_t k = strlen(suffix);
    return n >= k && strncasecmp(s + n - k, suffix, k) == 0;
}

int har_tag_attr(const char *p, const char *end, const char *name, char *dst, size_t len);
void har_step_cands(har *h, int step);
int har_next_sub(const har *h, const char *s, size_t n, size_t from, size_t *at);
void har_expr(har *h, ll_buf *b, const char *s, size_t n, int allow_base);
char *har_expr_dup(har *h, const char *s, size_t n, int allow_base);
void har_index_cands(har *h);
void har_step_subs(har *h, int j, const char **texts, const size_t *lens, int ntexts);

#endif
