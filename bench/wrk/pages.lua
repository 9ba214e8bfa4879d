-- Cycles GET /pages/p0000.html … on one Host. Requests are prebuilt in init() so the
-- per-request Lua cost is one table lookup; all connections share the counter (true rotation).
-- args: <host> <page count>
local reqs, n, i = {}, 0, 0

function init(args)
  local host = args[1]
  n = tonumber(args[2])
  for k = 0, n - 1 do
    reqs[k + 1] = wrk.format("GET", string.format("/pages/p%04d.html", k), { ["Host"] = host })
  end
end

function request()
  i = i % n + 1
  return reqs[i]
end
