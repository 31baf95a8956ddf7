# `cmake --install` into a fresh prefix gives a usable SDK: headers, the
# shared library and a relocatable rtrace.pc that pkg-config resolves.
. "$(dirname "$0")/lib.sh"
: "${BUILD_DIR:?}"
cmake --install "$BUILD_DIR" --prefix "$TMP/prefix" > /dev/null 2>&1 && ok || bad "cmake --install failed"
pc=$(find "$TMP/prefix" -name rtrace.pc | head -n 1)
[ -n "$pc" ] && ok || bad "rtrace.pc not installed"
flags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs rtrace) && ok || bad "pkg-config rtrace"
libdir=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --variable=libdir rtrace)
# shellcheck disable=SC2086
cc "$SRCDIR/tests/sdk/sdk_user.c" $flags -Wl,-rpath,"$libdir" -o "$TMP/sdk_user" && ok || bad "building against the installed SDK"
[ "$("$TMP/sdk_user")" = "3 calls, 2 stacks" ] && ok || bad "SDK program output: $("$TMP/sdk_user")"
[ -f "$libdir/librtrace-preload.so" ] && ok || bad "tracer library not installed"
[ -x "$TMP/prefix/bin/rtrace" ] && ok || bad "rtrace not installed"
finish
