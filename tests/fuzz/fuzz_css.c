/* fuzz_css.c -- libFuzzer target for src/lua_api/html_css.c, the CSS
 * selector to XPath translator of luaload.html: the input is a selector,
 * translated along each of its four axes. Checks that a translation either
 * fails with a one-line message ending in a position, or gives XPath that
 * libxml2 compiles (always, for an ASCII selector) and evaluates on a small
 * document to a set of elements; and that a NUL byte is always refused. */
#include <libxml/HTMLparser.h>
#include <libxml/xpath.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_css.h"
#include "fuzz_check.h"

static const char PAGE[] = "<html><body><div id=a class='x y'><p lang=en-US>one</p><p>two<b>!</b></p>"
                           "<input type=hidden name=t value=\"v'&quot;\"></div><ul><li>1<li>2<li>3</ul></body></html>";

static void ignore(void *ud, xmlErrorPtr e) {
    (void)ud;
    (void)e;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static xmlDocPtr doc;
    static xmlXPathContextPtr xp;
    static xmlNodePtr ctx[3];
    if (!doc) {
        doc = htmlReadMemory(PAGE, (int)strlen(PAGE), NULL, "UTF-8", HTML_PARSE_RECOVER | HTML_PARSE_NOERROR);
        CHECK(doc);
        xp = xmlXPathNewContext(doc);
        CHECK(xp);
        xp->error = ignore;
        xmlNodePtr html = xmlDocGetRootElement(doc);
        ctx[0] = (xmlNodePtr)doc;
        ctx[1] = html;
        ctx[2] = xmlFirstElementChild(xmlFirstElementChild(html)); /* div#a */
        CHECK(ctx[2]);
    }
    const char *css = (const char *)data;
    int ascii = 1, nul = memchr(data, 0, size) != NULL;
    for (size_t i = 0; i < size; i++) ascii = ascii && data[i] < 0x80;
    static const char *const axes[] = {"descendant", "child", "parent", "self"};
    for (int a = 0; a < 4; a++) {
        char err[128] = "";
        char *x = ll_html_css_xpath(css, size, axes[a], err, sizeof(err));
        if (!x) {
            CHECK(*err && !strchr(err, '\n'));
            CHECK(strcmp(err, "out of memory") == 0 || strstr(err, " at "));
            continue;
        }
        CHECK(!nul && strlen(x) > 0);
        xmlXPathCompExprPtr e = xmlXPathCtxtCompile(xp, (const xmlChar *)x);
        CHECK(e || !ascii);
        for (int c = 0; e && c < 3; c++) {
            xp->node = ctx[c];
            xmlXPathObjectPtr r = xmlXPathCompiledEval(e, xp);
            CHECK(r && r->type == XPATH_NODESET);
            for (int i = 0; r->nodesetval && i < r->nodesetval->nodeNr; i++)
                CHECK(r->nodesetval->nodeTab[i]->type == XML_ELEMENT_NODE);
            xmlXPathFreeObject(r);
        }
        xmlXPathFreeCompExpr(e);
        free(x);
    }
    return 0;
}
