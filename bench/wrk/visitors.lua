-- GET / on one Host from 10,000 rotating browser user agents: every request a page view, and
-- (until the thread writes its batch) a new entry of its analytics. Requests are prebuilt in
-- init() so the per-request Lua cost is one table lookup.
-- args: <host>
local reqs, n, i = {}, 10000, 0

function init(args)
  local host = args[1]
  for k = 1, n do
    local agent = string.format("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.%d", k)
    reqs[k] = wrk.format("GET", "/", { ["Host"] = host, ["User-Agent"] = agent })
  end
end

function request()
  i = i % n + 1
  return reqs[i]
end
