# The rtrace executable exports nothing of its own: a function it exported
# would take the place of the same name in every shared library loaded into
# it (a CLI error() once replaced libc's error(3), which libdw calls).
# Only data that the executable holds for a library (copy relocations such
# as stdout or optarg, versioned by the library) may be in its dynamic
# symbol table.
# (No circles of calls between CLI files: tests/cli/layout.sh.)
. "$(dirname "$0")/lib.sh"

nm -D --defined-only "$RTRACE" > "$TMP/dyn" && ok || bad "nm -D failed on $RTRACE"
grep -Eq ' (error|error_at_line)(@|$)' "$TMP/dyn" && bad "rtrace exports error: $(grep -E ' error' "$TMP/dyn")" || ok
# "ADDR TYPE NAME": a function (T, W, i) is ours; data is a library's
# when a library rtrace loads defines it too (a copy relocation: libc's
# stdout, or the sanitizer runtime's flags in a sanitized build)
ldd "$RTRACE" | awk '$3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u > "$TMP/libs"
[ -s "$TMP/libs" ] && ok || bad "ldd lists no library of $RTRACE"
while read -r lib; do nm -D --defined-only "$lib" 2>/dev/null; done < "$TMP/libs" |
  awk '{ sub(/@.*/, "", $3); print $3 }' | sort -u > "$TMP/libsyms"
awk '{ n = $3; sub(/@.*/, "", n); print $2, n, $3 }' "$TMP/dyn" | while read -r type name full; do
  case "$type" in
  [TtWwi]) echo "$full" ;;
  *) grep -qxF -- "$name" "$TMP/libsyms" || echo "$full" ;;
  esac
done > "$TMP/own"
[ ! -s "$TMP/own" ] && ok || bad "rtrace exports symbols of its own: $(tr '\n' ' ' < "$TMP/own")"

finish
