"""Print two distinct free TCP ports on loopback, "OPENSEARCH POSTGRES", for a compose stack that must not collide
with a server another job runs on 9200 or 5432.

usage: read -r OS_PORT PG_PORT < <(.venv/bin/python scripts/ci/free_ports.py)
"""

from __future__ import annotations

from turnbench.stack.net import free_port


def main() -> int:
    a = free_port()
    b = free_port()
    while b == a:
        b = free_port()
    print(a, b)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
