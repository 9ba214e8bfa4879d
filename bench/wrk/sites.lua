-- Cycles the Host header over s00000.<domain> … with path /, so every request hits another
-- site (many-sites working set). Requests are prebuilt in init().
-- args: <site domain> <site count>
local reqs, n, i = {}, 0, 0

function init(args)
  local domain = args[1]
  n = tonumber(args[2])
  for k = 0, n - 1 do
    reqs[k + 1] = wrk.format("GET", "/", { ["Host"] = string.format("s%05d.%s", k, domain) })
  end
end

function request()
  i = i % n + 1
  return reqs[i]
end
