"""Record a release manifest (turnbench/corpus/releases/<corpus>.json) from a repository's own history, or from a
directory (a test's hand-made tree).

    .venv/bin/python scripts/record_release.py qmsum --git-dir QMSum.git --commit 83d7768c... \\
        --repository Yale-LILY/QMSum --root data/ALL --licence MIT --tier A \\
        > turnbench/corpus/releases/qmsum.json

Each file under ``--root`` at ``--commit`` whose name ends in .json or .jsonl is hashed from its blob
(``git cat-file blob``): the sha256 of the bytes the repository holds, never of a download, beside the blob's git
id (which pins the bytes too: a file the copy of the repository lacks is recorded by its git id alone). Nothing of
the repository is copied. With ``--tree DIR`` instead of ``--git-dir``, the files under DIR are hashed.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
from pathlib import Path

from turnbench import canonical
from turnbench.corpus.releases import git_blob, record

SUFFIXES = (".json", ".jsonl")


def from_git(git_dir: str, commit: str, root: str) -> dict[str, dict[str, str | None]]:
    """Each file's git blob id (from the tree) and the sha256 of its blob, None when the copy of the repository
    lacks the blob (a snapshot without its largest files): the blob id alone then pins it."""
    listing = subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "-r", "-z", commit, "--", f"{root}/"],
                             check=True, capture_output=True).stdout.decode()
    files: dict[str, dict[str, str | None]] = {}
    for entry in filter(None, listing.split("\0")):
        meta, path = entry.split("\t", 1)
        _, kind, blob = meta.split()
        if kind != "blob" or not path.endswith(SUFFIXES):
            continue
        got = subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "blob", blob], capture_output=True)
        sha = hashlib.sha256(got.stdout).hexdigest() if got.returncode == 0 else None
        files[path[len(root) + 1:]] = {"git_blob": blob, "sha256": sha}
    return files


def from_tree(tree: Path) -> dict[str, dict[str, str | None]]:
    return {p.relative_to(tree).as_posix(): {"git_blob": git_blob(p.read_bytes()), "sha256": canonical.sha256_file(p)}
            for p in sorted(tree.rglob("*")) if p.is_file() and p.name.endswith(SUFFIXES)}


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus")
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--git-dir")
    where.add_argument("--tree", type=Path)
    ap.add_argument("--commit", required=True, help="the release's commit (40 hex digits)")
    ap.add_argument("--repository", required=True, help="owner/name on GitHub")
    ap.add_argument("--root", required=True, help="the directory an importer reads, in the repository")
    ap.add_argument("--licence", required=True, help="the licence the repository's LICENSE states")
    ap.add_argument("--tier", required=True, choices=("A", "B", "C"))
    ap.add_argument("--licence-file-sha256", default=None, help="sha256 of the repository's LICENSE at the commit")
    ap.add_argument("--licence-states", default=None, help="what the LICENSE file says it is, in its own words")
    args = ap.parse_args(argv)
    if args.git_dir:
        commit = subprocess.run(["git", f"--git-dir={args.git_dir}", "rev-parse", f"{args.commit}^{{commit}}"],
                                check=True, capture_output=True, text=True).stdout.strip()
        files, recorded_from = from_git(args.git_dir, commit, args.root.strip("/")), "git cat-file blob at the commit"
    else:
        commit, files, recorded_from = args.commit, from_tree(args.tree), "a directory (not a published release)"
    licence = {"name": args.licence, "tier": args.tier}
    if args.licence_file_sha256:
        licence.update(file="LICENSE", file_sha256=args.licence_file_sha256)
    if args.licence_states:
        licence["states"] = args.licence_states
    sys.stdout.buffer.write(canonical.pretty(record(args.corpus, repository=args.repository, commit=commit,
                                                    root=args.root.strip("/"), licence=licence, files=files,
                                                    recorded_from=recorded_from)))


if __name__ == "__main__":
    main(sys.argv[1:])
