/* html.c -- luaload.html, k6/html in Lua: parse (k6's parseHTML) reads a
 * document with libxml2's HTML parser (malformed HTML recovered, no
 * network), and Selections, lists of its nodes, carry k6's methods: find,
 * children, parent, filter, is, first, last, eq, size/len (and #), text,
 * attr, html, val, each, map. CSS selectors become XPath (html_css.c) that
 * libxml2 evaluates from each node of a Selection. A Selection keeps its
 * document alive through its environment table, which holds the document
 * userdata; that userdata frees the xmlDoc in __gc. */
#include "html.h"

#include <lauxlib.h>
#include <libxml/HTMLparser.h>
#include <libxml/HTMLtree.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>
#include <limits.h>
#include <lua.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "html_css.h"
#include "modules.h"

#define HTML_DOC_MT "luaload.html.Document"
#define HTML_SEL_MT "luaload.html.Selection"
#define HTML_PARSE_OPTIONS (HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_NONET)

typedef struct {
    xmlDocPtr doc;
    xmlXPathContextPtr xp; /* the document's, for every selector on it */
} html_doc;

typedef struct {
    int n;
    xmlNodePtr nodes[];
} html_sel;

/* each and map in Lua, so that fn may make requests (yield the VU). */
static const char html_lua_methods[] =
    "return function(self, fn)\n"
    "  if type(fn) ~= 'function' then error('html: each: expected a function, got ' .. type(fn), 2) end\n"
    "  for i = 0, self:size() - 1 do\n"
    "    if fn(i, self:eq(i)) == false then break end\n"
    "  end\n"
    "  return self\n"
    "end, function(self, fn)\n"
    "  if type(fn) ~= 'function' then error('html: map: expected a function, got ' .. type(fn), 2) end\n"
    "  local out = {}\n"
    "  for i = 0, self:size() - 1 do\n"
    "    local v = fn(i, self:eq(i))\n"
    "    if v ~= nil then out[#out + 1] = v end\n"
    "  end\n"
    "  return out\n"
    "end\n";

static pthread_once_t html_init_once = PTHREAD_ONCE_INIT;

static void html_silent(void *ud, xmlErrorPtr e) {
    (void)ud;
    (void)e;
}

static int html_doc_gc(lua_State *L) {
    html_doc *d = lua_touserdata(L, 1);
    if (d->xp) xmlXPathFreeContext(d->xp);
    if (d->doc) xmlFreeDoc(d->doc);
    d->xp = NULL;
    d->doc = NULL;
    return 0;
}

/* The Selection at idx and, in *d, its document; raises when idx is not a
 * Selection, or when its document is already freed (only possible in
 * other __gc code while the state closes). */
static html_sel *html_check(lua_State *L, int idx, html_doc **d) {
    html_sel *s = luaL_checkudata(L, idx, HTML_SEL_MT);
    lua_getfenv(L, idx);
    lua_rawgeti(L, -1, 1);
    *d = lua_touserdata(L, -1);
    lua_pop(L, 2);
    if (!*d || !(*d)->doc) luaL_error(L, "html: the document of this Selection is freed");
    return s;
}

/* Pushes a Selection of nodes[0..n) whose environment is the table at
 * stack index env ({ document }). */
static void html_push_sel(lua_State *L, int env, xmlNodePtr const *nodes, int n) {
    html_sel *s = lua_newuserdata(L, sizeof(*s) + (size_t)n * sizeof(xmlNodePtr));
    s->n = n;
    if (n > 0) memcpy(s->nodes, nodes, (size_t)n * sizeof(xmlNodePtr));
    luaL_getmetatable(L, HTML_SEL_MT);
    lua_setmetatable(L, -2);
    lua_pushvalue(L, env);
    lua_setfenv(L, -2);
}

/* Pushes a Selection of nodes in the document of the Selection at self. */
static void html_push_like(lua_State *L, int self, xmlNodePtr const *nodes, int n) {
    lua_getfenv(L, self);
    html_push_sel(L, lua_gettop(L), nodes, n);
    lua_remove(L, -2);
}

/* Compiles the CSS selector at stack index idx for fn, along axis; when
 * the argument is absent and dflt is not NULL, the XPath dflt instead.
 * Raises: html: fn: bad selector "css": why. */
static xmlXPathCompExprPtr html_compile(lua_State *L, html_doc *d, int idx, const char *axis, const char *dflt,
                                        const char *fn) {
    if (dflt && lua_isnoneornil(L, idx)) {
        xmlXPathCompExprPtr e = xmlXPathCtxtCompile(d->xp, (const xmlChar *)dflt);
        if (!e) luaL_error(L, "html: %s: out of memory", fn);
        return e;
    }
    size_t len;
    const char *css = luaL_checklstring(L, idx, &len);
    char err[128];
    char *xpath = ll_html_css_xpath(css, len, axis, err, sizeof(err));
    if (!xpath) luaL_error(L, "html: %s: bad selector \"%s\": %s", fn, css, err);
    xmlXPathCompExprPtr e = xmlXPathCtxtCompile(d->xp, (const xmlChar *)xpath);
    free(xpath);
    if (!e) luaL_error(L, "html: %s: bad selector \"%s\": invalid UTF-8", fn, css);
    return e;
}

/* Pushes the Selection of what expr selects from each node of s (at stack
 * index self), in document order and without duplicates; frees expr. */
static void html_push_select(lua_State *L, int self, const html_sel *s, html_doc *d, xmlXPathCompExprPtr expr,
                             const char *fn) {
    xmlNodeSetPtr set = xmlXPathNodeSetCreate(NULL);
    int failed = !set;
    for (int i = 0; i < s->n && !failed; i++) {
        d->xp->node = s->nodes[i];
        xmlXPathObjectPtr r = xmlXPathCompiledEval(expr, d->xp);
        failed = !r || r->type != XPATH_NODESET;
        const xmlNodeSet *got = failed ? NULL : r->nodesetval;
        for (int j = 0; got && !failed && j < got->nodeNr; j++)
            failed = xmlXPathNodeSetAddUnique(set, got->nodeTab[j]) < 0;
        xmlXPathFreeObject(r);
    }
    xmlXPathFreeCompExpr(expr);
    if (!failed && s->n > 1) { /* several starting nodes: sort, drop repeats */
        xmlXPathNodeSetSort(set);
        int k = 0;
        for (int i = 0; i < set->nodeNr; i++)
            if (k == 0 || set->nodeTab[k - 1] != set->nodeTab[i]) set->nodeTab[k++] = set->nodeTab[i];
        set->nodeNr = k;
    }
    if (!failed) html_push_like(L, self, set->nodeTab, set->nodeNr);
    xmlXPathFreeNodeSet(set);
    if (failed) luaL_error(L, "html: %s: out of memory", fn);
}

void ll_html_push_find(lua_State *L, int sel, int css) {
    html_doc *d;
    const html_sel *s = html_check(L, sel, &d);
    html_push_select(L, sel, s, d, html_compile(L, d, css, "descendant", NULL, "find"), "find");
}

static int html_find(lua_State *L) {
    ll_html_push_find(L, 1, 2);
    return 1;
}

static int html_children(lua_State *L) {
    html_doc *d;
    const html_sel *s = html_check(L, 1, &d);
    html_push_select(L, 1, s, d, html_compile(L, d, 2, "child", "child::*", "children"), "children");
    return 1;
}

static int html_parent(lua_State *L) {
    html_doc *d;
    const html_sel *s = html_check(L, 1, &d);
    html_push_select(L, 1, s, d, html_compile(L, d, 2, "parent", "parent::*", "parent"), "parent");
    return 1;
}

static int html_filter(lua_State *L) {
    html_doc *d;
    const html_sel *s = html_check(L, 1, &d);
    html_push_select(L, 1, s, d, html_compile(L, d, 2, "self", NULL, "filter"), "filter");
    return 1;
}

static int html_is(lua_State *L) {
    html_doc *d;
    const html_sel *s = html_check(L, 1, &d);
    html_push_select(L, 1, s, d, html_compile(L, d, 2, "self", NULL, "is"), "is");
    lua_pushboolean(L, ((const html_sel *)lua_touserdata(L, -1))->n > 0);
    return 1;
}

static int html_eq(lua_State *L) {
    html_doc *d;
    const html_sel *s = html_check(L, 1, &d);
    lua_Integer i = luaL_checkinteger(L, 2);
    if (i < 0) i += s->n; /* -1: the last, as jQuery */
    html_push_like(L, 1, s->nodes + (i >= 0 && i < s->n ? i : 0), i >= 0 && i < s->n);
    return 1;
}

static int html_first(lua_State *L) {
    html_doc *d;
    const html_sel *s = html_check(L, 1, &d);
    html_push_like(L, 1, s->nodes, s->n > 0);
    return 1;
}

static int html_last(lua_State *L) {
    html_doc *d;
    const html_sel *s = html_check(L, 1, &d);
    html_push_like(L, 1, s->nodes + (s->n > 0 ? s->n - 1 : 0), s->n > 0);
    return 1;
}

static int html_size(lua_State *L) {
    html_doc *d;
    lua_pushinteger(L, html_check(L, 1, &d)->n);
    return 1;
}

static int html_tostring(lua_State *L) {
    html_doc *d;
    lua_pushfstring(L, "html.Selection(%d)", html_check(L, 1, &d)->n);
    return 1;
}

/* Adds node's text (its descendants' text nodes) to b. */
static void html_add_text(luaL_Buffer *b, xmlNodePtr node) {
    xmlChar *t = xmlNodeGetContent(node);
    if (t) luaL_addstring(b, (const char *)t);
    xmlFree(t);
}

static int html_text(lua_State *L) {
    html_doc *d;
    const html_sel *s = html_check(L, 1, &d);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 0; i < s->n; i++) html_add_text(&b, s->nodes[i]);
    luaL_pushresult(&b);
    return 1;
}

/* Pushes the value of attribute name of node, or returns 0 (nothing pushed)
 * when node is not an element or has no such attribute. */
static int html_push_attr(lua_State *L, xmlNodePtr node, const char *name) {
    xmlChar *v = node && node->type == XML_ELEMENT_NODE ? xmlGetProp(node, (const xmlChar *)name) : NULL;
    if (v) lua_pushstring(L, (const char *)v);
    xmlFree(v);
    return v != NULL;
}

static int html_attr(lua_State *L) {
    html_doc *d;
    const html_sel *s = html_check(L, 1, &d);
    const char *name = luaL_checkstring(L, 2);
    if (html_push_attr(L, s->n ? s->nodes[0] : NULL, name)) return 1;
    lua_settop(L, 3); /* the default, or nil */
    return 1;
}

/* html(): the inner HTML of the first node, as libxml2's HTML serializer
 * writes it; nil for an empty Selection. */
static int html_html(lua_State *L) {
    html_doc *d;
    const html_sel *s = html_check(L, 1, &d);
    lua_pushnil(L);
    if (s->n == 0) return 1;
    xmlBufferPtr buf = xmlBufferCreate();
    xmlOutputBufferPtr out = buf ? xmlOutputBufferCreateBuffer(buf, NULL) : NULL;
    for (xmlNodePtr c = out ? s->nodes[0]->children : NULL; c; c = c->next)
        htmlNodeDumpFormatOutput(out, d->doc, c, NULL, 0);
    int failed = !out || xmlOutputBufferFlush(out) < 0;
    if (!failed) lua_pushlstring(L, (const char *)xmlBufferContent(buf), (size_t)xmlBufferLength(buf));
    if (out) xmlOutputBufferClose(out);
    if (buf) xmlBufferFree(buf);
    if (failed) return luaL_error(L, "html: html: out of memory");
    return 1;
}

/* Pushes an option's value: its value attribute, else its text. */
static void html_push_option(lua_State *L, xmlNodePtr opt) {
    if (html_push_attr(L, opt, "value")) return;
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    html_add_text(&b, opt);
    luaL_pushresult(&b);
}

/* val() of a select: the selected option's value, else the first
 * option's (as a browser submits it), "" without options; with multiple,
 * the list of the selected options' values. */
static int html_select_val(lua_State *L, html_doc *d, xmlNodePtr sel) {
    xmlXPathCompExprPtr e = xmlXPathCtxtCompile(d->xp, (const xmlChar *)"descendant::option");
    d->xp->node = sel;
    xmlXPathObjectPtr r = e ? xmlXPathCompiledEval(e, d->xp) : NULL;
    xmlXPathFreeCompExpr(e);
    if (!r || r->type != XPATH_NODESET) {
        xmlXPathFreeObject(r);
        return luaL_error(L, "html: val: out of memory");
    }
    const xmlNodeSet *opts = r->nodesetval;
    int n = opts ? opts->nodeNr : 0, multiple = xmlHasProp(sel, (const xmlChar *)"multiple") != NULL;
    xmlNodePtr chosen = NULL;
    if (multiple) lua_createtable(L, 0, 0);
    for (int i = 0; i < n; i++) {
        if (!xmlHasProp(opts->nodeTab[i], (const xmlChar *)"selected")) continue;
        if (!multiple) {
            chosen = opts->nodeTab[i];
            break;
        }
        html_push_option(L, opts->nodeTab[i]);
        lua_rawseti(L, -2, (int)lua_objlen(L, -2) + 1);
    }
    if (!multiple && !chosen && n > 0) chosen = opts->nodeTab[0];
    if (!multiple && chosen) html_push_option(L, chosen);
    else if (!multiple) lua_pushliteral(L, "");
    xmlXPathFreeObject(r);
    return 1;
}

/* val(): the value of the first node, as k6's: input and button: the value
 * attribute (nil without one); textarea: its text; option: its value;
 * select: see html_select_val; anything else: nil. */
static int html_val(lua_State *L) {
    html_doc *d;
    const html_sel *s = html_check(L, 1, &d);
    xmlNodePtr n = s->n ? s->nodes[0] : NULL;
    const char *name = n && n->type == XML_ELEMENT_NODE ? (const char *)n->name : "";
    if (strcmp(name, "input") == 0 || strcmp(name, "button") == 0) {
        if (!html_push_attr(L, n, "value")) lua_pushnil(L);
        return 1;
    }
    if (strcmp(name, "option") == 0) {
        html_push_option(L, n);
        return 1;
    }
    if (strcmp(name, "select") == 0) return html_select_val(L, d, n);
    if (strcmp(name, "textarea") != 0) {
        lua_pushnil(L);
        return 1;
    }
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    html_add_text(&b, n);
    luaL_pushresult(&b);
    return 1;
}

/* Makes the metatables of documents and Selections, once per state. */
static void html_metatables(lua_State *L) {
    static const luaL_Reg methods[] = {
        {"find", html_find},   {"children", html_children}, {"parent", html_parent}, {"filter", html_filter},
        {"is", html_is},       {"eq", html_eq},             {"first", html_first},   {"last", html_last},
        {"size", html_size},   {"len", html_size},          {"text", html_text},     {"attr", html_attr},
        {"html", html_html},   {"val", html_val},           {NULL, NULL}};
    if (luaL_newmetatable(L, HTML_DOC_MT)) {
        lua_pushcfunction(L, html_doc_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_pop(L, 1);
    if (!luaL_newmetatable(L, HTML_SEL_MT)) {
        lua_pop(L, 1);
        return;
    }
    lua_pushcfunction(L, html_size);
    lua_setfield(L, -2, "__len");
    lua_pushcfunction(L, html_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_newtable(L);
    luaL_register(L, NULL, methods);
    if (luaL_loadbuffer(L, html_lua_methods, sizeof(html_lua_methods) - 1, "=luaload.html") != 0) lua_error(L);
    lua_call(L, 0, 2);
    lua_setfield(L, -3, "map");
    lua_setfield(L, -2, "each");
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
}

static void html_init(void) { xmlInitParser(); }

void ll_html_push_parsed(lua_State *L, const char *s, size_t len) {
    html_metatables(L);
    pthread_once(&html_init_once, html_init); /* libxml2's globals, before two threads race on them */
    if (len > INT_MAX) luaL_error(L, "html: parse: a document over 2 GiB");
    html_doc *d = lua_newuserdata(L, sizeof(*d));
    d->doc = NULL;
    d->xp = NULL;
    luaL_getmetatable(L, HTML_DOC_MT);
    lua_setmetatable(L, -2);
    d->doc = len > 0 ? htmlReadMemory(s, (int)len, NULL, "UTF-8", HTML_PARSE_OPTIONS) : NULL;
    if (!d->doc) d->doc = htmlNewDocNoDtD(NULL, NULL); /* empty, or nothing to recover */
    d->xp = d->doc ? xmlXPathNewContext(d->doc) : NULL;
    if (!d->xp) luaL_error(L, "html: parse: out of memory");
    d->xp->error = html_silent;
    xmlXPathOrderDocElems(d->doc); /* document order in O(1) when sorting */
    lua_createtable(L, 1, 0); /* the environment of the document's Selections */
    lua_pushvalue(L, -2);
    lua_rawseti(L, -2, 1);
    xmlNodePtr root = (xmlNodePtr)d->doc;
    html_push_sel(L, lua_gettop(L), &root, 1);
    lua_replace(L, -3);
    lua_pop(L, 1);
    /* The collector does not see libxml2's memory, about 10 times the
     * HTML's size: count it as allocated, so old documents go in time. */
    lua_gc(L, LUA_GCSTEP, (int)(len / 1024 * 10));
}

static int html_parse(lua_State *L) {
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    ll_html_push_parsed(L, s, len);
    return 1;
}

int luaopen_luaload_html(lua_State *L) {
    static const luaL_Reg fns[] = {{"parse", html_parse}, {"parseHTML", html_parse}, {NULL, NULL}};
    html_metatables(L);
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    return 1;
}
