/**
 * The Lua run by Redis for every rate-limited request (via ioredis `defineCommand`, so EVALSHA with a
 * fallback to EVAL after a script flush). One call decides every bucket of a request, timed by Redis
 * `TIME` so replicas with skewed clocks agree. Same arithmetic as gcra.ts.
 *
 * KEYS: one bucket per rule, all with one hash tag (keys.ts), so Redis Cluster runs it on one node.
 * ARGV: per key, its emission interval in ms and its burst.
 * Returns `{ admitted (1|0), then per key: remaining, resetMs, retryAfterMs }`. Nothing is written
 * unless every bucket admits: a rejected request is counted by none.
 */
export const gcraLua = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local out = {1}
local tats = {}
for i = 1, #KEYS do
  local interval = tonumber(ARGV[2 * i - 1])
  local tau = interval * tonumber(ARGV[2 * i])
  local tat = tonumber(redis.call('GET', KEYS[i]))
  if (not tat) or tat < now then tat = now end
  local new = tat + interval
  local ahead = new - now
  if ahead > tau + 0.001 then
    out[1] = 0
    out[#out + 1] = 0
    out[#out + 1] = math.ceil(tat - now)
    out[#out + 1] = math.ceil(ahead - tau)
  else
    out[#out + 1] = math.floor((tau - ahead) / interval + 1e-9)
    out[#out + 1] = math.ceil(ahead)
    out[#out + 1] = 0
  end
  tats[i] = new
end
if out[1] == 1 then
  for i = 1, #KEYS do
    redis.call('SET', KEYS[i], string.format('%.3f', tats[i]), 'PX', math.max(1, math.ceil(tats[i] - now)))
  end
end
return out
`;

/**
 * Replica heartbeat: this replica's id scored by Redis time in a sorted set, members older than the
 * horizon dropped, the live count returned. KEYS[1]: the set; ARGV: member, horizon in ms.
 */
export const heartbeatLua = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local horizon = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - horizon)
redis.call('PEXPIRE', KEYS[1], horizon)
return redis.call('ZCARD', KEYS[1])
`;
