package redis

import goredis "github.com/redis/go-redis/v9"

// The Lua scripts of [TaskStore]. Each change of a task is one script, so
// that its checks and its writes are atomic whichever replicas run them:
// a terminal status is never left, a cancellation and a completion racing
// end in exactly one terminal status, and the outcome is written once.
//
// Every script that touches a task first runs check: the task must exist
// and belong to the owner (else "nf"), and a task that is not terminal
// whose runner's liveness key has lapsed (the replica died) becomes failed
// there and then, with the lapse message. Changes are published (the
// task's id) on the channel in ARGV, for the Wait and AwaitInput calls of
// every replica.
//
// Common ARGV of the task scripts: 1 owner, 2 now (Unix ms), 3 the
// liveness key prefix, 4 the lapse message, 5 the change channel, 6 the
// task id, 7 the active-set key prefix.
const taskLuaPrelude = `
local function terminal(st) return st == 'completed' or st == 'failed' or st == 'cancelled' end
local function lapse(key, now, alive, msg, channel, id, activePrefix)
  local st = redis.call('HGET', key, 'st')
  if st == false or terminal(st) then return st end
  local run = redis.call('HGET', key, 'run')
  if run and redis.call('EXISTS', alive .. run) == 0 then
    redis.call('HSET', key, 'st', 'failed', 'msg', msg, 'u', now)
    redis.call('SREM', activePrefix .. redis.call('HGET', key, 'o'), id)
    redis.call('PUBLISH', channel, id)
    return 'failed'
  end
  return st
end
local function check(key)
  local o = redis.call('HGET', key, 'o')
  if o == false or o ~= ARGV[1] then return nil end
  return lapse(key, tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7])
end
local function rec(key)
  return redis.call('HMGET', key, 'seq', 'st', 'msg', 'c', 'u', 'ttl', 'poll')
end
local function ok(key)
  local r = rec(key)
  table.insert(r, 1, 'ok')
  return r
end
local function changed(key)
  redis.call('HSET', key, 'u', ARGV[2])
  redis.call('PUBLISH', ARGV[5], ARGV[6])
end
`

// taskCreateScript creates a task. KEYS: 1 sequence counter, 2 the
// owner's tasks (sorted set by sequence), 3 the owner's unfinished tasks
// (set), 4 the task, 5 this replica's liveness key. ARGV (after the
// common 7): 8 ttl ms, 9 poll ms, 10 runner id, 11 lease ms, 12 max
// active per owner, 13 max tasks per owner, 14 task key prefix, 15 index
// retention ms. It prunes the owner's sets of tasks that are gone,
// finished or lapsed, refuses past the bounds ("many", n), evicts the
// owner's oldest finished task when at MaxTasksPerOwner, and returns the
// record.
var taskCreateScript = goredis.NewScript(taskLuaPrelude + `
local now, pfx = tonumber(ARGV[2]), ARGV[14]
local active = 0
for _, t in ipairs(redis.call('SMEMBERS', KEYS[3])) do
  local st = lapse(pfx .. t, now, ARGV[3], ARGV[4], ARGV[5], t, ARGV[7])
  if st == false or terminal(st) then redis.call('SREM', KEYS[3], t) else active = active + 1 end
end
if active >= tonumber(ARGV[12]) then return {'many', active} end
local n = redis.call('ZCARD', KEYS[2])
if n >= tonumber(ARGV[13]) then
  local freed = false
  for _, t in ipairs(redis.call('ZRANGE', KEYS[2], 0, 99)) do
    local st = redis.call('HGET', pfx .. t, 'st')
    if st == false or terminal(st) then
      redis.call('DEL', pfx .. t)
      redis.call('ZREM', KEYS[2], t)
      freed = true
      break
    end
  end
  if not freed then return {'many', n} end
end
local seq = redis.call('INCR', KEYS[1])
redis.call('HSET', KEYS[4], 'o', ARGV[1], 'seq', seq, 'st', 'working', 'msg', '', 'c', ARGV[2], 'u', ARGV[2],
  'ttl', ARGV[8], 'poll', ARGV[9], 'run', ARGV[10], 'np', 0)
redis.call('PEXPIRE', KEYS[4], math.max(tonumber(ARGV[8]), 1))
redis.call('ZADD', KEYS[2], seq, ARGV[6])
redis.call('PEXPIRE', KEYS[2], ARGV[15])
redis.call('SADD', KEYS[3], ARGV[6])
redis.call('PEXPIRE', KEYS[3], ARGV[15])
redis.call('SET', KEYS[5], 1, 'PX', ARGV[11])
return ok(KEYS[4])
`)

// taskGetScript returns the record. KEYS: 1 the task.
var taskGetScript = goredis.NewScript(taskLuaPrelude + `
if not check(KEYS[1]) then return {'nf'} end
return ok(KEYS[1])
`)

// taskSetStatusScript sets a status that is not terminal. KEYS: 1 the
// task. ARGV 8 status, 9 message.
var taskSetStatusScript = goredis.NewScript(taskLuaPrelude + `
local st = check(KEYS[1])
if not st then return {'nf'} end
if terminal(st) then return {'term'} end
redis.call('HSET', KEYS[1], 'st', ARGV[8], 'msg', ARGV[9])
changed(KEYS[1])
return ok(KEYS[1])
`)

// taskFinishScript sets a terminal status and the outcome, once. KEYS: 1
// the task, 2 the owner's unfinished tasks. ARGV 8 status, 9 message, 10
// the outcome (empty: none).
var taskFinishScript = goredis.NewScript(taskLuaPrelude + `
local st = check(KEYS[1])
if not st then return {'nf'} end
if terminal(st) then return {'term'} end
redis.call('HSET', KEYS[1], 'st', ARGV[8], 'msg', ARGV[9])
if ARGV[10] ~= '' then redis.call('HSET', KEYS[1], 'out', ARGV[10]) end
redis.call('SREM', KEYS[2], ARGV[6])
changed(KEYS[1])
return ok(KEYS[1])
`)

// taskOutcomeScript returns {"ok", outcome or false}. KEYS: 1 the task.
var taskOutcomeScript = goredis.NewScript(taskLuaPrelude + `
if not check(KEYS[1]) then return {'nf'} end
return {'ok', redis.call('HGET', KEYS[1], 'out')}
`)

// taskListScript returns a page of the owner's tasks after a sequence
// number: {"ok", last seq issued, id, record..., id, record...}, at most
// limit tasks; it drops the index entries of tasks that are gone. KEYS: 1
// the owner's tasks, 2 the sequence counter. ARGV 8 after, 9 limit, 10
// the task key prefix. (ARGV 6 is unused: each task's id is its own.)
var taskListScript = goredis.NewScript(taskLuaPrelude + `
local after, limit, pfx = tonumber(ARGV[8]), tonumber(ARGV[9]), ARGV[10]
local out = {'ok', tonumber(redis.call('GET', KEYS[2]) or '0')}
local found = 0
while found < limit do
  local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. after, '+inf', 'WITHSCORES', 'LIMIT', 0, limit)
  if #ids == 0 then break end
  for i = 1, #ids, 2 do
    local id, key = ids[i], pfx .. ids[i]
    after = tonumber(ids[i + 1])
    local o = redis.call('HGET', key, 'o')
    if o == false then
      redis.call('ZREM', KEYS[1], id)
    elseif o == ARGV[1] and found < limit then
      lapse(key, tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5], id, ARGV[7])
      table.insert(out, id)
      for _, v in ipairs(rec(key)) do table.insert(out, v) end
      found = found + 1
    end
  end
end
return out
`)

// taskRequestInputScript adds pending input requests and moves the task
// to input_required. KEYS: 1 the task. ARGV 8.. key, request pairs.
var taskRequestInputScript = goredis.NewScript(taskLuaPrelude + `
local st = check(KEYS[1])
if not st then return {'nf'} end
if terminal(st) then return {'term'} end
for i = 8, #ARGV, 2 do
  if redis.call('HSETNX', KEYS[1], 'p:' .. ARGV[i], ARGV[i + 1]) == 1 then
    redis.call('HINCRBY', KEYS[1], 'np', 1)
  else
    redis.call('HSET', KEYS[1], 'p:' .. ARGV[i], ARGV[i + 1])
  end
end
redis.call('HSET', KEYS[1], 'st', 'input_required')
changed(KEYS[1])
return ok(KEYS[1])
`)

// taskPendingScript returns {"ok", key, request, ...}. KEYS: 1 the task.
var taskPendingScript = goredis.NewScript(taskLuaPrelude + `
if not check(KEYS[1]) then return {'nf'} end
local out = {'ok'}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  if string.sub(all[i], 1, 2) == 'p:' then
    table.insert(out, string.sub(all[i], 3))
    table.insert(out, all[i + 1])
  end
end
return out
`)

// taskProvideScript keeps the responses to pending requests. KEYS: 1 the
// task. ARGV 8.. key, response pairs.
var taskProvideScript = goredis.NewScript(taskLuaPrelude + `
local st = check(KEYS[1])
if not st then return {'nf'} end
if terminal(st) then return {'ok'} end
local took = false
for i = 8, #ARGV, 2 do
  if redis.call('HDEL', KEYS[1], 'p:' .. ARGV[i]) == 1 then
    redis.call('HINCRBY', KEYS[1], 'np', -1)
    redis.call('HSET', KEYS[1], 'a:' .. ARGV[i], ARGV[i + 1])
    took = true
  end
end
if took then
  if tonumber(redis.call('HGET', KEYS[1], 'np')) <= 0 and st == 'input_required' then
    redis.call('HSET', KEYS[1], 'st', 'working')
  end
  changed(KEYS[1])
end
return {'ok'}
`)

// taskTakeScript removes and returns the responses to keys if every key
// has one: {"ok", response...} in the order of the keys, {"wait"} if some
// has none yet. KEYS: 1 the task. ARGV 8.. keys.
var taskTakeScript = goredis.NewScript(taskLuaPrelude + `
local st = check(KEYS[1])
if not st then return {'nf'} end
if terminal(st) then return {'term'} end
local out = {'ok'}
for i = 8, #ARGV do
  local v = redis.call('HGET', KEYS[1], 'a:' .. ARGV[i])
  if v == false then return {'wait'} end
  table.insert(out, v)
end
for i = 8, #ARGV do redis.call('HDEL', KEYS[1], 'a:' .. ARGV[i]) end
return out
`)
