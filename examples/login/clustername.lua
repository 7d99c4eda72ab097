-- The node table of the login example (config key `cluster`): the login
-- node and the gate node call each other through skynet.cluster.
login = "127.0.0.1:2538"
gate = "127.0.0.1:2539"
