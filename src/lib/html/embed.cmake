# Writes OUT, a C file holding the report's CSS and script (the files
# CSS and JS, edited under src/lib/html/assets/) as NUL-terminated char
# arrays rt_html_css and rt_html_js, compiled into librtrace so that a
# report needs nothing at open time.
# cmake -DCSS=report.css -DJS=report.js -DOUT=html_assets.c -P embed.cmake
set(text "/* Generated from src/lib/html/assets/ by src/lib/html/embed.cmake. */\n")
foreach(pair "CSS;rt_html_css" "JS;rt_html_js")
  list(GET pair 0 var)
  list(GET pair 1 name)
  file(READ "${${var}}" hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
  string(REGEX REPLACE "((0x..,){16})" "\\1\n" hex "${hex}")
  string(APPEND text "const char ${name}[] = {\n${hex}0};\n")
endforeach()
file(WRITE "${OUT}.tmp" "${text}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp" "${OUT}")
