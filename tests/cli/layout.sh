# The layout has no circles of calls: no two files of the library (or of the
# CLI) call each other, directly or through others. The file-level call graph
# is read from the build's object files: an edge A -> B when A's object has an
# undefined symbol that B's object defines (`nm`); a strongly connected
# component of more than one file is a circle, and every one is listed. The
# graph is built from the objects rather than the sources so that it is the
# linker's truth: macros, includes and static functions cannot hide or fake a
# call. Static functions stay inside their file, so they add no edges.
. "$(dirname "$0")/lib.sh"
: "${BUILD_DIR:?BUILD_DIR must name the build directory}"
: "${SRCDIR:?}"

# cycles < EDGES: prints each strongly connected component of more than one
# node as "circle: a b c" (nodes sorted). The reachability closure is
# Floyd-Warshall on ~60 files: 200k steps, instant, and simpler to trust than
# Tarjan in awk.
cycles() {
	awk '
	NF == 2 && $1 != $2 {
		for (i = 1; i <= 2; i++)
			if (!($i in id)) { id[$i] = ++n; name[n] = $i }
		r[id[$1], id[$2]] = 1
	}
	END {
		for (k = 1; k <= n; k++)
			for (i = 1; i <= n; i++)
				if ((i, k) in r)
					for (j = 1; j <= n; j++)
						if ((k, j) in r) r[i, j] = 1
		for (i = 1; i <= n; i++) {
			if (i in done) continue
			line = ""
			for (j = 1; j <= n; j++)
				if (j == i || (((i, j) in r) && ((j, i) in r))) {
					done[j] = 1; line = line " " name[j]
				}
			if (split(line, parts, " ") > 1) print "circle:" line
		}
	}' | while read -r tag rest; do
		echo "$tag $(printf '%s\n' $rest | sort | tr '\n' ' ' | sed 's/ $//')"
	done | sort
}

# edges < "SOURCE OBJECT" lines: "from to" per call between two objects'
# sources, named relative to src/ (lib/util/out.c)
edges() {
	while read -r f o; do
		f=${f#src/}
		nm --defined-only -g "$o" | awk -v f="$f" 'NF == 3 { print "D", $3, f }'
		nm -u "$o" | awk -v f="$f" '{ print "U", $NF, f }'
	done | awk '
		$1 == "D" { def[$2] = $3; next }
		{ use[++u] = $2; by[u] = $3 }
		END {
			for (i = 1; i <= u; i++)
				if ((use[i] in def) && def[use[i]] != by[i])
					print by[i], def[use[i]]
		}' | sort -u
}

# the analysis finds a circle when there is one (a checker that cannot fail
# proves nothing), through a third file too, and none in a chain
printf 'a b\nb a\nc a\n' | cycles > "$TMP/self"
[ "$(cat "$TMP/self")" = "circle: a b" ] && ok || bad "self-test, two files: $(cat "$TMP/self")"
printf 'a b\nb c\nc a\nd e\n' | cycles > "$TMP/self"
[ "$(cat "$TMP/self")" = "circle: a b c" ] && ok || bad "self-test, three files: $(cat "$TMP/self")"
printf 'a b\nb c\nd c\n' | cycles > "$TMP/self"
[ ! -s "$TMP/self" ] && ok || bad "self-test, no circle: $(cat "$TMP/self")"

# the objects of the sources there are now (a build directory keeps the
# objects of removed sources): every library and CLI source has one
OBJ="$BUILD_DIR/CMakeFiles"
: > "$TMP/objs"
for pair in "src/lib rtrace_obj.dir" "src/cli rtrace.dir"; do
	set -- $pair
	[ -d "$OBJ/$2/$1" ] && ok || bad "no objects in $OBJ/$2/$1"
	(cd "$SRCDIR" && find "$1" -name '*.c') | sort | while read -r src; do
		o="$OBJ/$2/$src.o"
		[ -f "$o" ] && echo "$src $o" >> "$TMP/objs" || echo "$src has no object $o" >&2
	done
done
nsrc=$( (cd "$SRCDIR" && find src/lib src/cli -name '*.c') | wc -l)
nobj=$(wc -l < "$TMP/objs")
[ "$nsrc" -eq "$nobj" ] && ok || bad "$nsrc library and CLI sources but $nobj objects"
[ "$failed" -eq 0 ] || { finish; exit; }

# the library and the CLI in one graph: a library file calling back into the
# CLI would close a circle too
edges < "$TMP/objs" > "$TMP/all"
[ -s "$TMP/all" ] && ok || bad "no calls between files found (nm?)"
cycles < "$TMP/all" > "$TMP/circles"
if [ -s "$TMP/circles" ]; then
	bad "files that call each other in a loop:"
	while read -r tag rest; do
		echo "  $rest" >&2
		# the calls inside the circle, to see which to break
		for a in $rest; do
			for b in $rest; do
				grep -qx "$a $b" "$TMP/all" && echo "    $a -> $b" >&2
			done
		done
	done < "$TMP/circles"
else
	ok
fi
finish
