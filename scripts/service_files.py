#!/usr/bin/env python3
"""Write Patina's service definitions with this user's real paths (used by scripts/setup --install).

  service_files.py systemd --bin PATINAD --out DIR     patina.service + patina.socket into DIR
  service_files.py plist --bin PATINAD --log LOG --out FILE   a launchd agent (macOS)

The templates are systemd/ and launchd/ in this repository; launchd expands neither `~` nor
`$HOME`, so the plist gets absolute paths; the systemd unit gets the absolute ExecStart too.
"""
import argparse
import plistlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def systemd(bin_path: str, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    service = (ROOT / "systemd" / "patina.service").read_text()
    lines = [
        f"ExecStart={bin_path}" if line.startswith("ExecStart=") else line
        for line in service.splitlines()
    ]
    (out / "patina.service").write_text("\n".join(lines) + "\n")
    (out / "patina.socket").write_text((ROOT / "systemd" / "patina.socket").read_text())


def plist(bin_path: str, log: str, out: Path) -> None:
    with open(ROOT / "launchd" / "dev.patina.patinad.plist", "rb") as f:
        doc = plistlib.load(f)
    doc["ProgramArguments"] = [bin_path]
    doc["StandardErrorPath"] = log
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "wb") as f:
        plistlib.dump(doc, f)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("kind", choices=["systemd", "plist"])
    p.add_argument("--bin", required=True, help="absolute path of patinad")
    p.add_argument("--log", help="absolute path of the log (plist)")
    p.add_argument("--out", required=True, type=Path)
    a = p.parse_args()
    if not Path(a.bin).is_absolute():
        print(f"service_files: --bin must be absolute, not {a.bin}", file=sys.stderr)
        return 2
    if a.kind == "systemd":
        systemd(a.bin, a.out)
    else:
        if not a.log or not Path(a.log).is_absolute():
            print("service_files: plist needs an absolute --log", file=sys.stderr)
            return 2
        plist(a.bin, a.log, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
