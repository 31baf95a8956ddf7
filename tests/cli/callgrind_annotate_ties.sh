#!/usr/bin/env bash
# Writes a copy of callgrind_annotate whose sorts break ties by name, to
# OUT: the byte-for-byte reference of `rtrace annotate` (tests/cli/
# annotate.sh, bench/annotate.sh). callgrind_annotate orders callers and
# callees of equal cost, the annotated files and the user-annotated list
# by Perl's hash order, which changes from one run to the next; the copy
# differs in those five lines only (checked).
#
#   tests/cli/callgrind_annotate_ties.sh OUT [CALLGRIND_ANNOTATE]
set -euo pipefail
out=${1:?usage: callgrind_annotate_ties.sh OUT [CALLGRIND_ANNOTATE]}
ca=${2:-$(command -v callgrind_annotate)}
sed -e 's/foreach my \$src_file (keys %all_ann_files)/foreach my $src_file (sort keys %all_ann_files)/' \
	-e 's/my @user_ann_files = keys %user_ann_files;/my @user_ann_files = sort keys %user_ann_files;/' \
	-e 's/\(mycmp(\$call_CCs{\$[a-z_]*,\$[a-z_]*}, \$call_CCs{\$[a-z_]*,\$[a-z_]*})\)$/\1 || $a cmp $b/' \
	"$ca" > "$out"
if [ "$(diff "$ca" "$out" | grep -c '^>')" != 5 ]; then
	echo "callgrind_annotate_ties.sh: the edit does not apply to $ca" >&2
	exit 1
fi
