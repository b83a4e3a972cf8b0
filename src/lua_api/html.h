/* html.h -- luaload.html's documents and Selections (html.c), for
 * res:html() in http_response.c. */
#ifndef LL_HTML_H
#define LL_HTML_H

#include <stddef.h>

typedef struct lua_State lua_State;

/* Parses s (len bytes of HTML, read as UTF-8) and
 * pushes the Selection of its document. Malformed HTML is recovered; an
 * empty or unparsable s gives an empty document. */
void ll_html_push_parsed(lua_State *L, const char *s, size_t len);
/* Pushes sel:find(css) for the Selection at stack index sel and the CSS
 * selector at index css; raises on a bad selector. */
void ll_html_push_find(lua_State *L, int sel, int css);

#endif
