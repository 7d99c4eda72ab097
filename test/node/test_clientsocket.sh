#!/bin/sh
# The demo client's clientsocket.poll(fd, ms, watch_stdin) in a plain lua5.4
# whose standard input is at end of file (as under a test runner): with
# watch_stdin false it waits the whole timeout for fd (or just sleeps when
# fd is -1) and does not report stdin; by default it watches stdin too and
# returns at once. fd 4 is a fifo nobody writes (never readable), fd 5 is
# /dev/null (readable at once). A sanitizer build's module does not load
# into the system interpreter: a plain one is built from the same source.
B=${SKYNET_BUILD:-.}
dir=$(mktemp -d)
trap 'exec 4>&-; rm -rf "$dir"' EXIT
. test/node/lib.sh

CPATH=$(client_cpath clientsocket "$dir")
mkfifo "$dir/quiet"
exec 4<>"$dir/quiet"

# poll_ms ARGS: runs cs.poll(ARGS) with stdin at EOF; prints "<sock> <input> <ms>".
poll_ms() {
	start=$(date +%s%N)
	got=$(LUA_CPATH="$CPATH" timeout 10 lua5.4 -e "
		local cs = require 'clientsocket'
		print(cs.poll($1))" </dev/null 5</dev/null 2>&1)
	echo "$got $((($(date +%s%N) - start) / 1000000))" | tr '\t' ' '
}

# at_least GOT WANT MS: GOT starts with WANT and took at least MS milliseconds.
at_least() {
	echo "$1"
	case "$1" in "$2 "*) ;; *) return 1 ;; esac
	[ "${1##* }" -ge "$3" ]
}

# under GOT WANT MS: GOT starts with WANT and took less than MS milliseconds.
under() {
	echo "$1"
	case "$1" in "$2 "*) ;; *) return 1 ;; esac
	[ "${1##* }" -lt "$3" ]
}

at_least "$(poll_ms '-1, 400, false')" "false false" 350
check sleep_ignores_stdin_at_eof $?
at_least "$(poll_ms '4, 400, false')" "false false" 350
check quiet_fd_waits_without_stdin $?
under "$(poll_ms '5, 4000, false')" "true false" 3000
check readable_fd_returns_at_once $?
under "$(poll_ms '4, 4000')" "false true" 3000
check stdin_watched_by_default $?
under "$(poll_ms '-1, 4000, true')" "false true" 3000
check stdin_watched_when_asked $?

summary
