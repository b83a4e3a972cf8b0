-- luaload.coroutine: the coroutine library the scripts see, so that a wait
-- (an HTTP request, sleep) inside a coroutine the script created suspends
-- the whole VU, as lua-nginx-module does. Installed by
-- src/lua_api/coroutine.c into every worker state before the init code.
--
-- A wait site (ll_luaload_wait in src/lua_api/luaload.c) yields the wait
-- token first. When the coroutine resume() runs yields the token, resume()
-- yields it on to its own parent, up to the VU's own coroutine, whose yield
-- goes to the worker. The worker resumes the VU's coroutine with the wait's
-- result, which each resume() hands down to the coroutine below, down to
-- the call that waited. For everything else the functions behave as the
-- standard ones.
--
-- Only coroutines made here can be resumed or yield: never a VU's own
-- coroutine (the worker's), and never one in the middle of a wait.
local raw_create = coroutine.create
local raw_resume = coroutine.resume
local raw_yield = coroutine.yield
local raw_status = coroutine.status
local raw_running = coroutine.running
local raw_isyieldable = coroutine.isyieldable
local type, error = type, error
assert(raw_isyieldable, "luaload.coroutine needs coroutine.isyieldable (LuaJIT 2.1)")

local RUNNABLE, WAITING, BROKEN = 1, 2, 3

-- cstack_check(what) raises "C stack overflow" at its caller's caller's
-- line when the thread's C stack is nearly used up (src/lua_api/guard.c):
-- each resume runs the coroutine on the C stack, and LuaJIT does not bound
-- how deep they nest.
return function(token, cancel_wait, cstack_check)
  -- the script's coroutines -> RUNNABLE, WAITING (in a wait that goes up
  -- through the coroutine resuming it) or BROKEN (its wait was cancelled)
  local state = setmetatable({}, { __mode = "k" })

  local function create(fn)
    if type(fn) ~= "function" then
      error("bad argument #1 to 'create' (function expected)", 2)
    end
    local co = raw_create(fn)
    state[co] = RUNNABLE
    return co
  end

  -- How deep resume() calls nest now, in the running VU (at every wait the
  -- VU yields to its worker, every level has returned: 0). Each level runs
  -- on the C stack, so they are bounded as Lua 5.1 bounds C calls.
  local depth, MAX_DEPTH = 0, 200

  local function leave(...)
    depth = depth - 1
    return ...
  end

  -- raises at the line of the script's call, level: as error()'s
  local function check_depth(what, level)
    if depth >= MAX_DEPTH then
      error("C stack overflow in " .. what .. " (coroutines nested deeper than 200: an unbounded recursion?)",
        level + 1)
    end
  end

  -- raw_resume, counted; the error names the line of the script's resume()
  local function counted_resume(co, ...)
    check_depth("coroutine.resume", 3)
    depth = depth + 1
    return leave(raw_resume(co, ...))
  end

  -- The coroutine co got the result of its wait: it goes on.
  local function deliver(co, ...)
    state[co] = RUNNABLE
    return counted_resume(co, ...)
  end

  -- What raw_resume(co) gave: returned to the script, unless co yielded the
  -- wait token, which goes up and whose result comes back down into co.
  local function forward(co, ok, first, ...)
    if not ok or first ~= token then return ok, first, ... end
    if not raw_isyieldable() then
      -- resume() called where this coroutine cannot yield (inside a C
      -- function such as table.sort): the wait is given up, co with it
      cancel_wait()
      state[co] = BROKEN
      return false, "coroutine.resume: the coroutine waited (an HTTP request, sleep) where its VU cannot "
        .. "wait (inside a C function such as table.sort or string.gsub)"
    end
    state[co] = WAITING
    return forward(co, deliver(co, raw_yield(token)))
  end

  local function resume(co, ...)
    cstack_check("coroutine.resume")
    if type(co) ~= "thread" then
      error("bad argument #1 to 'resume' (coroutine expected)", 2)
    end
    local st = state[co]
    if st == RUNNABLE then return forward(co, counted_resume(co, ...)) end
    if st == WAITING then return false, "cannot resume a coroutine that is waiting (an HTTP request, sleep)" end
    if st == BROKEN then return false, "cannot resume dead coroutine" end
    return false, "cannot resume a coroutine the script did not create (a VU's own coroutine)"
  end

  local function yield(...)
    if state[raw_running()] == nil then
      error("coroutine.yield: not inside a coroutine the script created", 2)
    end
    return raw_yield(...)
  end

  local function status(co)
    if type(co) ~= "thread" then
      error("bad argument #1 to 'status' (coroutine expected)", 2)
    end
    local st = state[co]
    if st == WAITING then return "normal" end
    if st == BROKEN then return "dead" end
    return raw_status(co)
  end

  -- as the standard wrap: a string error gets the caller's position
  local function rethrow(ok, ...)
    if ok then return ... end
    local e = ...
    if type(e) == "string" then error(e, 2) end
    error(e, 0)
  end

  local function wrap(fn)
    if type(fn) ~= "function" then
      error("bad argument #1 to 'wrap' (function expected)", 2)
    end
    local co = create(fn)
    return function(...)
      cstack_check("coroutine.wrap")
      check_depth("coroutine.wrap", 2)
      return rethrow(resume(co, ...))
    end
  end

  coroutine.create = create
  coroutine.resume = resume
  coroutine.yield = yield
  coroutine.status = status
  coroutine.wrap = wrap
  coroutine.running = raw_running
  coroutine.isyieldable = function()
    return state[raw_running()] ~= nil and raw_isyieldable()
  end
end
