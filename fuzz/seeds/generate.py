#!/usr/bin/env python3
"""Writes the seed inputs in fuzz/seeds/<target>/ from the cases of the test suites.

The inputs are copied from protocol/tests/codec.rs, protocol/src/message.rs (unit tests),
server/tests/in_memory.rs and client/tests/in_memory.rs, and encoded in each target's input
format (see fuzz/src/*_check.rs `from_bytes`): a few configuration bytes, then the stream in the
target's "raw" mode, so the fuzzer starts from the exact bytes the tests use. Run it from
anywhere: `python3 fuzz/seeds/generate.py`. Files are named by content, so rerunning is stable.
"""

import hashlib
import json
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}'
UNICODE = '{"jsonrpc":"2.0","id":"你好","method":"echo","params":{"t":"🦀 你好"}}'
NOTE = '{"jsonrpc":"2.0","method":"notifications/initialized"}'


def lsp(body):
    b = body.encode() if isinstance(body, str) else body
    return b"Content-Length: %d\r\n\r\n" % len(b) + b


def line(v):
    return (json.dumps(v, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def write(target, name, data):
    d = os.path.join(HERE, target)
    os.makedirs(d, exist_ok=True)
    digest = hashlib.sha1(data).hexdigest()[:10]
    with open(os.path.join(d, f"{name}-{digest}"), "wb") as f:
        f.write(data)


# --- codec: [config][limits][chunk seed u64][split u16][stream], raw mode (config & 0x18 == 0)
NDJSON, CL, AUTO, STRICT = 0, 1, 2, 0x04


def codec_seed(name, mode, stream, max_idx=3, header_idx=3, chunk_idx=2, split=7):
    limits = max_idx | (header_idx << 2) | (chunk_idx << 4)
    head = bytes([mode, limits]) + struct.pack("<Q", 0x9E3779B97F4A7C15) + struct.pack("<H", split)
    write("codec", name, head + stream)


def codec_seeds():
    multi_nd = f"{PING}\n{UNICODE}\r\n\n  \r\n{NOTE}\n".encode()
    multi_cl = lsp(PING) + lsp(UNICODE) + b"\r\n" + (
        "content-type: application/vscode-jsonrpc; charset=utf-8\r\nCONTENT-LENGTH: %d\r\n\r\n%s"
        % (len(NOTE), NOTE)
    ).encode()
    for mode in (NDJSON, AUTO):
        codec_seed(f"ndjson-multi-frame-m{mode}", mode, multi_nd)
    for mode in (CL, AUTO):
        codec_seed(f"content-length-multi-frame-m{mode}", mode, multi_cl)
    body = '{"jsonrpc":"2.0","method":"x","params":{"s":"你好👋"}}'
    codec_seed("content-length-utf8", CL, lsp(body))
    codec_seed("content-length-short", CL, b"Content-Length: %d\r\n\r\n" % (len(body.encode()) + 1) + body.encode())
    big = '{"jsonrpc":"2.0","id":2,"method":"%s"}' % ("a" * 200)
    codec_seed("ndjson-oversize", NDJSON, f"{big}\n{PING}\n".encode(), max_idx=1)  # max 64
    codec_seed("ndjson-at-limit", NDJSON, f"{PING}\n{PING}\r\n".encode(), max_idx=1)
    codec_seed("content-length-oversize", CL, lsp(big) + lsp(PING), max_idx=1)
    codec_seed("content-length-huge", CL, b"Content-Length: 9223372036854775807\r\n\r\n{")
    for i, garbage in enumerate([
        b"Garbage\r\n\r\n",
        b'Content-Length: abc\r\n\r\n{"x":1}',
        b"Content-Length: -1\r\n\r\n",
        b"Content-Length: 18446744073709551616\r\n\r\n",
        b"Content-Type: text/plain\r\n\r\n{}",
        b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
    ]):
        codec_seed(f"garbage-header-{i}", CL, lsp(PING) + garbage + lsp(NOTE))
    codec_seed("header-bounded", CL, b"Content-Length: 1" + b"1" * 300 + b"\r\n\r\n" + lsp(PING), header_idx=2)
    codec_seed("bad-json-bad-shape", NDJSON,
               ('{not json\n[]\n{"jsonrpc":"1.0","id":9,"method":"x"}\n%s\n' % PING).encode())
    codec_seed("last-line-no-newline", NDJSON, PING.encode())
    codec_seed("auto-garbage-then-ping", AUTO, ("garbage\n%s\n%s\n" % ("x" * 100, PING)).encode(), max_idx=1)
    codec_seed("strict-bom-blank", NDJSON | STRICT, f"\ufeff{PING}\n\n{NOTE}\n".encode())
    codec_seed("strict-log-line", CL | STRICT, b"INFO:server:starting\r\n" + lsp(PING))
    codec_seed("lenient-log-line", CL, b"INFO:server:starting\r\n" + lsp(PING))


# --- parse: the bytes themselves
def parse_seeds():
    cases = [
        PING, NOTE, UNICODE,
        '{"jsonrpc":"2.0","method":"n","params":{"a":1}}',
        '{"jsonrpc":"2.0","id":"x","result":{}}',
        '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}',
        "{", "nope", PING + " x", '{"a":"\u0000"',
        '{"jsonrpc":"2.0","method":"\\ud800"}',
        '{"id":7,"method":"ping"}',
        '{"jsonrpc":"1.0","id":"a","method":"ping"}',
        '{"jsonrpc":"2.0","id":3,"method":5}',
        '{"jsonrpc":"2.0","id":null,"method":"x"}',
        '{"jsonrpc":"2.0","id":1.5,"method":"x"}',
        '{"jsonrpc":"2.0","id":true,"method":"x"}',
        '{"jsonrpc":"2.0","id":4,"result":{},"error":{"code":1,"message":"m"}}',
        '{"jsonrpc":"2.0","id":5}',
        '{"jsonrpc":"2.0","id":6,"method":"x","params":"s"}',
        "5", '"str"',
        '{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}',
        '{"jsonrpc":"2.0","id":9223372036854775807,"method":"ping"}',
        '{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}',
        '{"jsonrpc":"2.0","id":18446744073709551616,"method":"x"}',
        '{"jsonrpc":"2.0","id":"é🦀","method":"ping"}',
        '[{"jsonrpc":"2.0","id":1,"method":"a"}, 5, {"jsonrpc":"2.0","method":"n"}]',
        " [ ] ",
        '{"jsonrpc":"2.0","id":1,"method":"ping","params":null}',
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a\\nb"}}}',
        "[" * 200 + "]" * 200,
    ]
    for i, c in enumerate(cases):
        write("parse", f"case{i:02}", c.encode())
    write("parse", "invalid-utf8", b'{"jsonrpc":"2.0","method":"\xff"}')


# --- server_dispatch: [config][sizes][chunk seed u64][chunk pick][stream], raw (config 0x30)
def server_seed(name, stream, framing=0, slow=False):
    config = framing | (0x04 if slow else 0) | 0x30
    sizes = 1 | (1 << 2) | (2 << 3) | (3 << 5)  # max 4096, header 8192, duplex 64K, queue 1024
    head = bytes([config, sizes]) + struct.pack("<Q", 0x243F6A8885A308D3) + bytes([2])
    write("server_dispatch", name, head + stream)


def init(id_, version="2025-11-25"):
    return {"jsonrpc": "2.0", "id": id_, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {},
                       "clientInfo": {"name": "in-memory-test", "version": "1.0"}}}


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call(id_, text):
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": text}}}


def server_seeds():
    hs = line(init(0)) + line(INITIALIZED)
    server_seed("handshake-echo", hs + line({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
                + line(call("call", "hello")))
    server_seed("gating", line({"jsonrpc": "2.0", "id": 1, "method": "ping"})
                + line({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}) + line(init(3))
                + line({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}))
    errors = [
        {"jsonrpc": "2.0", "id": 10, "method": "nope/nothing"},
        {"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "nope"}},
        {"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": {"arguments": {}}},
        {"jsonrpc": "2.0", "id": 13, "method": "tools/call", "params": {"name": "echo", "arguments": "text"}},
        {"jsonrpc": "2.0", "id": 14, "method": "tools/call"},
        {"jsonrpc": "2.0", "id": 15, "method": "tools/list", "params": {"cursor": "abc"}},
        {"jsonrpc": "1.0", "id": 17, "method": "ping"},
        {"jsonrpc": "2.0", "id": None, "method": "ping"},
        {"jsonrpc": "2.0", "id": 18, "method": 5},
        {"jsonrpc": "2.0", "id": 19, "method": "ping", "params": "x"},
        {"jsonrpc": "2.0", "id": 20},
        {"jsonrpc": "2.0", "id": 21.5, "method": "ping"},
    ]
    server_seed("error-layering", hs + b"".join(line(e) for e in errors)
                + b'{"jsonrpc":"2.0","id":31,"method":"ping"\n')
    server_seed("no-reply", hs + line({"jsonrpc": "2.0", "method": "notifications/whatever", "params": {}})
                + line({"jsonrpc": "2.0", "method": "tools/list"})
                + line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}})
                + line({"jsonrpc": "2.0", "id": 5, "result": {}})
                + line({"jsonrpc": "2.0", "id": None, "error": {"code": -1, "message": "x"}})
                + line({"jsonrpc": "2.0", "id": "after", "method": "ping"}))
    ids = b"".join(line({"jsonrpc": "2.0", "id": i, "method": "ping"}) for i in
                   [0, -1, 9007199254740993, 9223372036854775807, 18446744073709551615, "", "é🦀"])
    server_seed("ids-exact", ids)
    batch = [{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "method": "notifications/x"},
             5, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    server_seed("batches-2025-03-26", line(init(0, "2025-03-26")) + line(INITIALIZED) + line(batch) + b"[]\n"
                + line([{"jsonrpc": "2.0", "method": "notifications/x"}]) + line([init(9, "2025-03-26")]))
    server_seed("batches-refused", hs + line(batch))
    server_seed("slow-cancel", line(init(0)) + line(INITIALIZED)
                + line({"jsonrpc": "2.0", "id": "s", "method": "tools/call",
                        "params": {"name": "slow", "arguments": {"yields": 10}}})
                + line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "s"}})
                + line({"jsonrpc": "2.0", "id": "s", "method": "tools/call",
                        "params": {"name": "slow", "arguments": {"yields": 3}}})
                + line({"jsonrpc": "2.0", "id": "s", "method": "tools/call",
                        "params": {"name": "slow", "arguments": {"yields": 3}}}), slow=True)
    server_seed("content-length", b"".join(lsp(json.dumps(m)) for m in [init(0), INITIALIZED, call(1, "x")]),
                framing=1)
    big = '{"jsonrpc":"2.0","id":2,"method":"%s"}' % ("a" * 5000)
    server_seed("oversize", (big + "\n").encode() + line({"jsonrpc": "2.0", "id": 3, "method": "ping"}))
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
    server_seed("modern", line({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}})
                + line({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                        "params": {"name": "echo", "arguments": {"text": "m"}, "_meta": meta}})
                + line({"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"_meta": meta}}))


# --- client_replies: [config][sizes][timeout pick per call][stream], raw (config >> 6 == 3)
def client_seed(name, stream, framing=0, calls=4):
    config = framing | 0x0c | ((calls - 1) << 4) | 0xC0
    sizes = 1 | (1 << 2)  # max 4096, duplex 4096
    write("client_replies", name, bytes([config, sizes]) + bytes([3] * calls) + stream)


def client_seeds():
    r = lambda i, res: line({"jsonrpc": "2.0", "id": i, "result": res})
    client_seed("replies-in-order", r(2, {}) + r(3, {"x": 1}) + r(4, []) + r(5, "s"))
    client_seed("out-of-order-dupes", r(5, {}) + r(3, {}) + r(3, {"again": 1}) + r(99, {}) + r(2, None))
    client_seed("errors", line({"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "nope"}})
                + line({"jsonrpc": "2.0", "id": 3, "error": {"code": 1, "message": "m", "data": [1]}})
                + line({"jsonrpc": "2.0", "id": 4, "result": {}, "error": {"code": 1, "message": "both"}})
                + line({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "x"}}))
    client_seed("server-requests", line({"jsonrpc": "2.0", "id": "p", "method": "ping"})
                + line({"jsonrpc": "2.0", "id": 7, "method": "sampling/createMessage"})
                + line({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
                + line([{"jsonrpc": "2.0", "id": 2, "result": {}}, {"jsonrpc": "2.0", "id": "q", "method": "ping"}]))
    client_seed("garbage", b"not json\n\xff\xfe\n" + r(2, {}) + b'{"jsonrpc":"2.0","id":3,"result":{}')
    client_seed("string-ids", r("2", {}) + r(2.0, {}) + r(3, {}))
    client_seed("content-length", b"".join(lsp(json.dumps({"jsonrpc": "2.0", "id": i, "result": {}}))
                                           for i in (2, 3, 4)), framing=1, calls=3)


def main():
    for target in ("codec", "parse", "server_dispatch", "client_replies"):
        shutil.rmtree(os.path.join(HERE, target), ignore_errors=True)
    codec_seeds()
    parse_seeds()
    server_seeds()
    client_seeds()


if __name__ == "__main__":
    main()
