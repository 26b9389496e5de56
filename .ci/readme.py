#!/usr/bin/env python3
"""Runs the README as a user would (issue 44): every `$ ` command of its
```console blocks and every ```python block, in a scratch copy of samples/,
with the release `chesspack` first on PATH and the CI's virtual environment
for Python.

A command must succeed, and what it prints must be what the README shows:
exactly, or with the numbers masked where the output holds speeds (MB/s,
plies/s) that change from run to run. The Spark block runs when PySpark and
Java are there, with `spark` a local session.

Usage: python3 .ci/readme.py [PYTHON]   (from the repository root)
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def blocks(text: str) -> list[tuple[str, list[str]]]:
    """The fenced blocks of `text`: (language, lines)."""
    out, lang, lines = [], None, []
    for line in text.splitlines():
        if line.startswith("```"):
            if lang is None:
                lang, lines = line[3:].strip(), []
            else:
                out.append((lang, lines))
                lang = None
        elif lang is not None:
            lines.append(line)
    return out


def commands(lines: list[str]) -> list[tuple[str, list[str]]]:
    """The `$ ` commands of a console block with the output shown after each."""
    out = []
    for line in lines:
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
    return out


def mask(lines: list[str]) -> list[str]:
    """`lines` with every number an `N` and spacing normalised."""
    return [" ".join(re.sub(r"\d+(\.\d+)?", "N", line).split()) for line in lines]


def main() -> int:
    python = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else sys.executable
    binary = os.path.join(ROOT, "target", "release")
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    failures = 0
    # A README for users (issue 67): at most 200 lines, and every format
    # number it states is the one the library writes (issue 69).
    if len(text.splitlines()) > 200:
        failures += 1
        print(f"README: {len(text.splitlines())} lines (at most 200)", file=sys.stderr)
    source = open(os.path.join(ROOT, "crates", "chesspack", "src", "archive", "mod.rs"), encoding="utf-8").read()
    version = re.search(r"pub const FORMAT_VERSION: u8 = (\d+);", source).group(1)
    stated = set(re.findall(r"format (?:version )?(?:\(now )?(\d+)", text))
    if stated != {version}:
        failures += 1
        print(f"README: states format {sorted(stated)}, the library writes {version}", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="chesspack-readme-") as work:
        shutil.copytree(os.path.join(ROOT, "samples"), os.path.join(work, "samples"))
        env = dict(os.environ, PATH=binary + os.pathsep + os.environ["PATH"])
        ran = 0
        for lang, lines in blocks(text):
            if lang == "console":
                for cmd, expected in commands(lines):
                    r = subprocess.run(
                        ["bash", "-o", "pipefail", "-c", cmd], cwd=work, env=env, capture_output=True, text=True
                    )
                    got = (r.stderr + r.stdout).splitlines()
                    # `| head` closes the pipe early: chesspack's status 141.
                    ok = r.returncode == 0 or ("| head" in cmd and r.returncode == 141)
                    # Speeds and times (`find`'s "in 0.004 s") change from run to run.
                    speeds = any("MB/s" in l or "ply/s" in l or re.search(r" in \d+\.\d+ s", l) for l in expected)
                    if expected and ok:
                        seen = [l for l in got if l.strip()]
                        want = [l for l in expected if l.strip()]
                        ok = mask(seen) == mask(want) if speeds else seen == want
                    ran += 1
                    if not ok:
                        failures += 1
                        print(f"README: `{cmd}` (status {r.returncode}) printed:\n" + "\n".join(got), file=sys.stderr)
                        print("README shows:\n" + "\n".join(expected), file=sys.stderr)
            elif lang == "python":
                code = "\n".join(lines)
                if "spark" in code:
                    probe = subprocess.run([python, "-c", "import pyspark"], capture_output=True)
                    if probe.returncode != 0 or shutil.which("java") is None:
                        print("README: the Spark block needs PySpark and Java: skipped", file=sys.stderr)
                        continue
                    code = (
                        "import os, sys\nos.environ['PYSPARK_PYTHON'] = sys.executable\n"
                        "from pyspark.sql import SparkSession\n"
                        "spark = SparkSession.builder.master('local[1]').config('spark.ui.enabled', 'false').getOrCreate()\n"
                        "spark.sparkContext.setLogLevel('ERROR')\n" + code + "\nassert spark.read.format('chesspack').load('sample.chpk').count() == 37\nspark.stop()\n"
                    )
                r = subprocess.run([python, "-c", code], cwd=work, env=env, capture_output=True, text=True)
                ran += 1
                if r.returncode != 0:
                    failures += 1
                    print(f"README: a python block failed:\n{code}\n{r.stderr}", file=sys.stderr)
        print(f"README: {ran} commands and snippets run, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
