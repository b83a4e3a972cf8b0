/* convert_doc.h -- an input of `luaload convert` read into a cJSON tree:
 * JSON with cJSON, YAML (OpenAPI's other syntax) with libyaml, so every
 * converter walks one kind of tree. */
#ifndef LL_CONVERT_DOC_H
#define LL_CONVERT_DOC_H

#include <cJSON.h>
#include <stddef.h>

/* The document in text[0..len) (JSON when its first non-blank byte is '{'
 * or '[', else YAML), or NULL with "NAME:LINE:COL: what was expected" in
 * err. YAML scalars resolve as YAML 1.2's core schema does (null, true,
 * false, integers, floats, else strings; quoted ones stay strings);
 * anchors and aliases are expanded; a document nested deeper than 256
 * levels is refused. The caller frees the tree with cJSON_Delete. */
cJSON *ll_convert_doc_parse(const char *name, const char *text, size_t len, char *err, size_t errlen);

#endif
