/* test_convert.c -- what `luaload convert`'s converters stand on
 * (src/core/convert): Lua literals (convert_emit.c: escaping that
 * round-trips any bytes through a Lua string's rules, identifiers, table
 * values), string expressions (convert_expr.c), form tables
 * (convert_req.c), and reading JSON and YAML (convert_doc.c: YAML 1.2
 * core scalars, anchors and merges, errors at FILE:LINE:COL). */
/* links: ll_convert */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "convert_doc.h"
#include "convert_emit.h"
#include "convert_expr.h"
#include "convert_req.h"
#include "test_util.h"

/* ---- Lua literals ---- */

/* The bytes a Lua double-quoted literal stands for, as Lua 5.1/LuaJIT read
 * it (the escapes ll_emit_str writes, and Lua's others), into out; -1 when
 * Lua would refuse it. */
static int lua_unquote(const char *lit, size_t n, ll_buf *out) {
    if (n < 2 || lit[0] != '"' || lit[n - 1] != '"') return -1;
    for (size_t i = 1; i + 1 < n; i++) {
        unsigned char c = (unsigned char)lit[i];
        if (c == '"' || c == '\n') return -1; /* unescaped: the literal would end or break */
        if (c != '\\') {
            ll_buf_append(out, &lit[i], 1);
            continue;
        }
        c = (unsigned char)lit[++i];
        const char *simple = strchr("abfnrtv\\\"'", c);
        if (c && simple) {
            static const char to[] = "\a\b\f\n\r\t\v\\\"'";
            ll_buf_append(out, &to[simple - "abfnrtv\\\"'"], 1);
        } else if (c >= '0' && c <= '9') {
            int v = 0, k = 0;
            while (k < 3 && lit[i] >= '0' && lit[i] <= '9') v = v * 10 + (lit[i++] - '0'), k++;
            i--;
            if (v > 255) return -1;
            char b = (char)v;
            ll_buf_append(out, &b, 1);
        } else {
            return -1;
        }
    }
    return 0;
}

static void str_is(const char *in, size_t n, const char *want) {
    ll_buf b = {0};
    ll_emit_str(&b, in, n);
    tu_check(strcmp(b.p, want) == 0, "emit_str -> %s (got %s)", want, b.p);
    ll_buf_free(&b);
}

static void round_trips(const char *what, const char *in, size_t n) {
    ll_buf lit = {0}, back = {0};
    ll_emit_str(&lit, in, n);
    int rc = lua_unquote(lit.p, lit.len, &back);
    tu_check(rc == 0 && back.len == n && memcmp(back.p ? back.p : "", in, n) == 0, "%s round-trips (%zu bytes)", what, n);
    ll_buf_free(&lit);
    ll_buf_free(&back);
}

static void ident_is(const char *in, const char *want) {
    char dst[64];
    ll_emit_ident(dst, sizeof(dst), in);
    tu_check(strcmp(dst, want) == 0 && ll_emit_is_ident(dst), "ident '%s' -> '%s' (got '%s')", in, want, dst);
}

static void value_is(const char *json, const char *want) {
    cJSON *v = cJSON_Parse(json);
    ll_buf b = {0};
    ll_emit_value(&b, v, 0);
    if (!tu_check(v && strcmp(b.p, want) == 0, "value %s", json)) printf("want:\n%s\ngot:\n%s\n", want, b.p);
    ll_buf_free(&b);
    cJSON_Delete(v);
}

static void emit_tests(void) {
    str_is("plain", 5, "\"plain\"");
    str_is("a\"b\\c", 5, "\"a\\\"b\\\\c\"");
    str_is("l1\nl2\r\t", 7, "\"l1\\nl2\\r\\t\"");
    str_is("\x01" "2", 2, "\"\\0012\""); /* three digits: the 2 stays a 2 */
    str_is("\0x", 2, "\"\\000x\"");
    str_is("caf\xc3\xa9", 5, "\"caf\xc3\xa9\"");           /* valid UTF-8 kept */
    str_is("\xc3(", 2, "\"\\195(\"");                       /* a broken sequence escaped */
    str_is("\xed\xa0\x80", 3, "\"\xed\xa0\x80\"");          /* (a surrogate: kept as UTF-8-shaped bytes) */
    str_is("\x7f", 1, "\"\\127\"");
    str_is("]]", 2, "\"]]\"");
    ll_buf b = {0};
    ll_emit_cstr(&b, NULL);
    tu_check(strcmp(b.p, "nil") == 0, "emit_cstr(NULL) is nil");
    ll_buf_free(&b);

    char all[256];
    for (int i = 0; i < 256; i++) all[i] = (char)i;
    round_trips("every byte", all, sizeof(all));
    for (int r = 0; r < 200; r++) {
        char rnd[64];
        size_t n = (size_t)(tu_rand() % sizeof(rnd));
        for (size_t i = 0; i < n; i++) rnd[i] = (char)(tu_rand() % 8 == 0 ? '0' + tu_rand() % 10 : tu_rand());
        round_trips("random bytes", rnd, n);
    }
    round_trips("the empty string", "", 0);

    ident_is("csrf_token", "csrf_token");
    ident_is("user-id", "user_id");
    ident_is("X-Request-ID", "X_Request_ID");
    ident_is("a--b", "a_b");
    ident_is("1st", "_1st");
    ident_is("end", "end_");
    ident_is("function", "function_");
    ident_is("", "_");
    ident_is("--", "_");
    ident_is("body-3.bin", "body_3_bin");
    tu_check(ll_emit_is_ident("a_1") && !ll_emit_is_ident("1a") && !ll_emit_is_ident("nil") &&
                 !ll_emit_is_ident("a-b") && !ll_emit_is_ident(""),
             "is_ident: a_1 yes; 1a, nil, a-b and the empty string no");

    value_is("{\"a\":1,\"b\":[1,2],\"not ident\":\"x\",\"end\":true}",
             "{\n  a = 1,\n  b = { 1, 2 },\n  [\"not ident\"] = \"x\",\n  [\"end\"] = true,\n}");
    value_is("{\"a\":1,\"not ident\":\"x\",\"end\":true}", "{ a = 1, [\"not ident\"] = \"x\", [\"end\"] = true }");
    value_is("[1.5,-2,1e300,\"s\"]", "{ 1.5, -2, 1e+300, \"s\" }");
    value_is("[0.1,3.141592653589793,1e-7]", "{ 0.1, 3.141592653589793, 1e-07 }");
    value_is("{\"user\":{\"name\":\"alice\",\"roles\":[\"a\",\"b\"]},\"n\":null}",
             "{\n  user = {\n    name = \"alice\",\n    roles = { \"a\", \"b\" },\n  },\n  n = json.null,\n}");
    value_is("{}", "{}");
    cJSON *v = cJSON_Parse("{\"a\":[1,{\"b\":null}]}"), *w = cJSON_Parse("{\"a\":[1,{\"b\":false}]}");
    tu_check(ll_emit_has_null(v) && !ll_emit_has_null(w), "has_null finds a nested null, and only one");
    cJSON_Delete(v);
    cJSON_Delete(w);

    ll_emit_comment(&b, 2, "one\ntwo\n\nthree");
    tu_check(strcmp(b.p, "  -- one\n  -- two\n  --\n  -- three\n") == 0, "comment: a line each, blank ones bare");
    ll_buf_free(&b);
}

static void expr_tests(void) {
    ll_buf b = {0};
    ll_expr e;
    ll_expr_begin(&e, &b);
    ll_expr_code(&e, "base");
    ll_expr_lit(&e, "/items/", 7);
    ll_expr_code(&e, "id");
    ll_expr_lit(&e, "", 0);
    ll_expr_end(&e);
    tu_check(strcmp(b.p, "base .. \"/items/\" .. id") == 0, "expr: pieces joined with .. (got %s)", b.p);
    ll_buf_free(&b);
    ll_expr_begin(&e, &b);
    ll_expr_end(&e);
    tu_check(strcmp(b.p, "\"\"") == 0, "expr: no pieces is \"\"");
    ll_buf_free(&b);

    ll_req_pairs f = {0};
    ll_req_pairs_add(&f, "t", "\"a\"");
    ll_req_pairs_add(&f, "user-name", "name");
    ll_req_pairs_add(&f, "t", "\"b\"");
    ll_req_form(&b, 2, &f);
    tu_check(strcmp(b.p, "{\n    t = { \"a\", \"b\" },\n    [\"user-name\"] = name,\n  }") == 0,
             "form: a repeated name is a list, in order");
    tu_check(ll_req_pairs_find(&f, "USER-NAME") == &f.v[1], "pairs_find ignores ASCII case");
    ll_req_pairs_free(&f);
    ll_buf_free(&b);
}

/* ---- JSON and YAML ---- */

static cJSON *parse(const char *text, char *err) {
    err[0] = 0;
    return ll_convert_doc_parse("t.yaml", text, strlen(text), err, 256);
}

static void fails_with(const char *text, const char *want) {
    char err[256];
    cJSON *d = parse(text, err);
    tu_check(!d && strncmp(err, want, strlen(want)) == 0, "error: %s (got '%s')", want, err);
    cJSON_Delete(d);
}

static const cJSON *at(const cJSON *d, const char *k) { return cJSON_GetObjectItemCaseSensitive(d, k); }

static void doc_tests(void) {
    char err[256];
    cJSON *d = parse("i: 42\nneg: -7\nf: 1.5\ne: 2e3\nt: true\nT: True\nno: false\nn1: ~\nn2: null\nn3:\n"
                     "s: hello world\nq: \"42\"\nsq: 'true'\nver: 1.2.3\ninf: .inf\nhex: 0x1F\nyes: yes\n",
                     err);
    tu_check(d != NULL, "YAML scalars parse (%s)", err);
    tu_check(cJSON_IsNumber(at(d, "i")) && at(d, "i")->valuedouble == 42, "42 is a number");
    tu_check(cJSON_IsNumber(at(d, "neg")) && at(d, "neg")->valuedouble == -7, "-7 is a number");
    tu_check(cJSON_IsNumber(at(d, "f")) && at(d, "f")->valuedouble == 1.5, "1.5 is a number");
    tu_check(cJSON_IsNumber(at(d, "e")) && at(d, "e")->valuedouble == 2000, "2e3 is a number");
    tu_check(cJSON_IsTrue(at(d, "t")) && cJSON_IsTrue(at(d, "T")) && cJSON_IsFalse(at(d, "no")), "true, True, false");
    tu_check(cJSON_IsNull(at(d, "n1")) && cJSON_IsNull(at(d, "n2")) && cJSON_IsNull(at(d, "n3")), "~, null, nothing: null");
    tu_check(cJSON_IsString(at(d, "s")) && strcmp(at(d, "s")->valuestring, "hello world") == 0, "a plain string");
    tu_check(cJSON_IsString(at(d, "q")) && strcmp(at(d, "q")->valuestring, "42") == 0, "\"42\" quoted stays a string");
    tu_check(cJSON_IsString(at(d, "sq")) && strcmp(at(d, "sq")->valuestring, "true") == 0, "'true' quoted stays a string");
    tu_check(cJSON_IsString(at(d, "ver")), "1.2.3 is a string");
    tu_check(cJSON_IsNumber(at(d, "inf")) && at(d, "inf")->valuedouble > 1e308, ".inf is infinity");
    tu_check(cJSON_IsString(at(d, "yes")), "yes is a string (YAML 1.2, not 1.1)");
    cJSON_Delete(d);

    d = parse("base: &b {x: 1, y: 2}\nsame: *b\nmerged:\n  <<: *b\n  y: 3\nlist: &l [a, b]\nagain: *l\n", err);
    const cJSON *m = at(d, "merged");
    tu_check(d && cJSON_GetObjectItemCaseSensitive(at(d, "same"), "x") &&
                 at(at(d, "same"), "x")->valuedouble == 1,
             "an alias is a copy of its anchor (%s)", err);
    tu_check(m && at(m, "x") && at(m, "x")->valuedouble == 1 && at(m, "y")->valuedouble == 3,
             "a merge key: the anchor's entries under the mapping's own");
    tu_check(cJSON_GetArraySize(at(d, "again")) == 2, "an alias to a list");
    cJSON_Delete(d);

    d = parse("\xef\xbb\xbf  {\"a\": [1, {\"b\": \"c\"}]}\n", err);
    tu_check(d && cJSON_GetArraySize(at(d, "a")) == 2, "JSON after a BOM and blanks (%s)", err);
    cJSON_Delete(d);

    fails_with("a: [1, 2\nb: 3\n", "t.yaml:2:2: invalid YAML: did not find expected ',' or ']'");
    fails_with("a: 1\n b: 2\n", "t.yaml:2:3: invalid YAML: mapping values are not allowed");
    fails_with("a: *nowhere\n", "t.yaml:1:4: an alias to no anchor");
    fails_with("? [a]\n: 1\n", "t.yaml:1:3: a mapping key that is not a plain value");
    fails_with("  \n\t\n", "t.yaml: the file is empty");
    fails_with("{\"a\": [1,\n  2", "t.yaml:2:4: the JSON ends too soon (truncated?)");
    fails_with("{\"a\": \"open", "t.yaml:1:12: the JSON ends too soon (truncated?)");
    fails_with("{\"a\": [1}", "t.yaml:1:9: invalid JSON");
    fails_with("{\"a\": 1}\n{}", "t.yaml:2:1: text after the JSON value");
    char deep[2000];
    size_t o = 0;
    for (int i = 0; i < 300; i++) deep[o++] = '[';
    deep[o] = 0;
    fails_with(deep, "t.yaml:1:");
    for (int i = 0; i < 300; i++) deep[o++] = ']';
    deep[o] = 0;
    fails_with(deep, "t.yaml:1:257: nested deeper than 256 levels");
    o = 0;
    for (int i = 0; i < 300; i++) o += (size_t)snprintf(deep + o, sizeof(deep) - o, "- ");
    snprintf(deep + o, sizeof(deep) - o, "x\n");
    fails_with(deep, "t.yaml:1:515: nested deeper than 256 levels");
}

int main(void) {
    emit_tests();
    expr_tests();
    doc_tests();
    return tu_summary();
}
