/**
 * The Lua run by Redis for rate-limited requests (via ioredis `defineCommand`, so EVALSHA with a
 * fallback to EVAL after a script flush). One call decides every bucket of every request in a batch
 * (redis-batch.ts), in order, timed by one Redis `TIME` so replicas with skewed clocks agree. Same
 * arithmetic as gcra.ts.
 *
 * KEYS: every bucket of every request, request after request (a request's keys share one hash tag, and
 * on Redis Cluster a batch holds one tag only, so the call runs on one node).
 * ARGV: the number of requests, the lease share and the lease minimum (leases.ts); then per request its
 * number of keys and the most it may lease (0: none), then per key its emission interval in ms and its
 * burst.
 * Returns, per request: admitted (1|0), requests leased, then per key remaining, resetMs, retryAfterMs
 * (after the lease). A request's buckets are written only if all of them admit it: a rejected request
 * is counted by none. An admitted request that asked leases 1/share of what its fullest-used bucket has
 * left, if that is at least the minimum. A later request in the batch reads what an earlier one wrote,
 * exactly as two separate calls would.
 */
export const gcraLua = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local share = tonumber(ARGV[2])
local least = tonumber(ARGV[3])
local out = {}
local k = 0
local a = 4
for r = 1, tonumber(ARGV[1]) do
  local m = tonumber(ARGV[a])
  local ask = tonumber(ARGV[a + 1])
  a = a + 2
  local head = #out + 1
  out[head] = 1
  out[head + 1] = 0
  local tats = {}
  local steps = {}
  local left = math.huge
  for i = 1, m do
    local interval = tonumber(ARGV[a])
    local tau = interval * tonumber(ARGV[a + 1])
    a = a + 2
    local tat = tonumber(redis.call('GET', KEYS[k + i]))
    if (not tat) or tat < now then tat = now end
    local new = tat + interval
    local ahead = new - now
    if ahead > tau + 0.001 then
      out[head] = 0
      out[#out + 1] = 0
      out[#out + 1] = math.ceil(tat - now)
      out[#out + 1] = math.ceil(ahead - tau)
    else
      local remaining = math.floor((tau - ahead) / interval + 1e-9)
      if remaining < left then left = remaining end
      out[#out + 1] = remaining
      out[#out + 1] = math.ceil(ahead)
      out[#out + 1] = 0
    end
    tats[i] = new
    steps[i] = interval
  end
  if out[head] == 1 then
    local lease = 0
    if ask > 0 then
      lease = math.min(ask, math.floor(left / share))
      if lease < least then lease = 0 end
    end
    out[head + 1] = lease
    for i = 1, m do
      local new = tats[i] + lease * steps[i]
      local at = head + 2 + 3 * (i - 1)
      out[at] = out[at] - lease
      out[at + 1] = math.ceil(new - now)
      redis.call('SET', KEYS[k + i], string.format('%.3f', new), 'PX', math.max(1, math.ceil(new - now)))
    end
  end
  k = k + m
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
