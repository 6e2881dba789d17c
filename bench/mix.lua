-- wrk script for the bench: cycles through a list of requests read from a file and prints a
-- machine-readable summary line at the end.
--
-- Usage: wrk ... -s bench/mix.lua <url> -- <requests-file> <api-key>
-- The requests file has one request per line: METHOD<TAB>PATH<TAB>BODY (BODY may be empty).
-- Each thread starts at a different offset so the threads do not move in lock step.

local requests = {}
local counter = 0
local thread_index = 0
local threads_started = 0

function setup(thread)
  thread:set("thread_index", threads_started)
  threads_started = threads_started + 1
end

local function split(line)
  local fields = {}
  for field in (line .. "\t"):gmatch("([^\t]*)\t") do
    fields[#fields + 1] = field
  end
  return fields
end

function init(args)
  local path, key = args[1], args[2]
  local file = assert(io.open(path, "r"))
  for line in file:lines() do
    if line ~= "" then
      local f = split(line)
      local method, target, body = f[1], f[2], f[3]
      local headers = { ["x-api-key"] = key }
      if body ~= nil and body ~= "" then
        headers["content-type"] = "application/json"
      else
        body = nil
      end
      requests[#requests + 1] = wrk.format(method, target, headers, body)
    end
  end
  file:close()
  assert(#requests > 0, "no requests in " .. path)
  counter = (thread_index * 7) % #requests
end

function request()
  counter = counter + 1
  if counter > #requests then
    counter = 1
  end
  return requests[counter]
end

function done(summary, latency, requests_)
  local e = summary.errors
  io.write(string.format(
    "WRKJSON {\"requests\":%d,\"duration_us\":%d,\"bytes\":%d,\"connect\":%d,\"read\":%d," ..
    "\"write\":%d,\"status\":%d,\"timeout\":%d,\"p50_us\":%d,\"p90_us\":%d,\"p99_us\":%d," ..
    "\"max_us\":%d}\n",
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status,
    e.timeout, latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency.max))
end
