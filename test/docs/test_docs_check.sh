#!/bin/sh
# Checks docs/tools/check.lua itself: on a private copy of the sources and docs, each case
# breaks one thing the check must catch (an entry removed, a function or config key added to
# the code, a broken link or anchor, a stale entry, a key read through an unknown wrapper, the
# node's key list out of step with the code or docs/config.md) and
# expects a failure naming it; the unmodified copy must pass. Run by `make docs-check`.
# Usage: sh test/docs/test_docs_check.sh   (from the repository root)
set -u
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM
pass=0
fail=0

fresh() {
	rm -rf "$TMP/r"
	mkdir -p "$TMP/r"
	cp -R README.md docs lualib service skynet-src service-src lualib-src examples "$TMP/r/"
}

# expect <name> <0|1> <text the output must contain, or "">
expect() {
	out=$(lua5.4 "$ROOT/docs/tools/check.lua" --root "$TMP/r" 2>&1)
	status=$?
	if [ "$status" -eq "$2" ] && { [ -z "$3" ] || printf '%s\n' "$out" | grep -qF -- "$3"; }; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL $1: status $status (want $2), output:"
		printf '%s\n' "$out" | tail -5
	fi
}

fresh
expect "unmodified copy passes" 0 "0 problem(s)"

fresh
sed -i 's/^### `skynet.call`$/### skynet.call, no longer an entry/' "$TMP/r/docs/ref/skynet.md"
expect "removed entry" 1 "skynet.call has no reference entry"

fresh
printf '\nfunction socket.brand_new(id)\nend\n' >> "$TMP/r/lualib/skynet/socket.lua"
sed -i 's/^return socket$//' "$TMP/r/lualib/skynet/socket.lua"
printf 'return socket\n' >> "$TMP/r/lualib/skynet/socket.lua"
expect "new Lua function" 1 "skynet.socket.brand_new has no reference entry"

fresh
sed -i 's/{"header", lheader},/{"header", lheader}, {"fresh_c", lheader},/' "$TMP/r/lualib-src/lua-socket.c"
expect "new C function" 1 "skynet.socketdriver.fresh_c has no reference entry"

fresh
sed -i 's/config.profile = skynet_optboolean("profile", true);/&\n\tint x_ = skynet_optint("brand_new_key", 1);/' \
	"$TMP/r/skynet-src/skynet_main.c"
expect "new config key in C" 1 "config key brand_new_key has no row"

fresh
printf 'local skynet = require "skynet"\nlocal v = skynet.getenv "lua_only_key"\n' > "$TMP/r/service/newkey.lua"
expect "new config key in Lua" 1 "config key lua_only_key has no row"

# The node's own key list (skynet_keys.c, which warns about unknown keys) must not drift.
fresh
sed -i 's/^    "logpath",$//' "$TMP/r/skynet-src/skynet_keys.c"
expect "key missing from the node's list" 1 "KEYS lacks logpath"

fresh
sed -i 's/^    "logpath",$/&\n    "log_path_old",/' "$TMP/r/skynet-src/skynet_keys.c"
expect "stale key in the node's list" 1 "KEYS has log_path_old, which no code reads"

fresh
printf '\n| `documented_only` | 1 | nothing reads it |\n' >> "$TMP/r/docs/config.md"
expect "documented key the node would warn about" 1 "documented_only is documented but not in KEYS"

fresh
sed -i 's/skynet_getenv("logpath")/skynet_getenv(some_name)/' "$TMP/r/skynet-src/skynet_log.c"
expect "key through a non-literal" 1 "non-literal key"

fresh
sed -i 's|\[Flow control\](flow-control.md)|[Flow control](flow-kontrol.md)|' "$TMP/r/docs/README.md"
expect "broken link" 1 "no file docs/flow-kontrol.md"

fresh
sed -i 's|(docs/getting-started.md#6-two-nodes)|(docs/getting-started.md#7-three-nodes)|' "$TMP/r/README.md"
expect "broken anchor" 1 "no heading with anchor #7-three-nodes"

fresh
printf '\n### `skynet.socket.gone_function`\n\nRemoved long ago.\n' >> "$TMP/r/docs/ref/skynet.socket.md"
expect "stale entry" 1 "entry for skynet.socket.gone_function, which skynet.socket does not export"

fresh
printf '\n### `skynet.send`\n\nTwice.\n' >> "$TMP/r/docs/ref/skynet.socket.md"
expect "duplicate entry" 1 "skynet.send has 2 reference entries"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
