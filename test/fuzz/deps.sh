#!/bin/sh
# Makes sure `make fuzz` can build libFuzzer targets: clang and its runtime
# libraries (Debian: clang, libclang-rt-N-dev for clang N). The check links a
# one-line fuzz target. As root it installs what is missing with apt-get;
# otherwise it stops and prints the exact command to run.
set -e

cc=${FUZZ_CC:-clang}

try_link() {
	dir=$(mktemp -d)
	printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
		'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
		>"$dir/t.c"
	ok=1
	"$cc" -fsanitize=fuzzer,address,undefined -o "$dir/t" "$dir/t.c" >/dev/null 2>&1 || ok=0
	rm -rf "$dir"
	[ "$ok" = 1 ]
}

command -v "$cc" >/dev/null 2>&1 && try_link && exit 0

major=14
if command -v "$cc" >/dev/null 2>&1; then
	v=$("$cc" -dumpversion 2>/dev/null || true)
	[ -n "$v" ] && major=${v%%.*}
fi
missing="clang libclang-rt-$major-dev"

if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
	echo "test/fuzz/deps.sh: installing: $missing" >&2
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >&2
	try_link && exit 0
	echo "test/fuzz/deps.sh: $cc still cannot link a libFuzzer target" >&2
	exit 1
fi

echo "test/fuzz/deps.sh: $cc cannot link a libFuzzer target (-fsanitize=fuzzer)" >&2
echo "run:  sudo apt-get install -y $missing" >&2
exit 1
