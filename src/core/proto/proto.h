/* proto.h -- Protocol Buffers at run time, for gRPC (issue 39): .proto
 * files parsed when the script loads them, compiled descriptor sets
 * (protosets) and files a server's reflection hands over, and messages
 * converted between their wire form and JSON text with proto3's JSON
 * mapping as k6 uses it (lowerCamel field names out, the .proto's names
 * and lowerCamel ones accepted in, enums by name, bytes as base64, 64-bit
 * integers as strings, every field printed). All of it is libprotobuf's
 * (compiler::SourceTreeDescriptorDatabase, DescriptorPool,
 * DynamicMessageFactory, util::JsonStringToMessage), behind this C
 * interface (proto.cc): no hand-written .proto parser.
 *
 * One ll_proto is one set of loaded files (one grpc.Client's); it is read
 * by many threads at once once loading is over (loading is init code). */
#ifndef LL_PROTO_H
#define LL_PROTO_H

#include <stddef.h>

#ifdef __cplusplus /* proto.cc, and base/'s buf.h, which knows no C++ */
extern "C" {
#endif

#include "buf.h"

typedef struct ll_proto ll_proto;
typedef struct ll_proto_type ll_proto_type; /* a message type (a Descriptor) */

ll_proto *ll_proto_new(void);
void ll_proto_free(ll_proto *p);

/* Parses file and what it imports, found in the import paths (then the
 * current directory; google/protobuf's well-known types are built in).
 * Returns 0, or -1 with "file:line:column: message" (the first error) in
 * err. */
int ll_proto_load(ll_proto *p, const char *const *import_paths, int npaths, const char *file, char *err,
                  size_t errlen);
/* Adds the files of a serialized FileDescriptorSet (protoc
 * --descriptor_set_out --include_imports), named what in errors. Returns
 * 0, or -1 with a one-line reason in err. */
int ll_proto_load_set(ll_proto *p, const void *data, size_t len, const char *what, char *err, size_t errlen);
/* Adds one serialized FileDescriptorProto (server reflection's answer);
 * the files it imports must be added too (any order) before its types are
 * used. Returns 0, or -1 with a one-line reason in err. */
int ll_proto_add_file(ll_proto *p, const void *data, size_t len, char *err, size_t errlen);

/* Parses text, a .proto file's contents (no imports but the well-known
 * types), as the file name: the services luaload itself calls (server
 * reflection, health). Returns 0, or -1 with "name:line:column: message". */
int ll_proto_add_source(ll_proto *p, const char *name, const char *text, char *err, size_t errlen);
/* A method of a loaded service. */
typedef struct ll_proto_method {
    const char *path;            /* "/pkg.Service/Method": the request's :path */
    const ll_proto_type *in;     /* its request and response messages */
    const ll_proto_type *out;
    int client_streaming, server_streaming;
} ll_proto_method;

/* Finds name ("pkg.Service/Method", a leading '/' allowed) among the
 * loaded files' services. Returns 0, or -1 with a one-line reason in err
 * ("method pkg.S/M not found"). The strings live as long as p. */
int ll_proto_find_method(ll_proto *p, const char *name, ll_proto_method *m, char *err, size_t errlen);
/* Calls fn with each method's name ("pkg.Service/Method") in the loaded
 * files, in file order. */
void ll_proto_methods(ll_proto *p, void (*fn)(const char *name, void *ud), void *ud);
/* The message type by its full name ("pkg.Msg"); NULL when none. */
const ll_proto_type *ll_proto_find_type(ll_proto *p, const char *full_name);
const char *ll_proto_type_name(const ll_proto_type *t);

/* Appends the wire form of the message of type t written as JSON text
 * (json, len bytes) to out. Returns 0, or -1 with a one-line reason in err
 * (an unknown field, a value of the wrong kind). */
int ll_proto_encode(const ll_proto_type *t, const char *json, size_t len, ll_buf *out, char *err, size_t errlen);
/* Appends the JSON text of the message of type t in wire form (data, len
 * bytes) to out. Returns 0, or -1 with a one-line reason in err (bytes
 * that are not a message of type t). */
int ll_proto_decode(const ll_proto_type *t, const void *data, size_t len, ll_buf *out, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
