#!/usr/bin/env python3
"""Runs memory and stall attacks against an mcp-echo-server binary and prints what it cost.

Usage:
    python3 scripts/http_attacks.py path/to/mcp-echo-server [ATTACK ...]

ATTACK is any of the names below (default: all). For each one a fresh server is started
(`--http 127.0.0.1:0`, or stdio for `stdio-zeros`), the attack is run, and one row is
printed:

    peak RSS     VmHWM of the server process during the attack (MiB)
    RSS 1 s      VmRSS one second after the attack ended (its connections closed) (MiB)
    stall        the longest a ping of another client (its own session and connection,
                 pinging back to back) waited for its reply while the attack ran (s);
                 for stdio, how long a ping sent right after the attack waited
    statuses     the HTTP status each attacking request got (count x status), or what the
                 stdio attack was answered with

The attacks:
    nosession-zeros   one 15 MiB POST of [0,0,...] without Mcp-Session-Id
    session-zeros     the same, in a 2025-03-26 session (a batch of 7.8 million members)
    stdio-zeros       the same array over stdio, in a 2025-03-26 session
    held-bodies       64 clients of one session each send a 16 MiB body but its last byte,
                      then one of them sends it
    unread-replies    50 clients each ask for a 4 MiB echo over SSE and never read it
    padded-calls      8 clients at once send a tools/call whose arguments hold 15 MiB of
                      [0,0,...] (a valid message that parses into 7.8 million values)
    session-flood     one client sends 5 000 initialize requests (never using a session),
                      then a new client initializes: its status is shown as "new:STATUS"
    slowloris         1 200 connections each send part of a request head and then nothing;
                      a new client's initialize: "new:STATUS in SECONDS"

Only the Python standard library is used; Linux only (/proc). Figures are for one run on
whatever else the machine is doing: run twice before trusting a difference.
"""

import json
import os
import socket
import subprocess
import sys
import threading
import time

MIB = 1 << 20
ATTACKS = ["nosession-zeros", "session-zeros", "stdio-zeros", "held-bodies", "unread-replies",
           "padded-calls", "session-flood", "slowloris"]


def zeros(length):
    """`[0,0,...,0]` of exactly `length` bytes (odd lengths: one space before `]`)."""
    n = (length - 1) // 2
    body = b"[" + b"0," * (n - 1) + b"0"
    return body + b" " * (length - 1 - len(body)) + b"]"


class Server:
    """The binary over HTTP on a free loopback port; stderr drained in a thread."""

    def __init__(self, binary):
        self.proc = subprocess.Popen(
            [binary, "--http", "127.0.0.1:0", "--log-level", "error"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        line = self.proc.stderr.readline().decode()
        if not line.startswith("listening on http://"):
            raise RuntimeError(f"no listening line: {line!r}")
        host, port = line.split("//")[1].split("/")[0].rsplit(":", 1)
        self.addr = (host, int(port))
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()

    def status(self, key):
        """VmHWM or VmRSS in MiB."""
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def request(method, headers, body=b""):
    lines = [f"{method} /mcp HTTP/1.1", "Host: 127.0.0.1",
             "Content-Type: application/json",
             f"Content-Length: {len(body)}"] + [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def read_response(sock):
    """Status, headers (lower-case names), and the body (Content-Length or to EOF/SSE end)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed before a response head")
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    body = bytearray(rest)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:])}
    if "content-length" in headers:
        want = int(headers["content-length"])
        while len(body) < want:
            chunk = sock.recv(min(want - len(body), 1 << 20))
            if not chunk:
                break
            body += chunk
        return status, headers, body
    # Chunked (SSE): read until the terminating chunk (the old server's replies can be
    # hundreds of MB: appended in place, not copied each time).
    while not body.endswith(b"0\r\n\r\n"):
        chunk = sock.recv(1 << 20)
        if not chunk:
            break
        body += chunk
    return status, headers, body


def connect(addr, rcvbuf=None):
    sock = socket.socket()
    if rcvbuf:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.connect(addr)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def rpc(sock, message, headers):
    sock.sendall(request("POST", {"Accept": "application/json, text/event-stream", **headers},
                         json.dumps(message).encode()))
    return read_response(sock)


def session(addr, version):
    """A new session (initialize and notifications/initialized): its id."""
    sock = connect(addr)
    _, headers, _ = rpc(sock, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": "attack", "version": "1"}}}, {})
    sid = headers["mcp-session-id"]
    rpc(sock, {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"Mcp-Session-Id": sid, "MCP-Protocol-Version": version})
    sock.close()
    return sid


class Prober:
    """Another client: pings back to back on its own connection and session; keeps the
    longest wait."""

    def __init__(self, addr):
        self.sid = session(addr, "2025-11-25")
        self.sock = connect(addr)
        self.worst = 0.0
        self.running = True
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        n = 0
        while self.running:
            n += 1
            start = time.monotonic()
            rpc(self.sock, {"jsonrpc": "2.0", "id": n, "method": "ping"},
                {"Mcp-Session-Id": self.sid, "MCP-Protocol-Version": "2025-11-25"})
            self.worst = max(self.worst, time.monotonic() - start)
            time.sleep(0.01)

    def stop(self):
        self.running = False
        self.thread.join(timeout=60)
        return self.worst


def statuses(codes):
    counts = {}
    for c in codes:
        counts[c] = counts.get(c, 0) + 1
    return ", ".join(f"{n}x{c}" for c, n in sorted(counts.items(), key=lambda kv: str(kv[0])))


def send_then_status(sock, data):
    """Sends `data` (the server may answer and close before it is all sent), then reads
    the status; "reset" if the connection was reset before a status could be read."""
    try:
        sock.sendall(data)
    except OSError:
        pass
    try:
        return read_response(sock)[0]
    except OSError:
        return "reset"
    finally:
        sock.close()


def post_zeros(addr, headers):
    return [send_then_status(connect(addr), request(
        "POST", {"Accept": "application/json, text/event-stream", **headers}, zeros(15 * MIB)))]


def nosession_zeros(server):
    return post_zeros(server.addr, {})


def session_zeros(server):
    sid = session(server.addr, "2025-03-26")
    return post_zeros(server.addr, {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-03-26"})


def held_bodies(server, clients=64, size=16 * MIB):
    sid = session(server.addr, "2025-03-26")
    headers = {"Accept": "application/json", "Mcp-Session-Id": sid,
               "MCP-Protocol-Version": "2025-03-26"}
    whole = request("POST", headers, zeros(size))
    socks, codes = [], []
    for _ in range(clients):
        sock = connect(server.addr)
        try:
            sock.sendall(whole[:-1])
        except OSError:
            pass  # refused and closed while sending: its status is read below
        socks.append(sock)
    time.sleep(1)  # let the server take in what it will
    # Refused ones were answered already; the others wait for their last byte.
    waiting = []
    for sock in socks:
        sock.setblocking(False)
        try:
            peek = sock.recv(64, socket.MSG_PEEK)
        except BlockingIOError:
            peek = None
        sock.setblocking(True)
        if peek:
            codes.append(read_response(sock)[0])
            sock.close()
        else:
            waiting.append(sock)
    if waiting:
        first = waiting.pop(0)
        first.sendall(whole[-1:])
        codes.append(read_response(first)[0])
        first.close()
    codes += ["held"] * len(waiting)
    for sock in waiting:
        sock.close()
    return codes


def unread_replies(server, clients=50, size=4 * MIB):
    sid = session(server.addr, "2025-11-25")
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "echo", "arguments": {"text": "x" * size}}}
    body = json.dumps(message).encode()
    headers = {"Accept": "text/event-stream", "Mcp-Session-Id": sid,
               "MCP-Protocol-Version": "2025-11-25"}
    socks, codes = [], []
    for _ in range(clients):
        sock = connect(server.addr, rcvbuf=4096)
        sock.sendall(request("POST", headers, body))
        socks.append(sock)
    for sock in socks:
        # The status line only: the rest stays unread.
        head = sock.recv(64)
        codes.append(int(head.split()[1]) if head.startswith(b"HTTP/1.1") else "closed")
    time.sleep(2)  # what the server holds while nobody reads
    for sock in socks:
        sock.close()
    return codes


def padded_calls(server, clients=8):
    sid = session(server.addr, "2025-11-25")
    body = (b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",'
            b'"arguments":{"text":"x","pad":' + zeros(15 * MIB) + b"}}}")
    whole = request("POST", {"Accept": "application/json", "Mcp-Session-Id": sid,
                             "MCP-Protocol-Version": "2025-11-25"}, body)
    codes = []
    threads = [threading.Thread(target=lambda: codes.append(
        send_then_status(connect(server.addr), whole))) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return codes


def session_flood(server, count=5000):
    initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "attack", "version": "1"}}}
    sock = connect(server.addr)
    codes = [rpc(sock, initialize, {})[0] for _ in range(count)]
    sock.close()
    newcomer = connect(server.addr)
    codes.append(f"new:{rpc(newcomer, initialize, {})[0]}")
    newcomer.close()
    return codes


def slowloris(server, count=1200):
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4 * count)), hard))
    held = []
    for _ in range(count):
        sock = socket.socket()
        sock.setblocking(False)
        try:
            sock.connect(server.addr)
        except BlockingIOError:
            pass
        held.append(sock)
    time.sleep(0.5)  # the connections are established
    for sock in held:
        try:
            sock.send(b"POST /mcp HTTP/1.1\r\nHost: x\r\n")
        except OSError:
            pass
    time.sleep(1)  # the server has taken in what it will
    start = time.monotonic()
    newcomer = connect(server.addr)
    status = rpc(newcomer, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "attack", "version": "1"}}}, {})[0]
    waited = time.monotonic() - start
    newcomer.close()
    for sock in held:
        sock.close()
    return [f"new:{status} in {waited:.2f}s"]


def run_http(binary, attack):
    server = Server(binary)
    try:
        prober = Prober(server.addr)
        codes = {"nosession-zeros": nosession_zeros, "session-zeros": session_zeros,
                 "held-bodies": held_bodies, "unread-replies": unread_replies,
                 "padded-calls": padded_calls, "session-flood": session_flood,
                 "slowloris": slowloris}[attack](server)
        peak = server.status("VmHWM")
        stall = prober.stop()
        time.sleep(1)
        after = server.status("VmRSS")
        return peak, after, stall, statuses(codes)
    finally:
        server.stop()


def run_stdio(binary):
    proc = subprocess.Popen([binary, "--log-level", "error"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def send(message):
        proc.stdin.write(message + b"\n")
        proc.stdin.flush()

    def status(key):
        with open(f"/proc/{proc.pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024

    send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {},
        "clientInfo": {"name": "attack", "version": "1"}}}).encode())
    proc.stdout.readline()
    send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    send(zeros(15 * MIB))
    start = time.monotonic()
    send(b'{"jsonrpc":"2.0","id":"p","method":"ping"}')
    reply = proc.stdout.readline()
    while b'"p"' not in proc.stdout.readline():
        pass
    stall = time.monotonic() - start
    peak = status("VmHWM")
    time.sleep(1)
    after = status("VmRSS")
    proc.kill()
    proc.wait()
    try:
        answer = json.loads(reply)
        shown = (f"{len(answer)} replies" if isinstance(answer, list)
                 else f"1 error {answer['error']['code']}")
    except ValueError:
        shown = f"{len(reply)} bytes"
    return peak, after, stall, shown


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(2)
    binary = sys.argv[1]
    chosen = sys.argv[2:] or ATTACKS
    unknown = [a for a in chosen if a not in ATTACKS]
    if unknown:
        sys.exit(f"unknown attack {unknown[0]!r}; choose from {', '.join(ATTACKS)}")
    print(f"{'attack':<16} {'peak RSS':>9} {'RSS 1 s':>8} {'stall':>7}  statuses")
    for attack in chosen:
        peak, after, stall, shown = (run_stdio(binary) if attack == "stdio-zeros"
                                     else run_http(binary, attack))
        print(f"{attack:<16} {peak:>6.0f} MiB {after:>4.0f} MiB {stall:>6.2f}s  {shown}",
              flush=True)


if __name__ == "__main__":
    main()
