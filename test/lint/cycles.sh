#!/bin/sh
# No circle among the core's files: prints each circle found in the
# dependency graphs of skynet-src/ as "cycles: KIND: a -> b -> ... -> a"
# and exits 1; prints nothing and exits 0 when there is none.
#
#   sh test/lint/cycles.sh [SRC [OBJ]]
#
# SRC is a source tree (default .), OBJ the folder of the core's objects
# (default build/default/core; the call graph is skipped, with a line
# saying so, when it holds no object). A module is a file name without
# its .c or .h, so skynet_timer.c and skynet_timer.h are one node (and a
# module's internal header, skynet_socket_internal.h, belongs to skynet_socket).
#   includes  a -> b when a file of module a #includes b.h of skynet-src
#   calls     a -> b when a.o uses a symbol b.o defines (nm: undefined in
#             a, defined in b); a call through a function pointer handed
#             over at init (a callback) is not an edge, by design
#   both      the union of the two
# With --edges first, it prints the edges instead, "a b" per line (both
# graphs), and checks nothing.
edges_only=0
if [ "$1" = --edges ]; then
	edges_only=1
	shift
fi
src=${1:-.}
obj=${2:-build/default/core}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# include_edges: "a b" for each #include "b.h" of a skynet-src file of module a.
include_edges() {
	for f in "$src"/skynet-src/*.[ch]; do
		awk '/^[ \t]*#[ \t]*include[ \t]*"/ {
			s = $0
			sub(/^[ \t]*#[ \t]*include[ \t]*"/, "", s)
			sub(/".*$/, "", s)
			print s
		}' "$f" | while read -r h; do
			h=${h##*/}
			[ -f "$src/skynet-src/$h" ] || continue
			a=${f##*/}
			a=${a%.[ch]}
			h=${h%.h}
			echo "${a%_internal} ${h%_internal}"
		done
	done
}

# call_edges: "a b" for each symbol a.o leaves undefined and b.o defines.
call_edges() {
	for o in "$obj"/*.o; do
		m=${o##*/}
		nm --defined-only "$o" | awk -v m="${m%.o}" 'NF == 3 && $2 ~ /[TDBRCGS]/ { print $3, m }'
	done | sort -u >"$tmp/defs"
	for o in "$obj"/*.o; do
		m=${o##*/}
		nm -u "$o" | awk -v m="${m%.o}" '{ print $NF, m }'
	done | sort -u >"$tmp/uses"
	join "$tmp/uses" "$tmp/defs" | awk '{ print $2, $3 }'
}

# cycles KIND: reads "a b" edges, prints every elementary circle found by a
# depth-first search from each node (one per back edge), as a path.
cycles() {
	awk -v kind="$1" '
	$1 != $2 && !seen[$1 " " $2]++ { out[$1] = out[$1] " " $2; node[$1]; node[$2] }
	function visit(v,    n, i, w, k, path, nx) {
		state[v] = 1
		stack[++depth] = v
		n = split(out[v], nx, " ")
		for (i = 1; i <= n; i++) {
			w = nx[i]
			if (state[w] == 1) {
				path = w
				for (k = depth; k >= 1 && stack[k] != w; k--) ;
				for (k = k + 1; k <= depth; k++) path = path " -> " stack[k]
				path = path " -> " w
				print "cycles: " kind ": " path
				found = 1
			} else if (state[w] == 0) {
				visit(w)
			}
		}
		depth--
		state[v] = 2
	}
	END {
		for (v in node) if (state[v] == 0) visit(v)
		exit found
	}'
}

if [ "$edges_only" = 1 ]; then
	{
		include_edges
		ls "$obj"/*.o >/dev/null 2>&1 && call_edges
	} | awk '$1 != $2' | sort -u
	exit 0
fi

status=0
include_edges | sort -u >"$tmp/inc"
cycles includes <"$tmp/inc" || status=1
if ls "$obj"/*.o >/dev/null 2>&1; then
	call_edges | sort -u >"$tmp/call"
	cycles calls <"$tmp/call" || status=1
	sort -u "$tmp/inc" "$tmp/call" | cycles both || status=1
else
	echo "cycles: no objects in $obj, the call graph is not checked"
fi
exit $status
