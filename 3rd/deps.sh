#!/bin/sh
# Makes sure the Debian packages the build needs are present: Lua 5.4
# headers and library (liblua5.4-dev), OpenSSL's libcrypto and its headers
# (libssl-dev: crypt and md5), SQLite's library and headers (libsqlite3-dev:
# skynet.db.sqlite), the lua5.4 interpreter (client and tools),
# pkg-config, and nodejs with npm (make installs the flame graph page's
# scripts with npm ci: web/flamegraph). As root it installs what is missing with apt-get;
# otherwise it stops and prints the exact command to run.
set -e

missing=""
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
if command -v pkg-config >/dev/null 2>&1; then
	pkg-config --exists lua5.4 2>/dev/null || missing="$missing liblua5.4-dev"
	pkg-config --exists libcrypto 2>/dev/null || missing="$missing libssl-dev"
	pkg-config --exists sqlite3 2>/dev/null || missing="$missing libsqlite3-dev"
else
	missing="$missing liblua5.4-dev libssl-dev libsqlite3-dev"
fi
command -v lua5.4 >/dev/null 2>&1 || missing="$missing lua5.4"
command -v cc >/dev/null 2>&1 || missing="$missing gcc"
command -v make >/dev/null 2>&1 || missing="$missing make"
command -v node >/dev/null 2>&1 || missing="$missing nodejs"
command -v npm >/dev/null 2>&1 || missing="$missing npm"

[ -z "$missing" ] && exit 0

if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
	echo "3rd/deps.sh: installing:$missing" >&2
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >&2
	exit 0
fi

echo "3rd/deps.sh: missing Debian packages:$missing" >&2
echo "run:  sudo apt-get install -y$missing" >&2
exit 1
