# Each command's man page (docs/rtrace-CMD.1) documents exactly the long
# options of its option table: the --help text is made from the table
# (src/cli/options.c), so its option lines list the table, and the man
# page's option tags (the lines after .TP and .TQ) must name the same set.
. "$(dirname "$0")/lib.sh"

# the long options of the --help's option lines, one a line, sorted
help_options() {
  "$RTRACE" "$1" --help | sed -nE 's/^(  -[[:alnum:]], |      )--([a-z][a-z-]*).*/\2/p' | sort -u
}
# the long options the man page's tags name
man_options() {
  awk 'tag { print; tag = 0 } /^\.T[PQ]/ { tag = 1 }' "${SRCDIR:?}/docs/rtrace-$1.1" |
    grep -oE '\\-\\-[a-z]([a-z]|\\-)*' | sed 's/\\-/-/g; s/^--//' | sort -u
}

for cmd in run postproc resolve convert annotate heap check report; do
  help_options "$cmd" > "$TMP/help.$cmd"
  man_options "$cmd" > "$TMP/man.$cmd"
  [ "$(wc -l < "$TMP/help.$cmd")" -ge 3 ] && ok || bad "$cmd: too few options read from --help"
  missing=$(comm -23 "$TMP/help.$cmd" "$TMP/man.$cmd" | tr '\n' ' ')
  [ -z "$missing" ] && ok || bad "docs/rtrace-$cmd.1 does not document: $missing"
  extra=$(comm -13 "$TMP/help.$cmd" "$TMP/man.$cmd" | tr '\n' ' ')
  [ -z "$extra" ] && ok || bad "docs/rtrace-$cmd.1 documents options $cmd does not have: $extra"
done
finish
