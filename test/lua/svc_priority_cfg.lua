-- svc_priority under a name test/config.test's priority_lane pattern matches:
-- it starts with its priority lane on (test_priority checks it).
require "svc_priority"
