#!/usr/bin/env python3
"""Checks the guide's links (#40): every internal link and anchor of the built book, every relative
link and anchor of README.md, and that every chapter under docs/src is in SUMMARY.md.

Run after `mdbook build docs`:  python3 docs/check_links.py
Exits 1 and lists each broken link as FILE: TARGET (why). Standard library only.
"""

import html.parser
import os
import re
import sys
import unicodedata
from pathlib import Path
from urllib.parse import unquote

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
BOOK = DOCS / "book"
SRC = DOCS / "src"


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.hrefs = set(), []

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if k in ("id", "name") and v:
                self.ids.add(v)
            if k in ("href", "src") and v is not None:
                self.hrefs.append(v)


def external(target):
    return re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("//")


def check_book(errors):
    pages = {}
    for path in sorted(BOOK.rglob("*.html")):
        p = Page()
        p.feed(path.read_text(encoding="utf-8"))
        pages[path.resolve()] = p
    if not pages:
        errors.append(f"{BOOK}: no HTML pages (run `mdbook build docs` first)")
        return 0
    links = 0
    for path, page in pages.items():
        if path.name in ("print.html", "404.html", "toc.html"):
            continue  # mdBook's own pages: the print page repeats every chapter's links
        for href in page.hrefs:
            if external(href):
                continue
            links += 1
            target, _, frag = href.partition("#")
            dest = (path.parent / unquote(target)).resolve() if target else path
            if dest.is_dir():
                dest = dest / "index.html"
            name = os.path.relpath(path, BOOK)
            if not dest.exists():
                errors.append(f"book/{name}: {href} (no such file)")
            elif frag and dest.suffix == ".html":
                ids = pages.get(dest).ids if dest in pages else set()
                if unquote(frag) not in ids:
                    errors.append(f"book/{name}: {href} (no anchor #{frag} there)")
    return links


def github_slug(heading):
    text = re.sub(r"`([^`]*)`", r"\1", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    out = []
    for ch in text.strip().lower():
        cat = unicodedata.category(ch)
        if ch in "-_" or cat[0] in "LN":
            out.append(ch)
        elif ch == " ":
            out.append("-")
    return "".join(out)


def md_anchors(path):
    anchors, seen, fence = set(), {}, False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            slug = github_slug(m.group(1))
            n = seen.get(slug, 0)
            anchors.add(slug if n == 0 else f"{slug}-{n}")
            seen[slug] = n + 1
    return anchors


def md_links(path):
    text, fence, out = path.read_text(encoding="utf-8"), False, []
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        if fence:
            continue
        line = re.sub(r"`[^`]*`", "", line)
        out += re.findall(r"\]\(([^)\s]+)\)", line)
    return out


def check_markdown(path, errors):
    links = 0
    for href in md_links(path):
        if external(href):
            continue
        links += 1
        target, _, frag = href.partition("#")
        dest = (path.parent / unquote(target)).resolve() if target else path
        name = os.path.relpath(path, ROOT)
        if not dest.exists():
            errors.append(f"{name}: {href} (no such file)")
        elif frag and dest.suffix == ".md" and frag not in md_anchors(dest):
            errors.append(f"{name}: {href} (no heading #{frag} there)")
    return links


def check_summary(errors):
    summary = (SRC / "SUMMARY.md").read_text(encoding="utf-8")
    listed = {(SRC / t).resolve() for t in re.findall(r"\]\(([^)]+\.md)\)", summary)}
    for path in sorted(SRC.rglob("*.md")):
        if path.name != "SUMMARY.md" and path.resolve() not in listed:
            errors.append(f"docs/src/{path.relative_to(SRC)}: not in SUMMARY.md (mdBook would not publish it)")


def main():
    errors = []
    check_summary(errors)
    book = check_book(errors)
    readme = check_markdown(ROOT / "README.md", errors)
    for e in errors:
        print(e)
    print(f"links: {book} in the book, {readme} in README.md; {len(errors)} broken")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
