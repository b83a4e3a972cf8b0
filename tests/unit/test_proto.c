/* test_proto.c -- proto.h: .proto files parsed at run time (imports,
 * packages, nested and well-known types, maps, oneofs, enums, repeated,
 * bytes, 64-bit integers), descriptor sets made by protoc and files added
 * one by one as reflection hands them over, methods found by name, and
 * messages between JSON text and their wire form with k6's mapping; and
 * every error a user can cause, with the file, line and column. */
/* links: ll_proto */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto.h"
#include "test_util.h"

static char dir[64];

static void write_file(const char *name, const char *text) {
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(2);
    }
    fputs(text, f);
    fclose(f);
}

static const char *COMMON_PROTO = "syntax = \"proto3\";\n"
                                  "package shop.common;\n"
                                  "enum Kind { KIND_UNSET = 0; KIND_A = 1; KIND_B = 2; }\n"
                                  "message Money { int64 units = 1; int32 nanos = 2; }\n";

static const char *SHOP_PROTO = "syntax = \"proto3\";\n"
                                "package shop.v1;\n"
                                "import \"common/common.proto\";\n"
                                "import \"google/protobuf/timestamp.proto\";\n"
                                "message Item {\n"
                                "  message Inner { int32 v = 1; }\n"
                                "  string name = 1;\n"
                                "  int64 big_count = 2;\n"
                                "  shop.common.Kind kind = 3;\n"
                                "  bytes data = 4;\n"
                                "  map<string, int64> stock = 5;\n"
                                "  repeated int32 sizes = 6;\n"
                                "  oneof price { shop.common.Money money = 7; string free_text = 8; }\n"
                                "  google.protobuf.Timestamp when = 9;\n"
                                "  Inner inner = 10;\n"
                                "  bool flag = 11;\n"
                                "}\n"
                                "message Ack { string id = 1; }\n"
                                "service Shop {\n"
                                "  rpc Put(Item) returns (Ack);\n"
                                "  rpc Watch(Ack) returns (stream Item);\n"
                                "  rpc Upload(stream Item) returns (Ack);\n"
                                "  rpc Chat(stream Item) returns (stream Item);\n"
                                "}\n";

static ll_proto *loaded(void) {
    ll_proto *p = ll_proto_new();
    const char *paths[] = {dir};
    char err[256] = "";
    int rc = ll_proto_load(p, paths, 1, "shop.proto", err, sizeof(err));
    tu_check(rc == 0, "load: shop.proto with its imports (%s)", err);
    return p;
}

static void test_methods(void) {
    ll_proto *p = loaded();
    ll_proto_method m;
    char err[256] = "";
    int rc = ll_proto_find_method(p, "shop.v1.Shop/Put", &m, err, sizeof(err));
    tu_check(rc == 0 && strcmp(m.path, "/shop.v1.Shop/Put") == 0, "method: Put's :path (%s)", rc ? err : m.path);
    tu_check(rc == 0 && strcmp(ll_proto_type_name(m.in), "shop.v1.Item") == 0 &&
                 strcmp(ll_proto_type_name(m.out), "shop.v1.Ack") == 0,
             "method: Put takes Item and returns Ack");
    tu_check(rc == 0 && !m.client_streaming && !m.server_streaming, "method: Put is unary");
    rc = ll_proto_find_method(p, "/shop.v1.Shop/Watch", &m, err, sizeof(err));
    tu_check(rc == 0 && !m.client_streaming && m.server_streaming, "method: Watch streams from the server");
    rc = ll_proto_find_method(p, "shop.v1.Shop/Upload", &m, err, sizeof(err));
    tu_check(rc == 0 && m.client_streaming && !m.server_streaming, "method: Upload streams from the client");
    rc = ll_proto_find_method(p, "shop.v1.Shop/Chat", &m, err, sizeof(err));
    tu_check(rc == 0 && m.client_streaming && m.server_streaming, "method: Chat streams both ways");
    rc = ll_proto_find_method(p, "shop.v1.Shop/Nope", &m, err, sizeof(err));
    tu_check(rc == -1 && strstr(err, "shop.v1.Shop/Nope not found"), "method: an unknown one is named (%s)", err);
    rc = ll_proto_find_method(p, "Put", &m, err, sizeof(err));
    tu_check(rc == -1 && strstr(err, "package.Service/Method"), "method: a name without a service says what is expected (%s)",
             err);
    tu_check(ll_proto_find_type(p, "shop.v1.Item.Inner") != NULL, "type: a nested message by its full name");
    tu_check(ll_proto_find_type(p, "shop.v1.Missing") == NULL, "type: an unknown one is NULL");
    ll_proto_free(p);
}

static void test_json(void) {
    ll_proto *p = loaded();
    const ll_proto_type *item = ll_proto_find_type(p, "shop.v1.Item");
    const char *in = "{\"name\":\"pen\",\"big_count\":\"9007199254740993\",\"kind\":\"KIND_B\",\"data\":\"aGk=\","
                     "\"stock\":{\"berlin\":\"3\"},\"sizes\":[1,2,3],\"money\":{\"units\":5,\"nanos\":10},"
                     "\"when\":\"2024-01-02T03:04:05Z\",\"inner\":{\"v\":7}}";
    ll_buf wire = {0}, json = {0};
    char err[256] = "";
    int rc = ll_proto_encode(item, in, strlen(in), &wire, err, sizeof(err));
    tu_check(rc == 0 && wire.len > 0, "encode: the .proto's field names (%s)", err);
    rc = ll_proto_decode(item, wire.p, wire.len, &json, err, sizeof(err));
    tu_check(rc == 0, "decode: back to JSON (%s)", err);
    const char *j = json.p ? json.p : "";
    tu_check(strstr(j, "\"bigCount\":\"9007199254740993\"") != NULL, "decode: lowerCamel names, int64 as a string (%s)", j);
    tu_check(strstr(j, "\"kind\":\"KIND_B\"") != NULL, "decode: an enum by its name");
    tu_check(strstr(j, "\"data\":\"aGk=\"") != NULL, "decode: bytes as base64");
    tu_check(strstr(j, "\"stock\":{\"berlin\":\"3\"}") != NULL, "decode: a map");
    tu_check(strstr(j, "\"sizes\":[1,2,3]") != NULL, "decode: a repeated field");
    tu_check(strstr(j, "\"money\":{\"units\":\"5\",\"nanos\":10}") != NULL, "decode: the oneof's message");
    tu_check(strstr(j, "\"freeText\"") == NULL, "decode: the oneof's other field is not printed");
    tu_check(strstr(j, "\"when\":\"2024-01-02T03:04:05Z\"") != NULL, "decode: a Timestamp (well-known type, built in)");
    tu_check(strstr(j, "\"inner\":{\"v\":7}") != NULL, "decode: a nested message");
    tu_check(strstr(j, "\"flag\":false") != NULL, "decode: an unset field is printed with its zero (k6's EmitUnpopulated)");
    /* lowerCamel names are accepted too */
    ll_buf wire2 = {0};
    const char *camel = "{\"name\":\"pen\",\"bigCount\":\"9007199254740993\",\"kind\":\"KIND_B\",\"data\":\"aGk=\","
                        "\"stock\":{\"berlin\":\"3\"},\"sizes\":[1,2,3],\"money\":{\"units\":5,\"nanos\":10},"
                        "\"when\":\"2024-01-02T03:04:05Z\",\"inner\":{\"v\":7}}";
    rc = ll_proto_encode(item, camel, strlen(camel), &wire2, err, sizeof(err));
    tu_check(rc == 0 && wire2.len == wire.len && memcmp(wire2.p, wire.p, wire.len) == 0,
             "encode: lowerCamel names give the same bytes (%s)", err);
    /* what a user gets wrong */
    ll_buf scratch = {0};
    const char *unknown = "{\"nmae\":\"pen\"}";
    rc = ll_proto_encode(item, unknown, strlen(unknown), &scratch, err, sizeof(err));
    tu_check(rc == -1 && strstr(err, "shop.v1.Item") && strstr(err, "nmae"), "encode: an unknown field is named (%s)", err);
    const char *wrong = "{\"kind\":\"KIND_Z\"}";
    rc = ll_proto_encode(item, wrong, strlen(wrong), &scratch, err, sizeof(err));
    tu_check(rc == -1 && strstr(err, "KIND_Z"), "encode: an unknown enum value is named (%s)", err);
    const char *broken = "{\"name\":";
    rc = ll_proto_encode(item, broken, strlen(broken), &scratch, err, sizeof(err));
    tu_check(rc == -1 && !strchr(err, '\n'), "encode: JSON cut short is an error, told in one line (%s)", err);
    const char garbage[] = {(char)0xff, (char)0xff, (char)0xff};
    rc = ll_proto_decode(item, garbage, sizeof(garbage), &scratch, err, sizeof(err));
    tu_check(rc == -1 && strstr(err, "not a shop.v1.Item message"), "decode: bytes that are no message (%s)", err);
    ll_buf_free(&wire);
    ll_buf_free(&wire2);
    ll_buf_free(&json);
    ll_buf_free(&scratch);
    ll_proto_free(p);
}

static void test_load_errors(void) {
    const char *paths[] = {dir};
    char err[256] = "";
    ll_proto *p = ll_proto_new();
    write_file("bad_syntax.proto", "syntax = \"proto3\";\nmessage A {\n  int32 x = ;\n}\n");
    int rc = ll_proto_load(p, paths, 1, "bad_syntax.proto", err, sizeof(err));
    tu_check(rc == -1 && strstr(err, "bad_syntax.proto:3:13:"), "load: a syntax error with its line and column (%s)", err);
    write_file("bad_type.proto", "syntax = \"proto3\";\nmessage A {\n  Missing m = 1;\n}\n");
    rc = ll_proto_load(p, paths, 1, "bad_type.proto", err, sizeof(err));
    tu_check(rc == -1 && strstr(err, "bad_type.proto:3:") && strstr(err, "Missing"),
             "load: an unknown type with its line (%s)", err);
    write_file("bad_import.proto", "syntax = \"proto3\";\nimport \"nowhere.proto\";\n");
    rc = ll_proto_load(p, paths, 1, "bad_import.proto", err, sizeof(err));
    tu_check(rc == -1 && strstr(err, "bad_import.proto:2:1:") && strstr(err, "nowhere.proto"),
             "load: a missing import is named where it is imported (%s)", err);
    rc = ll_proto_load(p, paths, 1, "absent.proto", err, sizeof(err));
    tu_check(rc == -1 && strstr(err, "absent.proto"), "load: a missing file is named (%s)", err);
    const char *nodir[] = {"/nonexistent-dir"};
    rc = ll_proto_load(p, nodir, 1, "shop.proto", err, sizeof(err));
    tu_check(rc == -1 && strstr(err, "/nonexistent-dir: not a directory"), "load: a bad import path (%s)", err);
    /* a file given by its path, outside the import paths */
    char full[256];
    snprintf(full, sizeof(full), "%s/common/common.proto", dir);
    ll_proto *q = ll_proto_new();
    err[0] = 0;
    rc = ll_proto_load(q, NULL, 0, full, err, sizeof(err));
    tu_check(rc == 0 && ll_proto_find_type(q, "shop.common.Money") != NULL, "load: a file by its own path (%s)", err);
    ll_proto_free(q);
    ll_proto_free(p);
}

static int slurp(const char *path, ll_buf *b) {
    b->len = 0;
    return ll_buf_read_file(b, path);
}

/* protoc's descriptor set, whole and then file by file (as reflection
 * hands them over: each a FileDescriptorProto, field 1 of the set) */
static void test_protoset(void) {
    char cmd[512], set[256];
    snprintf(set, sizeof(set), "%s/shop.pb", dir);
    snprintf(cmd, sizeof(cmd), "protoc --descriptor_set_out=%s --include_imports -I%s %s/shop.proto", set, dir, dir);
    int rc = system(cmd);
    if (!tu_check(rc == 0, "protoc made a descriptor set (%s)", cmd)) return;
    ll_buf b = {0};
    slurp(set, &b);
    char err[256] = "";
    ll_proto *p = ll_proto_new();
    rc = ll_proto_load_set(p, b.p, b.len, "shop.pb", err, sizeof(err));
    ll_proto_method m;
    tu_check(rc == 0 && ll_proto_find_method(p, "shop.v1.Shop/Chat", &m, err, sizeof(err)) == 0 && m.server_streaming,
             "protoset: its methods are found (%s)", err);
    ll_proto_free(p);
    /* the set's files, last first */
    const unsigned char *s = (const unsigned char *)b.p;
    size_t at = 0, starts[16], lens[16];
    int n = 0;
    while (at < b.len && n < 16) {
        if (s[at++] != 0x0a) break; /* field 1, length-delimited */
        size_t len = 0;
        int shift = 0;
        while (at < b.len && (s[at] & 0x80)) len |= (size_t)(s[at++] & 0x7f) << shift, shift += 7;
        len |= (size_t)s[at++] << shift;
        starts[n] = at, lens[n++] = len;
        at += len;
    }
    tu_check(n == 3 && at == b.len, "protoset: three files (shop, common, timestamp) (%d)", n);
    p = ll_proto_new();
    rc = 0;
    for (int i = n - 1; i >= 0; i--) rc |= ll_proto_add_file(p, s + starts[i], lens[i], err, sizeof(err));
    const ll_proto_type *t = ll_proto_find_type(p, "shop.v1.Item");
    tu_check(rc == 0 && t != NULL, "reflection: files added one by one, in any order (%s)", err);
    tu_check(ll_proto_find_method(p, "shop.v1.Shop/Put", &m, err, sizeof(err)) == 0, "reflection: a method found (%s)",
             err);
    ll_proto_free(p);
    p = ll_proto_new();
    rc = ll_proto_load_set(p, "\x0a\x05zzzzz", 7, "junk.pb", err, sizeof(err));
    tu_check(rc == -1 && strstr(err, "junk.pb"), "protoset: junk is named (%s)", err);
    rc = ll_proto_add_file(p, "\xff\xff", 2, err, sizeof(err));
    tu_check(rc == -1 && strstr(err, "FileDescriptorProto"), "reflection: junk (%s)", err);
    ll_proto_free(p);
    ll_buf_free(&b);
}

int main(void) {
    setenv("LC_ALL", "C.UTF-8", 1);
    snprintf(dir, sizeof(dir), "/tmp/test_proto.XXXXXX");
    if (!mkdtemp(dir)) return 2;
    char sub[128];
    snprintf(sub, sizeof(sub), "%s/common", dir);
    mkdir(sub, 0755);
    write_file("common/common.proto", COMMON_PROTO);
    write_file("shop.proto", SHOP_PROTO);
    test_methods();
    test_json();
    test_load_errors();
    test_protoset();
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0) return 2;
    return tu_summary();
}
