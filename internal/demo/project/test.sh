#!/bin/sh
# test.sh: the demo's test suite; prints TAP and exits 1 when a test fails.
. ./calc.sh
n=0
failed=0
check() {
	n=$((n + 1))
	if [ "$2" = "$3" ]; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1"
		echo "#   expected $3, got $2"
		failed=$((failed + 1))
	fi
}
echo "1..4"
check "add 2 3" "$(add 2 3)" 5
check "add -1 1" "$(add -1 1)" 0
check "sub 5 3" "$(sub 5 3)" 2
check "sub 0 4" "$(sub 0 4)" -4
[ "$failed" -eq 0 ]
