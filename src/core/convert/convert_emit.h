/* convert_emit.h -- what the converters write scripts with: Lua string
 * literals, table literals from JSON values, identifiers from names, so
 * no converter quotes by hand. */
#ifndef LL_CONVERT_EMIT_H
#define LL_CONVERT_EMIT_H

#include <cJSON.h>
#include <stddef.h>

#include "buf.h"

/* s[0..n) as a double-quoted Lua string literal: \" \\ \n \r \t escaped,
 * other control bytes and bytes >= 0x7f that are not valid UTF-8 as \ddd
 * (so any bytes round-trip). */
void ll_emit_str(ll_buf *b, const char *s, size_t n);
/* The same for a NUL-terminated s (NULL writes nil). */
void ll_emit_cstr(ll_buf *b, const char *s);
/* v as a Lua value: strings, numbers (integers without ".0"), booleans,
 * json.null for null (the script must load luaload.json as `json`),
 * arrays as { a, b }, objects as { key = v, ["not an ident"] = v } in
 * their order, nested ones on lines of their own indented by indent + 2
 * spaces when they do not fit in one short line. */
void ll_emit_value(ll_buf *b, const cJSON *v, int indent);
/* Whether v (or something inside it) is JSON null: the script then needs
 * luaload.json. */
int ll_emit_has_null(const cJSON *v);
/* n spaces. */
void ll_emit_indent(ll_buf *b, int n);
/* A Lua identifier made from s into dst (len >= 2): letters, digits and
 * '_' kept, other runs become one '_', a leading digit or an empty result
 * prefixed with "_", Lua's reserved words suffixed with "_"; snake-case
 * is not forced. Returns dst. */
char *ll_emit_ident(char *dst, size_t len, const char *s);
/* k as a table key: the name when it is an identifier, else ["k"]. */
void ll_emit_key(ll_buf *b, const char *k);
/* Whether s is a Lua identifier usable as a table key (not reserved). */
int ll_emit_is_ident(const char *s);
/* "-- " and text, each of its lines a comment line at indent. */
void ll_emit_comment(ll_buf *b, int indent, const char *text);

#endif
