/* convert.h -- `luaload convert`: a recording (HAR 1.2), an API description
 * (OpenAPI 3.0/3.1, Swagger 2.0) or a Postman collection (v2.1, v2.0) turned into
 * a runnable, readable script. The input is read into one cJSON tree
 * whatever its syntax (JSON, or YAML for API descriptions: convert_doc.h),
 * its kind is found from its top-level keys (ll_convert_detect), and the
 * kind's converter (har.c, openapi.c, postman.c) writes the script with
 * convert_emit.h's helpers into an ll_convert_out. */
#ifndef LL_CONVERT_H
#define LL_CONVERT_H

#include <cJSON.h>
#include <stddef.h>

#include "buf.h"

typedef struct ll_convert_opts {
    const char *input;        /* the file as given (every message names it) */
    const char *output;       /* -o FILE, or NULL: stdout */
    const char *base_url;     /* --base-url URL (OpenAPI: instead of the spec's server), or NULL */
    const char *tags;         /* --tags a,b: only the OpenAPI operations with one of these tags, or NULL */
    const char *only_domains; /* --only-domains a,b: only the HAR requests to these hosts, or NULL */
    int skip_static;          /* --skip-static: HAR requests for images, styles, scripts, fonts dropped */
    int no_think_time;        /* --no-think-time: the HAR's recorded gaps dropped */
} ll_convert_opts;

/* A file written beside the script (a recorded binary body). */
typedef struct ll_convert_file {
    char *name; /* a file name, no folder */
    ll_buf data;
} ll_convert_file;

typedef struct ll_convert_out {
    ll_buf script;
    ll_convert_file *files;
    int nfiles, cap;
} ll_convert_out;

typedef enum ll_convert_kind {
    LL_CONVERT_UNKNOWN,
    LL_CONVERT_HAR,
    LL_CONVERT_OPENAPI, /* OpenAPI 3.x and Swagger 2.0 */
    LL_CONVERT_POSTMAN,
} ll_convert_kind;

/* What doc is, from its top-level keys ("log" with "entries": HAR;
 * "openapi" or "swagger": OpenAPI; "info" with a Postman schema URL and
 * "item": Postman; "requests" with "order" or "folders": Postman v1, which
 * its converter refuses by name). */
ll_convert_kind ll_convert_detect(const cJSON *doc);

/* Each writes the script for doc into out. 0, or -1 with a one-line
 * message in err ("FILE: log.entries[3].request: no url", "FILE: Postman
 * collection v1 is not supported (v2.1 and v2.0 are: ...)"). */
int ll_convert_har(const cJSON *doc, const ll_convert_opts *o, ll_convert_out *out, char *err, size_t errlen);
int ll_convert_openapi(const cJSON *doc, const ll_convert_opts *o, ll_convert_out *out, char *err, size_t errlen);
int ll_convert_postman(const cJSON *doc, const ll_convert_opts *o, ll_convert_out *out, char *err, size_t errlen);

/* Adds a file to be written beside the script, named from hint (made
 * unique among out's files: "body-3.bin", "body-3-2.bin"); returns its
 * name (owned by out). */
const char *ll_convert_out_file(ll_convert_out *out, const char *hint, const void *data, size_t len);
void ll_convert_out_free(ll_convert_out *out);

/* The whole conversion: reads o->input, converts it, writes the script
 * to o->output (or stdout) and its files beside it. 0, or -1 with err. */
int ll_convert_file_run(const ll_convert_opts *o, char *err, size_t errlen);

#endif
