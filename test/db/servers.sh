#!/bin/sh
# Private Redis and MariaDB servers for the database tests and benchmarks:
# each on a free 127.0.0.1 port, with its data, socket, pid and log files in
# DIR (a temporary directory the caller owns and removes). Nothing listens
# beyond loopback and no system-wide service is used.
#
#   servers.sh start DIR          both servers; writes DIR/env (sourceable:
#                                 DB_REDIS_PORT, DB_MYSQL_PORT, passwords)
#   servers.sh stop DIR           both, at once (safe to call when none runs)
#   servers.sh stop-redis|start-redis|kill-redis DIR
#   servers.sh stop-mysql|start-mysql|kill-mysql DIR
# The start-* commands after a stop or kill reuse the port and the data.
# kill-* sends SIGKILL (a crash); stop-* shuts down cleanly.
# REDIS_PERSIST=1 in the environment of start/start-redis turns on the
# append-only file with a sync at each write (appendfsync always), so that
# the data survives kill-redis; the default keeps nothing on disk.
set -u
PATH="$PATH:/usr/sbin:/sbin"
cmd=$1
dir=$2
REDIS_PASSWORD=skypw
MYSQL_PASSWORD=skypw

random_port() {
	shuf -i 20000-59999 -n 1
}

# wait_until TENTHS COMMAND...: retries COMMAND every 0.1 s.
wait_until() {
	n=$1
	shift
	while [ "$n" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

pid_alive() {
	[ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}

redis_up() {
	redis-cli -h 127.0.0.1 -p "$1" --no-auth-warning -a "$REDIS_PASSWORD" ping | grep -q PONG
}

# redis_run PORT: starts redis-server on PORT; 0 when it answers.
redis_run() {
	rm -f "$dir/redis.pid"
	aof="--appendonly no"
	[ "${REDIS_PERSIST:-0}" = 1 ] && aof="--appendonly yes --appendfsync always"
	# shellcheck disable=SC2086 # $aof is two or four words
	redis-server --port "$1" --bind 127.0.0.1 --protected-mode yes --save '' \
		$aof --daemonize yes --dir "$dir" --pidfile "$dir/redis.pid" \
		--logfile "$dir/redis.log" --requirepass "$REDIS_PASSWORD" \
		--user sky on ">$REDIS_PASSWORD" '~*' '&*' '+@all' \
		--user default on ">$REDIS_PASSWORD" '~*' '&*' '+@all' >/dev/null 2>&1 || return 1
	wait_until 50 redis_up "$1"
}

start_redis() {
	if [ -f "$dir/redis.port" ]; then
		redis_run "$(cat "$dir/redis.port")"
		return
	fi
	for _ in 1 2 3 4 5 6 7 8; do
		port=$(random_port)
		if redis_run "$port"; then
			echo "$port" >"$dir/redis.port"
			return 0
		fi
		stop_redis
	done
	echo "servers.sh: redis-server did not start (see $dir/redis.log)" >&2
	return 1
}

stop_redis() {
	if pid_alive "$dir/redis.pid"; then
		pid=$(cat "$dir/redis.pid")
		kill "$pid" 2>/dev/null
		wait_until 50 sh -c "! kill -0 $pid"
	fi
	rm -f "$dir/redis.pid"
}

kill_redis() {
	if pid_alive "$dir/redis.pid"; then
		pid=$(cat "$dir/redis.pid")
		kill -9 "$pid" 2>/dev/null
		wait_until 50 sh -c "! kill -0 $pid"
	fi
	rm -f "$dir/redis.pid"
}

mysql_sql() {
	mariadb --no-defaults -S "$dir/mysql.sock" -uroot -e "$1"
}

mysql_up() {
	mariadb-admin --no-defaults -S "$dir/mysql.sock" -uroot ping
}

# mysql_run PORT: starts mariadbd on PORT in the background; 0 when it answers.
mysql_run() {
	rm -f "$dir/mysql.pid"
	mariadbd --no-defaults --user="$(id -un)" --datadir="$dir/mysql" --skip-networking=0 \
		--bind-address=127.0.0.1 --port="$1" --socket="$dir/mysql.sock" \
		--pid-file="$dir/mysql.pid" --log-error="$dir/mysql.log" --skip-name-resolve \
		--skip-log-bin --innodb-buffer-pool-size=32M --innodb-log-file-size=16M \
		--max-allowed-packet=64M --performance-schema=OFF </dev/null >/dev/null 2>&1 &
	echo $! >"$dir/mysql.ppid"
	if wait_until 100 mysql_up && pid_alive "$dir/mysql.ppid"; then
		return 0
	fi
	stop_mysql
	return 1
}

start_mysql() {
	if [ -f "$dir/mysql.port" ]; then
		mysql_run "$(cat "$dir/mysql.port")"
		return
	fi
	mariadb-install-db --no-defaults --user="$(id -un)" --datadir="$dir/mysql" \
		--auth-root-authentication-method=normal --skip-test-db >"$dir/mysql-install.log" 2>&1 ||
		{
			echo "servers.sh: mariadb-install-db failed (see $dir/mysql-install.log)" >&2
			return 1
		}
	for _ in 1 2 3 4 5 6; do
		port=$(random_port)
		if mysql_run "$port"; then
			echo "$port" >"$dir/mysql.port"
			mysql_sql "CREATE DATABASE skytest;
				CREATE USER 'sky'@'127.0.0.1' IDENTIFIED BY '$MYSQL_PASSWORD';
				GRANT ALL ON *.* TO 'sky'@'127.0.0.1';
				CREATE USER 'nopw'@'127.0.0.1';
				GRANT ALL ON skytest.* TO 'nopw'@'127.0.0.1';" || return 1
			return 0
		fi
	done
	echo "servers.sh: mariadbd did not start (see $dir/mysql.log)" >&2
	return 1
}

# The pid of mariadbd: its pid file once written, else the started process.
mysql_pid() {
	if [ -f "$dir/mysql.pid" ]; then
		cat "$dir/mysql.pid"
	elif [ -f "$dir/mysql.ppid" ]; then
		cat "$dir/mysql.ppid"
	fi
}

mysql_signal() {
	pid=$(mysql_pid)
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill "$1" "$pid" 2>/dev/null
		wait_until 200 sh -c "! kill -0 $pid"
	fi
	rm -f "$dir/mysql.pid" "$dir/mysql.ppid"
}

stop_mysql() {
	mysql_signal -TERM
}

kill_mysql() {
	mysql_signal -KILL
}

write_env() {
	cat >"$dir/env" <<EOF
DB_DIR=$dir
DB_REDIS_PORT=$(cat "$dir/redis.port")
DB_REDIS_PASSWORD=$REDIS_PASSWORD
DB_MYSQL_PORT=$(cat "$dir/mysql.port")
DB_MYSQL_PASSWORD=$MYSQL_PASSWORD
export DB_DIR DB_REDIS_PORT DB_REDIS_PASSWORD DB_MYSQL_PORT DB_MYSQL_PASSWORD
EOF
}

case "$cmd" in
start)
	mkdir -p "$dir"
	start_redis && start_mysql && write_env
	;;
stop) # the data is thrown away: no clean shutdown needed
	kill_redis
	kill_mysql
	;;
start-redis) start_redis ;;
stop-redis) stop_redis ;;
kill-redis) kill_redis ;;
start-mysql) start_mysql ;;
stop-mysql) stop_mysql ;;
kill-mysql) kill_mysql ;;
*)
	echo "usage: servers.sh start|stop|start-redis|stop-redis|kill-redis|start-mysql|stop-mysql|kill-mysql DIR" >&2
	exit 2
	;;
esac
