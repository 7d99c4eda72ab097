---@meta skynet
-- Editor help (Lua language server): the types of `require "skynet"`,
-- including the functions loaded on first use and those skynet.manager adds.
-- Declarations only: nothing here runs.

---A service address: a handle (integer) or a name (".local", ":0000000a", or a global name).
---@alias skynet.address integer|string

---A message buffer made by skynet.pack / a C module: a light userdata and its size.
---@alias skynet.msg lightuserdata|string

---A protocol class for skynet.register_protocol.
---@class skynet.protocol
---@field name string protocol name, e.g. "lua", "client"
---@field id integer protocol number 0..255 (skynet.PTYPE_*)
---@field pack? fun(...): skynet.msg, integer? encodes send/call/retpack arguments
---@field unpack? fun(msg: skynet.msg, sz: integer): ... decodes a received message
---@field dispatch? fun(session: integer, source: integer, ...) handles a received message
---@field trace? boolean force tracing on (true) or off (false) for this protocol

---The object skynet.timeout returns: pass it to skynet.killthread to cancel the timer.
---@class skynet.timer_object: lightuserdata

---A detached reply made by skynet.response: `resp(true, ...)` replies, `resp(false)` sends an
---error, `resp("TEST")` tells whether the requester is still alive.
---@alias skynet.response_fn fun(ok: boolean|"TEST", ...): boolean

---A set of requests (skynet.request) answered in arrival order by select.
---@class skynet.request_set
local request_set = {}

---Adds a request `{ addr, typename, ... }`; returns the set, so calls chain (`r {...} {...}`).
---@param req table { addr, typename, args... }
---@return skynet.request_set
function request_set:add(req) end

---Sends every request, then iterates `req, resp` as replies arrive: resp is `table.pack` of
---the reply, false when the call failed, nil when the send failed. Blocks between replies.
---@param timeout? integer centiseconds after which the loop ends (pending replies dropped)
---@return fun(): table?, table|false|nil
function request_set:select(timeout) end

---Drops the outstanding requests (their replies are ignored when they come).
function request_set:close() end

---@class skynet
---@field PTYPE_TEXT integer 0
---@field PTYPE_RESPONSE integer 1
---@field PTYPE_MULTICAST integer 2
---@field PTYPE_CLIENT integer 3
---@field PTYPE_SYSTEM integer 4
---@field PTYPE_HARBOR integer 5
---@field PTYPE_SOCKET integer 6
---@field PTYPE_ERROR integer 7
---@field PTYPE_QUEUE integer 8
---@field PTYPE_DEBUG integer 9
---@field PTYPE_LUA integer 10
---@field PTYPE_SNAX integer 11
---@field PTYPE_TRACE integer 12
local skynet = {}

---The code cache module (require "skynet.codecache"), loaded on first use.
---@type skynet.codecache
skynet.cache = {}

-------------------------------------------------------------------- messages

---Registers a message protocol (name and id must both be new).
---@param class skynet.protocol
function skynet.register_protocol(class) end

---Sets the dispatch function of a protocol and returns the previous one; without func,
---returns the current one.
---@param typename string
---@param func? fun(session: integer, source: integer, ...)
---@return function?
function skynet.dispatch(typename, func) end

---Replaces the handler of requests of an unregistered protocol; returns the previous one.
---@param f fun(session: integer, source: integer, msg: lightuserdata, sz: integer, prototype: integer)
---@return function
function skynet.dispatch_unknown_request(f) end

---Replaces the handler of responses to unknown sessions; returns the previous one.
---@param f fun(session: integer, source: integer, msg: lightuserdata, sz: integer)
---@return function
function skynet.dispatch_unknown_response(f) end

---The message entry point skynet.start installs (for skynet.filter / forward_type hooks).
---@param prototype integer
---@param msg lightuserdata
---@param sz integer
---@param session integer
---@param source integer
function skynet.dispatch_message(prototype, msg, sz, session, source) end

---Sends a message without waiting (session 0). Never blocks.
---@param addr skynet.address
---@param typename string protocol name, e.g. "lua"
---@param ... any encoded with the protocol's pack
---@return integer|false|nil
function skynet.send(addr, typename, ...) end

---Sends an already encoded message without waiting. Never blocks.
---@param addr skynet.address
---@param typename string
---@param msg skynet.msg
---@param sz? integer
---@return integer|false|nil
function skynet.rawsend(addr, typename, msg, sz) end

---Sends a request and blocks until the reply; raises "call failed" when the callee fails or
---dies, "call to invalid address" for an unknown address.
---@async
---@param addr skynet.address
---@param typename string
---@param ... any
---@return ... the reply, decoded with the protocol's unpack
function skynet.call(addr, typename, ...) end

---Like skynet.call with an encoded request; returns the raw reply. Blocks.
---@async
---@param addr skynet.address
---@param typename string
---@param msg skynet.msg
---@param sz? integer
---@return lightuserdata|string msg, integer sz
function skynet.rawcall(addr, typename, msg, sz) end

---Replies to the request being served with an encoded message (taken over on every path).
---Raises "No session" outside a request. Returns true when the reply was delivered.
---@param msg? skynet.msg
---@param sz? integer
---@return boolean
function skynet.ret(msg, sz) end

---Replies with skynet.pack(...).
---@param ... any
---@return boolean
function skynet.retpack(...) end

---Detaches the reply of the request being served: the returned function replies later.
---@param pack? fun(...): skynet.msg, integer? encoder (default skynet.pack)
---@return skynet.response_fn
function skynet.response(pack) end

---Marks the request being served as answered: no reply, no error.
function skynet.ignoreret() end

---The session and source of the request being served.
---@return integer? session, integer? source
function skynet.context() end

---Sends a message as if it came from source (0: this service), with an explicit session.
---Never blocks. Returns as skynet.send.
---@param dest skynet.address
---@param source skynet.address
---@param typename string
---@param session integer
---@param msg? skynet.msg
---@param sz? integer
---@return integer|false|nil
function skynet.redirect(dest, source, typename, session, msg, sz) end

---A new session number of this service, for a reply matched by hand.
---@return integer
function skynet.genid() end

---This service's handle.
---@return integer
function skynet.self() end

---The text form of an address (":0000000a" for a handle).
---@param addr skynet.address
---@return string
function skynet.address(addr) end

---Encodes values with the skynet serialization.
---@param ... any
---@return lightuserdata msg, integer sz
function skynet.pack(...) end

---Encodes values into a Lua string.
---@param ... any
---@return string
function skynet.packstring(...) end

---Decodes a message (a buffer and size, or a string).
---@param msg lightuserdata|string
---@param sz? integer
---@return ...
function skynet.unpack(msg, sz) end

---Copies a message buffer into a string.
---@param msg lightuserdata|string
---@param sz integer
---@return string
function skynet.tostring(msg, sz) end

---Frees a message buffer that nobody will use.
---@param msg lightuserdata|string
---@param sz integer
function skynet.trash(msg, sz) end

---Writes a line to the log service (arguments joined with spaces).
---@param ... any
function skynet.error(...) end

---pcall (kept in the skynet table for scripts that use skynet.pcall).
---@param f function
---@param ... any
---@return boolean ok, any ...
function skynet.pcall(f, ...) end

-------------------------------------------------------------------- time

---Centiseconds since the node started (virtual time under `timer = "virtual"`).
---@return integer
function skynet.now() end

---A high-resolution monotonic clock, in nanoseconds.
---@return integer
function skynet.hpc() end

---Seconds since the epoch when the node started.
---@return integer
function skynet.starttime() end

---Current time in seconds since the epoch (starttime + now / 100).
---@return number
function skynet.time() end

---Calls func in a new coroutine after ti centiseconds. Never blocks.
---@param ti integer centiseconds
---@param func function
---@return skynet.timer_object
function skynet.timeout(ti, func) end

---Calls func in a new coroutine once us microseconds have passed (a precise timer; a
---fraction is rounded up). Never blocks.
---@param us number microseconds
---@param func function
---@return skynet.timer_object
function skynet.timeout_us(us, func) end

---Suspends the running coroutine for ti centiseconds. Returns "BREAK" when skynet.wakeup(token)
---ended it early.
---@async
---@param ti integer centiseconds
---@param token? any default: the running coroutine
---@return "BREAK"?
function skynet.sleep(ti, token) end

---Lets the other ready coroutines run (skynet.sleep(0)).
---@async
function skynet.yield() end

---Suspends the running coroutine until skynet.wakeup(token).
---@async
---@param token? any default: the running coroutine
function skynet.wait(token) end

---Wakes a coroutine suspended in skynet.wait or skynet.sleep with this token (it resumes after
---the current message). Returns true when something was waiting.
---@param token any
---@return boolean?
function skynet.wakeup(token) end

---Runs func(...) in a new coroutine after the current message. Returns the coroutine.
---@param func function
---@param ... any
---@return thread
function skynet.fork(func, ...) end

---Cancels a timeout (its object), a forked or blocked coroutine, or one found by a pattern of
---its tostring; returns what was cancelled.
---@param co thread|skynet.timer_object|string
---@return thread|skynet.timer_object|nil
function skynet.killthread(co) end

---Calls with a deadline: `true, ...` (the reply) or `false, "timeout"`. Blocks.
---@async
---@param ti integer centiseconds
---@param addr skynet.address
---@param typename string
---@param ... any
---@return boolean ok, any ...
function skynet.timeout_call(ti, addr, typename, ...) end

-------------------------------------------------------------------- start and exit

---Registers f to run before the start function (during skynet.start's init).
---@param f function
function skynet.init(f) end

---Runs the start function the way skynet.start does (init functions first), then tells the
---launcher the service is up; exits the service when start raises.
---@param start function
function skynet.init_service(start) end

---Installs the message dispatcher and runs start_func in the service's first coroutine.
---@param start_func function
function skynet.start(start_func) end

---Ends this service: pending requests get errors, suspended coroutines are closed. Does not
---return.
function skynet.exit() end

---Treats addr as dead: fails every pending call to it.
---@param addr integer
function skynet.term(addr) end

-------------------------------------------------------------------- services and names

---Launches a Lua service and returns its handle; raises when its start fails. Blocks.
---@async
---@param name string service name (found along the `luaservice` config key)
---@param ... string|number arguments (passed as strings)
---@return integer
function skynet.newservice(name, ...) end

---Launches the one instance of a service (global = true: node-wide name) or returns it.
---Blocks.
---@async
---@param global true|string true, then the name; or the name
---@param ... any the name (after true) and the arguments
---@return integer
function skynet.uniqueservice(global, ...) end

---Waits until a unique service exists and returns its handle. Blocks.
---@async
---@param global true|string
---@param ... any
---@return integer
function skynet.queryservice(global, ...) end

---The handle of a local name (".name"), or nil.
---@param name string
---@return integer?
function skynet.localname(name) end

---The harbor (node id) of an address, and whether it is remote.
---@param addr integer
---@return integer harbor, boolean remote
function skynet.harbor(addr) end

---A config / env value (string), or nil.
---@param key string
---@return string?
function skynet.getenv(key) end

---Sets a new env key (raises when it exists).
---@param key string
---@param value string
function skynet.setenv(key, value) end

---True when this service is stuck in an endless loop (monitor thread's view).
---@return boolean
function skynet.endless() end

---Messages waiting in this service's queue.
---@return integer
function skynet.mqlen() end

---Turn this service's priority lane on or off (nil: only ask): timer expiries and
---debug and system messages then overtake the ordinary backlog. Returns the previous setting.
---@param on? boolean
---@return boolean
function skynet.priority(on) end

---A statistic of this service: "mqlen", "cpu", "time", "message", "endless", "timers", ...
---Nothing for an unknown key.
---@param what string
---@return number?
function skynet.stat(what) end

---Limits this service's Lua heap (call in the main chunk, before skynet.start).
---@param bytes integer
function skynet.memlimit(bytes) end

---@class skynet.budget
---@field cpu_ms_per_s integer milliseconds of CPU per second, 0: not watched
---@field memory_mb integer Lua heap, 0: not watched
---@field queue integer messages waiting, 0: not watched
---@field policy "warn"|"throttle"|"kill"

---@class skynet.budget_change
---@field cpu_ms_per_s? integer|false
---@field memory_mb? integer|false
---@field queue? integer|false
---@field policy? "warn"|"throttle"|"kill"

---Reads and changes this service's budget: the fields given change (0 or false: not watched);
---false turns every limit off; nil only reads. Returns the budget now in force.
---@param t? skynet.budget_change|false
---@return skynet.budget
function skynet.budget(t) end

---Sets the function whose result the debug INFO command returns.
---@param f fun(...): any
function skynet.info_func(f) end

---Launches a C service ("snlua name", "logger", ...) and returns its handle, or nil.
---@param ... string the module and its arguments
---@return integer?
function skynet.launch(...) end

---Kills a service by handle or name.
---@param name skynet.address
function skynet.kill(name) end

---Stops the node: every service ends, the process exits with status (default 0).
---@param status? integer 0..255
function skynet.abort(status) end

---Gives this service a name (".local" or a global name).
---@param name string
function skynet.register(name) end

---Gives the service at handle a name.
---@param name string
---@param handle skynet.address
function skynet.name(name, handle) end

---Starts the service with message types remapped: map[ptype] = the type to dispatch it as.
---@param map table<integer, integer>
---@param start_func function
function skynet.forward_type(map, start_func) end

---Starts the service with f filtering every message: f(ptype, msg, sz, session, source) returns
---the arguments the dispatcher gets.
---@param f fun(prototype: integer, msg: lightuserdata, sz: integer, session: integer, source: integer): ...
---@param start_func function
function skynet.filter(f, start_func) end

---Makes a unique service the node's monitor (told when services exit). Returns its handle.
---@param service string
---@param query? boolean only query the unique service, do not launch it
---@return integer
function skynet.monitor(service, query) end

-------------------------------------------------------------------- introspection and tracing

---Pending sessions: no argument, their count; a table, filled session -> traceback; a
---session, its traceback; a coroutine, its session; "init", the init coroutine's traceback.
---@param ret? table|integer|thread|"init"
---@return any
function skynet.task(ret) end

---Pending sessions grouped by traceback: traceback -> list of sessions.
---@return table<string, table>
function skynet.uniqtask() end

---Starts tracing the running coroutine's calls, with info on the first log line.
---@param info? any
function skynet.trace(info) end

---The running coroutine's trace tag, or nil.
---@return string?
function skynet.tracetag() end

---Writes a trace log line under tag.
---@param tag string
---@param text string
function skynet.tracelog(tag, text) end

---Forces tracing on (true) or off (false) for a protocol.
---@param name string
---@param flag boolean
function skynet.traceproto(name, flag) end

---A traced raw call: tells addr the tag, then calls. Blocks.
---@async
---@param tag string
---@param addr skynet.address
---@param typename string
---@param msg skynet.msg
---@param sz? integer
---@return lightuserdata|string msg, integer sz
function skynet.tracecall(tag, addr, typename, msg, sz) end

---Records a traceback for each new timeout (shown by skynet.task).
---@param on boolean
function skynet.trace_timeout(on) end

---A set of requests answered in arrival order (see skynet.request_set).
---@param req? table { addr, typename, args... }
---@return skynet.request_set
function skynet.request(req) end

return skynet
