//! Codec tests on raw bytes: every split offset, both framings, limits and recovery.
#![allow(clippy::unwrap_used)]

use bytes::BytesMut;
use mcp_protocol::{
    parse, ErrorCode, FrameError, Framing, FramingMode, Incoming, Message, Outgoing, StdioCodec,
};
use tokio_util::codec::{Decoder, Encoder};

/// What a decoded frame looks like, compactly, for comparisons.
#[derive(Debug, PartialEq)]
enum Seen {
    Ok(String),
    Err(ErrorCode, Option<u64>),
}

fn describe(item: Result<Incoming, FrameError>) -> Seen {
    match item {
        Ok(Incoming::Single(m)) => Seen::Ok(serde_json::to_string(&m).unwrap()),
        Ok(Incoming::Batch(items)) => Seen::Ok(format!("batch of {}", items.len())),
        Err(e) => {
            let declared = match e {
                FrameError::TooLarge { declared, .. } => declared,
                _ => None,
            };
            Seen::Err(e.to_error_object().code, declared)
        }
    }
}

/// Feeds `chunks` one after another, then signals EOF, collecting every item.
fn decode_chunks(mut codec: StdioCodec, chunks: &[&[u8]]) -> Vec<Seen> {
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for chunk in chunks {
        buf.extend_from_slice(chunk);
        while let Some(item) = codec.decode(&mut buf).unwrap() {
            out.push(describe(item));
        }
    }
    while let Some(item) = codec.decode_eof(&mut buf).unwrap() {
        out.push(describe(item));
    }
    out
}

/// Decodes `input` whole, then split at every offset into two reads, then byte by byte;
/// all must agree. Returns the items.
fn decode_all_splits(mode: FramingMode, max: usize, input: &[u8]) -> Vec<Seen> {
    let codec = || StdioCodec::new(mode).with_max_message_bytes(max);
    let whole = decode_chunks(codec(), &[input]);
    for at in 0..=input.len() {
        let (a, b) = input.split_at(at);
        assert_eq!(decode_chunks(codec(), &[a, b]), whole, "split at {at}");
    }
    let bytes: Vec<&[u8]> = input.chunks(1).collect();
    assert_eq!(decode_chunks(codec(), &bytes), whole, "byte by byte");
    whole
}

fn lsp(body: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
const UNICODE: &str = r#"{"jsonrpc":"2.0","id":"你好","method":"echo","params":{"t":"🦀 你好"}}"#;
const NOTE: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

fn ok(s: &str) -> Seen {
    Seen::Ok(s.to_owned())
}

#[test]
fn ndjson_multi_frame_stream_at_every_split() {
    let input = format!("{PING}\n{UNICODE}\r\n\n  \r\n{NOTE}\n");
    for mode in [FramingMode::Ndjson, FramingMode::Auto] {
        assert_eq!(
            decode_all_splits(mode, 1 << 20, input.as_bytes()),
            vec![ok(PING), ok(UNICODE), ok(NOTE)]
        );
    }
}

#[test]
fn content_length_multi_frame_stream_at_every_split() {
    let mut input = lsp(PING);
    input.extend(lsp(UNICODE));
    input.extend_from_slice(b"\r\n"); // a stray line ending between frames is tolerated
    input.extend(
        format!(
            "content-type: application/vscode-jsonrpc; charset=utf-8\r\nCONTENT-LENGTH: {}\r\n\r\n{NOTE}",
            NOTE.len()
        )
        .into_bytes(),
    );
    for mode in [FramingMode::ContentLength, FramingMode::Auto] {
        assert_eq!(
            decode_all_splits(mode, 1 << 20, &input),
            vec![ok(PING), ok(UNICODE), ok(NOTE)]
        );
    }
}

#[test]
fn content_length_counts_utf8_bytes_not_chars() {
    let body = r#"{"jsonrpc":"2.0","method":"x","params":{"s":"你好👋"}}"#;
    assert_ne!(body.len(), body.chars().count());
    let input = lsp(body);
    assert!(input.starts_with(format!("Content-Length: {}\r\n", body.len()).as_bytes()));
    assert_eq!(
        decode_all_splits(FramingMode::ContentLength, 1 << 20, &input),
        vec![ok(body)]
    );
    // One byte short: the frame is truncated at EOF, not silently accepted.
    let short = format!("Content-Length: {}\r\n\r\n{body}", body.len() + 1);
    assert_eq!(
        decode_chunks(
            StdioCodec::new(FramingMode::ContentLength),
            &[short.as_bytes()]
        ),
        vec![Seen::Err(ErrorCode::PARSE_ERROR, None)]
    );
}

#[test]
fn ndjson_oversize_reported_once_then_next_frame() {
    let max = 64;
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"{}"}}"#,
        "a".repeat(200)
    );
    let input = format!("{big}\n{PING}\n");
    assert_eq!(
        decode_all_splits(FramingMode::Ndjson, max, input.as_bytes()),
        vec![Seen::Err(ErrorCode::INVALID_REQUEST, None), ok(PING)]
    );
}

#[test]
fn ndjson_limit_is_exact() {
    // Exactly at the limit is accepted (with or without "\r"), one byte over is not.
    let max = PING.len();
    let at = format!("{PING}\n{PING}\r\n");
    assert_eq!(
        decode_all_splits(FramingMode::Ndjson, max, at.as_bytes()),
        vec![ok(PING), ok(PING)]
    );
    let over = format!(" {PING}\n{PING}\n");
    let seen = decode_all_splits(FramingMode::Ndjson, max, over.as_bytes());
    assert_eq!(seen.len(), 2);
    assert!(matches!(seen[0], Seen::Err(ErrorCode::INVALID_REQUEST, _)));
    assert_eq!(seen[1], ok(PING));
}

#[test]
fn ndjson_oversize_never_buffers_more_than_the_limit() {
    let max = 1024;
    let mut codec = StdioCodec::new(FramingMode::Ndjson).with_max_message_bytes(max);
    let mut buf = BytesMut::new();
    let mut errors = 0;
    for _ in 0..1000 {
        buf.extend_from_slice(&[b'x'; 512]);
        while let Some(item) = codec.decode(&mut buf).unwrap() {
            assert!(matches!(item, Err(FrameError::TooLarge { .. })));
            errors += 1;
        }
        assert!(buf.len() <= max + 2 + 512, "buffer grew to {}", buf.len());
    }
    buf.extend_from_slice(format!("tail\n{PING}\n").as_bytes());
    let item = codec.decode(&mut buf).unwrap().unwrap();
    assert_eq!(describe(item), ok(PING));
    assert_eq!(errors, 1, "an over-long line is reported exactly once");
}

#[test]
fn content_length_oversize_is_skipped_without_allocating() {
    let max = 64;
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"{}"}}"#,
        "a".repeat(200)
    );
    let mut input = lsp(&big);
    input.extend(lsp(PING));
    assert_eq!(
        decode_all_splits(FramingMode::ContentLength, max, &input),
        vec![
            Seen::Err(ErrorCode::INVALID_REQUEST, Some(big.len() as u64)),
            ok(PING)
        ]
    );
    // A huge declared length reserves nothing.
    let mut codec = StdioCodec::new(FramingMode::ContentLength);
    let mut buf = BytesMut::from(&b"Content-Length: 9223372036854775807\r\n\r\n{"[..]);
    let item = codec.decode(&mut buf).unwrap().unwrap();
    assert!(matches!(
        item,
        Err(FrameError::TooLarge {
            declared: Some(9223372036854775807),
            ..
        })
    ));
    assert!(buf.capacity() < 4096, "capacity {}", buf.capacity());
}

#[test]
fn content_length_at_limit_and_one_over() {
    let max = PING.len();
    let mut input = lsp(PING);
    input.extend(lsp(&format!(" {PING}")));
    input.extend(lsp(PING));
    assert_eq!(
        decode_all_splits(FramingMode::ContentLength, max, &input),
        vec![
            ok(PING),
            Seen::Err(ErrorCode::INVALID_REQUEST, Some(max as u64 + 1)),
            ok(PING)
        ]
    );
}

#[test]
fn garbage_header_then_good_frame() {
    for garbage in [
        &b"Garbage\r\n\r\n"[..],
        b"Content-Length: abc\r\n\r\n{\"x\":1}",
        b"Content-Length: -1\r\n\r\n",
        b"Content-Length: 18446744073709551616\r\n\r\n",
        b"Content-Type: text/plain\r\n\r\n{}",
        b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
    ] {
        let mut input = lsp(PING);
        input.extend_from_slice(garbage);
        input.extend(lsp(NOTE));
        assert_eq!(
            decode_all_splits(FramingMode::ContentLength, 1 << 20, &input),
            vec![ok(PING), Seen::Err(ErrorCode::PARSE_ERROR, None), ok(NOTE)],
            "{}",
            garbage.escape_ascii()
        );
    }
}

#[test]
fn header_block_is_bounded() {
    let mut codec = StdioCodec::new(FramingMode::ContentLength).with_max_header_bytes(256);
    let mut input = b"Content-Length: 1".to_vec();
    input.extend(std::iter::repeat_n(b'1', 10_000));
    input.extend_from_slice(b"\r\n\r\n");
    input.extend(lsp(PING));
    let seen = decode_chunks(codec.clone(), &[&input]);
    assert_eq!(
        seen,
        vec![Seen::Err(ErrorCode::PARSE_ERROR, None), ok(PING)]
    );
    // Fed slowly, the buffer never holds more than the header limit plus one chunk.
    let mut buf = BytesMut::new();
    for chunk in input[..10_000].chunks(100) {
        buf.extend_from_slice(chunk);
        while codec.decode(&mut buf).unwrap().is_some() {}
        assert!(buf.len() <= 256 + 100);
    }
}

#[test]
fn bad_json_and_bad_shape_are_items_and_decoding_goes_on() {
    let input =
        format!("{{not json\n[]\n{{\"jsonrpc\":\"1.0\",\"id\":9,\"method\":\"x\"}}\n{PING}\n");
    let mut codec = StdioCodec::new(FramingMode::Ndjson);
    let mut buf = BytesMut::from(input.as_bytes());
    let first = codec.decode(&mut buf).unwrap().unwrap();
    assert!(matches!(first, Err(FrameError::Parse(_))));
    let second = codec.decode(&mut buf).unwrap().unwrap();
    assert_eq!(
        second.unwrap_err().to_error_object().code,
        ErrorCode::INVALID_REQUEST
    );
    let third = codec.decode(&mut buf).unwrap().unwrap().unwrap_err();
    assert_eq!(third.request_id(), Some(&9.into()));
    assert_eq!(describe(codec.decode(&mut buf).unwrap().unwrap()), ok(PING));
}

#[test]
fn last_line_without_newline_is_kept_at_eof() {
    assert_eq!(
        decode_chunks(StdioCodec::new(FramingMode::Ndjson), &[PING.as_bytes()]),
        vec![ok(PING)]
    );
}

#[tokio::test]
async fn framed_read_keeps_going_after_bad_frames() {
    use futures::StreamExt;
    let input = format!("garbage\n{}\n{PING}\n", "x".repeat(100));
    let codec = StdioCodec::new(FramingMode::Auto).with_max_message_bytes(50);
    let mut framed = tokio_util::codec::FramedRead::new(input.as_bytes(), codec);
    let mut seen = Vec::new();
    while let Some(item) = framed.next().await {
        seen.push(describe(item.unwrap()));
    }
    assert_eq!(
        seen,
        vec![
            Seen::Err(ErrorCode::PARSE_ERROR, None),
            Seen::Err(ErrorCode::INVALID_REQUEST, None),
            ok(PING)
        ]
    );
}

#[test]
fn auto_mode_answers_in_the_detected_framing() {
    let reply: Message = match parse(PING.as_bytes()).unwrap() {
        Incoming::Single(m) => m,
        _ => unreachable!(),
    };
    // Detected Content-Length: every clone (the writer) encodes with headers.
    let mut reader = StdioCodec::new(FramingMode::Auto);
    let mut writer = reader.clone();
    assert_eq!(writer.framing(), None);
    let mut buf = BytesMut::from(&lsp(PING)[..]);
    reader.decode(&mut buf).unwrap().unwrap().unwrap();
    assert_eq!(writer.framing(), Some(Framing::ContentLength));
    let mut out = BytesMut::new();
    writer
        .encode(Outgoing::from(reply.clone()), &mut out)
        .unwrap();
    assert_eq!(&out[..], &lsp(PING)[..]);

    // Detected newline-delimited: one compact line.
    let mut reader = StdioCodec::new(FramingMode::Auto);
    let mut writer = reader.clone();
    let mut buf = BytesMut::from(format!("{PING}\n").as_bytes());
    reader.decode(&mut buf).unwrap().unwrap().unwrap();
    let mut out = BytesMut::new();
    writer.encode(Outgoing::from(reply), &mut out).unwrap();
    assert_eq!(&out[..], format!("{PING}\n").as_bytes());
}

#[test]
fn encoded_newlines_are_escaped() {
    let mut codec = StdioCodec::new(FramingMode::Ndjson);
    let mut out = BytesMut::new();
    codec
        .encode_value(&serde_json::json!({"text": "a\nb\r\nc\u{2028}"}), &mut out)
        .unwrap();
    assert_eq!(out.iter().filter(|b| **b == b'\n').count(), 1);
    assert_eq!(out.last(), Some(&b'\n'));
    let _ = codec.decode(&mut out);
}

#[test]
fn strict_mode_reports_what_lenient_mode_skips() {
    // Lenient (a server reading its peer): blank lines and a BOM are skipped silently.
    let input = format!("\u{feff}{PING}\n\n{NOTE}\n");
    assert_eq!(
        decode_chunks(StdioCodec::new(FramingMode::Ndjson), &[input.as_bytes()]),
        vec![ok(PING), ok(NOTE)]
    );
    // Strict (a harness judging a peer): each is reported, and no message is lost.
    for at in 0..=input.len() {
        let (a, b) = input.as_bytes().split_at(at);
        assert_eq!(
            decode_chunks(StdioCodec::new(FramingMode::Ndjson).strict(), &[a, b]),
            vec![
                Seen::Err(ErrorCode::PARSE_ERROR, None),
                ok(PING),
                Seen::Err(ErrorCode::PARSE_ERROR, None),
                ok(NOTE)
            ],
            "split at {at}"
        );
    }
    // A stray log line before a Content-Length header is reported; the frame still decodes.
    let mut input = b"INFO:server:starting\r\n".to_vec();
    input.extend(lsp(PING));
    assert_eq!(
        decode_chunks(StdioCodec::new(FramingMode::ContentLength), &[&input]),
        vec![ok(PING)]
    );
    assert_eq!(
        decode_chunks(
            StdioCodec::new(FramingMode::ContentLength).strict(),
            &[&input]
        ),
        vec![Seen::Err(ErrorCode::PARSE_ERROR, None), ok(PING)]
    );
}

/// Bytes that are not a frame, run into the next header: reported once (-32700), and the
/// frame behind them still decodes, however the input is split.
#[test]
fn stray_bytes_before_a_header_lose_no_frame() {
    let err = || Seen::Err(ErrorCode::PARSE_ERROR, None);
    let cat = |parts: &[&[u8]]| parts.concat();
    let cases: Vec<(&str, Vec<u8>, Vec<Seen>)> = vec![
        (
            "Content-Length 0, then an undeclared body",
            cat(&[b"Content-Length: 0\r\n\r\n", PING.as_bytes(), &lsp(NOTE)]),
            vec![err(), err(), ok(NOTE)],
        ),
        (
            "Content-Length shorter than the body",
            cat(&[b"Content-Length: 30\r\n\r\n", PING.as_bytes(), &lsp(NOTE)]),
            vec![err(), err(), ok(NOTE)],
        ),
        (
            "garbage between frames",
            cat(&[&lsp(PING), b"xyz", &lsp(NOTE)]),
            vec![ok(PING), err(), ok(NOTE)],
        ),
        (
            "NUL bytes before a frame",
            cat(&[&lsp(PING), b"\0\0\0", &lsp(NOTE)]),
            vec![ok(PING), err(), ok(NOTE)],
        ),
        (
            "an NDJSON line before a frame",
            cat(&[&lsp(PING), PING.as_bytes(), b"\n", &lsp(NOTE)]),
            vec![ok(PING), err(), ok(NOTE)],
        ),
        (
            "two NDJSON lines before a frame",
            cat(&[PING.as_bytes(), b"\r\n", PING.as_bytes(), b"\n", &lsp(NOTE)]),
            vec![err(), ok(NOTE)],
        ),
        (
            "a header whose name is not a token",
            cat(&[&lsp(PING), b"X Y: 1\r\n", &lsp(NOTE)]),
            vec![ok(PING), err(), ok(NOTE)],
        ),
        (
            // The block ends at the blank line and holds no Content-Length: resync skips "b".
            "stray bytes that contain a blank line",
            cat(&[&lsp(PING), b"a\n\nb", &lsp(NOTE)]),
            vec![ok(PING), err(), ok(NOTE)],
        ),
        (
            "stray bytes, then input ends",
            cat(&[&lsp(PING), b"xyz"]),
            vec![ok(PING), err()],
        ),
    ];
    for (name, input, expected) in cases {
        assert_eq!(
            decode_all_splits(FramingMode::ContentLength, 1 << 20, &input),
            expected,
            "{name}"
        );
        if input.starts_with(b"Content-Length") {
            assert_eq!(
                decode_all_splits(FramingMode::Auto, 1 << 20, &input),
                expected,
                "{name} (auto)"
            );
        }
        // A strict reader (a harness) loses no frame either.
        let strict = || StdioCodec::new(FramingMode::ContentLength).strict();
        let whole = decode_chunks(strict(), &[&input]);
        assert_eq!(whole.last(), expected.last(), "{name} (strict)");
        for at in 0..=input.len() {
            let (a, b) = input.split_at(at);
            assert_eq!(
                decode_chunks(strict(), &[a, b]),
                whole,
                "{name} (strict), split at {at}"
            );
        }
    }
}

/// Bad values in a real Content-Length header keep their error and resync as before.
#[test]
fn bad_content_length_values_still_skip_their_block() {
    for bad in [
        &b"Content-Length: -1\r\n\r\n"[..],
        b"Content-Length: abc\r\n\r\n",
        b"Content-Length: 18446744073709551616\r\n\r\n",
        b"Content-Length: 2\r\ncontent-length: 2\r\n\r\n",
    ] {
        let mut input = bad.to_vec();
        input.extend(lsp(NOTE));
        let seen = decode_all_splits(FramingMode::ContentLength, 1 << 20, &input);
        assert_eq!(
            seen,
            vec![Seen::Err(ErrorCode::PARSE_ERROR, None), ok(NOTE)],
            "{}",
            bad.escape_ascii()
        );
    }
}

/// The Content-Length encoder leaves room for a header as wide as the last one; bodies whose
/// length has more or fewer digits than the last (9 -> 10 -> 100 000 -> 99 bytes ...) must
/// still get exactly `Content-Length: N\r\n\r\n` and the body, with nothing left between.
#[test]
fn content_length_headers_are_exact_as_body_lengths_change_width() {
    use mcp_protocol::{RequestId, Response};
    let mut writer = StdioCodec::new(FramingMode::ContentLength);
    let mut out = BytesMut::new();
    let mut expected = Vec::new();
    // `{"jsonrpc":"2.0","id":1,"result":"…"}` is 36 bytes around the string's contents.
    for body_len in [
        40,
        99,
        100,
        999,
        1000,
        100_000,
        99,
        36 + 9,
        1_000_001,
        100,
        100,
    ] {
        let reply = Response::success(RequestId::from(1u64), "x".repeat(body_len - 36).into());
        let body =
            serde_json::to_vec(&Message::<serde_json::Value>::Response(reply.clone())).unwrap();
        assert_eq!(body.len(), body_len);
        expected.extend_from_slice(format!("Content-Length: {body_len}\r\n\r\n").as_bytes());
        expected.extend_from_slice(&body);
        writer.encode(Outgoing::from(reply), &mut out).unwrap();
        assert_eq!(out.len(), expected.len());
    }
    assert!(out[..] == expected[..], "encoded frames differ");
}

/// The header the Content-Length encoders write, and peers that frame for themselves (the
/// bench, `mcp-bench`): `Content-Length: N\r\n\r\n`, N in decimal, appended.
#[test]
fn put_plain_header_appends_the_header_for_any_length() {
    let written = |body: usize| {
        let mut out = b"x".to_vec();
        mcp_protocol::codec::put_plain_header(&mut out, body);
        out
    };
    assert_eq!(written(0), b"xContent-Length: 0\r\n\r\n");
    assert_eq!(written(7), b"xContent-Length: 7\r\n\r\n");
    assert_eq!(written(154), b"xContent-Length: 154\r\n\r\n");
    assert_eq!(written(16_531), b"xContent-Length: 16531\r\n\r\n");
    assert_eq!(
        written(usize::MAX),
        format!("xContent-Length: {}\r\n\r\n", usize::MAX).as_bytes()
    );
}
