#!/usr/bin/env python3
"""Checks that every relative link in the repository's Markdown files names a file that exists
and, with a #fragment, a heading of that file (GitHub's anchors), so a renamed or moved section
cannot leave a reader at a dead link (tests/integration/test_doc_links.sh).

    scripts/check_doc_links.py [ROOT]     # exit 1, one line per broken link
"""
import pathlib
import re
import sys

LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")


def anchors(path):
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens, -N for repeats."""
    seen, result = {}, set()
    in_fence = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
        if in_fence or not line.startswith("#"):
            continue
        text = line.lstrip("#").strip()
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        result.add(slug if count == 0 else f"{slug}-{count}")
    return result


def links(path):
    in_fence = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line):
            in_fence = not in_fence
        if not in_fence:
            for target in LINK.findall(line):
                yield number, target


def broken(root, path):
    for number, target in links(path):
        if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:
            continue
        file_part, _, fragment = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            yield f"{path.relative_to(root)}:{number}: {target}: no file {file_part}"
        elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
            yield f"{path.relative_to(root)}:{number}: {target}: no heading #{fragment} in {linked.relative_to(root)}"


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent).resolve()
    files = [p for p in sorted(root.rglob("*.md")) if not any(part.startswith((".", "build")) for part in p.relative_to(root).parts)]
    problems = [problem for path in files for problem in broken(root, path)]
    for problem in problems:
        print(problem)
    print(f"{len(files)} Markdown files, {len(problems)} broken links", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
