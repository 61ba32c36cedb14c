//! JSON text written token by token, for the property tests that hold `parse_as`'s fast path
//! (`mcp_protocol::scan`) to serde_json's path: members in any order, repeated or unknown,
//! whitespace between tokens, every kind of string escape, and the numbers, literals and
//! near-misses the fast path must leave to serde_json. Included with `#[path]` by
//! `protocol/tests/props.rs` and `server/tests/props.rs`.

use proptest::prelude::*;

/// Nothing, JSON whitespace, or a form feed (which JSON does not allow).
fn ws() -> impl Strategy<Value = String> {
    prop_oneof![
        60 => Just(String::new()),
        20 => "[ \t\r\n]{1,3}",
        1 => Just("\u{c}".to_owned()),
    ]
}

/// String pieces with escapes, and characters that need none.
const ESCAPED: &[&str] = &[
    r#"\""#,
    r"\\",
    r"\/",
    r"\b\f\n\r\t",
    r"\u00e9\u00E9\u0000\u001f\u2028",
    r"\uD83E\uDD80",
    "\u{7f}é🦀\u{2028}",
];

/// String pieces that are not JSON: lone surrogates, short or bad escapes, raw control
/// characters.
const NOT_JSON: &[&str] = &[
    r"\ud800",
    r"\udc00",
    r"\uD800\u0041",
    r"\uD800\uD800",
    r"\u12",
    r"\u12g4",
    r"\x",
    "\u{1}",
    "\t",
];

/// A string literal's text, quotes included, from pieces that are plain, escaped, or not
/// JSON at all.
pub fn string() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        40 => "[a-z/ .]{0,6}",
        8 => prop::sample::select(ESCAPED).prop_map(str::to_owned),
        1 => prop::sample::select(NOT_JSON).prop_map(str::to_owned),
        1 => "[a-z]{30,70}",
    ];
    (
        prop::collection::vec(piece, 0..4),
        prop_oneof![40 => Just(true), 1 => Just(false)],
    )
        .prop_map(|(pieces, closed)| {
            let quote = if closed { "\"" } else { "" };
            format!("\"{}{quote}", pieces.concat())
        })
}

/// A number's text: integers of every length and sign, and what the fast path leaves to
/// serde_json (`-0`, leading zeros, fractions, exponents, integers past 18 digits) or is not a
/// number.
pub fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        40 => "-?[1-9][0-9]{0,17}",
        6 => "-?[1-9][0-9]{17,21}",
        6 => Just("0".to_owned()),
        1 => Just("-0".to_owned()),
        1 => Just("007".to_owned()),
        3 => "-?[0-9]{1,3}\\.[0-9]{1,3}",
        3 => "-?[1-9][eE][+-]?[0-9]{1,2}",
        1 => Just("9223372036854775807".to_owned()),
        1 => Just("-9223372036854775808".to_owned()),
        1 => Just("18446744073709551615".to_owned()),
        1 => Just("12.".to_owned()),
        1 => Just("-".to_owned()),
        1 => Just("+1".to_owned()),
    ]
}

/// Any value's text, a few levels deep, with stray and trailing commas now and then.
pub fn value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        12 => string(),
        12 => number(),
        4 => Just("true".to_owned()),
        4 => Just("false".to_owned()),
        4 => Just("null".to_owned()),
        1 => Just("nul".to_owned()),
        1 => Just("tru e".to_owned()),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        let comma = prop_oneof![40 => Just(""), 1 => Just(",")];
        prop_oneof![
            (
                prop::collection::vec((ws(), inner.clone(), ws()), 0..4),
                comma.clone()
            )
                .prop_map(|(items, trailing)| {
                    let items: Vec<String> = items
                        .into_iter()
                        .map(|(a, v, b)| format!("{a}{v}{b}"))
                        .collect();
                    format!("[{}{trailing}]", items.join(","))
                }),
            (
                prop::collection::vec((ws(), member_name(), ws(), inner, ws()), 0..4),
                comma
            )
                .prop_map(|(members, trailing)| {
                    let members: Vec<String> = members
                        .into_iter()
                        .map(|(a, k, b, v, c)| format!("{a}{k}{b}:{v}{c}"))
                        .collect();
                    format!("{{{}{trailing}}}", members.join(","))
                }),
        ]
    })
}

/// A member name: the ones messages and `tools/call` params use (sometimes escaped), or any.
fn member_name() -> impl Strategy<Value = String> {
    prop_oneof![
        1 => Just(r#""name""#.to_owned()),
        1 => Just(r#""arguments""#.to_owned()),
        1 => Just(r#""text""#.to_owned()),
        1 => Just(r#""_meta""#.to_owned()),
        2 => string(),
    ]
}

/// The text of something shaped like a request or notification, usually one the fast path
/// reads, each member sometimes ill-typed, repeated, escaped, misplaced or extra.
pub fn message() -> impl Strategy<Value = String> {
    let jsonrpc = prop_oneof![
        16 => Just(r#""2.0""#.to_owned()),
        1 => Just(r#""2\u002e0""#.to_owned()),
        1 => Just(r#""1.0""#.to_owned()),
        1 => Just("2".to_owned()),
    ];
    let id = prop_oneof![
        8 => number(),
        4 => string(),
        1 => Just("null".to_owned()),
        1 => Just("{}".to_owned()),
    ];
    let method = prop_oneof![
        8 => Just(r#""tools/call""#.to_owned()),
        1 => Just(r#""tools\/call""#.to_owned()),
        1 => Just(r#""ping""#.to_owned()),
        2 => string(),
        1 => Just("5".to_owned()),
    ];
    let params = prop_oneof![
        3 => (value(), value(), value()).prop_map(|(name, args, meta)| format!(
            r#"{{"name":{name},"arguments":{args},"_meta":{meta}}}"#
        )),
        3 => string().prop_map(|t| format!(r#"{{"name":"echo","arguments":{{"text":{t}}}}}"#)),
        3 => (value(), value(), value(), value()).prop_map(|(a, b, m, n)| format!(
            r#"{{"arguments":{a},"_meta":{m},"name":"echo","arguments":{b},"_meta":{n}}}"#
        )),
        3 => value(),
    ];
    let member = |name: &'static str, value: BoxedStrategy<String>| prop_oneof![8 => value.prop_map(move |v| Some((name.to_owned(), v))), 1 => Just(None)];
    (
        member(r#""jsonrpc""#, jsonrpc.boxed()),
        member(r#""id""#, id.boxed()),
        member(r#""method""#, method.boxed()),
        member(r#""params""#, params.boxed()),
        prop_oneof![
            30 => Just(None),
            1 => (member_name(), value()).prop_map(Some),
            1 => Just(Some((r#""result""#.to_owned(), "{}".to_owned()))),
            1 => Just(Some((r#""\u006dethod""#.to_owned(), r#""ping""#.to_owned()))),
            1 => Just(Some((r#""id""#.to_owned(), "1".to_owned()))),
            1 => Just(Some((r#""params""#.to_owned(), "null".to_owned()))),
        ],
        any::<u64>(),
        prop::collection::vec(ws(), 12),
        prop_oneof![40 => Just(String::new()), 1 => Just(" x".to_owned()), 1 => Just("}".to_owned())],
    )
        .prop_map(|(a, b, c, d, e, seed, ws, tail)| {
            let mut members: Vec<(String, String)> = [a, b, c, d, e].into_iter().flatten().collect();
            // A shuffle from the seed, so proptest can shrink the rest independently.
            let mut s = seed;
            for i in (1..members.len()).rev() {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                members.swap(i, (s >> 33) as usize % (i + 1));
            }
            let mut ws = ws.into_iter().cycle();
            let mut next_ws = move || ws.next().unwrap_or_default();
            let members: Vec<String> = members
                .into_iter()
                .map(|(k, v)| format!("{}{k}{}:{}{v}{}", next_ws(), next_ws(), next_ws(), next_ws()))
                .collect();
            format!("{}{{{}}}{}{tail}", next_ws(), members.join(","), next_ws())
        })
}
