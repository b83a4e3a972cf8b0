/* app.c -- `luaload serve`'s demo application, so that example scripts (a
 * CRUD API flow with a login, a form login with a CSRF token) need no
 * outside server.
 *
 * Owns: the per-process key (32 random bytes drawn at serve start) and the
 * stateless tokens made with it, "user." + the first 32 hex digits of
 * HMAC-SHA256(key, purpose + user) (API tokens, session cookies) and the
 * CSRF tokens (of the csrf cookie's nonce); matching the application's
 * paths; the in-memory item store the threads share (one mutex, ids from
 * 1, at most STORE_MAX live items, per owner in id order, freed at exit);
 * reading the JSON (cJSON) and form bodies and the Authorization and Cookie
 * header lines request.c keeps; and each page's answer: status, headers,
 * JSON or HTML, which routes.c queues.
 *
 *   POST /api/login     {"username","password"}: {"token","username"}
 *   /api/items          GET the token owner's items, POST a new one
 *   /api/items/ID       GET, PUT or DELETE one of them
 *   GET /login          the login form: a csrf cookie and its token
 *   POST /login         the form posted: 303 to /welcome with a session cookie
 *   GET /welcome        the page behind the session cookie */
#include "xmalloc.h"
#include "serve_internal.h"

#include <cJSON.h>
#include <inttypes.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#define KEY_LEN 32
#define MAC_HEX 32                         /* hex digits of a MAC in a token */
#define NONCE_LEN 16                       /* random bytes of a csrf cookie */
#define USER_MAX 64
#define TOKEN_MAX (USER_MAX + 1 + MAC_HEX + 1)
#define ITEM_NAME_MAX 256
#define STORE_MAX 100000                   /* live items, all owners */
#define PASSWORD "secret"
#define JSON "application/json"
#define HTML "text/html; charset=utf-8"

enum { APP_API_LOGIN, APP_ITEMS, APP_ITEM, APP_API_OTHER, APP_LOGIN, APP_WELCOME };
enum { OP_LIST, OP_CREATE, OP_GET, OP_PUT, OP_DELETE };

/* ---- the key and the tokens ---- */

static unsigned char app_key[KEY_LEN];
static int app_key_ok;

static void hex(const unsigned char *p, size_t n, char *out) {
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    out[2 * n] = '\0';
}

/* The first MAC_HEX hex digits of HMAC-SHA256(key, purpose + s) into out
 * (MAC_HEX + 1 bytes). 0, or -1 when s is too long or HMAC failed. */
static int mac_hex(const char *purpose, const char *s, size_t n, char *out) {
    unsigned char msg[16 + 2 * USER_MAX], md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    size_t k = strlen(purpose);
    if (k + n > sizeof(msg)) return -1;
    memcpy(msg, purpose, k);
    memcpy(msg + k, s, n);
    if (!HMAC(EVP_sha256(), app_key, KEY_LEN, msg, k + n, md, &mdlen) || mdlen < MAC_HEX / 2) return -1;
    hex(md, MAC_HEX / 2, out);
    return 0;
}

/* 1 to USER_MAX of A-Z a-z 0-9 _ . - */
static int valid_user(const char *s, size_t n) {
    if (n < 1 || n > USER_MAX) return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
                 ch == '.' || ch == '-';
        if (!ok) return 0;
    }
    return 1;
}

/* "user.MAC" into out (TOKEN_MAX bytes); user is valid. 0 or -1. */
static int token_make(const char *purpose, const char *user, char *out) {
    size_t n = strlen(user);
    memcpy(out, user, n);
    out[n] = '.';
    return mac_hex(purpose, user, n, out + n + 1);
}

/* The user of the n-byte token t made for purpose, into user (USER_MAX + 1
 * bytes). 0, or -1 when t is no such token. */
static int token_user(const char *purpose, const char *t, size_t n, char *user) {
    char want[MAC_HEX + 1];
    if (n < MAC_HEX + 2 || t[n - MAC_HEX - 1] != '.') return -1;
    size_t un = n - MAC_HEX - 1;
    if (!valid_user(t, un) || mac_hex(purpose, t, un, want) < 0) return -1;
    if (CRYPTO_memcmp(want, t + un + 1, MAC_HEX) != 0) return -1;
    memcpy(user, t, un);
    user[un] = '\0';
    return 0;
}

/* ---- the store ---- */

typedef struct item {
    uint64_t id;
    int has_price;
    double price;
    char name[];          /* NUL-terminated */
} item;

typedef struct slot {
    uint64_t id;
    item *it;             /* NULL once deleted (compacted away later) */
} slot;

typedef struct owner {
    struct owner *next;   /* in its hash bucket */
    char name[USER_MAX + 1];
    slot *slots;          /* in id order: ids only grow */
    size_t n, cap, live;
} owner;

/* What a POST or PUT body says; name points into the parsed JSON. */
typedef struct item_in {
    const char *name;
    int has_price;
    double price;
} item_in;

static struct {
    pthread_mutex_t mu;
    owner **buckets;      /* owners with live items, by name */
    size_t nbuckets, owners, live;
    uint64_t next_id;
} store = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0, 1};

static size_t name_hash(const char *s) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (size_t)h;
}

/* The link that points at the owner called name, or at NULL if there is none. */
static owner **owner_link(const char *name) {
    owner **l = &store.buckets[name_hash(name) & (store.nbuckets - 1)];
    while (*l && strcmp((*l)->name, name) != 0) l = &(*l)->next;
    return l;
}

/* Doubles the buckets (from 64) and rehashes. */
static void owners_grow(void) {
    size_t old = store.nbuckets;
    owner **ob = store.buckets;
    store.nbuckets = old ? 2 * old : 64;
    store.buckets = ll_xcalloc(store.nbuckets, sizeof(*store.buckets));
    for (size_t i = 0; i < old; i++) {
        for (owner *o = ob[i], *next; o; o = next) {
            next = o->next;
            owner **l = &store.buckets[name_hash(o->name) & (store.nbuckets - 1)];
            o->next = *l;
            *l = o;
        }
    }
    free(ob);
}

/* The owner called name; made when create is set, else NULL if none. */
static owner *owner_get(const char *name, int create) {
    if (!create && !store.nbuckets) return NULL;
    if (create && store.owners >= store.nbuckets) owners_grow();
    owner **l = owner_link(name);
    if (*l || !create) return *l;
    owner *o = ll_xcalloc(1, sizeof(*o));
    snprintf(o->name, sizeof(o->name), "%s", name);
    *l = o;
    store.owners++;
    return o;
}

static void owner_free(owner *o) {
    for (size_t i = 0; i < o->n; i++) free(o->slots[i].it);
    free(o->slots);
    free(o);
}

/* An owner without live items goes. */
static void owner_drop(owner *o) {
    owner **l = owner_link(o->name);
    *l = o->next;
    store.owners--;
    owner_free(o);
}

/* Removes the deleted slots once they are the majority (amortized O(1)). */
static void owner_compact(owner *o) {
    size_t k = 0;
    if (2 * o->live >= o->n) return;
    for (size_t i = 0; i < o->n; i++)
        if (o->slots[i].it) o->slots[k++] = o->slots[i];
    o->n = k;
}

/* The live slot of item id, or NULL. */
static slot *slot_find(owner *o, uint64_t id) {
    size_t lo = 0, hi = o->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (o->slots[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < o->n && o->slots[lo].id == id && o->slots[lo].it ? &o->slots[lo] : NULL;
}

static item *item_new(uint64_t id, const item_in *in) {
    size_t n = strlen(in->name);
    item *it = ll_xmalloc(sizeof(*it) + n + 1);
    it->id = id;
    it->has_price = in->has_price;
    it->price = in->price;
    memcpy(it->name, in->name, n + 1);
    return it;
}

/* Frees every item and owner and starts the ids from 1 again (at exit). */
static void store_free(void) {
    pthread_mutex_lock(&store.mu);
    for (size_t i = 0; i < store.nbuckets; i++) {
        for (owner *o = store.buckets[i], *next; o; o = next) {
            next = o->next;
            owner_free(o);
        }
    }
    free(store.buckets);
    store.buckets = NULL;
    store.nbuckets = store.owners = store.live = 0;
    store.next_id = 1;
    pthread_mutex_unlock(&store.mu);
}

/* ---- JSON ---- */

/* s as a JSON string: quotes, backslashes and control characters escaped. */
static void json_str(ll_buf *b, const char *s) {
    char esc[8];
    ll_buf_puts(b, "\"");
    for (const char *run = s;; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch >= 0x20 && ch != '"' && ch != '\\') continue;
        ll_buf_append(b, run, (size_t)(s - run));
        if (!ch) break;
        switch (ch) {
        case '"': case '\\': snprintf(esc, sizeof(esc), "\\%c", ch); break;
        case '\n': snprintf(esc, sizeof(esc), "\\n"); break;
        case '\r': snprintf(esc, sizeof(esc), "\\r"); break;
        case '\t': snprintf(esc, sizeof(esc), "\\t"); break;
        default: snprintf(esc, sizeof(esc), "\\u%04x", ch); break;
        }
        ll_buf_puts(b, esc);
        run = s + 1;
    }
    ll_buf_puts(b, "\"");
}

/* The shortest of %.15g and %.17g that reads back as v. */
static void json_number(ll_buf *b, double v) {
    char num[40];
    snprintf(num, sizeof(num), "%.15g", v);
    if (strtod(num, NULL) != v) snprintf(num, sizeof(num), "%.17g", v);
    ll_buf_puts(b, num);
}

/* {"id":7,"name":"x","price":1.5,"owner":"alice"} */
static void json_item(ll_buf *b, const owner *o, const item *it) {
    char num[48];
    snprintf(num, sizeof(num), "{\"id\":%" PRIu64 ",\"name\":", it->id);
    ll_buf_puts(b, num);
    json_str(b, it->name);
    if (it->has_price) {
        ll_buf_puts(b, ",\"price\":");
        json_number(b, it->price);
    }
    ll_buf_puts(b, ",\"owner\":");
    json_str(b, o->name);
    ll_buf_puts(b, "}");
}

static void reply(app_reply *a, int status, const char *type) {
    a->status = status;
    a->type = type;
}

static void json_error(app_reply *a, int status, const char *msg) {
    reply(a, status, JSON);
    ll_buf_puts(&a->body, "{\"error\":");
    json_str(&a->body, msg);
    ll_buf_puts(&a->body, "}");
}

/* The request body: what follows the kept header lines in c->body. */
static const char *body_of(const conn *c, size_t *n) {
    *n = c->blen - c->req.app_hdr_len;
    return *n ? c->body + c->req.app_hdr_len : "";
}

/* The body as a JSON object, or NULL with a one-line reason in *why. */
static cJSON *parse_json(const conn *c, const char **why) {
    size_t n;
    const char *b = body_of(c, &n), *end = NULL;
    cJSON *root = n ? cJSON_ParseWithLengthOpts(b, n, &end, 0) : NULL;
    while (root && end < b + n && (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')) end++;
    if (root && end < b + n) *why = "the body is not JSON: something follows the value";
    else if (!root) *why = n ? "the body is not JSON" : "no body: expected a JSON object";
    else if (!cJSON_IsObject(root)) *why = "the body is not a JSON object";
    else return root;
    cJSON_Delete(root);
    return NULL;
}

/* {"name": a non-empty string up to ITEM_NAME_MAX bytes, "price": a number
 * or absent (null is absent)}: NULL, or the reason the body is refused. */
static const char *parse_item(const cJSON *root, item_in *in) {
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
    const cJSON *price = cJSON_GetObjectItemCaseSensitive(root, "price");
    if (!cJSON_IsString(name)) return "name must be a string";
    size_t n = strlen(name->valuestring);
    if (n < 1 || n > ITEM_NAME_MAX) return "name must be 1 to 256 bytes";
    if (price && !cJSON_IsNull(price) && !cJSON_IsNumber(price)) return "price must be a number";
    in->name = name->valuestring;
    in->has_price = cJSON_IsNumber(price);
    in->price = in->has_price ? price->valuedouble : 0;
    return NULL;
}

/* ---- request headers ---- */

/* The value of the next kept header line called name (lowercase) at or
 * after *pos, moving *pos past it; NULL when there is none. request.c keeps
 * them as "name: value\r\n". */
static const char *kept_next(const conn *c, const char *name, size_t *pos, size_t *vlen) {
    size_t k = strlen(name), end = c->req.app_hdr_len;
    while (*pos < end) {
        const char *line = c->body + *pos;
        const char *eol = memchr(line, '\n', end - *pos);
        size_t len = (size_t)(eol - line);
        *pos += len + 1;
        if (len >= k + 3 && memcmp(line, name, k) == 0 && line[k] == ':') {
            *vlen = len - k - 3;
            return line + k + 2;
        }
    }
    return NULL;
}

/* The value of the first cookie called name in the Cookie lines (quotes
 * removed), or NULL. */
static const char *cookie_value(const conn *c, const char *name, size_t *vlen) {
    size_t pos = 0, n, k = strlen(name);
    const char *v;
    while ((v = kept_next(c, "cookie", &pos, &n))) {
        const char *end = v + n;
        while (v < end) {
            while (v < end && (*v == ' ' || *v == '\t' || *v == ';')) v++;
            const char *pair = v;
            while (v < end && *v != ';') v++;
            const char *eq = memchr(pair, '=', (size_t)(v - pair));
            if (!eq || (size_t)(eq - pair) != k || memcmp(pair, name, k) != 0) continue;
            const char *val = eq + 1, *ve = v;
            while (ve > val && (ve[-1] == ' ' || ve[-1] == '\t')) ve--;
            if (ve - val >= 2 && val[0] == '"' && ve[-1] == '"') val++, ve--;
            *vlen = (size_t)(ve - val);
            return val;
        }
    }
    return NULL;
}

/* The user of "Authorization: Bearer <token>". 0 or -1. */
static int bearer_user(const conn *c, char *user) {
    size_t pos = 0, n;
    const char *v = kept_next(c, "authorization", &pos, &n);
    if (!v || n < 7 || strncasecmp(v, "bearer ", 7) != 0) return -1;
    v += 7;
    n -= 7;
    while (n > 0 && (*v == ' ' || *v == '\t')) {
        v++;
        n--;
    }
    return token_user("api:", v, n, user);
}

/* ---- forms ---- */

static int hex_value(char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* Percent-decodes n bytes ('+' is a space; a '%' without two hex digits
 * stays) into out (cap bytes, NUL-terminated). -1 when it does not fit or
 * decodes to a NUL. */
static int url_decode(const char *s, size_t n, char *out, size_t cap) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int ch = (unsigned char)s[i];
        if (ch == '+') ch = ' ';
        if (ch == '%' && i + 2 < n && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
            ch = hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]);
            i += 2;
        }
        if (ch == 0 || k + 1 >= cap) return -1;
        out[k++] = (char)ch;
    }
    out[k] = '\0';
    return 0;
}

/* The form field name of the application/x-www-form-urlencoded body,
 * decoded into out (cap bytes); the first of that name. 0, or -1 when it is
 * missing or does not decode into out. */
static int form_field(const conn *c, const char *name, char *out, size_t cap) {
    size_t n;
    const char *p = body_of(c, &n), *end = p + n;
    char key[32];
    while (p < end) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        if (!amp) amp = end;
        const char *eq = memchr(p, '=', (size_t)(amp - p));
        const char *ke = eq ? eq : amp;
        if (url_decode(p, (size_t)(ke - p), key, sizeof(key)) == 0 && strcmp(key, name) == 0)
            return eq ? url_decode(eq + 1, (size_t)(amp - eq - 1), out, cap) : url_decode("", 0, out, cap);
        p = amp + 1;
    }
    return -1;
}

/* ---- HTML ---- */

static void html_escape(ll_buf *b, const char *s) {
    for (const char *run = s;; s++) {
        const char *ent = *s == '<' ? "&lt;" : *s == '>' ? "&gt;" : *s == '&' ? "&amp;"
                        : *s == '"' ? "&quot;" : *s == '\'' ? "&#39;" : NULL;
        if (*s && !ent) continue;
        ll_buf_append(b, run, (size_t)(s - run));
        if (!*s) break;
        ll_buf_puts(b, ent);
        run = s + 1;
    }
}

/* A whole page: the title as its <h1> unless h1 is set, an error paragraph
 * when error is, then more (HTML). */
static void html_page(app_reply *a, int status, const char *title, const char *error, const char *more) {
    ll_buf *b = &a->body;
    reply(a, status, HTML);
    ll_buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>");
    ll_buf_puts(b, title);
    ll_buf_puts(b, " - luaload demo</title></head>\n<body>\n");
    if (error) {
        ll_buf_puts(b, "<p class=\"error\">");
        ll_buf_puts(b, error);
        ll_buf_puts(b, "</p>\n");
    }
    ll_buf_puts(b, more);
    ll_buf_puts(b, "</body>\n</html>\n");
}

/* The login form with a fresh csrf cookie and token. */
static void login_form(app_reply *a, int status, const char *error) {
    unsigned char raw[NONCE_LEN];
    char nonce[2 * NONCE_LEN + 1], csrf[MAC_HEX + 1], form[512];
    if (RAND_bytes(raw, sizeof(raw)) != 1) {
        html_page(a, 503, "Unavailable", "no random bytes for a CSRF token", "");
        return;
    }
    hex(raw, sizeof(raw), nonce);
    if (mac_hex("csrf:", nonce, strlen(nonce), csrf) < 0) {
        html_page(a, 503, "Unavailable", "cannot make a CSRF token", "");
        return;
    }
    snprintf(a->extra, sizeof(a->extra), "Set-Cookie: csrf=%s; Path=/; HttpOnly\r\n", nonce);
    snprintf(form, sizeof(form),
             "<h1>Log in</h1>\n"
             "<form id=\"login\" action=\"/login\" method=\"post\">\n"
             "<input type=\"hidden\" name=\"csrf_token\" value=\"%s\">\n"
             "<label>Username <input name=\"username\"></label>\n"
             "<label>Password <input type=\"password\" name=\"password\"></label>\n"
             "<button type=\"submit\">Log in</button>\n"
             "</form>\n",
             csrf);
    html_page(a, status, "Log in", error, form);
}

/* ---- pages ---- */

static void not_allowed(app_reply *a, const char *methods, int json) {
    snprintf(a->extra, sizeof(a->extra), "Allow: %s\r\n", methods);
    if (json) json_error(a, 405, "method not allowed");
    else html_page(a, 405, "Method not allowed", "method not allowed", "");
}

/* GET and HEAD are one. */
static int method_of(const request *r) { return r->method == METHOD_HEAD ? METHOD_GET : r->method; }

/* POST /api/login */
static void api_login(const conn *c, app_reply *a) {
    const char *why = NULL;
    char token[TOKEN_MAX];
    if (c->req.method != METHOD_POST) {
        not_allowed(a, "POST", 1);
        return;
    }
    cJSON *root = parse_json(c, &why);
    const cJSON *user = cJSON_GetObjectItemCaseSensitive(root, "username");
    const cJSON *pass = cJSON_GetObjectItemCaseSensitive(root, "password");
    if (!why && !cJSON_IsString(user)) why = "username must be a string";
    if (!why && !valid_user(user->valuestring, strlen(user->valuestring)))
        why = "username must be 1 to 64 of A-Z a-z 0-9 _ . -";
    if (!why && !cJSON_IsString(pass)) why = "password must be a string";
    if (why) {
        json_error(a, 400, why);
    } else if (strcmp(pass->valuestring, PASSWORD) != 0) {
        json_error(a, 401, "invalid credentials");
    } else if (token_make("api:", user->valuestring, token) < 0) {
        json_error(a, 503, "cannot make a token");
    } else {
        reply(a, 200, JSON);
        ll_buf_puts(&a->body, "{\"token\":");
        json_str(&a->body, token);
        ll_buf_puts(&a->body, ",\"username\":");
        json_str(&a->body, user->valuestring);
        ll_buf_puts(&a->body, "}");
    }
    cJSON_Delete(root);
}

/* One store operation for user, under the store's lock. */
static void store_op(int op, const char *user, uint64_t id, const item_in *in, app_reply *a) {
    pthread_mutex_lock(&store.mu);
    int full = op == OP_CREATE && store.live >= STORE_MAX;
    owner *o = owner_get(user, op == OP_CREATE && !full);
    slot *s = o && op >= OP_GET ? slot_find(o, id) : NULL;
    if (op == OP_LIST) {
        int first = 1;
        reply(a, 200, JSON);
        ll_buf_puts(&a->body, "{\"items\":[");
        for (size_t i = 0; o && i < o->n; i++) {
            if (!o->slots[i].it) continue;
            if (!first) ll_buf_puts(&a->body, ",");
            json_item(&a->body, o, o->slots[i].it);
            first = 0;
        }
        ll_buf_puts(&a->body, "]}");
    } else if (full) {
        json_error(a, 503, "store full");
    } else if (op == OP_CREATE) {
        if (o->n == o->cap) {
            o->cap = o->cap ? 2 * o->cap : 4;
            o->slots = ll_xrealloc(o->slots, o->cap * sizeof(*o->slots));
        }
        s = &o->slots[o->n++];
        s->id = store.next_id++;
        s->it = item_new(s->id, in);
        o->live++;
        store.live++;
        snprintf(a->extra, sizeof(a->extra), "Location: /api/items/%" PRIu64 "\r\n", s->id);
        reply(a, 201, JSON);
        json_item(&a->body, o, s->it);
    } else if (!s) {
        json_error(a, 404, "not found");
    } else if (op == OP_GET || op == OP_PUT) {
        if (op == OP_PUT) {
            free(s->it);
            s->it = item_new(s->id, in);
        }
        reply(a, 200, JSON);
        json_item(&a->body, o, s->it);
    } else { /* OP_DELETE */
        free(s->it);
        s->it = NULL;
        o->live--;
        store.live--;
        owner_compact(o);
        reply(a, 204, JSON);
    }
    if (o && o->live == 0) owner_drop(o);
    pthread_mutex_unlock(&store.mu);
}

/* /api/items and /api/items/ID: the method, the token, the body, the store. */
static void api_items(const conn *c, app_reply *a) {
    const request *r = &c->req;
    int one = r->app_page == APP_ITEM, m = method_of(r), op;
    char user[USER_MAX + 1];
    item_in in = {0};
    const char *why = NULL;
    cJSON *root = NULL;
    if (!one && (m == METHOD_GET || m == METHOD_POST)) op = m == METHOD_GET ? OP_LIST : OP_CREATE;
    else if (one && m == METHOD_GET) op = OP_GET;
    else if (one && m == METHOD_PUT) op = OP_PUT;
    else if (one && m == METHOD_DELETE) op = OP_DELETE;
    else op = -1;
    if (op < 0) {
        not_allowed(a, one ? "GET, HEAD, PUT, DELETE" : "GET, HEAD, POST", 1);
        return;
    }
    if (bearer_user(c, user) < 0) {
        json_error(a, 401, "missing or invalid token");
        return;
    }
    if (op == OP_CREATE || op == OP_PUT) root = parse_json(c, &why);
    if (root) why = parse_item(root, &in);
    if (why) json_error(a, 400, why);
    else store_op(op, user, r->app_id, &in, a);
    cJSON_Delete(root);
}

/* POST /login: the CSRF token first (403), then the credentials (401). */
static void login_post(const conn *c, app_reply *a) {
    char user[USER_MAX + 1], pass[64], csrf[MAC_HEX + 1], want[MAC_HEX + 1], token[TOKEN_MAX];
    size_t nlen = 0;
    const char *nonce = cookie_value(c, "csrf", &nlen);
    int csrf_ok = nonce && nlen >= 1 && nlen <= 2 * NONCE_LEN && form_field(c, "csrf_token", csrf, sizeof(csrf)) == 0 &&
                  strlen(csrf) == MAC_HEX && mac_hex("csrf:", nonce, nlen, want) == 0 &&
                  CRYPTO_memcmp(want, csrf, MAC_HEX) == 0;
    int creds_ok = form_field(c, "username", user, sizeof(user)) == 0 && valid_user(user, strlen(user)) &&
                   form_field(c, "password", pass, sizeof(pass)) == 0 && strcmp(pass, PASSWORD) == 0;
    if (!csrf_ok) {
        html_page(a, 403, "Forbidden", "invalid CSRF token", "<p><a href=\"/login\">Log in</a></p>\n");
    } else if (!creds_ok) {
        login_form(a, 401, "invalid credentials");
    } else if (token_make("session:", user, token) < 0) {
        html_page(a, 503, "Unavailable", "cannot make a session", "");
    } else {
        snprintf(a->extra, sizeof(a->extra), "Location: /welcome\r\nSet-Cookie: session=%s; Path=/; HttpOnly\r\n",
                 token);
        html_page(a, 303, "Logged in", NULL, "<p><a href=\"/welcome\">Welcome</a></p>\n");
    }
}

/* GET /welcome */
static void welcome(const conn *c, app_reply *a) {
    char user[USER_MAX + 1];
    size_t n = 0;
    const char *v = cookie_value(c, "session", &n);
    ll_buf more = {0};
    if (!v || token_user("session:", v, n, user) < 0) {
        html_page(a, 401, "Not logged in", "not logged in", "<p><a href=\"/login\">Log in</a></p>\n");
        return;
    }
    ll_buf_puts(&more, "<h1 id=\"welcome\">Welcome, ");
    html_escape(&more, user);
    ll_buf_puts(&more, "</h1>\n<nav>\n<a class=\"nav\" href=\"/api/items\">items</a>\n"
                       "<a class=\"nav\" href=\"/stats\">stats</a>\n"
                       "<a class=\"nav\" href=\"/login\">log in again</a>\n</nav>\n");
    html_page(a, 200, "Welcome", NULL, more.p ? more.p : "");
    if (more.failed) a->body.failed = 1;
    ll_buf_free(&more);
}

static void login_page(const conn *c, app_reply *a) {
    int m = method_of(&c->req);
    if (c->req.app_page == APP_WELCOME && m != METHOD_GET) not_allowed(a, "GET, HEAD", 0);
    else if (c->req.app_page == APP_WELCOME) welcome(c, a);
    else if (m == METHOD_GET) login_form(a, 200, NULL);
    else if (m == METHOD_POST) login_post(c, a);
    else not_allowed(a, "GET, HEAD, POST", 0);
}

/* ---- the application ---- */

void ll_app_init(void) {
    app_key_ok = getrandom(app_key, sizeof(app_key), 0) == (ssize_t)sizeof(app_key) ||
                 RAND_bytes(app_key, sizeof(app_key)) == 1;
    if (!app_key_ok)
        fprintf(stderr, "luaload serve: no random bytes for the demo application's key: its pages answer 503\n");
    store_free();
}

void ll_app_free(void) { store_free(); }

static int path_is(const char *s, size_t n, const char *word) { return strlen(word) == n && memcmp(s, word, n) == 0; }

int ll_app_match(request *r, const char *path, size_t len) {
    uint64_t id;
    if (path_is(path, len, "/login") || path_is(path, len, "/welcome")) {
        r->app_page = path[1] == 'l' ? APP_LOGIN : APP_WELCOME;
        return ROUTE_LOGIN;
    }
    if (!path_is(path, len, "/api") && (len < 5 || memcmp(path, "/api/", 5) != 0)) return -1;
    r->app_page = APP_API_OTHER;
    if (path_is(path, len, "/api/login")) r->app_page = APP_API_LOGIN;
    if (path_is(path, len, "/api/items")) r->app_page = APP_ITEMS;
    if (len > 11 && memcmp(path, "/api/items/", 11) == 0 && ll_request_parse_u64n(path + 11, len - 11, &id) == 0) {
        r->app_page = APP_ITEM;
        r->app_id = id;
    }
    return ROUTE_API;
}

void ll_app_respond(const conn *c, app_reply *a) {
    memset(a, 0, sizeof(*a));
    if (!app_key_ok && c->req.route == ROUTE_API) json_error(a, 503, "no key: the server had no random bytes");
    else if (!app_key_ok) html_page(a, 503, "Unavailable", "no key: the server had no random bytes", "");
    else if (c->req.route == ROUTE_LOGIN) login_page(c, a);
    else if (c->req.app_page == APP_API_LOGIN) api_login(c, a);
    else if (c->req.app_page == APP_ITEMS || c->req.app_page == APP_ITEM) api_items(c, a);
    else json_error(a, 404, "not found");
}
