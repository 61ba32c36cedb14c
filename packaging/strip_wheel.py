"""Strips the ELF executables inside a wheel and rewrites its RECORD to match.

    python3 strip_wheel.py IN.whl OUT.whl

maturin's own --strip passes a flag to rustc, which makes cargo compile the binary again; the
packages wrap the binaries cargo already built, so the wheel is stripped afterwards instead.
Entry order, permissions (the executable bit) and every other byte of the wheel are kept.
"""

import base64
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile


def record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def stripped(data: bytes) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bin")
        with open(path, "wb") as f:
            f.write(data)
        subprocess.run(["strip", path], check=True)
        with open(path, "rb") as f:
            return f.read()


def main(src: str, dst: str) -> None:
    with zipfile.ZipFile(src) as zin:
        entries = [(info, zin.read(info)) for info in zin.infolist()]
    record_name = next(i.filename for i, _ in entries if i.filename.endswith(".dist-info/RECORD"))
    contents = {}
    for info, data in entries:
        if data[:4] == b"\x7fELF":
            data = stripped(data)
        contents[info.filename] = data
    lines = []
    for info, _ in entries:
        if info.filename == record_name:
            lines.append(f"{record_name},,")
        else:
            data = contents[info.filename]
            lines.append(f"{info.filename},{record_hash(data)},{len(data)}")
    contents[record_name] = ("\n".join(lines) + "\n").encode()
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info, _ in entries:
            zout.writestr(info, contents[info.filename], compress_type=zipfile.ZIP_DEFLATED)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: strip_wheel.py IN.whl OUT.whl")
    main(sys.argv[1], sys.argv[2])
