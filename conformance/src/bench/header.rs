//! Reading the `Content-Length: N\r\n\r\n` header in front of each frame, for the load driver
//! and the floor. At window 1 the driver's and the floor's share of a round trip is measured
//! alongside the server's, so the header every peer writes is read without a split into
//! lines; any other header block goes the general way. Both write it with the protocol's
//! [`mcp_protocol::codec::put_plain_header`].

use mcp_protocol::codec::plain_header;

/// The header block at the start of `data`, once its blank line has arrived: the offset of
/// that `\r\n\r\n`, and the `Content-Length` it gives (`None`: none, or not a number).
/// The plain header is read as the server's decoder reads it ([`plain_header`]).
pub(crate) fn read(data: &[u8]) -> Option<(usize, Option<usize>)> {
    if let Some((length, size)) = plain_header(data) {
        return Some((size - 4, Some(length)));
    }
    let end = memchr::memmem::find(data, b"\r\n\r\n")?;
    Some((end, length(&data[..end])))
}

/// The `Content-Length` of a header block: any case, any spacing, among other headers; the
/// last one counts.
fn length(headers: &[u8]) -> Option<usize> {
    let headers = String::from_utf8_lossy(headers);
    let mut length = None;
    for line in headers.split("\r\n") {
        if let Some((k, v)) = line.split_once(':') {
            if k.trim().eq_ignore_ascii_case("content-length") {
                length = v.trim().parse::<usize>().ok();
            }
        }
    }
    length
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_protocol::codec::put_plain_header;

    #[test]
    fn reads_what_it_writes_and_what_the_general_path_reads() {
        for body in [0, 1, 9, 10, 99, 154, 16_531, 999_999_999_999_999] {
            let mut frame = Vec::new();
            put_plain_header(&mut frame, body);
            let end = frame.len() - 4;
            frame.extend_from_slice(b"{}");
            assert_eq!(read(&frame), Some((end, Some(body))), "{body}");
            assert_eq!(plain_header(&frame), Some((body, end + 4)), "{body}");
            assert_eq!(length(&frame[..end]), Some(body), "{body}");
            // Until the blank line has arrived there is no header yet.
            for cut in 0..end + 4 {
                assert_eq!(read(&frame[..cut]), None, "{body} cut at {cut}");
            }
        }
    }

    #[test]
    fn other_header_blocks_take_the_general_path() {
        let cases: [(&[u8], Option<usize>); 7] = [
            (b"content-length:12\r\n\r\n", Some(12)),
            (b"Content-Length:  12 \r\n\r\n", Some(12)),
            (
                b"Content-Type: application/json\r\nContent-Length: 3\r\n\r\n",
                Some(3),
            ),
            // More than 19 digits: read by `parse`, which knows where usize ends.
            (b"Content-Length: 00000000000000000012\r\n\r\n", Some(12)),
            (b"Content-Length: 99999999999999999999\r\n\r\n", None),
            (b"Content-Length: -1\r\n\r\n", None),
            (b"Content-Type: x\r\n\r\n", None),
        ];
        for (data, length) in cases {
            let shown = String::from_utf8_lossy(data);
            assert_eq!(read(data), Some((data.len() - 4, length)), "{shown}");
            assert_eq!(plain_header(data), None, "{shown}");
        }
        assert_eq!(read(b"Content-Length: 12\r\n"), None);
    }
}
