#!/usr/bin/env bash
# Cuts a fuzz seed for fuzz_ehframe out of an ELF file: a 4-byte
# little-endian length of .eh_frame_hdr, then the file's bytes from
# .eh_frame_hdr to the end of .eh_frame (they sit next to each other in
# the loaded segment, as GNU ld and lld place them).
#   tests/fuzz/ehframe_seed.sh ELF > seed.bin
set -euo pipefail
sec() { # NAME -> "offset size" (hex)
	readelf -SW "$1" | awk -v n="$2" '$0 ~ " "n" " { for (i = 1; i <= NF; i++) if ($i == n) { print $(i+3), $(i+4); exit } }'
}
read -r hoff hsize < <(sec "$1" .eh_frame_hdr)
read -r foff fsize < <(sec "$1" .eh_frame)
h=$((16#$hoff)) hs=$((16#$hsize)) f=$((16#$foff)) fs=$((16#$fsize))
[ $f -ge $h ] || { echo "ehframe_seed.sh: .eh_frame before .eh_frame_hdr in $1" >&2; exit 1; }
printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $((hs & 255)) $((hs >> 8 & 255)) $((hs >> 16 & 255)) $((hs >> 24 & 255)))"
{ tail -c +$((h + 1)) "$1" || true; } | head -c $((f + fs - h)) # tail: SIGPIPE when head is done
