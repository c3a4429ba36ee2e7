"""Set each notebook's ``parameters`` cell defaults to the default profile's values.

Usage: python scripts/sync_notebook_parameters.py [--check] [--profile default]

A notebook opened in JupyterLab then runs the same experiment as ``make run``. Only parameters
the profile sets are touched; the comment after each value is kept. ``--check`` changes nothing
and exits 1 when a notebook differs (tests/test_notebooks.py checks the same).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from inferqa_utils.core.config import profile  # noqa: E402

LINE = re.compile(r"^(?P<name>[A-Za-z_]\w*)(?P<sp1>\s*)=(?P<sp2>\s*)(?P<rest>.*)$")


def py_literal(v) -> str:
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(py_literal(x) for x in v) + "]"
    return repr(v)


def split_value_comment(rest: str) -> tuple[str, str]:
    """``value  # comment`` → (value, "  # comment"); a ``#`` inside a string literal is not a comment."""
    for i, ch in enumerate(rest):
        if ch == "#":
            try:
                ast.literal_eval(rest[:i].strip())
            except (ValueError, SyntaxError):
                continue
            j = len(rest[:i].rstrip())
            return rest[:j], rest[j:]
    return rest.rstrip(), ""


def sync(nb: Path, params: dict, check: bool) -> list[str]:
    d = json.loads(nb.read_text(encoding="utf-8"))
    diffs = []
    for cell in d["cells"]:
        if "parameters" not in cell.get("metadata", {}).get("tags", []):
            continue
        lines = "".join(cell["source"]).split("\n")
        for i, line in enumerate(lines):
            m = LINE.match(line)
            if not m or m["name"] not in params:
                continue
            value, comment = split_value_comment(m["rest"])
            if ast.literal_eval(value) == params[m["name"]]:
                continue
            new_value = py_literal(params[m["name"]])
            diffs.append(f"{nb.name}: {m['name']} = {value} → {new_value}")
            head = f"{m['name']}{m['sp1']}={m['sp2']}{new_value}"
            pad = (
                max(
                    1,
                    len(m["name"])
                    + len(m["sp1"])
                    + 1
                    + len(m["sp2"])
                    + len(value)
                    + (len(comment) - len(comment.lstrip()))
                    - len(head),
                )
                if comment
                else 0
            )
            lines[i] = head + (" " * pad + comment.lstrip() if comment else "")
        src = "\n".join(lines)
        cell["source"] = [ln + "\n" for ln in src.split("\n")[:-1]] + [src.split("\n")[-1]]
    if diffs and not check:
        nb.write_text(json.dumps(d, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return diffs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--profile", default="default")
    a = ap.parse_args()
    params = profile(a.profile)
    diffs = [
        x for nb in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")) for x in sync(nb, params, a.check)
    ]
    print("\n".join(diffs) or "notebook parameters equal the profile")
    return 1 if (diffs and a.check) else 0


if __name__ == "__main__":
    raise SystemExit(main())
