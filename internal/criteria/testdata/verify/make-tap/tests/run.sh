#!/bin/sh
# A test harness of the project's own that prints TAP.
echo "1..3"
[ "$(expr 2 + 3)" = 5 ] && echo "ok 1 - adds" || echo "not ok 1 - adds"
[ "$(expr 3 - 2)" = 1 ] && echo "ok 2 - subtracts" || echo "not ok 2 - subtracts"
[ "$(expr 2 \* 3)" = 6 ] && echo "ok 3 - multiplies" || echo "not ok 3 - multiplies"
