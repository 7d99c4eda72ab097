#!/bin/sh
# The database drivers against real servers: starts a private redis-server
# and mariadbd (test/db/servers.sh, free 127.0.0.1 ports, a temporary data
# directory), runs the Lua tests of test/db/ on one real-time node, and
# stops the servers and removes the directory on every exit path.
. test/node/lib.sh
BUILD=${SKYNET_BUILD:-.}
export SKYNET_BUILD=$BUILD
DB_DIR=$(mktemp -d)
cleanup() {
	sh test/db/servers.sh stop "$DB_DIR"
	rm -rf "$DB_DIR"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

if ! sh test/db/servers.sh start "$DB_DIR"; then
	check "start redis-server and mariadbd" 1
	cat "$DB_DIR"/*.log 2>/dev/null | tail -n 20
	summary
	exit 1
fi
. "$DB_DIR/env"
SKYNET_TEST=${DB_TESTS:-redis,mysql} "$BUILD/skynet" test/db/config.db
