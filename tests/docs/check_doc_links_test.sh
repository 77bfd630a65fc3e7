#!/usr/bin/env bash
# check-doc-links.py on a tree with known links (tests/docs/link-tree): it must exit 1 and report
# exactly the broken ones listed in link-tree.expected (no good link reported, no broken one missed).
# Usage: check_doc_links_test.sh PYTHON3 CHECKER TESTS_DOCS_DIR
set -uo pipefail
python=$1 checker=$2 dir=$3
out=$("$python" "$checker" "$dir/link-tree")
rc=$?
if [ "$rc" -ne 1 ]; then
    echo "FAIL: exit $rc on a tree with broken links, expected 1"; echo "$out"; exit 1
fi
if ! diff <(grep 'broken link' <<<"$out") "$dir/link-tree.expected"; then
    echo "FAIL: the broken links reported (<) differ from link-tree.expected (>)"; exit 1
fi
echo "ok: $(grep -c 'broken link' <<<"$out") broken links found, as expected"
