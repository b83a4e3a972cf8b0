/* html_css.h -- CSS selectors translated to XPath 1.0 (html_css.c), for
 * luaload.html's Selection methods. No Lua and no libxml2 here, so the
 * fuzz target builds it alone. */
#ifndef LL_HTML_CSS_H
#define LL_HTML_CSS_H

#include <stddef.h>

/* Translates the CSS selector css (len bytes) into an XPath 1.0 expression
 * that selects, from a context node along axis ("descendant", "child",
 * "parent" or "self"), the elements the selector matches. The other
 * compounds of a selector may match anywhere up the tree, as in jQuery and
 * k6: "form input" from a node inside a form finds its inputs. Returns a
 * malloc'd string, or NULL with a one-line reason in err, such as
 * "expected ']' at 5" (1-based byte positions) or "out of memory". */
char *ll_html_css_xpath(const char *css, size_t len, const char *axis, char *err, size_t errlen);

#endif
