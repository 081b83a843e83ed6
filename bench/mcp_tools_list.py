#!/usr/bin/env python3
"""The size of patina-mcp's tools/list per protocol version: characters of the compact JSON result
as sent, tokens at 4 characters each (the rule the context budget uses), and per tool.

    bench/mcp_tools_list.py [--bin target/release/patina-mcp]
"""
import argparse, json, os, subprocess, tempfile, time

from common import patina_env

def listing(binary, version):
    home = tempfile.mkdtemp(prefix="ptl")
    p = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                         env=patina_env(home))
    def send(m):
        p.stdin.write(json.dumps(m) + "\n"); p.stdin.flush()
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": version,
          "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
    p.stdout.readline()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    result = json.loads(p.stdout.readline())["result"]
    p.kill()
    # patina-mcp started a daemon for this scratch home: stop it once it has written its pid.
    lock = os.path.join(home, "patinad.lock")
    for _ in range(50):
        try:
            os.kill(int(open(lock).read().strip()), 15)
            break
        except (OSError, ValueError):
            time.sleep(0.1)
    return result

def compact(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/debug/patina-mcp")
    args = ap.parse_args()
    for version in ["2025-06-18", "2025-03-26", "2024-11-05"]:
        r = listing(args.bin, version)
        n = len(compact(r))
        print(f"{version}: {len(r['tools'])} tools, {n} characters, {n / 4:.0f} tokens")
        if version == "2025-06-18":
            for t in r["tools"]:
                print(f"  {t['name']:22} {len(compact(t)):5}  (input {len(compact(t['inputSchema']))}, "
                      f"output {len(compact(t.get('outputSchema', {})))}, description {len(t['description'])})")

if __name__ == "__main__":
    main()
