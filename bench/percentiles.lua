-- wrk script: print more latency percentiles than `--latency` does (p50 ... p99.9 and max).
-- Usage: wrk -t1 -c200 -d6s -s bench/percentiles.lua http://127.0.0.1:PORT/api/health

function done(summary, latency, requests)
  local out = {}
  for _, p in ipairs({ 50, 90, 95, 97, 98, 99, 99.5, 99.9 }) do
    out[#out + 1] = string.format("p%s=%.1fms", p, latency:percentile(p) / 1000)
  end
  io.write(table.concat(out, " "))
  io.write(string.format(" max=%.0fms requests=%d\n", latency.max / 1000, summary.requests))
end
