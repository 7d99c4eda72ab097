#!/bin/sh
# The layer rules the code's comments state, checked on the #include lines
# (and one call) of skynet-src/, service-src/ and lualib-src/. A broken rule
# prints "file:line: what" and fails its case:
#   lua_only_in_config    no skynet-src/ file but the config loader
#                         (skynet_config.c) includes a Lua header
#   public_headers_only   service-src/ (with its folders, such as snlua/)
#                         and lualib-src/ include, of the skynet-src/
#                         headers, only those skynet.h lists on its
#                         "Public headers:" line
#   socket_server_alone   socket_server.c/.h include, of the project's
#                         headers, only socket_server.h, socket_codes.h,
#                         atomic.h and spinlock.h (no skynet_*.h), and the
#                         last three only system headers besides each other
#   socket_server_builds_alone  those five files, copied alone into an
#                         empty folder, compile there
#   handle_table_below    skynet_handle.c includes neither skynet_timer.h
#                         nor skynet_server.h (the table calls nothing above)
#   retire_via_server     only skynet_server.c calls skynet_handle_retire
#                         (it also drops the service's timers)
#   headers_marked        each skynet-src header says which it is: a public
#                         one's top comment opens with "Public header", an
#                         internal one's with "Internal"
#   headers_only_included no C file of any folder (lualib-src/*/ and
#                         service-src/*/ included) #includes a .c file
#   mailbox_private       only skynet_post.c, skynet_flow.c and
#                         skynet_server.c (and skynet_post.h, which defines
#                         it) touch struct skynet_mailbox, the part of a
#                         context the posting layer reads
#   readme_order          README's list of core modules ("Core modules,
#                         from the bottom up") is true: each module includes
#                         and calls only modules listed before it, or the
#                         primitives of the list's last line
#   no_cycles             no circle among skynet-src modules, in the
#                         include graph, the call graph (nm on the built
#                         objects) or both (test/lint/cycles.sh)
# Then each rule is broken once on purpose, in a copy of the sources, and
# must be reported at the right file and line.
root=$(pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. test/node/lib.sh

# includes FILE...: "file:line:name" for each #include (name without <> or "").
includes() {
	awk '/^[ \t]*#[ \t]*include[ \t]*[<"]/ {
		s = $0
		sub(/^[ \t]*#[ \t]*include[ \t]*[<"]/, "", s)
		sub(/[>"].*$/, "", s)
		print FILENAME ":" FNR ":" s
	}' "$@"
}

# Each rule below runs in the folder given as $1 (a source tree), prints
# one "file:line: what" per violation, and prints nothing when it holds.

lua_only_in_config() {
	(cd "$1" && includes skynet-src/*.c skynet-src/*.h) | while IFS=: read -r f l name; do
		[ "$f" = skynet-src/skynet_config.c ] && continue
		case "${name##*/}" in
		lua.h | lauxlib.h | lualib.h | luaconf.h | lua.hpp)
			echo "$f:$l: includes the Lua header $name (only skynet_config.c may)" ;;
		esac
	done
}

public_headers_only() {
	public=$(sed -n 's/^[ *]*Public headers: *\(.*\)$/\1/p' "$1/skynet-src/skynet.h")
	if [ -z "$public" ]; then
		echo "skynet-src/skynet.h:1: no 'Public headers:' line"
		return
	fi
	(cd "$1" && includes service-src/*.c service-src/*/*.[ch] lualib-src/*.[ch] \
		lualib-src/*/*.[ch]) |
		while IFS=: read -r f l name; do
			base=${name##*/}
			[ -f "$1/skynet-src/$base" ] || continue
			case " $public " in
			*" $base "*) ;;
			*) echo "$f:$l: includes $base, internal to skynet-src (public: $public)" ;;
			esac
		done
}

socket_server_alone() {
	(cd "$1" && includes skynet-src/socket_server.c skynet-src/socket_server.h \
		skynet-src/socket_codes.h skynet-src/atomic.h skynet-src/spinlock.h) | while IFS=: read -r f l name; do
		base=${name##*/}
		case "$f" in
		*/socket_server.[ch]) allowed="socket_server.h socket_codes.h atomic.h spinlock.h" ;;
		*) allowed="atomic.h" ;;
		esac
		case " $allowed " in
		*" $base "*) continue ;;
		esac
		# A system header is fine; a header of the project is not.
		for d in skynet-src service-src lualib-src; do
			if [ -f "$1/$d/$base" ]; then
				echo "$f:$l: includes $name (the socket library may use only: $allowed)"
				break
			fi
		done
	done
}

socket_server_builds_alone() {
	alone="$dir/alone"
	rm -rf "$alone"
	mkdir -p "$alone"
	for h in socket_server.c socket_server.h socket_codes.h atomic.h spinlock.h; do
		cp "$1/skynet-src/$h" "$alone/"
	done
	# The compiler's first error, as skynet-src/FILE:LINE: ...
	(cd "$alone" && ${CC:-cc} -std=gnu11 -fsyntax-only -I. socket_server.c) 2>&1 |
		grep -m 1 'error' |
		sed 's|^\([^:]*\):\([0-9]*\):[0-9]*: *|skynet-src/\1:\2: does not compile alone: |' 
}

handle_table_below() {
	(cd "$1" && includes skynet-src/skynet_handle.c) | while IFS=: read -r f l name; do
		case "${name##*/}" in
		skynet_timer.h | skynet_server.h)
			echo "$f:$l: includes $name (the handle table calls nothing above it)" ;;
		esac
	done
}

retire_via_server() {
	(cd "$1" && grep -n 'skynet_handle_retire[ \t]*(' skynet-src/*.c service-src/*.c \
		lualib-src/*.c) | while IFS=: read -r f l rest; do
		case "$f" in
		skynet-src/skynet_server.c | skynet-src/skynet_handle.c) continue ;;
		esac
		echo "$f:$l: calls skynet_handle_retire (retire with skynet_context_retire)"
	done
}

headers_marked() {
	public=$(sed -n 's/^[ *]*Public headers: *\(.*\)$/\1/p' "$1/skynet-src/skynet.h")
	for h in "$1"/skynet-src/*.h; do
		base=${h##*/}
		case " $public " in
		*" $base "*) want="Public header" ;;
		*) want="Internal" ;;
		esac
		# The first comment line after the opening "/*" (skynet.h: "The public API").
		first=$(awk '/^\/\*/ { getline; print; exit }' "$h")
		n=$(grep -n -m 1 '^/\*' "$h" | cut -d: -f1)
		case "$first" in
		" * $want"* | " * The public API"*) ;;
		*) echo "skynet-src/$base:$((n + 1)): top comment does not open with \"$want\"" ;;
		esac
	done
}

headers_only_included() {
	(cd "$1" && includes skynet-src/*.[ch] service-src/*.[ch] service-src/*/*.[ch] \
		lualib-src/*.[ch] lualib-src/*/*.[ch]) | while IFS=: read -r f l name; do
		case "$name" in
		*.c) echo "$f:$l: includes the C file $name (link its object instead)" ;;
		esac
	done
}

# The core's objects of this build (SKYNET_BUILD=. keeps them in build/default).
case "${SKYNET_BUILD:-.}" in
.) OBJ_CORE=build/default/core ;;
*) OBJ_CORE=$SKYNET_BUILD/obj/core ;;
esac

no_cycles() {
	sh "$root/test/lint/cycles.sh" "$1" "${2:-$root/$OBJ_CORE}" | sed 's/^/skynet-src: /'
}

mailbox_private() {
	(cd "$1" && grep -n 'skynet_mailbox' skynet-src/*.[ch] service-src/*.c service-src/*/*.[ch] \
		lualib-src/*.[ch] lualib-src/*/*.[ch]) | while IFS=: read -r f l rest; do
		case "$f" in
		skynet-src/skynet_post.[ch] | skynet-src/skynet_flow.c | skynet-src/skynet_server.c) ;;
		*) echo "$f:$l: reads a context's mailbox (only post, flow and server may)" ;;
		esac
	done
}

# The module names of README's core list, in order, one per line (a file
# name without .c/.h); the primitives (the last item) are prefixed "*".
readme_modules() {
	awk '/^Core modules, from the bottom up/ { on = 1; next }
	on && /^`test\/node/ { exit }
	on && /^- / { item++ }
	on { print item "\t" $0 }' "$1/README.md" | awk -F '\t' '
	{
		line = $2
		# The subjects of a bullet: names followed by ":", "," or " on " (a
		# module named in passing, inside the text, does not count).
		while (match(line, /`[a-z_]+\.[ch]`(:|,| on )/)) {
			name = substr(line, RSTART + 1, RLENGTH - 1)
			sub(/\.[ch]`.*$/, "", name)
			line = substr(line, RSTART + RLENGTH)
			if (!(name in seen)) { seen[name] = 1; n++; mod[n] = name; at[n] = $1 }
		}
		last = $1
	}
	END { for (i = 1; i <= n; i++) print (at[i] == last ? "*" : "") mod[i] }'
}

readme_order() {
	readme_modules "$1" >"$dir/order"
	sh "$root/test/lint/cycles.sh" --edges "$1" "${2:-$root/$OBJ_CORE}" | while read -r a b; do
		case "$a $b" in skynet\ * | *\ skynet) continue ;; esac
		grep -qx "\*$b" "$dir/order" && continue
		ia=$(grep -nx "$a" "$dir/order" | cut -d: -f1)
		ib=$(grep -nx "$b" "$dir/order" | cut -d: -f1)
		if [ -z "$ia" ] || [ -z "$ib" ]; then
			grep -qx "\*$a" "$dir/order" ||
				echo "README.md:1: $a -> $b: a module missing from the core list"
		elif [ "$ib" -ge "$ia" ]; then
			echo "README.md:1: $a -> $b: $b is listed after $a"
		fi
	done
}

RULES="lua_only_in_config public_headers_only socket_server_alone
socket_server_builds_alone handle_table_below retire_via_server headers_marked
headers_only_included mailbox_private readme_order no_cycles"

# The tree as it is: every rule holds.
for rule in $RULES; do
	$rule "$root" >"$dir/out"
	sed 's/^/    /' "$dir/out"
	[ ! -s "$dir/out" ]
	check "$rule" $?
done

# copy_tree: a fresh copy of the checked folders in $dir/tree.
copy_tree() {
	rm -rf "$dir/tree"
	mkdir -p "$dir/tree"
	cp -r "$root/skynet-src" "$root/service-src" "$root/lualib-src" "$dir/tree/"
}

# breaks RULE FILE TEXT: in a fresh copy, insert TEXT as a line of FILE
# right after its first #include; RULE must then report exactly that line.
breaks() {
	copy_tree
	n=$(grep -n -m 1 '^#include' "$dir/tree/$2" | cut -d: -f1)
	n=$((n + 1))
	awk -v n="$n" -v t="$3" 'FNR == n { print t } { print }' "$dir/tree/$2" >"$dir/edit"
	mv "$dir/edit" "$dir/tree/$2"
	$1 "$dir/tree" >"$dir/out"
	sed 's/^/    | /' "$dir/out"
	[ "$(grep -c . "$dir/out")" -eq 1 ] && grep -q "^$2:$n: " "$dir/out"
	check "detects_$1" $?
}

breaks lua_only_in_config skynet-src/skynet_mq.c '#include <lua.h>'
breaks public_headers_only service-src/service_echo.c '#include "skynet_handle.h"'
breaks public_headers_only lualib-src/lua-seri.h '#include "../skynet-src/skynet_server.h"'
breaks public_headers_only service-src/snlua/trap.h '#include "skynet_handle.h"'
breaks socket_server_alone skynet-src/socket_server.c '#include "skynet_socket.h"'
breaks socket_server_alone skynet-src/spinlock.h '#include "skynet.h"'
breaks socket_server_builds_alone skynet-src/socket_server.c '#include "skynet.h"'
breaks handle_table_below skynet-src/skynet_handle.c '#include "skynet_timer.h"'
breaks retire_via_server skynet-src/skynet_start.c 'static void f(void) { skynet_handle_retire(1); }'
breaks public_headers_only lualib-src/sproto/sproto.c '#include "skynet_server.h"'
breaks public_headers_only lualib-src/bson/lua-bson.c '#include "../../skynet-src/skynet_mq.h"'
# An internal header that does not say so: its marker line is changed.
copy_tree
sed -i '0,/^ \* Internal/s//  * Reachable/' "$dir/tree/skynet-src/skynet_mq.h"
headers_marked "$dir/tree" >"$dir/out"
sed 's/^/    | /' "$dir/out"
[ "$(grep -c . "$dir/out")" -eq 1 ] && grep -q "^skynet-src/skynet_mq.h:" "$dir/out"
check detects_headers_marked $?
breaks mailbox_private skynet-src/skynet_timer.c 'static int f(void *c) { return skynet_mailbox_of(c)->session_id; }'
breaks headers_only_included lualib-src/sproto/sproto.c '#include "../../skynet-src/skynet_malloc.c"'

# README lists the context layer first: its calls down are reported.
copy_tree
sed 's/^Core modules, from the bottom up.*$/&\n- `skynet_server.c`: planted first./' "$root/README.md" \
	>"$dir/tree/README.md"
readme_order "$dir/tree" >"$dir/out"
sed 's/^/    | /' "$dir/out"
grep -q "^README.md:1: skynet_server -> skynet_post: skynet_post is listed after" "$dir/out"
check detects_readme_order $?

# plants NAME KIND A B: the copy in $dir/tree (and $dir/obj) must make
# no_cycles report a KIND circle through modules A and B.
plants() {
	no_cycles "$dir/tree" "$dir/obj" >"$dir/out"
	sed 's/^/    | /' "$dir/out"
	grep -q "cycles: $2: .*$3" "$dir/out" && grep "cycles: $2: " "$dir/out" | grep -q "$4"
	check "detects_$1" $?
}

# An include circle: the post layer includes the context layer above it.
copy_tree
rm -rf "$dir/obj" && cp -r "$root/$OBJ_CORE" "$dir/obj"
sed -i '0,/^#include "skynet_post.h"$/s//&\n#include "skynet_server.h"/' "$dir/tree/skynet-src/skynet_post.c"
plants include_cycle includes skynet_post skynet_server

# A call circle: the post layer calls skynet_error, which posts (planted in
# the object only; the includes stay as they are).
copy_tree
rm -rf "$dir/obj" && cp -r "$root/$OBJ_CORE" "$dir/obj"
printf 'void\nplanted(void) {\n\tskynet_error(NULL, "planted");\n}\n' >>"$dir/tree/skynet-src/skynet_post.c"
${CC:-cc} -std=gnu11 -c -I"$dir/tree/skynet-src" -o "$dir/obj/skynet_post.o" \
	"$dir/tree/skynet-src/skynet_post.c"
plants call_cycle calls skynet_post skynet_error

summary
