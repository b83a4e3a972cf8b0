#!/usr/bin/env bash
# luaload.html and res:html() (k6/html's parseHTML and Selection): every
# selector form, every Selection method, argument and selector errors,
# malformed, empty and binary documents; then against serve's /echo (it
# answers with the request body): a CSRF token taken from a response,
# res:html(selector), a request made inside each(); and a bounded load
# loop (200 iterations, 4 VUs) that must end cleanly (no leak under ASan).
source "$(dirname "$0")/lib.sh"

# The page every part uses; the CSRF token is tok-123.
cat >"$T/page.html" <<'HTML'
<!DOCTYPE html>
<html><head><title>Shop</title></head>
<body>
<div id="main" class="page wide">
  <h1 class="title">Hello &amp; welcome</h1>
  <ul id="list">
    <li class="item first" data-id="1">one</li>
    <li class="item" data-id="2" lang="en-US">two</li>
    <li class="item last" data-id="3" title="a 'quoted' &quot;title&quot;">three</li>
  </ul>
  <form id="login" action="/login">
    <input type="hidden" name="csrf_token" value="tok-123">
    <INPUT class="big" id="x" TYPE="hidden" name="other" value="o">
    <input type="text" name="user" value="">
    <input type="checkbox" name="remember" checked>
    <select name="color"><option value="r">Red</option><option value="g" selected>Green</option></select>
    <select name="size"><option>S</option><option>M</option></select>
    <select name="tags" multiple><option value="a" selected>A</option><option>B</option><option selected>C</option></select>
    <textarea name="bio">line 1
line 2</textarea>
    <button value="send">Send</button>
  </form>
  <p>first <b>bold</b> <i>it</i></p>
  <p class="note">second</p>
</div>
<div class="footer"><p>foot</p><p>h&eacute;llo — ünï</p></div>
</body></html>
HTML
ELEMENTS=$(python3 -c '
import html.parser, sys
class P(html.parser.HTMLParser):
    n = 0
    def handle_starttag(self, tag, attrs): P.n += 1
p = P(); p.feed(open(sys.argv[1]).read()); print(P.n)' "$T/page.html")

f=$(script methods.lua <<LUA
local html = require("luaload.html")
local ll = require("luaload")
local f = assert(io.open("$T/page.html"))
local page = f:read("*a")
f:close()
local function out(k, v) io.write(k, "|", (tostring(v):gsub("\n", "\\\\n")), "\n") end
-- texts of a selection, spaces collapsed, joined with ","
local function texts(s)
  return table.concat(s:map(function(_, e) return (e:text():gsub("%s+", " "):gsub("^ ", ""):gsub(" \$", "")) end), ",")
end
local doc0 = html.parse(page) -- init code parses too (no network)
out("init", doc0:find("title"):text())
function default()
  local doc = html.parseHTML(page)
  local function sel(css) local s = doc:find(css) out("sel." .. css, s:size() .. ":" .. texts(s)) end
  out("count.*", doc:find("*"):size())
  for _, css in ipairs({ "li", "LI", "#list > *", "#list", ".item", ".item.first", "li.item.last", "[data-id]",
      "[data-id=2]", "[data-id='3']", '[data-id="1"]', "[lang|=en]", "[lang|=US]", "[class^=item]", "[class\$=last]",
      "[class*='tem l']", "[class~=first]", "[class~=ite]", "[class^='']", "[title*=\"'quoted'\"]",
      "[title*='\"title\"']", "input.big#x[type=hidden]", "div li", "#main p", ".footer p", "div p", "ul > li",
      "div > p", "body > p", "#main > ul > li.last", "h1, .note", ".note, h1", "li, .item", "h1 + ul", "h1 ~ p",
      "li + li", " ul  >  li ", "[ data-id = '2' ]", "*.first" }) do
    sel(css)
  end
  -- find from a Selection: descendants only, other compounds anywhere up the tree (jQuery, k6)
  out("find.chain", doc:find("#main"):find("li"):size())
  out("find.up", doc:find("ul"):find("div li"):size())
  out("find.self", doc:find("ul"):find("ul"):size())
  out("find.dedup", texts(doc:find("div, ul"):find("li")))
  out("find.empty", doc:find("nope"):find("li"):size())
  -- text, attr, html, val
  out("text", doc:find("li"):text())
  out("text.entity", doc:find("h1"):text())
  out("text.utf8", doc:find(".footer p"):last():text())
  out("text.nested", doc:find("p"):first():text())
  out("attr", doc:find("input[name=csrf_token]"):attr("value"))
  out("attr.upper", doc:find("#x"):attr("type"))
  out("attr.missing", tostring(doc:find("#x"):attr("nope")))
  out("attr.default", doc:find("#x"):attr("nope", "dflt") .. "," .. doc:find("nope"):attr("value", "d2"))
  out("attr.boolean", "[" .. doc:find("[name=remember]"):attr("checked") .. "]")
  out("attr.doc", tostring(doc:attr("id")))
  out("html", doc:find("p"):first():html())
  out("html.utf8", doc:find(".footer"):html())
  out("html.empty", tostring(doc:find("nope"):html()))
  out("val.hidden", doc:find("[name=csrf_token]"):val())
  out("val.text", "[" .. doc:find("[name=user]"):val() .. "]")
  out("val.novalue", tostring(doc:find("[name=remember]"):val()))
  out("val.select", doc:find("[name=color]"):val())
  out("val.select.first", doc:find("[name=size]"):val())
  out("val.multiple", table.concat(doc:find("[name=tags]"):val(), ","))
  out("val.textarea", doc:find("textarea"):val())
  out("val.button", doc:find("button"):val())
  out("val.option", doc:find("option"):eq(0):val() .. "," .. doc:find("[name=size] option"):eq(1):val())
  out("val.other", tostring(doc:find("p"):val()) .. "," .. tostring(doc:find("nope"):val()))
  -- each, map, first, last, eq, size, len, #
  local seen = {}
  local ret = doc:find("li"):each(function(i, e) seen[#seen + 1] = i .. ":" .. e:text() .. ":" .. #e end)
  out("each", table.concat(seen, ",") .. " " .. ret:size())
  seen = {}
  doc:find("li"):each(function(i) seen[#seen + 1] = i if i == 1 then return false end end)
  out("each.stop", table.concat(seen, ","))
  out("map", table.concat(doc:find("li"):map(function(i, e) if i ~= 1 then return e:attr("data-id") end end), ","))
  local li = doc:find("li")
  out("eq", li:eq(0):text() .. "," .. li:eq(2):text() .. "," .. li:eq(-1):text() .. "," .. li:eq(-3):text() .. "," ..
    li:eq(3):size() .. "," .. li:eq(-4):size())
  out("first.last", li:first():text() .. "," .. li:last():text() .. "," .. doc:find("nope"):first():size() .. "," ..
    doc:find("nope"):last():size())
  out("size", li:size() .. "," .. li:len() .. "," .. #li .. "," .. #doc .. "," .. #doc:find("nope"))
  out("tostring", tostring(li))
  -- children, parent, is, filter
  out("children", doc:find("ul"):children():size() .. "," .. doc:find("#main"):children():size() .. "," ..
    texts(doc:find("#main"):children("p")) .. "," .. doc:find("#main"):children(".nope"):size())
  out("children.doc", doc:children():size() .. ":" .. doc:children():attr("lang", "none"))
  out("parent", li:parent():size() .. ":" .. li:parent():attr("id") .. "," .. doc:find("p"):parent():size() .. "," ..
    doc:find("html"):parent():size() .. "," .. doc:find("p"):parent(".footer"):size())
  out("is", tostring(li:is(".first")) .. "," .. tostring(li:is("p")) .. "," .. tostring(doc:find("nope"):is("*")))
  out("filter", texts(li:filter(".last, .first")))
  -- a Selection keeps its document alive
  local kept = html.parse("<ul><li>kept</li></ul>"):find("li")
  collectgarbage()
  collectgarbage()
  out("alive", kept:text())
  -- malformed HTML is recovered; empty and binary input give (near) empty documents
  local bad = html.parse("<div><p>unclosed <b>bold<div>x</p></i><table><tr><td>cell</table><li>orphan<p a=1 a=2 b='x>y")
  out("bad", bad:find("td"):text() .. "," .. bad:find("li"):text() .. "," .. bad:find("b"):size() .. "," ..
    bad:find("body"):size())
  out("empty", html.parse(""):find("*"):size() .. "," .. html.parse(""):text() .. "," .. #html.parse(""))
  local bin = {}
  for i = 0, 4095 do bin[#bin + 1] = string.char((i * 7919 + 13) % 256) end
  out("binary", type(html.parse(table.concat(bin)):find("*"):size()))
  out("nul", html.parse("<p>a\0b</p><i>c</i>"):find("i"):text())
  -- errors: bad selectors, wrong argument types
  local function err(k, fn) -- the message without the script's line
    local ok, e = pcall(fn)
    out("err." .. k, tostring(ok) .. " " .. (tostring(e):gsub("^[^:]*:%d+: ", "")))
  end
  err("bracket", function() doc:find("div[") end)
  err("pseudo", function() doc:find("a:hover") end)
  err("empty", function() doc:find("") end)
  err("comma", function() doc:find("a,") end)
  err("comb", function() doc:find("a >") end)
  err("value", function() doc:find("[x=]") end)
  err("id", function() doc:find("#") end)
  err("string", function() doc:find('a[x="y') end)
  err("char", function() doc:find("a!") end)
  err("children", function() doc:children("p[") end)
  err("is", function() doc:is("") end)
  err("type", function() doc:find({}) end)
  err("self", function() doc.find("x", "p") end)
  err("attrname", function() doc:attr() end)
  err("each", function() doc:each(3) end)
  err("eq", function() doc:eq("x") end)
  err("parse", function() html.parse() end)
end
LUA
)
run_ll run "$f" -i 1 -q --no-summary
expect_eq "methods: exit 0" "$RC" 0
if [[ -s $ERR ]]; then not_ok "methods: stderr is empty" "$(head -c 600 "$ERR")"; else ok "methods: stderr is empty"; fi
get() { awk -v k="$1|" 'index($0, k) == 1 { print substr($0, length(k) + 1); exit }' "$OUT"; }
expect_eq "parse in init code" "$(get init)" "Shop"
expect_eq "* finds every element (as python's parser counts them)" "$(get count.*)" "$ELEMENTS"
sel() { expect_eq "selector '$1'" "$(get "sel.$1")" "$2"; }
sel "li" "3:one,two,three"
sel "LI" "3:one,two,three"
sel "#list > *" "3:one,two,three"
sel "#list" "1:one two three"
sel ".item" "3:one,two,three"
sel ".item.first" "1:one"
sel "li.item.last" "1:three"
sel "[data-id]" "3:one,two,three"
sel "[data-id=2]" "1:two"
sel "[data-id='3']" "1:three"
sel '[data-id="1"]' "1:one"
sel "[lang|=en]" "1:two"
sel "[lang|=US]" "0:"
sel "[class^=item]" "3:one,two,three"
sel "[class\$=last]" "1:three"
sel "[class*='tem l']" "1:three"
sel "[class~=first]" "1:one"
sel "[class~=ite]" "0:"
sel "[class^='']" "0:"
sel "[title*=\"'quoted'\"]" "1:three"
sel "[title*='\"title\"']" "1:three"
expect_eq "selector 'input.big#x[type=hidden]' (compound; uppercase tag and attribute in the page)" \
  "$(get 'sel.input.big#x[type=hidden]' | cut -d: -f1)" "1"
sel "div li" "3:one,two,three"
sel "#main p" "2:first bold it,second"
sel ".footer p" "2:foot,héllo — ünï"
sel "div p" "4:first bold it,second,foot,héllo — ünï"
sel "ul > li" "3:one,two,three"
sel "div > p" "4:first bold it,second,foot,héllo — ünï"
sel "body > p" "0:"
sel "#main > ul > li.last" "1:three"
sel "h1, .note" "2:Hello & welcome,second"
sel ".note, h1" "2:Hello & welcome,second"
sel "li, .item" "3:one,two,three"
sel "h1 + ul" "1:one two three"
sel "h1 ~ p" "2:first bold it,second"
sel "li + li" "2:two,three"
sel " ul  >  li " "3:one,two,three"
sel "[ data-id = '2' ]" "1:two"
sel "*.first" "1:one"
expect_eq "find from a Selection" "$(get find.chain)" 3
expect_eq "find: the other compounds may match above the Selection (jQuery, k6)" "$(get find.up)" 3
expect_eq "find: descendants only, not the node itself" "$(get find.self)" 0
expect_eq "find from nested nodes: once each, in document order" "$(get find.dedup)" "one,two,three"
expect_eq "find on an empty Selection" "$(get find.empty)" 0
expect_eq "text() joins every node's text" "$(get text)" "onetwothree"
expect_eq "text(): entities decoded" "$(get text.entity)" "Hello & welcome"
expect_eq "text(): UTF-8 kept" "$(get text.utf8)" "héllo — ünï"
expect_eq "text(): descendants' text" "$(get text.nested)" "first bold it"
expect_eq "attr: the CSRF token" "$(get attr)" "tok-123"
expect_eq "attr: names as the parser stores them (lowercase)" "$(get attr.upper)" "hidden"
expect_eq "attr: missing is nil" "$(get attr.missing)" nil
expect_eq "attr: default when missing, and on an empty Selection" "$(get attr.default)" "dflt,d2"
expect_eq "attr: a boolean attribute without a value reads as its name (libxml2)" "$(get attr.boolean)" "[checked]"
expect_eq "attr on the document: nil" "$(get attr.doc)" nil
expect_eq "html(): the first node's inner HTML" "$(get html)" "first <b>bold</b> <i>it</i>"
expect_eq "html(): UTF-8 and entities" "$(get html.utf8)" "<p>foot</p><p>héllo — ünï</p>"
expect_eq "html() of an empty Selection: nil" "$(get html.empty)" nil
expect_eq "val: hidden input" "$(get val.hidden)" "tok-123"
expect_eq "val: empty value" "$(get val.text)" "[]"
expect_eq "val: input without value: nil" "$(get val.novalue)" nil
expect_eq "val: select, the selected option" "$(get val.select)" "g"
expect_eq "val: select without a selected option, the first (its text)" "$(get val.select.first)" "S"
expect_eq "val: select multiple, a list" "$(get val.multiple)" "a,C"
expect_eq "val: textarea, its text" "$(get val.textarea)" 'line 1\nline 2'
expect_eq "val: button" "$(get val.button)" "send"
expect_eq "val: option, value or text" "$(get val.option)" "r,M"
expect_eq "val: other elements and empty Selections: nil" "$(get val.other)" "nil,nil"
expect_eq "each(fn): 0-based index and a Selection of one; returns the Selection" "$(get each)" "0:one:1,1:two:1,2:three:1 3"
expect_eq "each: stops when fn returns false" "$(get each.stop)" "0,1"
expect_eq "map: fn's values, nil left out" "$(get map)" "1,3"
expect_eq "eq: 0-based, negative from the end, out of range empty" "$(get eq)" "one,three,three,one,0,0"
expect_eq "first, last (empty on empty)" "$(get first.last)" "one,three,0,0"
expect_eq "size, len, #" "$(get size)" "3,3,3,1,0"
expect_eq "tostring" "$(get tostring)" "html.Selection(3)"
expect_eq "children([css])" "$(get children)" "3,5,first bold it,second,0"
expect_eq "children of the document: <html>" "$(get children.doc)" "1:none"
expect_eq "parent([css]): once each, elements only" "$(get parent)" "1:list,2,0,1"
expect_eq "is(css)" "$(get is)" "true,false,false"
expect_eq "filter(css)" "$(get filter)" "one,three"
expect_eq "a Selection keeps its document alive" "$(get alive)" "kept"
expect_eq "malformed HTML is recovered" "$(get bad)" "cell,orphan,1,1"
expect_eq "an empty document" "$(get empty)" "0,,1"
expect_eq "binary input parses without an error" "$(get binary)" number
expect_eq "a NUL byte does not end the document" "$(get nul)" "c"
e() { expect_eq "error: $1" "$(get "err.$1")" "false $2"; }
e bracket 'html: find: bad selector "div[": expected '"']'"' at 5'
e pseudo 'html: find: bad selector "a:hover": unsupported pseudo-class at 2'
e empty 'html: find: bad selector "": expected a selector at 1'
e comma 'html: find: bad selector "a,": expected a selector at 3'
e comb 'html: find: bad selector "a >": expected a selector at 4'
e value 'html: find: bad selector "[x=]": expected a value at 4'
e id 'html: find: bad selector "#": expected an id at 2'
e string 'html: find: bad selector "a[x="y": expected '"'\"'"' at 7'
e char 'html: find: bad selector "a!": unexpected '"'!'"' at 2'
e children 'html: children: bad selector "p[": expected '"']'"' at 3'
e is 'html: is: bad selector "": expected a selector at 1'
expect_match "error: a table for a selector" "$OUT" "^err\.type\|false .*bad argument #1 to 'find' \(string expected, got table\)$"
expect_match "error: not a Selection" "$OUT" "^err\.self\|false .*bad argument #1 to 'find' \(luaload\.html\.Selection expected, got string\)$"
expect_match "error: attr without a name" "$OUT" "^err\.attrname\|false .*bad argument #1 to 'attr' \(string expected, got no value\)$"
expect_match "error: each without a function" "$OUT" "^err\.each\|false .*html: each: expected a function, got number$"
expect_match "error: eq without a number" "$OUT" "^err\.eq\|false .*bad argument #1 to 'eq' \(number expected, got string\)$"
expect_match "error: parse without a string" "$OUT" "^err\.parse\|false .*bad argument #1 to 'parse' \(string expected, got no value\)$"

# a bad selector outside pcall fails the iteration, with the script's line
f=$(script badsel.lua <<'LUA'
local html = require("luaload.html")
function default()
  html.parse("<p>x</p>"):find("p[")
end
LUA
)
run_ll run "$f" -i 1 -q --no-summary
expect_match "a bad selector: the script line and the message" "$ERR" 'badsel\.lua:3: html: find: bad selector "p\[": expected .\]. at 3'

# against serve's /echo: the body comes back as the response's body
start_serve
f=$(script response.lua <<LUA
local http = require("luaload.http")
local f = assert(io.open("$T/page.html"))
local page = f:read("*a")
f:close()
local function out(k, v) io.write(k, "|", tostring(v), "\n") end
function default()
  local res = http.post("$URL/echo", page)
  out("csrf", res:html():find("input[name=csrf_token]"):attr("value"))
  out("selector", res:html("li"):size() .. "," .. res:html("title"):text() .. "," .. res:html():size())
  out("empty", http.post("$URL/echo", ""):html():find("*"):size())
  out("binary", type(http.post("$URL/echo", string.rep("\0\255\1\254", 1000)):html():find("*"):size()))
  local echoed = {}
  res:html("li"):each(function(i, li) echoed[#echoed + 1] = http.post("$URL/echo", li:text()).body end)
  out("each.requests", table.concat(echoed, ","))
  local ok, e = pcall(function() return res:html("li[") end)
  out("err.selector", tostring(ok) .. " " .. tostring(e))
  ok, e = pcall(function() return http.get("$URL/", { response_type = "none" }):html() end)
  out("err.nobody", tostring(ok) .. " " .. tostring(e))
end
LUA
)
run_ll run "$f" -i 1 -q --no-summary
expect_eq "response: exit 0" "$RC" 0
expect_eq "res:html(): the CSRF token from a response" "$(get csrf)" "tok-123"
expect_eq "res:html(selector) is res:html():find(selector)" "$(get selector)" "3,Shop,1"
expect_eq "res:html() of an empty body: an empty document" "$(get empty)" 0
expect_eq "res:html() of a binary body: no error" "$(get binary)" number
expect_eq "each(fn) may make requests (fn yields the VU)" "$(get each.requests)" "one,two,three"
expect_eq "res:html(bad selector)" "$(get err.selector)" 'false html: find: bad selector "li[": expected '"']'"' at 4'
expect_match "res:html() without a body" "$OUT" '^err\.nobody\|false .*res:html\(\): the response has no body \(response_type "none"\?\)$'

# a bounded load loop: 200 iterations on 4 VUs, each parsing a larger page
# and walking it; every check passes and the run ends cleanly (under ASan,
# LeakSanitizer fails the run on a leaked document)
f=$(script load.lua <<LUA
local http = require("luaload.http")
local ll = require("luaload")
local f = assert(io.open("$T/page.html"))
local page = f:read("*a")
f:close()
local rows = {}
for i = 1, 300 do rows[#rows + 1] = string.format('<tr class="row r%d"><td>%d</td><td><a href="/p/%d">p%d</a></td></tr>', i, i, i, i) end
local big = page:gsub("</body>", "<table>" .. table.concat(rows) .. "</table></body>")
local client = http.Client{}
function default()
  local res = client:post("$URL/echo", big)
  local doc = res:html()
  local token = doc:find("input[name=csrf_token]"):attr("value")
  local links = doc:find("table tr.row > td a[href^='/p/']")
  local n = 0
  links:each(function(_, a) n = n + #a:attr("href") end)
  ll.check(doc, {
    ["token"] = function() return token == "tok-123" end,
    ["300 links"] = function() return links:size() == 300 and n > 0 end,
    ["last row"] = function() return doc:find("tr"):last():find("td"):first():text() == "300" end,
    ["html"] = function() return #doc:find("table"):html() > 10000 end,
  })
end
LUA
)
run_ll run "$f" -u 4 -i 200 -q --summary-export "$T/s.json"
expect_eq "load loop: exit 0" "$RC" 0
expect_eq "load loop: 200 iterations" "$(cnt iterations)" 200
expect_eq "load loop: every check passed" "$(jqv "$T/s.json" '.metrics.checks.passes').$(jqv "$T/s.json" '.metrics.checks.fails')" "800.0"
if grep -Eq 'ERROR|LeakSanitizer|script error' "$ERR"; then not_ok "load loop: no errors" "$(head -c 600 "$ERR")"; else ok "load loop: no errors"; fi
finish
