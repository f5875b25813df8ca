//! Take the envelope off a line, from the outside in (mirrors `logparse.parse.envelope`).

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::container::{read_record, Record};
use crate::firstbyte::{first_bytes, ByteSet};
use crate::regexes::Compiled;
use crate::spec;
use crate::text::{clean_tail, is_word, py_strip, strip_ansi, BLANKS};
use regex::Regex;

pub const MAX_TOKENS: usize = 32;
pub const MAX_RECORDS: usize = 4;
/// The source of a note read from a JSON record.
pub const RECORD: usize = usize::MAX;

/// What one token or record told about the line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Note {
    /// The token that told it (its index in the grammar's tokens), or [`RECORD`] for a JSON record.
    pub source: usize,
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

/// One token: its regex and the groups that give what it tells.
#[derive(Clone)]
struct Token {
    name: String,
    regex: Compiled,
    ts: Vec<usize>,
    level: Vec<usize>,
    rank: Vec<usize>,
    pid: Vec<usize>,
    task: Vec<usize>,
    partial: Option<usize>,
}

/// Peels envelopes with one grammar's tokens.
#[derive(Clone)]
pub struct Peeler {
    tokens: Vec<Token>,
    // `before[k]`: does any token before token k match here (a DFA test, no captures); built the
    // first time token k is the predicted one (a log predicts a few tokens of the grammar's 30)
    before: std::cell::RefCell<Vec<Option<Regex>>>,
    bodies: Vec<String>, // each token's pattern without its anchor and group names
    any: Regex,
    first: ByteSet,
    predicted: std::cell::RefCell<Vec<usize>>,
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
        let mut first = ByteSet::none();
        let mut tokens = Vec::new();
        let mut bodies = Vec::new();
        for t in &spec.tokens {
            let regex = Compiled::new(&t.pattern, &format!("token {}", t.name))?;
            let groups = |name: &str| regex.indices(&t.groups.get(name).cloned().unwrap_or_default());
            first.union(&first_bytes(&t.pattern));
            bodies.push(t.pattern.strip_prefix(r"\A").unwrap_or(&t.pattern).to_string());
            tokens.push(Token {
                name: t.name.clone(),
                ts: groups("ts"),
                level: groups("level"),
                rank: groups("rank"),
                pid: groups("pid"),
                task: groups("task"),
                partial: t.partial.as_ref().and_then(|p| groups(p).last().copied()),
                regex,
            });
        }
        let bodies: Vec<String> = bodies.iter().map(|p| strip_names(p)).collect();
        let any = alternation(&bodies).map_err(|e| format!("tokens: {e}"))?;
        Ok(Peeler {
            any,
            before: std::cell::RefCell::new(vec![None; bodies.len()]),
            bodies,
            tokens,
            first,
            predicted: Default::default(),
            levels: spec.levels.clone(),
            container: spec.container.clone(),
        })
    }

    /// Whether a token before token `k` (grammar order) matches at the start of `text`.
    fn earlier_token_matches(&self, k: usize, text: &str) -> bool {
        if k == 0 {
            return false;
        }
        let mut before = self.before.borrow_mut();
        if before[k].is_none() {
            // a prefix of the alternation `any` compiled: it compiles too (else: assume a match,
            // and the tokens are tried in order)
            match alternation(&self.bodies[..k]) {
                Ok(regex) => before[k] = Some(regex),
                Err(_) => return true,
            }
        }
        before[k].as_ref().is_some_and(|r| r.is_match(text))
    }

    /// The name of a note's source: its token's, or `record`.
    pub fn source_name(&self, source: usize) -> &str {
        self.tokens.get(source).map(|t| t.name.as_str()).unwrap_or("record")
    }

    /// A printed level in upper case, mapped by the grammar's `[levels]`.
    pub fn normal_level(&self, level: Option<&str>) -> Option<String> {
        let level = level.filter(|l| !l.is_empty())?;
        let upper = py_strip(level).to_uppercase();
        Some(self.levels.get(&upper).cloned().unwrap_or(upper))
    }

    /// The first token (grammar order) matching at the start of `text`: its note, its length, and
    /// whether it flags a CRI partial line (Some(true): "P", Some(false): "F"). `step` is the
    /// token's place in this envelope: the token found there on the last line is tried first.
    fn match_token(&self, text: &str, step: Option<usize>) -> Option<(Note, usize, Option<bool>)> {
        let b = *text.as_bytes().first()?;
        if !self.first.contains(b) {
            return None;
        }
        let guess = step.and_then(|s| self.predicted.borrow().get(s).copied());
        if let Some(k) = guess {
            let earlier = self.earlier_token_matches(k, text);
            if !earlier {
                if let Some(found) = self.token_at(k, text) {
                    return Some(found);
                }
            }
        }
        if !self.any.is_match(text) {
            return None;
        }
        for k in 0..self.tokens.len() {
            if let Some(found) = self.token_at(k, text) {
                if let Some(s) = step {
                    let mut predicted = self.predicted.borrow_mut();
                    if predicted.len() <= s {
                        predicted.resize(s + 1, 0);
                    }
                    predicted[s] = k;
                }
                return Some(found);
            }
        }
        None
    }

    fn token_at(&self, k: usize, text: &str) -> Option<(Note, usize, Option<bool>)> {
        let token = &self.tokens[k];
        let spans = token.regex.captures_memo(text)?;
        let end = spans.end();
        if end == 0 {
            return None;
        }
        let note = Note {
            source: k,
            ts: spans.last(text, &token.ts).filter(|t| !t.is_empty()).map(str::to_string),
            level: self.normal_level(spans.last(text, &token.level)),
            rank: spans.last(text, &token.rank).map(str::to_string),
            pid: spans.last(text, &token.pid).filter(|p| !p.is_empty()).and_then(|p| p.parse::<i64>().ok()),
            task: spans.last(text, &token.task).map(str::to_string),
        };
        let partial = token.partial.map(|g| spans.get(g).map(|(s, e)| &text[s..e] == "P").unwrap_or(false));
        Some((note, end, partial))
    }

    fn record_note(&self, record: &Record) -> Note {
        Note {
            source: RECORD,
            ts: record.ts.clone(),
            level: self.normal_level(record.level.as_deref()),
            rank: record.rank.clone(),
            pid: record.pid,
            task: None,
        }
    }

    /// The frame of a line (colour codes already removed); `pending` continues a CRI partial line.
    pub fn peel<'a>(&self, line: Cow<'a, str>, pending: Option<String>) -> Frame<'a> {
        let mut frame =
            Frame { notes: Vec::new(), text: line, text_end: 0, body: (0, 0), outer: 0, partial: false, pending };
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
            let segment = rest.split('\r').rfind(|s| !py_strip(s).is_empty()).unwrap_or("");
            // the segment's offset within the text
            let start = if segment.is_empty() {
                frame.text.len()
            } else {
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
        for step in 0..MAX_TOKENS {
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
            let Some((note, len, flag)) = self.match_token(&text[pos..], Some(step)) else { break };
            let end = pos + len;
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
                // the runtime's layer is outside the text that is searched from now on
                frame.outer = frame.notes.len();
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
            let Some((note, len, _)) = self.match_token(&text[pos..], None) else { break };
            notes.push(note);
            pos += len;
        }
        let mut leftover: Vec<&str> = Vec::new();
        let mut run_start = pos;
        let mut prev: Option<char> = text[..pos].chars().last();
        while pos < text.len() {
            let c = text[pos..].chars().next().expect("char");
            let at_word = pos == 0 || !prev.map(is_word).unwrap_or(false);
            let found = if at_word && c != ' ' && c != '\t' { self.match_token(&text[pos..], None) } else { None };
            match found {
                None => {
                    pos += c.len_utf8();
                    prev = Some(c);
                }
                Some((note, len, _)) => {
                    leftover.push(&text[run_start..pos]);
                    notes.push(note);
                    let end = pos + len;
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

/// The anchored alternation of token bodies (their groups already non-capturing).
fn alternation(bodies: &[String]) -> Result<Regex, regex::Error> {
    Regex::new(&format!(r"\A(?:{})", bodies.join("|")))
}

/// `pattern` with its groups made non-capturing (a DFA test needs no captures).
fn strip_names(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut rest = pattern;
    while let Some(at) = rest.find("(?P<") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 4..];
        let close = after.find('>').map(|c| c + 1).unwrap_or(0);
        out.push_str("(?:");
        rest = &after[close..];
    }
    out.push_str(rest);
    out
}
