#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Man pages from the one source of the API's documentation.

docs/API.md is the source: each public call's page (section 3) is its
line in API.md's index of calls and the API.md section that lists it,
with its exact prototype from include/blkring.h; blkring(7) is the whole
of API.md.  A public call missing from either is an error.  The pages are
written in scdoc's syntax, which scdoc (Debian's package) turns into
roff:

    scripts/gen-man.py OUT_DIR VERSION    # writes OUT_DIR/NAME.{3,7}.scd
"""
import os
import re
import sys

HEADER = "include/blkring.h"
API = "docs/API.md"


def prototypes(text):
    """Every public call's declaration (or inline definition's head)."""
    protos = {}
    decl = re.compile(r"^(?:BLKRING_API |static inline )([^;{]*?\b(blkring_[a-z0-9_]+)\([^;{]*?\))",
                      re.M | re.S)
    for m in decl.finditer(text):
        name = m.group(2)
        proto = " ".join(m.group(1).split()).replace("( ", "(")
        protos.setdefault(name, proto + ";")
    m = re.search(r"#define (blkring_for_each_cqe\([^)]*\))", text)
    if m:
        protos["blkring_for_each_cqe"] = "#define " + m.group(1)
    return protos


def summaries(text):
    """Each call's line in API.md's index of calls."""
    return dict(re.findall(r"^\| `(blkring_[a-z0-9_]+)` \| (.*?) \|$", text, re.M))


def sections(text):
    """(title, body) of every ## and ### section of API.md."""
    parts = re.split(r"^(#{2,3} .*)$", text, flags=re.M)
    out = []
    for i in range(1, len(parts), 2):
        out.append((parts[i].lstrip("# ").strip(), parts[i + 1]))
    return out


def code_lines(body):
    lines, fenced = [], False
    for line in body.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif fenced or line.startswith("    "):
            lines.append(line)
    return "\n".join(lines)


def home_section(name, secs):
    word = re.compile(r"\b%s\b" % re.escape(name))
    secs = [(t, b) for t, b in secs if t != "Calls"]
    for title, body in secs:
        if word.search(code_lines(body)):
            return title, body
    for title, body in secs:
        if word.search(body):
            return title, body
    return None, None


def escape(text):
    return text.replace("\\", "\\\\").replace("*", "\\*").replace("_", "\\_")


def inline(text):
    """Markdown's inline marks in scdoc's: code and strong in bold."""
    out = []
    for i, piece in enumerate(re.split(r"(`[^`]*`|\*\*[^*]*\*\*)", text)):
        if piece.startswith("`") and piece.endswith("`") and len(piece) > 1:
            out.append("*" + escape(piece[1:-1]) + "*")
        elif piece.startswith("**") and piece.endswith("**") and len(piece) > 3:
            out.append("*" + escape(piece[2:-2]) + "*")
        else:
            piece = re.sub(r"\[([^\]]*)\]\(([^)]*)\)", r"\1 (\2)", piece)
            out.append(escape(piece))
    return "".join(out)


def table_rows(lines):
    """A markdown table as a list: its cells joined."""
    rows = []
    for line in lines:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if all(re.fullmatch(r":?-+:?", c) for c in cells):
            continue
        rows.append(cells)
    head, body = rows[0], rows[1:]
    out = []
    for cells in body:
        rest = [(h, c) for h, c in zip(head[1:], cells[1:]) if c]
        if len(head) == 2:
            label = rest[0][1] if rest else ""
        else:
            label = "; ".join("%s: %s" % (h, c) for h, c in rest)
        out.append("- " + inline(cells[0] + (" - " + label if label else "")))
    return out


def is_item(line):
    return re.match(r"\s*(- |[0-9]+\. )", line)


def body_scd(body, level):
    """A section's markdown in scdoc: blocks, lists, tables, subheadings;
    a paragraph or a list item becomes one line, marks balanced."""
    out, para, lines, i = [], [], body.splitlines(), 0

    def flush():
        if para:
            text = " ".join(l.strip() for l in para)
            m = re.match(r"([0-9]+\.|-) (.*)", text)
            out.append("- " + inline(m.group(2)) if m else inline(text))
            para.clear()

    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            flush()
            j = i + 1
            block = []
            while j < len(lines) and not lines[j].startswith("```"):
                block.append(lines[j])
                j += 1
            out += ["```"] + block + ["```"]
            i = j + 1
        elif line.startswith("    ") and not para and (not out or out[-1] == ""):
            block = []
            while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
                block.append(lines[i][4:])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            out += ["```"] + block + ["```", ""]
        elif line.lstrip().startswith("|"):
            flush()
            rows = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append(lines[i])
                i += 1
            out += table_rows(rows)
        elif re.match(r"#{1,4} ", line):
            flush()
            depth = len(line) - len(line.lstrip("#"))
            out.append("#" * min(2, max(level, depth)) + " " + escape(line.lstrip("# ").strip()))
            i += 1
        elif not line.strip():
            flush()
            out.append("")
            i += 1
        else:
            if is_item(line):
                flush()
            para.append(line)
            i += 1
    flush()
    return "\n".join(out).strip() + "\n"


def call_page(name, proto, summary, title, body, related, version):
    see = ", ".join("*%s*(3)" % escape(r) for r in related if r != name)
    return """%s(3) "blkring %s" "blkring Manual"

# NAME

%s - %s

# SYNOPSIS

*#include <blkring.h>*

```
%s
```

Link with *-lblkring* (*pkg-config --libs blkring*).

# DESCRIPTION

The calls of %s (docs/API.md, "%s"):

%s
# SEE ALSO

*blkring*(7)%s
""" % (name, version, escape(name), inline(summary), proto, inline(title), inline(title),
       body_scd(body, 2), (", " + see) if see else "")


def overview_page(text, version):
    """blkring(7): API.md whole, its ## sections the page's sections."""
    intro = ("blkring(7) \"blkring %s\" \"blkring Manual\"\n\n# NAME\n\nblkring - the Linux "
             "block I/O path (io_uring rings, blk-mq queues, device-mapper) in userspace\n\n"
             % version)
    body = re.sub(r"^# .*\n", "", text, count=1)
    body = re.sub(r"^## ", "# ", body, flags=re.M)
    body = re.sub(r"^### ", "## ", body, flags=re.M)
    return intro + body_scd(body, 1)


def main():
    out_dir, version = sys.argv[1], sys.argv[2]
    header, api = open(HEADER).read(), open(API).read()
    protos, sums, secs = prototypes(header), summaries(api), sections(api)
    os.makedirs(out_dir, exist_ok=True)
    missing = []
    by_section = {}
    for name in protos:
        if name.startswith("blkring__"):
            continue
        title, _ = home_section(name, secs)
        by_section.setdefault(title, []).append(name)
    for name, proto in sorted(protos.items()):
        if name.startswith("blkring__"):
            continue  # internal: what the inline helpers call
        title, body = home_section(name, secs)
        if title is None or name not in sums:
            missing.append(name)
            continue
        page = call_page(name, proto, sums[name], title, body,
                         sorted(by_section[title]), version)
        open(os.path.join(out_dir, name + ".3.scd"), "w").write(page)
    open(os.path.join(out_dir, "blkring.7.scd"), "w").write(overview_page(api, version))
    if missing:
        sys.exit("gen-man: documented nowhere in %s, or missing from its index of calls: %s" %
                 (API, ", ".join(missing)))


if __name__ == "__main__":
    main()
