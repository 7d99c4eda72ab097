-- The node table both example nodes read (config key `cluster`): node name
-- = "host:port" of its cluster port. Options start with two underscores.
db = "127.0.0.1:2528"
game = "127.0.0.1:2529"
__waittime = 30 -- seconds a call to a node missing from this table waits for a reload
__heartbeat = 1 -- seconds of silence, with calls waiting, before a probe goes out
__deadtime = 10 -- seconds of silence, with calls waiting, before the peer counts as dead
