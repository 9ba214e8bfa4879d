-- Every request a path no request had before, so no resolved URL is cached: GET <prefix><n>.html<suffix>
-- on one Host, n counting up across all connections. The prefix shapes the path (its segments),
-- so a rules file can be measured against the paths that cost it most.
-- args: <host> <prefix> [<suffix>, such as a query string]
local host, prefix, suffix, n = "", "", "", 0

function init(args)
  host = args[1]
  prefix = args[2]
  suffix = args[3] or ""
end

function request()
  n = n + 1
  return wrk.format("GET", prefix .. n .. ".html" .. suffix, { ["Host"] = host })
end
