//! What is done to a line's text around its envelope (mirrors `logparse.parse.text`).

use regex::Regex;
use std::borrow::Cow;
use std::sync::OnceLock;

pub const BLANKS: [char; 2] = [' ', '\t'];

fn ansi_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Za-z0-9]|\x1b[=>]|\^\[\[[0-9;]*[A-Za-z]|\[(?:[01];)?(?:3[0-7]|9[0-7]|0|1|0;0)m",
        )
        .expect("ANSI regex")
    })
}

fn ray_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"[ \t]*\[repeated [0-9]{1,12}x across cluster\]\z").expect("Ray regex"))
}

/// Whether `bytes` may hold a sequence `ansi_re` removes: an ESC, a caret-escaped `^[[`, or a `[`
/// followed by digits and `;` up to an `m` (the ESC-less colour codes some log pipes leave).
/// Most lines hold a `[` (a bracketed stamp, a file:line), never such a sequence.
fn may_hold_ansi(bytes: &[u8]) -> bool {
    if memchr::memchr(0x1b, bytes).is_some() {
        return true;
    }
    memchr::memchr_iter(b'[', bytes).any(|at| {
        if at > 0 && bytes[at - 1] == b'^' {
            return true;
        }
        let rest = &bytes[at + 1..];
        let run = rest.iter().take_while(|b| b.is_ascii_digit() || **b == b';').count();
        run > 0 && rest.get(run) == Some(&b'm')
    })
}

/// Remove terminal colour and control sequences.
pub fn strip_ansi(text: &str) -> Cow<'_, str> {
    if !may_hold_ansi(text.as_bytes()) {
        return Cow::Borrowed(text);
    }
    ansi_re().replace_all(text, "")
}

/// The first `limit` characters of `text`.
pub fn cut_chars(text: &str, limit: usize) -> &str {
    if text.len() <= limit {
        return text;
    }
    match text.char_indices().nth(limit) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

fn rstrip_blanks(text: &str) -> &str {
    text.trim_end_matches(BLANKS)
}

/// `text` without Ray's repeat note, a terminal border and trailing blanks.
pub fn clean_tail(text: &str) -> &str {
    let mut text = rstrip_blanks(text);
    if let Some(stripped) = text.strip_suffix('\u{2502}') {
        text = rstrip_blanks(stripped);
    }
    if text.ends_with(" across cluster]") {
        // the last 64 characters, as the reference parser looks at them
        let start = text.char_indices().rev().nth(63).map(|(i, _)| i).unwrap_or(0);
        let tail = &text[start..];
        if let Some(m) = ray_re().find(tail) {
            text = rstrip_blanks(&text[..start + m.start()]);
        }
    }
    text
}

/// Python's `str.isspace` for one character (`str.strip()` with no argument).
pub fn py_is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str.strip()` with no argument.
pub fn py_strip(text: &str) -> &str {
    text.trim_matches(py_is_space)
}

/// Python's `text[:1].isascii() and (isalnum() or == "_")` for one character.
pub fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Characters that reorder or hide text (bidi embeddings, overrides and isolates, marks,
/// line/paragraph separators, BOM).
pub fn is_format_control(c: u32) -> bool {
    matches!(c, 0x061C | 0x200E | 0x200F | 0x2028 | 0x2029 | 0xFEFF | 0x202A..=0x202E | 0x2066..=0x2069)
}

/// `text` with every control character shown as an escape (`\x1b`, `\n`, `\u202e`); tabs are kept
/// (as `logparse.escape.for_terminal` shows text from elsewhere: a file name, a log line).
pub fn for_terminal(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| {
        let code = c as u32;
        code != 0x09 && (code < 0x20 || (0x7F..=0x9F).contains(&code) || is_format_control(code))
    };
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !unsafe_char(c) {
            out.push(c);
            continue;
        }
        match c as u32 {
            0x0A => out.push_str("\\n"),
            0x0D => out.push_str("\\r"),
            code if code <= 0xFF => out.push_str(&format!("\\x{code:02x}")),
            code => out.push_str(&format!("\\u{code:04x}")),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_colour_and_tails() {
        assert_eq!(strip_ansi("\x1b[1;36m(APIServer pid=1)\x1b[0;0m INFO"), "(APIServer pid=1) INFO");
        assert_eq!(strip_ansi("[1;36m(A pid=1)[0;0m x"), "(A pid=1) x");
        assert_eq!(clean_tail("msg   \u{2502}  "), "msg");
        assert_eq!(clean_tail("msg [repeated 7x across cluster]"), "msg");
        assert_eq!(cut_chars("héllo", 2), "hé");
    }

    #[test]
    fn the_prefilter_never_skips_a_sequence_the_regex_removes() {
        let cases = ["[2026-07-28 17:07:44] x", "a [0m b", "^[[32mx", "[12;3", "[1;36mx", "[5]", "\x1b", "[m", "[97m"];
        for text in cases {
            assert_eq!(strip_ansi(text), ansi_re().replace_all(text, ""), "{text}");
        }
        assert!(matches!(strip_ansi("[2026-07-28 17:07:44 TP0] Decode batch"), Cow::Borrowed(_)));
    }
}
