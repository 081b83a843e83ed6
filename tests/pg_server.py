"""Start a real PostgreSQL 16 with pgvector for the team-store tests (tests/team.rs): the binaries
of the pinned `pgserver` wheel that .ci/run installs into target/pydeps. As root, pgserver runs
the server as its own system user. Listens only on a Unix socket in the data directory.

    python3 tests/pg_server.py DATA_DIR   # prints {"socket_dir": ..., "pid": ...} and exits

The server keeps running; the test stops it (SIGQUIT to the pid) and deletes the directory.
"""

import json
import os
import sys

import pgserver

data = os.path.abspath(sys.argv[1])
os.makedirs(os.path.dirname(data), exist_ok=True)
server = pgserver.get_server(data, cleanup_mode=None)
server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
info = server.get_postmaster_info()
print(json.dumps({"socket_dir": str(info.socket_dir), "pid": info.pid, "port": info.port}))
