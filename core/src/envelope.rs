//! Take the envelope off a line, from the outside in (mirrors `logparse.parse.envelope`).

use regex::{Captures, Regex};
use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::container::{read_record, Record};
use crate::firstbyte::{first_bytes, ByteSet};
use crate::spec;
use crate::text::{clean_tail, is_word, py_strip, strip_ansi, BLANKS};

pub const MAX_TOKENS: usize = 32;
pub const MAX_RECORDS: usize = 4;

/// What one token or record told about the line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Note {
    pub ts: Option<String>,
    pub level: Option<String>,
    pub rank: Option<String>,
    pub pid: Option<i64>,
    pub task: Option<String>,
}

/// A line with its envelope read. `body` and `text_end` index into `text`.
#[derive(Debug)]
pub struct Frame<'a> {
    pub notes: Vec<Note>,
    pub text: Cow<'a, str>,
    pub text_end: usize,
    pub body: (usize, usize),
    pub outer: usize,
    pub partial: bool,
    pub pending: Option<String>,
}

impl Frame<'_> {
    /// The message.
    pub fn body(&self) -> &str {
        &self.text[self.body.0..self.body.1]
    }

    /// The text the message was found in (cleaned of its tail).
    pub fn search_text(&self) -> &str {
        &self.text[..self.text_end]
    }
}

struct Token {
    regex: Regex,
    first: ByteSet,
    ts: Vec<String>,
    level: Vec<String>,
    rank: Vec<String>,
    pid: Vec<String>,
    task: Vec<String>,
    partial: Option<String>,
}

fn aliases(groups: &BTreeMap<String, Vec<String>>, name: &str) -> Vec<String> {
    groups.get(name).cloned().unwrap_or_default()
}

/// The last group of `names` that captured (a field given by several groups).
pub fn last_capture<'t>(caps: &Captures<'t>, names: &[String]) -> Option<&'t str> {
    names.iter().rev().find_map(|n| caps.name(n)).map(|m| m.as_str())
}

/// Peels envelopes with one grammar's tokens.
pub struct Peeler {
    tokens: Vec<Token>,
    levels: BTreeMap<String, String>,
    container: spec::Container,
}

/// The state of peeling one text (its position, the records read so far).
struct Step {
    pos: usize,
    records: usize,
    again: bool,
}

impl Peeler {
    pub fn new(spec: &spec::Spec) -> Result<Peeler, String> {
        let mut tokens = Vec::new();
        for t in &spec.tokens {
            let regex = Regex::new(&t.pattern).map_err(|e| format!("token {}: {e}", t.name))?;
            tokens.push(Token {
                first: first_bytes(&t.pattern),
                regex,
                ts: aliases(&t.groups, "ts"),
                level: aliases(&t.groups, "level"),
                rank: aliases(&t.groups, "rank"),
                pid: aliases(&t.groups, "pid"),
                task: aliases(&t.groups, "task"),
                partial: t.partial.as_ref().map(|p| aliases(&t.groups, p)).and_then(|v| v.last().cloned()),
            });
        }
        Ok(Peeler { tokens, levels: spec.levels.clone(), container: spec.container.clone() })
    }

    /// A printed level in upper case, mapped by the grammar's `[levels]`.
    pub fn normal_level(&self, level: Option<&str>) -> Option<String> {
        let level = level.filter(|l| !l.is_empty())?;
        let upper = py_strip(level).to_uppercase();
        Some(self.levels.get(&upper).cloned().unwrap_or(upper))
    }

    /// The first token (grammar order) matching at the start of `text`, with its captures.
    fn match_token<'t>(&self, text: &'t str) -> Option<(&Token, Captures<'t>)> {
        let b = *text.as_bytes().first()?;
        for token in &self.tokens {
            if !token.first.contains(b) {
                continue;
            }
            if let Some(caps) = token.regex.captures(text) {
                if caps.get(0).map(|m| m.end()).unwrap_or(0) > 0 {
                    return Some((token, caps));
                }
            }
        }
        None
    }

    fn note(&self, token: &Token, caps: &Captures<'_>) -> Note {
        Note {
            ts: last_capture(caps, &token.ts).filter(|t| !t.is_empty()).map(str::to_string),
            level: self.normal_level(last_capture(caps, &token.level)),
            rank: last_capture(caps, &token.rank).map(str::to_string),
            pid: last_capture(caps, &token.pid).filter(|p| !p.is_empty()).and_then(|p| p.parse::<i64>().ok()),
            task: last_capture(caps, &token.task).map(str::to_string),
        }
    }

    fn record_note(&self, record: &Record) -> Note {
        Note {
            ts: record.ts.clone(),
            level: self.normal_level(record.level.as_deref()),
            rank: record.rank.clone(),
            pid: record.pid,
            task: None,
        }
    }

    /// The frame of a line (colour codes already removed); `pending` continues a CRI partial line.
    pub fn peel<'a>(&self, line: Cow<'a, str>, pending: Option<String>) -> Frame<'a> {
        let mut frame = Frame {
            notes: Vec::new(), text: line, text_end: 0, body: (0, 0), outer: 0, partial: false, pending,
        };
        let mut records = 0;
        let mut step;
        loop {
            step = self.take_tokens(&mut frame, records, true);
            records = step.records;
            if frame.partial {
                return frame;
            }
            if !step.again {
                break;
            }
        }
        let mut pos = step.pos;
        if frame.text[pos..].contains('\r') {
            let rest = &frame.text[pos..];
            let segment = rest.split('\r').filter(|s| !py_strip(s).is_empty()).last().unwrap_or("");
            // the segment's offset within the text
            let start = if segment.is_empty() { frame.text.len() } else {
                segment.as_ptr() as usize - frame.text.as_ptr() as usize
            };
            let end = start + segment.len();
            frame.text = match std::mem::take(&mut frame.text) {
                Cow::Borrowed(t) => Cow::Borrowed(&t[start..end]),
                Cow::Owned(t) => Cow::Owned(t[start..end].to_string()),
            };
            frame.outer = frame.notes.len();
            let s = self.take_tokens(&mut frame, records, false);
            pos = s.pos;
        }
        let text_end = clean_tail(&frame.text).len();
        let body_len = clean_tail(&frame.text[pos..]).len();
        frame.text_end = text_end;
        frame.body = (pos, pos + body_len);
        frame.pending = None;
        frame
    }

    /// Take tokens off `frame.text` from its start (a record replaces the text: `again`).
    fn take_tokens(&self, frame: &mut Frame<'_>, records: usize, records_allowed: bool) -> Step {
        let mut pos = 0;
        for _ in 0..MAX_TOKENS {
            let text: &str = &frame.text;
            let bytes = text.as_bytes();
            while pos < bytes.len() && (bytes[pos] == b' ' || bytes[pos] == b'\t') {
                pos += 1;
            }
            if pos >= bytes.len() {
                break;
            }
            if bytes[pos] == b'{' && records_allowed && records < MAX_RECORDS {
                let candidate = text[pos..].trim_end_matches(BLANKS);
                if let Some(record) = read_record(candidate, &self.container) {
                    frame.notes.push(self.record_note(&record));
                    frame.outer = frame.notes.len();
                    let message = record.message.replace("\r\n", "\r").replace('\n', "\r");
                    frame.text = Cow::Owned(strip_ansi(&message).into_owned());
                    return Step { pos: 0, records: records + 1, again: true };
                }
            }
            let Some((token, caps)) = self.match_token(&text[pos..]) else { break };
            let note = self.note(token, &caps);
            let end = pos + caps.get(0).map(|m| m.end()).unwrap_or(0);
            let flag = token.partial.as_ref().map(|g| caps.name(g).map(|m| m.as_str() == "P").unwrap_or(false));
            frame.notes.push(note);
            pos = end;
            if let Some(is_partial) = flag {
                let rest = format!("{}{}", frame.pending.take().unwrap_or_default(), &frame.text[pos..]);
                if is_partial {
                    frame.partial = true;
                    frame.pending = Some(rest.clone());
                    frame.text = Cow::Owned(rest);
                    return Step { pos: 0, records, again: false };
                }
                frame.text = Cow::Owned(rest);
                pos = 0;
            }
        }
        Step { pos, records, again: false }
    }

    /// The notes of the text before a found message, and what no token explains.
    pub fn scan(&self, text: &str) -> (Vec<Note>, Option<String>) {
        let mut notes = Vec::new();
        let bytes = text.as_bytes();
        let mut pos = 0;
        loop {
            while pos < bytes.len() && (bytes[pos] == b' ' || bytes[pos] == b'\t') {
                pos += 1;
            }
            if pos >= bytes.len() {
                break;
            }
            let Some((token, caps)) = self.match_token(&text[pos..]) else { break };
            notes.push(self.note(token, &caps));
            pos += caps.get(0).map(|m| m.end()).unwrap_or(0);
        }
        let mut leftover: Vec<&str> = Vec::new();
        let mut run_start = pos;
        let mut prev: Option<char> = text[..pos].chars().last();
        while pos < text.len() {
            let c = text[pos..].chars().next().expect("char");
            let at_word = pos == 0 || !prev.map(is_word).unwrap_or(false);
            let found = if at_word && c != ' ' && c != '\t' { self.match_token(&text[pos..]) } else { None };
            match found {
                None => {
                    pos += c.len_utf8();
                    prev = Some(c);
                }
                Some((token, caps)) => {
                    leftover.push(&text[run_start..pos]);
                    notes.push(self.note(token, &caps));
                    let end = pos + caps.get(0).map(|m| m.end()).unwrap_or(0);
                    prev = text[..end].chars().last();
                    pos = end;
                    run_start = pos;
                }
            }
        }
        leftover.push(&text[run_start..]);
        let parts: Vec<&str> = leftover.iter().map(|p| p.trim_matches(BLANKS)).filter(|p| !p.is_empty()).collect();
        let prefix = parts.join(" ");
        (notes, if prefix.is_empty() { None } else { Some(prefix) })
    }
}
