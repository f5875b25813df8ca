//! JSON log records (mirrors `logparse.parse.container`).

use serde_json::value::RawValue;
use std::collections::BTreeMap;

use crate::spec;

/// JSON nested deeper than this is not read as a record (both parsers refuse it alike).
pub const MAX_JSON_DEPTH: usize = 64;

type Object = BTreeMap<String, Box<RawValue>>;

/// What a JSON record says.
#[derive(Debug, Clone)]
pub struct Record {
    pub message: String,
    pub ts: Option<String>,
    pub level: Option<String>,
    pub pid: Option<i64>,
    pub rank: Option<String>,
}

/// The deepest nesting of objects and arrays in `text`, outside strings.
pub fn json_depth(text: &str) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for b in text.bytes() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

fn lookup(obj: &Object, name: &str) -> Option<Box<RawValue>> {
    if let Some(v) = obj.get(name) {
        return Some(v.clone());
    }
    let mut parts = name.split('.');
    let mut node: Box<RawValue> = obj.get(parts.next()?)?.clone();
    for part in parts {
        let inner: Object = serde_json::from_str(node.get()).ok()?;
        node = inner.get(part)?.clone();
    }
    Some(node)
}

/// A scalar as the reference reads it: Some(Ok(text)) for a string or a number (as printed),
/// Some(Err) for a string holding lone surrogates, None for null, booleans, objects, arrays.
fn scalar(raw: &RawValue) -> Option<Result<String, ()>> {
    let text = raw.get();
    match text.as_bytes().first()? {
        b'"' => Some(serde_json::from_str::<String>(text).map_err(|_| ())),
        b'-' | b'0'..=b'9' => Some(Ok(text.to_string())),
        _ => None,
    }
}

fn first(obj: &Object, names: &[String]) -> Option<Result<String, ()>> {
    names.iter().find_map(|name| lookup(obj, name).and_then(|raw| scalar(&raw)))
}

/// The record in `text` (a whole JSON object), or None when it holds no message.
pub fn read_record(text: &str, keys: &spec::Container) -> Option<Record> {
    if !(text.starts_with('{') && text.ends_with('}')) || json_depth(text) > MAX_JSON_DEPTH {
        return None;
    }
    let obj: Object = serde_json::from_str(text).ok()?;
    let message = first(&obj, &keys.message)?.ok()?;
    let message = message.strip_suffix('\n').unwrap_or(&message);
    let message = message.strip_suffix('\r').unwrap_or(message).to_string();
    let text_of = |v: Option<Result<String, ()>>| v.and_then(|r| r.ok()).filter(|s| !s.is_empty());
    let pid = text_of(first(&obj, &keys.pid))
        .filter(|p| p.len() <= 18 && p.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|p| p.parse().ok());
    Some(Record {
        message,
        ts: text_of(first(&obj, &keys.time)),
        level: text_of(first(&obj, &keys.level)),
        pid,
        rank: first(&obj, &keys.rank).and_then(|r| r.ok()),
    })
}
