# Helpers of the resolver tests: checking resolved frames against
# addr2line. Sourced after lib.sh.

# The link-time address that runtime address $2 of module $1 has when the
# module's executable segment was mapped at $3 (what the memory map of a
# text trace gives): fixed-address executables are where they were linked;
# otherwise the segment's first page was mapped at the mapping's start.
link_addr() {
  local mod=$1 addr=$2 from=$3 type seg
  type=$(readelf -hW "$mod" 2>/dev/null | awk '$1 == "Type:" {print $2}')
  if [ "$type" = EXEC ]; then
    printf '0x%x\n' "$addr"
    return
  fi
  seg=$(readelf -lW "$mod" | awk '$1 == "LOAD" && $0 ~ / R E / {print $3; exit}')
  printf '0x%x\n' $((addr - from + (seg & ~0xfff)))
}

# expected_texts TOOL MODULE ADDR... : for each address (link-time, call
# site), the frame text that sp-rtrace's format gives for TOOL's answer
# (addr2line or eu-addr2line with -f -i -C), one line each: the innermost
# function, at its file:line; "?" when the tool knows no function.
expected_texts() {
  local tool=$1 mod=$2
  shift 2
  "$tool" -a -f -i -C -e "$mod" "$@" | awk -v mod="$mod" '
    function flush() {
      if (!have) return
      if (fn == "??") print "?"
      else {
        name = fn ~ /\(/ ? fn : fn "()"
        if (loc ~ /^\?\?:/) print name " from " mod
        else print name " at " loc
      }
      have = 0
    }
    /^0x[0-9a-f]+$/ { flush(); state = 1; next }
    state == 1 { fn = $0; sub(/ inlined at .*/, "", fn); sub(/@.*/, "", fn); state = 2; next }
    state == 2 {
      loc = $0
      sub(/ \(discriminator [0-9]+\)$/, "", loc)
      sub(/:[0-9]+:[0-9]+$/, "&@", loc); sub(/:[0-9]+@$/, "", loc) # eu-addr2line adds :column
      have = 1; state = 3; next
    }
    END { flush() }'
}

# check_frames NAME RESOLVED_TRACE MODULE_REGEX TOOL: every resolved frame
# whose address is in one mapping of a module matching MODULE_REGEX must
# read as TOOL resolves the same call site. Prints how many were checked.
check_frames() {
  local name=$1 out=$2 regex=$3 tool=$4 checked=0 mismatches=0
  local -a mods froms tos
  while IFS= read -r line; do
    [[ $line =~ ^:\ (.*)\ =\>\ (0x[0-9a-f]+)-(0x[0-9a-f]+)$ ]] || continue
    mods+=("${BASH_REMATCH[1]}")
    froms+=("${BASH_REMATCH[2]}")
    tos+=("${BASH_REMATCH[3]}")
  done < "$out"
  declare -A addrs texts
  while IFS= read -r frame; do
    frame=${frame#$'\t'}
    local addr=${frame%% *} text=${frame#* } hit=-1 n=0
    [ "$text" = "$frame" ] && text=""
    for i in "${!mods[@]}"; do
      if (( addr - 1 >= froms[i] && addr - 1 < tos[i] )); then
        hit=$i
        n=$((n + 1))
      fi
    done
    [ "$n" -eq 1 ] && [[ ${mods[hit]} =~ $regex ]] && [ -f "${mods[hit]}" ] || continue
    addrs[$hit]+=" $(link_addr "${mods[hit]}" $((addr - 1)) "${froms[hit]}")"
    texts[$hit]+="$text"$'\n'
  done < <(grep -P '^\t0x' "$out" | sort -u)
  for i in "${!addrs[@]}"; do
    # shellcheck disable=SC2086
    paste -d '\n' <(printf '%s' "${texts[$i]}") <(expected_texts "$tool" "${mods[i]}" ${addrs[$i]}) |
      while IFS= read -r got && IFS= read -r want; do
        [ "$want" = "?" ] && continue
        [ "$got" = "$want" ] || echo "  got '$got', $tool says '$want'"
      done > "$TMP/mismatch"
    checked=$((checked + $(wc -w <<< "${addrs[$i]}")))
    if [ -s "$TMP/mismatch" ]; then
      mismatches=$((mismatches + 1))
      sed 's/^/'"$name"': /' "$TMP/mismatch" | head -5 >&2
    fi
  done
  if [ "$checked" -gt 0 ] && [ "$mismatches" -eq 0 ]; then ok; else bad "$name: $checked frame(s) checked against $tool"; fi
  CHECKED=$checked
}
