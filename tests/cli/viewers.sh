# rtrace's exports opened in the viewers people use: heaptrack_gui on
# `rtrace heap --heaptrack`, massif-visualizer on `rtrace heap --massif`,
# KCachegrind on `rtrace convert --to callgrind`, each run under Xvfb on a
# trace of tp_heapprof. Each viewer also opens the tool's own file of the
# same program (heaptrack's recording, valgrind's massif.out and
# callgrind.out: the control that shows what "read" looks like) and a
# file of another format (what "failed" looks like), so that every check
# below tells the two apart:
#   heaptrack_gui      no parse error on stderr; its Summary tab's four
#                      tables (peak contributions, leaks, allocations,
#                      temporary allocations: locations, numbers, bars)
#                      the same pixels as for heaptrack's own recording;
#                      coloured bars there (none for a file it failed on)
#   massif-visualizer  "loaded massif file", the trace's 55 snapshots and
#                      the peak rtrace heap found (154.4 KiB) on stderr;
#                      the title names the file and the program; a chart
#                      (coloured pixels) drawn
#   KCachegrind        the title names the file and the program (the
#                      profile's cmd: line) and no "Error" window opens;
#                      the flat profile's cost bars drawn
# Screenshots are xwd dumps of the root window read here (python3); about
# 30-60 s for the nine windows. Skipped (77) when a viewer, Xvfb or xwd is
# missing (scripts/setup.sh installs them).
# The X server is started here with -displayfd (it picks a free display
# and tells which), not with xvfb-run -a, whose choice races with another
# Xvfb starting at the same time (two test trees on one machine): the
# loser's viewers then cannot connect.
if [ -z "${VIEWERS_IN_X:-}" ]; then
  for tool in Xvfb dbus-run-session xwd xwininfo heaptrack_gui massif-visualizer kcachegrind heaptrack valgrind python3; do
    command -v "$tool" > /dev/null || { echo "$tool is not installed: skipped"; exit 77; }
  done
  dfile=$(mktemp)
  Xvfb -displayfd 3 -screen 0 1400x950x24 -nolisten tcp 3> "$dfile" 2> /dev/null &
  xpid=$!
  for ((i = 0; i < 100; i++)); do
    [ -s "$dfile" ] && break
    sleep 0.2
  done
  [ -s "$dfile" ] || { echo "FAIL: Xvfb did not start" >&2; kill "$xpid"; exit 1; }
  DISPLAY=:$(head -1 "$dfile") VIEWERS_IN_X=1 dbus-run-session -- bash "$0" "$@" 2>&1 |
    grep -v 'dbus-daemon\[' # its note that it cannot raise its fd limit
  rc=${PIPESTATUS[0]}
  kill "$xpid" && wait "$xpid" 2> /dev/null
  rm -f "$dfile"
  exit "$rc"
fi
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
cd "$TMP" || exit 1
export HOME=$TMP/home XDG_RUNTIME_DIR=$TMP/xdg XDG_CONFIG_HOME=$TMP/home/.config QT_QPA_PLATFORM=xcb
mkdir -p "$XDG_CONFIG_HOME" && mkdir -m 700 "$XDG_RUNTIME_DIR"
printf '[TipOfDay]\nRunOnStart=false\n' > "$XDG_CONFIG_HOME/kcachegrindrc"

# the files: rtrace's exports, the tools' own recordings
prog=$PROGRAMS/tp_heapprof
"$RTRACE" run -o "$TMP" -- "$prog" 2> run.err || bad "rtrace run"
trace=$(ls "$TMP"/tp_heapprof-*.rtrace | head -1)
"$RTRACE" heap -q --heaptrack="$TMP/rt.heaptrack.gz" "$trace" || bad "rtrace heap --heaptrack"
"$RTRACE" heap -q --massif -o massif.out.rt "$trace" || bad "rtrace heap --massif"
"$RTRACE" convert -q --to callgrind -o callgrind.out.rt "$trace" || bad "rtrace convert --to callgrind"
DISPLAY= heaptrack -o "$TMP/ht.native" "$prog" > /dev/null 2>&1 || bad "heaptrack" # no GUI at its end
native=$(ls "$TMP"/ht.native* | head -1)
valgrind -q --tool=massif --massif-out-file=massif.out.native "$prog" || bad "massif"
valgrind -q --tool=callgrind --callgrind-out-file=callgrind.out.native "$prog" 2> /dev/null || bad "callgrind"

# pixels SHOT X Y W H: "COLOURED HASH" of that rectangle of an xwd dump
# (TrueColor, 32 bits a pixel): pixels whose channels differ by more than
# 60 (bars, charts; the widgets are grey) and a hash of the rectangle
pixels() {
  python3 - "$@" << 'EOF'
import hashlib, struct, sys
d = open(sys.argv[1], 'rb').read()
h = struct.unpack('>25I', d[:100])
size, w, hgt, order, bpp, bpl, ncol = h[0], h[4], h[5], h[7], h[11], h[12], h[19]
masks = h[14:17]
base = size + 12 * ncol
x0, y0, cw, ch = (int(v) for v in sys.argv[2:6])
fmt = '<I' if order == 0 else '>I'
coloured, md = 0, hashlib.md5()
for y in range(y0, min(y0 + ch, hgt)):
    for x in range(x0, min(x0 + cw, w)):
        p = struct.unpack_from(fmt, d, base + y * bpl + x * bpp // 8)[0]
        rgb = [(p & m) >> ((m & -m).bit_length() - 1) for m in masks]
        coloured += max(rgb) - min(rgb) > 60
        md.update(bytes(rgb))
print(coloured, md.hexdigest())
EOF
}

# drawn TAG WHAT X Y W H: the rectangle's coloured pixels (c_rt, c_nat,
# c_bad) on the tool's own file and on rtrace's export are more than 4
# times those on a file of another format
drawn() {
  local tag=$1 what=$2
  shift 2
  c_rt=$(pixels "${tag}_rt.shot" "$@" | cut -d' ' -f1)
  c_nat=$(pixels "${tag}_nat.shot" "$@" | cut -d' ' -f1)
  c_bad=$(pixels "${tag}_bad.shot" "$@" | cut -d' ' -f1)
  [ "$c_nat" -gt $((4 * c_bad)) ] && ok || bad "$what: $c_nat coloured pixels on the tool's file, $c_bad on a bad one"
  [ "$c_rt" -gt $((4 * c_bad)) ] && ok || bad "$what: none drawn for rtrace's export ($c_rt coloured pixels, $c_bad on a bad file)"
}

# show TAG APP FILE [TEXT]: opens FILE in APP, waits for a window title
# with TEXT (default: the file's name; or 20 s), then for the screen to
# settle (the same three dumps a second apart, or 40 s: the title comes
# before the file is read, and a loaded machine takes seconds to draw),
# and leaves TAG.shot (the screen), TAG.win (the windows' titles),
# TAG.err (its stderr)
show() {
  local tag=$1 app=$2 file=$3 text=${4:-$(basename "$3")} i same=0 last= sum
  "$app" "$file" > "$tag.out" 2> "$tag.err" &
  local pid=$!
  for ((i = 0; i < 80; i++)); do
    xwininfo -root -tree 2> /dev/null | grep -qF "$text" && break
    sleep 0.25
  done
  for ((i = 0; i < 40 && same < 2; i++)); do
    sleep 1
    xwd -root -silent > "$tag.shot"
    sum=$(md5sum < "$tag.shot")
    [ "$sum" = "$last" ] && same=$((same + 1)) || same=0
    last=$sum
  done
  xwininfo -root -tree | sed -n 's/^ *0x[0-9a-f]* "\(.*\)": .*/\1/p' > "$tag.win"
  if kill "$pid" 2> /dev/null; then
    wait "$pid" 2> /dev/null
    return 0
  fi
  wait "$pid" 2> /dev/null
  [ $? -lt 128 ] # it ended before the screenshot: by a signal is a crash
}

# view TAG APP FILE [TEXT]: show, once more when the viewer crashed
# (heaptrack_gui aborts now and then on a loaded machine, on its own
# recordings too): a viewer that crashes on a file every time fails the
# checks on what it drew
view() {
  show "$@" && return
  echo "$2 crashed on $3 ($(tail -1 "$1.err")): once more"
  show "$@"
}

# --- heaptrack_gui ---
view ht_rt heaptrack_gui rt.heaptrack.gz
view ht_nat heaptrack_gui "$native"
view ht_bad heaptrack_gui massif.out.rt
tables() { pixels "$1.shot" 0 236 1280 130; } # the Summary tab's tables
grep -q 'Heaptrack - rt.heaptrack.gz' ht_rt.win && ok || bad "heaptrack_gui's title: $(cat ht_rt.win)"
grep -qiE 'fail|unexpected|error' ht_rt.err && bad "heaptrack_gui on the export: $(head -3 ht_rt.err)" || ok
grep -qiE 'fail|unexpected' ht_bad.err && ok || bad "heaptrack_gui says nothing of a file it cannot read"
read -r c_rt h_rt <<< "$(tables ht_rt)" # coloured pixels, hash
read -r c_nat h_nat <<< "$(tables ht_nat)"
read -r c_bad h_bad <<< "$(tables ht_bad)"
[ "$c_nat" -gt 1000 ] && [ "$c_bad" = 0 ] && ok || bad "heaptrack_gui's bars: $c_nat on its own file, $c_bad on a bad one"
[ "$c_rt" -gt 1000 ] && ok || bad "heaptrack_gui draws no bars for the export ($c_rt coloured pixels)"
[ "$h_rt" = "$h_nat" ] && ok || bad "heaptrack_gui's Summary tables differ between rtrace's export and heaptrack's recording"

# --- massif-visualizer ---
view mv_rt massif-visualizer massif.out.rt
view mv_nat massif-visualizer massif.out.native
view mv_bad massif-visualizer callgrind.out.rt '"Massif Visualizer": ("massif' 
peak=$("$RTRACE" heap -q --no-resolve "$trace" | sed -nE 's/^peak heap memory consumption: .*\(([0-9]+) bytes.*/\1/p')
kib=$(awk -v b="$peak" 'BEGIN { printf "%.1f KiB", b / 1024 }')
grep -q 'loaded massif file' mv_rt.err && ok || bad "massif-visualizer did not load the export: $(head -5 mv_rt.err)"
grep -q '^snapshots: 55$' mv_rt.err && ok || bad "massif-visualizer's snapshots: $(grep snapshots mv_rt.err)"
grep -q "^peak cost: \"$kib\" heap" mv_rt.err && ok || bad "massif-visualizer's peak '$(grep 'peak cost' mv_rt.err)', rtrace heap's $kib"
grep -q 'loaded massif file' mv_nat.err && ! grep -q 'loaded massif file' mv_bad.err && ok ||
  bad "massif-visualizer's stderr tells no read file from a failed one"
grep -qF "tp_heapprof (massif.out.rt)" mv_rt.win && ok || bad "massif-visualizer's title: $(cat mv_rt.win)"
seen="$c_rt $c_nat $c_bad"
# coloured pixels in its window: the chart's, 10 times those of the red
# "Parser Failed" box of a file it cannot read
drawn mv "massif-visualizer's chart" 0 0 761 428

# --- KCachegrind ---
view kc_rt kcachegrind callgrind.out.rt
view kc_nat kcachegrind callgrind.out.native
view kc_bad kcachegrind massif.out.rt '"Error' 
grep -qF "callgrind.out.rt [$prog]" kc_rt.win && ok || bad "KCachegrind's title: $(cat kc_rt.win)"
grep -q '^Error' kc_rt.win && bad "KCachegrind opened an error window" || ok
grep -qF "callgrind.out.native [$prog]" kc_nat.win && grep -q '^Error' kc_bad.win && ok ||
  bad "KCachegrind's windows tell no read file from a failed one: $(cat kc_nat.win kc_bad.win)"
seen="$seen; $c_rt $c_nat $c_bad"
# coloured pixels in the flat profile: its cost bars (and the icons of a
# failed load's error window, a few hundred)
drawn kc "KCachegrind's cost bars" 0 100 330 340
echo "coloured pixels (export, own file, bad file): heaptrack_gui's tables, massif-visualizer's" \
  "window, KCachegrind's flat profile: $seen; $c_rt $c_nat $c_bad"
finish
