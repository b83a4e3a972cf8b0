---@meta luaload.html
-- luaload.html.lua -- lua-language-server annotations of
-- require("luaload.html") (src/lua_api/html.c, html_css.c): parse and the
-- Selection methods, as k6's k6/html (also what res:html() returns).
-- Editor support only, never loaded at run time (docs/editor.md).

---k6's `k6/html` on libxml2's HTML parser (docs/api.md#html-reshtml-and-lualoadhtml).
---@class luaload.html
local html = {}

---Nodes of a parsed document, jQuery style. `#sel` is its size.
---@class luaload.html.Selection
---@operator len: integer
local Selection = {}

---Parses `s` (as UTF-8; malformed HTML is recovered) and returns a Selection of the document.
---@param s string
---@return luaload.html.Selection
function html.parse(s) end

---k6's name of `html.parse`.
---@param s string
---@return luaload.html.Selection
function html.parseHTML(s) end

---The elements under the nodes that match `css`, once each, in document order.
---@param css string
---@return luaload.html.Selection
function Selection:find(css) end

---The element children, only those that match `css` when given.
---@param css? string
---@return luaload.html.Selection
function Selection:children(css) end

---The parent elements, once each.
---@param css? string
---@return luaload.html.Selection
function Selection:parent(css) end

---The nodes that match `css`.
---@param css string
---@return luaload.html.Selection
function Selection:filter(css) end

---Whether one of the nodes matches `css`.
---@param css string
---@return boolean
function Selection:is(css) end

---The first node, or an empty Selection.
---@return luaload.html.Selection
function Selection:first() end

---The last node, or an empty Selection.
---@return luaload.html.Selection
function Selection:last() end

---The node at `i`, 0-based; a negative `i` counts from the end.
---@param i integer
---@return luaload.html.Selection
function Selection:eq(i) end

---The number of nodes.
---@return integer
function Selection:size() end

---The number of nodes (the same as `size`).
---@return integer
function Selection:len() end

---The text of every node and its descendants, concatenated, entities decoded.
---@return string
function Selection:text() end

---The first node's attribute `name`, else `default`.
---@param name string
---@param default? string
---@return string?
function Selection:attr(name, default) end

---The first node's inner HTML; nil for an empty Selection.
---@return string?
function Selection:html() end

---The first node's form value (input, button, textarea, option, select; a list for `<select multiple>`); nil for other elements.
---@return string|string[]|nil
function Selection:val() end

---Calls `fn(i, sel)` for each node (`i` from 0, `sel` a Selection of that node) and stops when it returns false. Returns the Selection. `fn` may make requests.
---@param fn fun(i: integer, sel: luaload.html.Selection): boolean?
---@return luaload.html.Selection
function Selection:each(fn) end

---A list of what `fn(i, sel)` returns for each node, nils left out.
---@generic T
---@param fn fun(i: integer, sel: luaload.html.Selection): T
---@return T[]
function Selection:map(fn) end

return html
