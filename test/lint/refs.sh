#!/bin/sh
# No file of the repository may point outside it: a clone must be readable
# on its own. Fails (exit 1, one "file:line: text" per hit) when a tracked
# file names a path outside the repository (a sibling folder of the
# checkout such as the maintainers' reference folder, an absolute /work
# path) or cites a design document that is not in it ("spec 5.3", "the
# spec", "spec section", API.md, STYLE.md). Explain in the comment itself,
# or point at docs/.
#
# Usage: sh test/lint/refs.sh   (from the repository root; `make lint`)
set -e
self=test/lint/refs.sh
# The sibling folder is spelled as a bracket expression so that this file
# does not name it itself.
pattern='[.][.]/[s]hared|/work/|[Ss]pec [0-9]|\b[Tt]he spec\b|[Ss]pec section|[Ss]pec'"'"'s|\bAPI\.md\b|\bSTYLE\.md\b'

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	list() { git ls-files; }
else
	# Not a git checkout (an unpacked archive): every file but build outputs.
	list() {
		find . -type f ! -path './build/*' ! -path './cservice/*' ! -path './luaclib/*' \
			! -path './.git/*' ! -name '*.o' ! -name '*.d' ! -name '*.a' ! -name '*.so' \
			! -name skynet | sed 's|^\./||'
	}
fi

hits=$(list | grep -v -x "$self" | while read -r f; do
	[ -f "$f" ] || continue
	grep -I -n -E "$pattern" "$f" /dev/null || true
done)

if [ -n "$hits" ]; then
	echo "$hits"
	echo "refs.sh: the lines above point outside the repository (see $self)" >&2
	exit 1
fi
echo "refs.sh: no file points outside the repository"
