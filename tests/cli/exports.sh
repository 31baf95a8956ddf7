# librtrace.so exports its public API and nothing else: the functions
# include/rtrace/*.h declare with RTRACE_API, each defined, and no internal
# helper (the library is built with hidden visibility).
. "$(dirname "$0")/lib.sh"
: "${BUILD_DIR:?}" "${SRCDIR:?}"
lib=$(find "$BUILD_DIR" -maxdepth 1 -name 'librtrace.so.*.*' | head -n 1)
[ -n "$lib" ] && ok || { bad "no librtrace.so in $BUILD_DIR"; finish; exit; }
# names of the declarations: "RTRACE_API type *name(" possibly over a line
grep -ho '^RTRACE_API [^(]*(' "$SRCDIR"/include/rtrace/*.h |
  sed -E 's/.*[ *]([A-Za-z_][A-Za-z0-9_]*)\($/\1/' | sort -u > "$TMP/declared"
nm -D --defined-only "$lib" | awk '$2 ~ /^[TWiV]$/ && $3 !~ /^_/ {print $3}' |
  sed 's/@.*//' | sort -u > "$TMP/exported"
[ "$(wc -l < "$TMP/declared")" -gt 100 ] && ok || bad "fewer than 100 public functions found in include/rtrace"
if cmp -s "$TMP/declared" "$TMP/exported"; then ok; else
  bad "librtrace.so's exports differ from the public headers' RTRACE_API functions (< declared, > exported)"
  diff "$TMP/declared" "$TMP/exported" | head -20 >&2
fi
# every public header compiles on its own, in C and in C++
for h in "$SRCDIR"/include/rtrace/*.h; do
  name=$(basename "$h")
  printf '#include "rtrace/%s"\n' "$name" > "$TMP/h.c"
  if cc -fsyntax-only -Wall -Werror -I"$SRCDIR/include" "$TMP/h.c" 2> "$TMP/err" &&
     c++ -x c++ -fsyntax-only -Wall -Werror -I"$SRCDIR/include" "$TMP/h.c" 2>> "$TMP/err"; then ok
  else bad "$name does not compile on its own"; head -5 "$TMP/err" >&2; fi
done
finish
