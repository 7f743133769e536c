"""One line from `turnbench stack status --json` on stdin: provider, server versions and the images by service.

usage: turnbench stack status --json | python scripts/ci/stack_status_line.py
"""

from __future__ import annotations

import json
import sys


def main() -> int:
    s = json.load(sys.stdin)
    images = {k: v["name"] for k, v in s["details"]["images"].items()}
    print("stack status:", s["provider"], s["opensearch_version"], s["postgres_version"], images)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
