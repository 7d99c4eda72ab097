# Shared by the node-level shell tests (sourced from the repository root):
# the pass/fail tally and the summary line test/run.sh reads.
passed=0
failed=0

# check NAME STATUS: one "ok"/"FAIL" line; STATUS 0 means the check held.
check() {
	if [ "$2" -eq 0 ]; then
		echo "ok   $1"
		passed=$((passed + 1))
	else
		echo "FAIL $1"
		failed=$((failed + 1))
	fi
}

# summary: the closing "N passed, N failed" line; returns non-zero on a failure.
summary() {
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}

# client_cpath MODULE DIR: prints a LUA_CPATH under which the system lua5.4
# loads MODULE (clientsocket, or client.socket / client.crypt of client.so):
# the build's luaclib ($B), or, when that copy does not load (a sanitizer
# build's modules do not load into the system interpreter), DIR, where a
# plain build of the same sources is made.
client_cpath() {
	if LUA_CPATH="$B/luaclib/?.so" timeout 10 lua5.4 -e "require '$1'" >/dev/null 2>&1; then
		echo "$B/luaclib/?.so"
		return
	fi
	case $1 in
	clientsocket)
		# shellcheck disable=SC2046 # pkg-config prints several words
		cc -std=gnu11 -O1 -fPIC -shared $(pkg-config --cflags lua5.4) -o "$2/clientsocket.so" \
			examples/lua-clientsocket.c >&2
		;;
	client.*)
		# shellcheck disable=SC2046
		cc -std=gnu11 -O1 -fPIC -shared $(pkg-config --cflags lua5.4 libcrypto) -o "$2/client.so" \
			lualib-src/client/*.c lualib-src/lua-crypt.c $(pkg-config --libs libcrypto) >&2
		;;
	esac
	echo "$2/?.so"
}
