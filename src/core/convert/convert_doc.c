/* convert_doc.c -- JSON (cJSON) or YAML (libyaml's event parser) into one
 * cJSON tree for the converters (see convert_doc.h). */
#include "convert_doc.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "xmalloc.h"

#define MAX_DEPTH 256

/* ---- JSON ---- */

/* The line and column of byte off of text. */
static void line_col(const char *text, size_t off, int *line, int *col) {
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

/* Whether text[start..len) stops inside a string or with brackets left
 * open, none closed by the wrong one: JSON cut short (cJSON points its
 * error at the value it was in, not at the end). */
static int json_cut_short(const char *text, size_t len, size_t start) {
    char open[MAX_DEPTH];
    int depth = 0, in_string = 0;
    for (size_t i = start; i < len; i++) {
        char c = text[i];
        if (in_string) {
            if (c == '\\') i++;
            else if (c == '"') in_string = 0;
        } else if (c == '"') {
            in_string = 1;
        } else if (c == '{' || c == '[') {
            if (depth == MAX_DEPTH) return 0;
            open[depth++] = c;
        } else if (c == '}' || c == ']') {
            if (depth == 0 || open[depth - 1] != (c == '}' ? '{' : '[')) return 0;
            depth--;
        }
    }
    return in_string || depth > 0;
}

/* The offset of the bracket that opens level MAX_DEPTH + 1 in
 * text[start..len), or len when there is none. */
static size_t json_too_deep(const char *text, size_t len, size_t start) {
    int depth = 0, in_string = 0;
    for (size_t i = start; i < len; i++) {
        char c = text[i];
        if (in_string) {
            if (c == '\\') i++;
            else if (c == '"') in_string = 0;
        } else if (c == '"') {
            in_string = 1;
        } else if ((c == '{' || c == '[') && ++depth > MAX_DEPTH) {
            return i;
        } else if (c == '}' || c == ']') {
            depth--;
        }
    }
    return len;
}

/* The JSON value at text + start. */
static cJSON *parse_json(const char *name, const char *text, size_t len, size_t start, char *err, size_t errlen) {
    const char *end = NULL;
    cJSON *doc = cJSON_ParseWithLengthOpts(text + start, len - start, &end, 0);
    if (doc) {
        while (end && (size_t)(end - text) < len && (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')) end++;
        size_t deep = json_too_deep(text, len, start);
        if (deep < len) {
            int line, col;
            line_col(text, deep, &line, &col);
            snprintf(err, errlen, "%s:%d:%d: nested deeper than %d levels", name, line, col, MAX_DEPTH);
            cJSON_Delete(doc);
            return NULL;
        }
        if (!end || (size_t)(end - text) >= len || *end == 0) return doc;
        cJSON_Delete(doc);
    }
    const char *at = end ? end : cJSON_GetErrorPtr();
    size_t off = at && at >= text && at <= text + len ? (size_t)(at - text) : len;
    int line, col;
    line_col(text, off, &line, &col);
    if (!doc && json_cut_short(text, len, start)) line_col(text, len, &line, &col);
    if (off >= len || (!doc && json_cut_short(text, len, start)))
        snprintf(err, errlen, "%s:%d:%d: the JSON ends too soon (truncated?)", name, line, col);
    else if (doc) snprintf(err, errlen, "%s:%d:%d: text after the JSON value", name, line, col);
    else snprintf(err, errlen, "%s:%d:%d: invalid JSON", name, line, col);
    return NULL;
}

/* ---- YAML ---- */

typedef struct anchor {
    char *name;
    cJSON *node; /* a copy, duplicated at each alias */
} anchor;

typedef struct yaml_reader {
    yaml_parser_t parser;
    const char *name;
    anchor *anchors;
    int nanchors, cap;
    char *err;
    size_t errlen;
} yaml_reader;

static void yaml_fail(yaml_reader *r, const yaml_mark_t *m, const char *what) {
    snprintf(r->err, r->errlen, "%s:%zu:%zu: %s", r->name, m->line + 1, m->column + 1, what);
}

static int next_event(yaml_reader *r, yaml_event_t *ev) {
    if (yaml_parser_parse(&r->parser, ev)) return 0;
    char what[200];
    snprintf(what, sizeof(what), "invalid YAML: %s%s%s", r->parser.problem ? r->parser.problem : "a syntax error",
             r->parser.context ? " " : "", r->parser.context ? r->parser.context : "");
    yaml_fail(r, &r->parser.problem_mark, what);
    return -1;
}

/* A plain scalar as YAML 1.2's core schema reads it. */
static cJSON *plain_scalar(const char *s, size_t n) {
    if (n == 0 || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 || strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0)
        return cJSON_CreateNull();
    if (strcmp(s, "true") == 0 || strcmp(s, "True") == 0 || strcmp(s, "TRUE") == 0) return cJSON_CreateTrue();
    if (strcmp(s, "false") == 0 || strcmp(s, "False") == 0 || strcmp(s, "FALSE") == 0) return cJSON_CreateFalse();
    if (strcmp(s, ".inf") == 0 || strcmp(s, "+.inf") == 0 || strcmp(s, ".Inf") == 0) return cJSON_CreateNumber(INFINITY);
    if (strcmp(s, "-.inf") == 0 || strcmp(s, "-.Inf") == 0) return cJSON_CreateNumber(-INFINITY);
    const char *p = s;
    if (*p == '-' || *p == '+') p++;
    int digits = 0, dots = 0, exp = 0, ok = *p != 0;
    for (; *p && ok; p++) {
        if (*p >= '0' && *p <= '9') digits++;
        else if (*p == '.' && !dots && !exp) dots++;
        else if ((*p == 'e' || *p == 'E') && digits && !exp) {
            exp = 1;
            if (p[1] == '-' || p[1] == '+') p++;
        } else ok = 0;
    }
    if (ok && digits) {
        char *end;
        errno = 0;
        double d = strtod(s, &end);
        if (*end == 0 && errno == 0) return cJSON_CreateNumber(d);
    }
    return cJSON_CreateString(s);
}

static cJSON *read_node(yaml_reader *r, yaml_event_t *ev, int depth);

static void remember(yaml_reader *r, const yaml_char_t *name, const cJSON *node) {
    if (!name) return;
    ll_xgrow((void **)&r->anchors, &r->cap, r->nanchors + 1, sizeof(anchor));
    r->anchors[r->nanchors].name = ll_xstrdup((const char *)name);
    r->anchors[r->nanchors].node = cJSON_Duplicate(node, 1);
    r->nanchors++;
}

/* The children of a sequence or mapping whose start event was read, up to
 * its end event, into node. */
static int read_children(yaml_reader *r, cJSON *node, int mapping, int depth) {
    for (;;) {
        yaml_event_t ev;
        if (next_event(r, &ev) < 0) return -1;
        if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete(&ev);
            return 0;
        }
        char *key = NULL;
        if (mapping) {
            if (ev.type != YAML_SCALAR_EVENT) {
                yaml_fail(r, &ev.start_mark, "a mapping key that is not a plain value (a list or a mapping)");
                yaml_event_delete(&ev);
                return -1;
            }
            key = ll_xstrndup((const char *)ev.data.scalar.value, ev.data.scalar.length);
            yaml_event_delete(&ev);
            if (next_event(r, &ev) < 0) {
                free(key);
                return -1;
            }
        }
        cJSON *child = read_node(r, &ev, depth + 1);
        yaml_event_delete(&ev);
        if (!child) {
            free(key);
            return -1;
        }
        if (!mapping) {
            cJSON_AddItemToArray(node, child);
        } else if (strcmp(key, "<<") == 0 && cJSON_IsObject(child)) {
            /* a merge key: the aliased mapping's entries, unless already set */
            for (cJSON *c = child->child; c; c = c->next)
                if (!cJSON_GetObjectItemCaseSensitive(node, c->string))
                    cJSON_AddItemToObject(node, c->string, cJSON_Duplicate(c, 1));
            cJSON_Delete(child);
        } else {
            cJSON_DeleteItemFromObjectCaseSensitive(node, key); /* the last one wins */
            cJSON_AddItemToObject(node, key, child);
        }
        free(key);
    }
}

/* The node that starts with ev (which the caller deletes), or NULL with
 * the error set. */
static cJSON *read_node(yaml_reader *r, yaml_event_t *ev, int depth) {
    if (depth > MAX_DEPTH) {
        yaml_fail(r, &ev->start_mark, "nested deeper than 256 levels");
        return NULL;
    }
    cJSON *node = NULL;
    switch (ev->type) {
    case YAML_SCALAR_EVENT: {
        const char *s = (const char *)ev->data.scalar.value;
        node = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !ev->data.scalar.tag
                   ? plain_scalar(s, ev->data.scalar.length)
                   : cJSON_CreateString(s);
        remember(r, ev->data.scalar.anchor, node);
        return node;
    }
    case YAML_ALIAS_EVENT:
        for (int i = r->nanchors - 1; i >= 0; i--)
            if (strcmp(r->anchors[i].name, (const char *)ev->data.alias.anchor) == 0)
                return cJSON_Duplicate(r->anchors[i].node, 1);
        yaml_fail(r, &ev->start_mark, "an alias to no anchor");
        return NULL;
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
        int mapping = ev->type == YAML_MAPPING_START_EVENT;
        const yaml_char_t *name = mapping ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
        node = mapping ? cJSON_CreateObject() : cJSON_CreateArray();
        if (read_children(r, node, mapping, depth) < 0) {
            cJSON_Delete(node);
            return NULL;
        }
        remember(r, name, node);
        return node;
    }
    default:
        yaml_fail(r, &ev->start_mark, "an unexpected YAML event");
        return NULL;
    }
}

static cJSON *parse_yaml(const char *name, const char *text, size_t len, char *err, size_t errlen) {
    yaml_reader r = {.name = name, .err = err, .errlen = errlen};
    yaml_parser_initialize(&r.parser);
    yaml_parser_set_input_string(&r.parser, (const unsigned char *)text, len);
    cJSON *doc = NULL;
    yaml_event_t ev;
    int rc = 0;
    /* stream start, document start, the root node, document end */
    while (rc == 0 && !doc) {
        if ((rc = next_event(&r, &ev)) < 0) break;
        if (ev.type == YAML_STREAM_END_EVENT) {
            yaml_fail(&r, &ev.start_mark, "no document (an empty file?)");
            rc = -1;
        } else if (ev.type != YAML_STREAM_START_EVENT && ev.type != YAML_DOCUMENT_START_EVENT) {
            doc = read_node(&r, &ev, 0);
            if (!doc) rc = -1;
        }
        yaml_event_delete(&ev);
    }
    for (int i = 0; i < r.nanchors; i++) {
        free(r.anchors[i].name);
        cJSON_Delete(r.anchors[i].node);
    }
    free(r.anchors);
    yaml_parser_delete(&r.parser);
    return doc;
}

cJSON *ll_convert_doc_parse(const char *name, const char *text, size_t len, char *err, size_t errlen) {
    size_t i = 0;
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) i = 3; /* a UTF-8 BOM */
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n')) i++;
    if (i == len) {
        snprintf(err, errlen, "%s: the file is empty", name);
        return NULL;
    }
    if (text[i] == '{' || text[i] == '[') return parse_json(name, text, len, i, err, errlen);
    return parse_yaml(name, text, len, err, errlen);
}
