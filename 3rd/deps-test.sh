#!/bin/sh
# Makes sure the Debian packages the tests need beyond the build are
# present: the real servers and tools the tests start themselves, each a
# private instance on 127.0.0.1 (never a system-wide service):
#   redis-server    (redis-server)        Redis driver tests
#   mariadb-server  (mariadbd, mariadb-install-db)  MySQL driver tests
#   chromium        (chromium)            the browser page test
#   prometheus      (promtool)            the metrics format check
#   openssl         (openssl)             test certificates for TLS
#   lua-check       (luacheck)            the Lua lint (`make lint`)
# As root it installs what is missing with apt-get; otherwise it stops and
# prints the exact command to run. `make test` runs it first.
set -e

missing=""
need() { # need <command> <package>
	command -v "$1" >/dev/null 2>&1 || case " $missing " in
		*" $2 "*) ;;
		*) missing="$missing $2" ;;
	esac
}
PATH="$PATH:/usr/sbin:/sbin"
need redis-server redis-server
need mariadbd mariadb-server
need mariadb-install-db mariadb-server
need chromium chromium
need promtool prometheus
need openssl openssl
need luacheck lua-check

[ -z "$missing" ] && exit 0

if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
	echo "3rd/deps-test.sh: installing:$missing" >&2
	apt-get update -qq >&2
	# No service may start on its own: the tests run private instances.
	policy=/usr/sbin/policy-rc.d
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\nexit 101\n' >"$policy"
		chmod +x "$policy"
		trap 'rm -f "$policy"' EXIT
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >&2
	exit 0
fi

echo "3rd/deps-test.sh: the tests need these Debian packages:$missing" >&2
echo "run:  sudo apt-get install -y$missing" >&2
exit 1
