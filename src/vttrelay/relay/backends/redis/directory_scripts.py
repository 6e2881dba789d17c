"""What the Redis world directory (`directory.py`) runs in Redis and sends on its channels: its
Lua scripts (claim, update, reclaim, and the heartbeat tick that reaps dead instances), each one
atomic on the server, and the framing of a message on an instance channel (a JSON head line,
then the payload)."""

from __future__ import annotations

from typing import Any, Final

import orjson

# KEYS: worlds, instances, dir channel. ARGV: client id, entry, host, account, ttl ms.
CLAIM: Final = """
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur then
  local held = cjson.decode(cur)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local beat = redis.call('ZSCORE', KEYS[2], held.instance)
  if beat and tonumber(beat) > now - tonumber(ARGV[5])
     and (held.host ~= ARGV[3] or held.account ~= ARGV[4]) then
    return 0
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PUBLISH', KEYS[3], cjson.encode({op = 'up', id = ARGV[1], entry = ARGV[2]}))
return 1
"""

# KEYS: worlds, dir channel. ARGV: client id, conn, entry (empty: release).
UPDATE: Final = """
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if not cur or cjson.decode(cur).conn ~= ARGV[2] then
  return 0
end
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
  redis.call('PUBLISH', KEYS[2], cjson.encode({op = 'down', id = ARGV[1], conn = ARGV[2]}))
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  redis.call('PUBLISH', KEYS[2], cjson.encode({op = 'up', id = ARGV[1], entry = ARGV[3]}))
end
return 1
"""

# KEYS: worlds, dir channel. ARGV: client id, conn, entry. Puts back the entry of a socket this
# instance still holds (after Redis lost it, or after this instance was taken for dead) unless
# another connection has the id now: 1 kept, 0 lost.
RECLAIM: Final = """
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur then
  if cjson.decode(cur).conn == ARGV[2] then
    return 1
  end
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('PUBLISH', KEYS[2], cjson.encode({op = 'up', id = ARGV[1], entry = ARGV[3]}))
return 1
"""

# KEYS: worlds, instances, dir channel. ARGV: this instance ('' to not beat), ttl ms,
# an instance to reap now whatever its heartbeat ('' for none: shutdown).
# Returns 1 when this instance was not in the set (new, or reaped meanwhile; then it is announced
# on the dir channel, so the others count it at once), else 0, then the live instances.
TICK: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local added = 0
if ARGV[1] ~= '' then
  added = redis.call('ZADD', KEYS[2], now, ARGV[1])
  if added == 1 then
    redis.call('PUBLISH', KEYS[3], cjson.encode({op = 'joined', instance = ARGV[1]}))
  end
end
local dead = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. (now - tonumber(ARGV[2])))
if ARGV[3] ~= '' then
  table.insert(dead, ARGV[3])
end
if #dead > 0 then
  local gone = {}
  for _, id in ipairs(dead) do
    gone[id] = true
    redis.call('ZREM', KEYS[2], id)
  end
  local all = redis.call('HGETALL', KEYS[1])
  for i = 1, #all, 2 do
    local entry = cjson.decode(all[i + 1])
    if gone[entry.instance] then
      redis.call('HDEL', KEYS[1], all[i])
      redis.call('PUBLISH', KEYS[3],
        cjson.encode({op = 'down', id = all[i], conn = entry.conn}))
    end
  end
end
local live = redis.call('ZRANGEBYSCORE', KEYS[2], now - tonumber(ARGV[2]), '+inf')
table.insert(live, 1, tostring(added))
return live
"""


def encode(head: dict[str, Any], payload: bytes = b"") -> bytes:
    """A message on an instance channel: the JSON head, a newline, the payload (a frame)."""
    return orjson.dumps(head) + b"\n" + payload


def decode(data: bytes) -> tuple[dict[str, Any], bytes]:
    head, _, payload = data.partition(b"\n")
    parsed = orjson.loads(head)
    return (parsed if isinstance(parsed, dict) else {}), payload
