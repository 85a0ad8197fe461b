#!/bin/sh
# The house rule on size, checked on the sources: no .c or .h file in src/
# or cli/ over 800 lines, no function over 150.  The code is clang-formatted
# (.clang-format): a function's definition starts at column 0 with its name
# and "(", its body's "{" stands alone at column 0 (a signature may go on
# over indented lines), and the body ends at the next "}" at column 0; a
# function's length counts from its signature's first line to that brace.
# One check per file.  Last line: "size: N passed, N failed".
cd "$(dirname "$0")/.." || exit 1
max_file=800
max_func=150
passed=0
failed=0
for f in $(find src cli -name '*.[ch]' | LC_ALL=C sort); do
	bad=$(awk -v file="$f" -v max_file="$max_file" -v max_func="$max_func" '
		# the start of a definition: the last line at column 0 before
		# its "{" (the lines between are the signature going on)
		/^[A-Za-z_]/ { head = NR; text = $0 }
		/^\{[ \t]*$/ {
			if (head && index(text, "(")) {
				start = head
				name = substr(text, 1, index(text, "(") - 1)
				sub(/[ \t]+$/, "", name)
				n = split(name, w, /[ \t*]+/)
				name = w[n]
			} else {
				start = 0
			}
			next
		}
		/^\}/ {
			if (start) {
				len = NR - start + 1
				if (len > max_func)
					printf "FAIL: %s:%d: %s is %d lines (over %d)\n", file, start, name, len, max_func
				start = 0
			}
			head = 0
		}
		END {
			if (NR > max_file)
				printf "FAIL: %s: %d lines (over %d)\n", file, NR, max_file
		}
	' "$f")
	if [ -n "$bad" ]; then
		echo "$bad"
		failed=$((failed + 1))
	else
		passed=$((passed + 1))
	fi
done
echo "size: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
