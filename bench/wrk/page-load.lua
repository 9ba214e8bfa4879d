-- A browser loading one page: GET / (a page view), then the page's ten assets (a style sheet, a
-- script and eight images) with the page as Referer, all with a browser's User-Agent and
-- Accept-Encoding, over and over on each connection. Requests are prebuilt in init().
-- args: <host> [<X-Forwarded-For value>]
local reqs, i = {}, 0

function init(args)
  local host = args[1]
  local agent = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
  local page = { ["Host"] = host, ["User-Agent"] = agent, ["Accept-Encoding"] = "br, gzip", ["Referer"] = "https://news.example.net/" }
  local asset = { ["Host"] = host, ["User-Agent"] = agent, ["Accept-Encoding"] = "br, gzip", ["Referer"] = "http://" .. host .. "/" }
  if args[2] then
    page["X-Forwarded-For"] = args[2]
    asset["X-Forwarded-For"] = args[2]
  end
  reqs[1] = wrk.format("GET", "/", page)
  reqs[2] = wrk.format("GET", "/style.css", asset)
  reqs[3] = wrk.format("GET", "/app.js", asset)
  for k = 1, 8 do
    reqs[3 + k] = wrk.format("GET", string.format("/img/%d.png", k), asset)
  end
end

function request()
  i = i % #reqs + 1
  return reqs[i]
end
