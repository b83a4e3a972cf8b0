-- luaload.http_forms: k6's Response.submitForm and Response.clickLink, in
-- Lua on res:html() (they make requests, so they must be able to wait).
-- http.c calls the returned function with the http module and its URL
-- resolver; it answers the Response methods submit_form / submitForm and
-- click_link / clickLink.
return function(http, resolve)
  local M = {}

  local function encode(s)
    return (tostring(s):gsub("[^%w%-%._~]", function(c) return string.format("%%%02X", c:byte()) end))
  end

  local function query(fields)
    local names, parts = {}, {}
    for k in pairs(fields) do names[#names + 1] = k end
    table.sort(names)
    for _, k in ipairs(names) do parts[#parts + 1] = encode(k) .. "=" .. encode(fields[k]) end
    return table.concat(parts, "&")
  end

  local function target(res, ref, what)
    local url = resolve(res.url or "", ref or "")
    if not url then error(what .. ": cannot resolve '" .. tostring(ref) .. "' against '" .. tostring(res.url) .. "'", 3) end
    return url
  end

  -- the values a browser would send for form, as jQuery's serializeArray:
  -- named, enabled controls; checkboxes and radios when checked; no
  -- buttons, files or resets (the submit button is added apart)
  local function form_values(form)
    local values = {}
    form:find("input[name], select[name], textarea[name]"):each(function(_, el)
      if el:attr("disabled") then return end
      local kind = (el:attr("type") or "text"):lower()
      if el:is("input") and (kind == "submit" or kind == "button" or kind == "image" or kind == "reset" or kind == "file") then
        return
      end
      if (kind == "checkbox" or kind == "radio") and el:is("input") then
        if el:attr("checked") then values[el:attr("name")] = el:attr("value") or "on" end
        return
      end
      local v = el:val()
      if type(v) == "table" then v = v[1] end
      values[el:attr("name")] = v or ""
    end)
    return values
  end

  -- submit_form{ form_selector = "form", fields = {...},
  --   submit_selector = '[type="submit"]', params = {...} } -> the response
  function M.submit_form(res, opts)
    local W = "res:submit_form"
    opts = opts or {}
    if type(opts) ~= "table" then error(W .. ": expected a table of options", 2) end
    local form_sel = opts.form_selector or opts.formSelector or "form"
    local form = res:html():find(form_sel):first()
    if form:size() == 0 then error(W .. ": no form matches '" .. form_sel .. "'", 2) end
    local values = form_values(form)
    local submit = form:find(opts.submit_selector or opts.submitSelector or '[type="submit"]'):first()
    if submit:size() > 0 and submit:attr("name") then values[submit:attr("name")] = submit:attr("value") or "" end
    for k, v in pairs(opts.fields or {}) do values[k] = v end
    local method = (form:attr("method") or "GET"):upper()
    local url = target(res, form:attr("action") or res.url, W)
    if method == "GET" then
      local q = query(values)
      url = url:gsub("#.*$", "")
      if q ~= "" then url = url .. (url:find("?", 1, true) and "&" or "?") .. q end
      return http.request("GET", url, nil, opts.params)
    end
    return http.request(method, url, values, opts.params)
  end

  -- click_link{ selector = "a[href]", params = {...} } -> the response
  function M.click_link(res, opts)
    local W = "res:click_link"
    opts = opts or {}
    if type(opts) ~= "table" then error(W .. ": expected a table of options", 2) end
    local sel = opts.selector or "a[href]"
    local link = res:html():find(sel):first()
    if link:size() == 0 then error(W .. ": no element matches '" .. sel .. "'", 2) end
    local href = link:attr("href")
    if not href then error(W .. ": the element '" .. sel .. "' has no href", 2) end
    return http.request("GET", target(res, href, W), nil, opts.params)
  end

  M.submitForm = M.submit_form
  M.clickLink = M.click_link
  return M
end
