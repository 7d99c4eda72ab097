#!/bin/sh
# docs/getting-started.md runs as written: the files its code blocks name
# (a first line "-- mygame/<file>") are written into a scratch copy of the
# repository's layout, then sections 4 and 5 are run with the guide's own
# commands: the first service's output, and the gate server answering the
# guide's client.
B=${SKYNET_BUILD:-.}
dir=$(mktemp -d)
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$dir"' EXIT
. test/node/lib.sh

for d in lualib service; do ln -s "$PWD/$d" "$dir/$d"; done
ln -s "$PWD/$B/cservice" "$dir/cservice"
ln -s "$PWD/$B/skynet" "$dir/skynet"
mkdir "$dir/luaclib"
for m in "$PWD/$B"/luaclib/*.so; do ln -s "$m" "$dir/luaclib/"; done
# The guide's client runs in the system lua5.4, into which a sanitizer
# build's client.so does not load: then a plain build of it takes its place.
mkdir "$dir/plain"
if [ "$(client_cpath client.socket "$dir/plain")" != "$B/luaclib/?.so" ]; then
	rm -f "$dir/luaclib/client.so"
	cp "$dir/plain/client.so" "$dir/luaclib/client.so"
fi
mkdir "$dir/mygame"
lua5.4 - docs/getting-started.md "$dir" <<'LUA'
local text = assert(io.open(arg[1])):read "a"
for body in text:gmatch "```%w*\n(.-)```" do
	local name = body:match "^%-%- (mygame/[%w_.]+)"
	if name then
		local f = assert(io.open(arg[2] .. "/" .. name, "w"))
		f:write(body)
		f:close()
	end
end
LUA
ls "$dir/mygame"
[ -f "$dir/mygame/hello.lua" ] && [ -f "$dir/mygame/config" ] && [ -f "$dir/mygame/client.lua" ]
check guide_files_extracted $?

cd "$dir" || exit 1
timeout 30 ./skynet mygame/config >out.first 2>&1
status=$?
grep -v LAUNCH out.first | head -n 12
[ "$status" -eq 0 ] && grep -q "^hello, alice	1$" out.first && grep -q "^hello, carol	2$" out.first &&
	grep -q "^false	call failed$" out.first && grep -q "^sorry for the wait, bob$" out.first &&
	! grep -q "unknown key" out.first
check guide_section4_runs_section3 $?

sed 's/^start = "main"/start = "server"/' mygame/config >mygame/config.server
./skynet mygame/config.server >out.server 2>&1 &
server=$!
# The client is tried until the gate listens (slower under the sanitizers).
i=0
answer=""
while [ "$answer" != "you said: hello" ] && [ $i -lt 50 ]; do
	sleep 0.2
	answer=$(timeout 10 lua5.4 mygame/client.lua 2>&1)
	i=$((i + 1))
done
echo "client: $answer"
[ "$answer" = "you said: hello" ]
check guide_section5_client_answered $?
summary
