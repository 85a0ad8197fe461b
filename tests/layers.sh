#!/bin/sh
# The layers of doc/ARCHITECTURE.md, checked on the sources: a file includes
# headers of its own folder and of lower layers only; the two engines
# (src/packet, src/flow) never include each other; the command line
# includes nothing of the library but include/fabscope.h; the simulation
# interface (src/sim/sim.h, engine.h) knows no model by name: of src/cc/ it
# includes the interface cc.h alone, never a model's header.  Last line:
# "layers: N passed, N failed".
cd "$(dirname "$0")/.." || exit 1
rank() {
	case $1 in
	base) echo 0 ;;
	topo | cc | coll | analysis) echo 1 ;;
	sim | probe) echo 2 ;;
	packet | flow) echo 3 ;;
	work) echo 4 ;;
	scenario) echo 5 ;;
	out | grid) echo 6 ;;
	facade) echo 7 ;;
	*) echo 99 ;;
	esac
}
passed=0
failed=0
for f in src/*/*.c src/*/*.h src/*.c src/*.h; do
	dir=$(dirname "$f")
	layer=${dir#src/}
	[ "$dir" = src ] && layer=facade
	me=$(rank "$layer")
	bad=""
	for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
		case $inc in
		../include/*) to=facade ;;
		../*/*) to=$(echo "$inc" | cut -d/ -f2) ;;
		*/*) to=$(echo "$inc" | cut -d/ -f1) ;;
		*) continue ;; # its own folder
		esac
		[ "$to" = "$layer" ] && continue
		if [ "$(rank "$to")" -ge "$me" ]; then
			bad="$bad $inc"
		fi
	done
	if [ -n "$bad" ]; then
		echo "FAIL: $f ($layer) includes a layer not below it:$bad"
		failed=$((failed + 1))
	else
		passed=$((passed + 1))
	fi
done
for f in src/sim/*.h; do
	models=$(sed -n 's/^#include "\.\.\/cc\/\([^"]*\)".*/\1/p' "$f" | grep -v '^cc\.h$')
	if [ -n "$models" ]; then
		echo "FAIL: $f includes a model's header (the registry, src/cc/cc.h, is the way to one): $models"
		failed=$((failed + 1))
	else
		passed=$((passed + 1))
	fi
done
for f in cli/*.c cli/*.h; do
	other=$(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | grep -v '^\.\./include/fabscope\.h$' | grep -v '^cli\.h$')
	if [ -n "$other" ]; then
		echo "FAIL: $f includes library internals: $other"
		failed=$((failed + 1))
	else
		passed=$((passed + 1))
	fi
done
echo "layers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
