-- sproto: schema objects over sproto.core, and the RPC envelope.
--
--   sproto.new(bin) / sproto.sharenew(cobj) / sproto.parse(text)
--   sp:encode / decode / pencode / pdecode / default / exist_type
--   sp:request_encode / response_encode / request_decode / response_decode
--   sp:exist_proto, sproto.queryproto(sp, name_or_tag)
--   sp:host([package]) -> host; host:attach(sp2) -> send; host:dispatch(msg [, sz])
--
-- An object is { __cobj = <C schema>, __tcache = name -> type handle,
-- __pcache = name or tag -> protocol }. Objects from sproto.new free their C
-- schema when collected; sharenew objects (sprotoloader) never do.
--
-- RPC. A message is pack(header .. body): the header is the host's package
-- type ({ type = protocol tag, session = n, ud = any }, of which only those
-- three fields are read or written), the body the request or response
-- struct. A request carries `type`; a response does not. A host remembers
-- each session it sent a request with, and the response type expected for
-- it (true when no body is expected), until the response comes. One header
-- table is shared by every host of the state and cleared before each use.
local core = require "sproto.core"

local sproto = {}
local host = {}

local sproto_mt = { __index = sproto }
local sproto_nogc = { __index = sproto }
local host_mt = { __index = host }

function sproto_mt:__gc()
	core.deleteproto(self.__cobj)
end

local function wrap(cobj, mt)
	return setmetatable({ __cobj = cobj, __tcache = {}, __pcache = {} }, mt)
end

function sproto.new(bin)
	local cobj = assert(core.newproto(bin))
	return wrap(cobj, sproto_mt)
end

function sproto.sharenew(cobj)
	return wrap(cobj, sproto_nogc)
end

function sproto.parse(text)
	local parser = require "sprotoparser"
	return sproto.new(parser.parse(text))
end

sproto.pack = core.pack
sproto.unpack = core.unpack

local function querytype(self, typename)
	local v = self.__tcache[typename]
	if v == nil then
		v = assert(core.querytype(self.__cobj, typename), "type not found")
		self.__tcache[typename] = v
	end
	return v
end

local function queryproto(self, pname)
	local v = self.__pcache[pname]
	if v == nil then
		local tag_or_name, request, response = core.protocol(self.__cobj, pname)
		assert(tag_or_name, pname .. " not found")
		local name, tag
		if math.type(pname) ~= nil then
			name, tag = tag_or_name, math.tointeger(pname)
		else
			name, tag = pname, tag_or_name
		end
		v = { name = name, tag = tag, request = request, response = response }
		self.__pcache[name] = v
		self.__pcache[tag] = v
	end
	return v
end

sproto.queryproto = queryproto

function sproto:exist_type(typename)
	if self.__tcache[typename] ~= nil then
		return true
	end
	return core.querytype(self.__cobj, typename) ~= nil
end

function sproto:exist_proto(pname)
	if self.__pcache[pname] ~= nil then
		return true
	end
	return core.protocol(self.__cobj, pname) ~= nil
end

function sproto:encode(typename, tbl)
	return core.encode(querytype(self, typename), tbl)
end

function sproto:decode(typename, ...)
	return core.decode(querytype(self, typename), ...)
end

function sproto:pencode(typename, tbl)
	return core.pack(core.encode(querytype(self, typename), tbl))
end

function sproto:pdecode(typename, ...)
	return core.decode(querytype(self, typename), core.unpack(...))
end

function sproto:default(typename, kind)
	if kind == nil then
		return core.default(querytype(self, typename))
	end
	local p = queryproto(self, typename)
	local st
	if kind == "REQUEST" then
		st = p.request
	elseif kind == "RESPONSE" then
		st = p.response
	else
		error "Invalid type"
	end
	if st then
		return core.default(st)
	end
end

function sproto:request_encode(pname, tbl)
	local p = queryproto(self, pname)
	if p.request then
		return core.encode(p.request, tbl), p.tag
	end
	return "", p.tag
end

function sproto:response_encode(pname, tbl)
	local p = queryproto(self, pname)
	if p.response then
		return core.encode(p.response, tbl)
	end
	return ""
end

function sproto:request_decode(pname, ...)
	local p = queryproto(self, pname)
	if p.request then
		return (core.decode(p.request, ...)), p.name
	end
	return nil, p.name
end

function sproto:response_decode(pname, ...)
	local p = queryproto(self, pname)
	if p.response then
		return core.decode(p.response, ...)
	end
end

---------------------------------------------------------------------------
-- RPC

local header_tmp = {}

local function encode_header(package, type_tag, session, ud)
	header_tmp.type = type_tag
	header_tmp.session = session
	header_tmp.ud = ud
	return core.encode(package, header_tmp)
end

function sproto:host(packagename)
	packagename = packagename or "package"
	local obj = {
		__proto = self,
		__package = assert(core.querytype(self.__cobj, packagename), "type package not found"),
		__session = {},
	}
	return setmetatable(obj, host_mt)
end

local function gen_response(self, response, session)
	return function(args, ud)
		local header = encode_header(self.__package, nil, session, ud)
		if response then
			return core.pack(header .. core.encode(response, args))
		end
		return core.pack(header)
	end
end

function host:dispatch(...)
	local bin = core.unpack(...)
	header_tmp.type = nil
	header_tmp.session = nil
	header_tmp.ud = nil
	local header, size = core.decode(self.__package, bin, header_tmp)
	local content = bin:sub(size + 1)
	if header.type then
		local p = queryproto(self.__proto, header.type)
		local result
		if p.request then
			result = core.decode(p.request, content)
		end
		if header.session then
			return "REQUEST", p.name, result, gen_response(self, p.response, header.session),
				header.ud
		end
		return "REQUEST", p.name, result, nil, header.ud
	end
	local session = assert(header.session, "session not found")
	local response = assert(self.__session[session], "Unknown session")
	self.__session[session] = nil
	if response == true then
		return "RESPONSE", session, nil, header.ud
	end
	return "RESPONSE", session, (core.decode(response, content)), header.ud
end

function host:attach(sp)
	return function(name, args, session, ud)
		local p = queryproto(sp, name)
		local header = encode_header(self.__package, p.tag, session, ud)
		if session then
			self.__session[session] = p.response or true
		end
		if p.request then
			return core.pack(header .. core.encode(p.request, args))
		end
		return core.pack(header)
	end
end

return sproto
