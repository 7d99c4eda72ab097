#!/bin/sh
# Editor help stays complete: every public Lua function (the list
# docs/tools/api.lua reads from the code) has a LuaLS annotation in
# docs/types/<module>.lua with a ---@param for each parameter
# (test/lint/annotations.lua states the rules). Prints one line per problem
# and "N passed, N failed" (modules fully annotated, problems).
exec lua5.4 test/lint/annotations.lua
