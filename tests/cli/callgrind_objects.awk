# callgrind_objects.awk: reads a Callgrind profile with one reader's rule
# for cob= and prints each call whose callee, in the object that rule
# gives it, is not a function the profile defines (fn= under that ob=);
# "no calls" when there is none. For convert_callgrind.sh.
#   awk -v rule=RULE -f callgrind_objects.awk PROFILE
#   awk -v list=1 -f callgrind_objects.awk PROFILE: "function object"
#              for each function the profile defines, instead
#   rule=last: the last cob= holds until the next one (a reader that
#              keeps it)
#   rule=self: the last cob= holds until a self-cost line sets it to ob=
#              (gprof2dot's CallgrindParser, which names a function's
#              module by the first line that names the function)
#   rule=spec: cob= holds for the next call only, ob= otherwise (the
#              format; callgrind_annotate, KCachegrind)
# Names "(id) name" define an id, "(id)" refers to one; ob=/cob= share
# ids, fn=/cfn= too.
function name(kind, v,   id, rest) {
  if (match(v, /^\([0-9]+\)/)) {
    id = substr(v, 2, RLENGTH - 2)
    rest = substr(v, RLENGTH + 1)
    sub(/^ /, "", rest)
    if (rest != "") names[kind, id] = rest
    return names[kind, id]
  }
  return v
}
/^ob=/  { ob = name("ob", substr($0, 4)); next }
/^cob=/ { cob = name("ob", substr($0, 5)); has_cob = 1; next }
/^fn=/  { fn = name("fn", substr($0, 4)); defined[fn, ob] = 1; next }
/^cfn=/ { callee = name("fn", substr($0, 5)); next }
/^calls=/ {
  obj = rule == "spec" ? (has_cob ? cob : ob) : cob
  n++; call_fn[n] = callee; call_ob[n] = obj
  in_call = 1; has_cob = 0; next
}
/^([0-9]|\+|-|\*)/ {
  if (!in_call && rule == "self") cob = ob
  in_call = 0; next
}
END {
  if (list) {
    for (k in defined) {
      split(k, kv, SUBSEP)
      print kv[1] " " kv[2]
    }
    exit
  }
  for (i = 1; i <= n; i++)
    if (!((call_fn[i], call_ob[i]) in defined))
      print call_fn[i] " read in " call_ob[i]
  if (!n) print "no calls"
}
