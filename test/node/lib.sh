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
