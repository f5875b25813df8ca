//! `ingest --format jsonl`: every event as one JSON line, in line order, a block at a time.
//!
//! A line holds the event's kind, the common columns (null when absent), `time` as ISO-8601 UTC,
//! then the fields the line gave (a field left empty is left out), written as Python's
//! `json.dumps(ensure_ascii=False)` writes them, with the characters a terminal could act on (DEL,
//! C1, bidi and other format controls) as `\uXXXX` (`logparse.escape.json_line`). Until the log's
//! dates are settled the lines wait in a temporary file: a restart must not print them twice.

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type, TimestampMicrosecondType};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::DataType;
use std::fmt::Write as _;
use std::io::{Read, Seek, SeekFrom, Write};

use crate::error::{Error, Result};
use crate::time::Date;
use crate::values::py_float_repr;
use crate::write::Sink;

/// The columns every line carries, in this order, null or not (`kind` first).
const COMMON: [&str; 11] =
    ["line_no", "ts", "time", "outer_ts", "engine", "rank", "pid", "level", "task", "prefix", "rule"];

/// Where the text goes (a Python stream's `write`, a file).
pub type Output = Box<dyn FnMut(&str) -> Result<()> + Send>;

/// The JSON-lines sink.
pub struct JsonlSink {
    out: Output,
    pending: Vec<(i64, String)>,
    held: Option<std::fs::File>,
    live: bool,
}

impl JsonlSink {
    /// A sink writing to `out`.
    pub fn new(out: Output) -> JsonlSink {
        JsonlSink { out, pending: Vec::new(), held: None, live: false }
    }

    fn release(&mut self) -> Result<()> {
        if let Some(mut held) = self.held.take() {
            let spool = |e| Error::Write { path: "spool".into(), source: e };
            held.seek(SeekFrom::Start(0)).map_err(spool)?;
            let mut text = String::new();
            loop {
                text.clear();
                let mut chunk = vec![0u8; 1 << 20];
                let n = held.read(&mut chunk).map_err(spool)?;
                if n == 0 {
                    break;
                }
                chunk.truncate(n);
                // the spool holds whole lines written as UTF-8: cut only after a newline
                let cut = memchr::memrchr(b'\n', &chunk).map(|i| i + 1).unwrap_or(n);
                if cut < n {
                    held.seek(SeekFrom::Current(-((n - cut) as i64))).map_err(spool)?;
                }
                text.push_str(std::str::from_utf8(&chunk[..cut]).map_err(|e| Error::Callback(e.to_string()))?);
                (self.out)(&text)?;
            }
        }
        Ok(())
    }
}

impl Sink for JsonlSink {
    fn add(&mut self, kind: &str, batch: RecordBatch) -> Result<()> {
        let schema = batch.schema();
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        let column = |name: &str| names.iter().position(|n| *n == name);
        let common: Vec<Option<usize>> = COMMON.iter().map(|n| column(n)).collect();
        let fields: Vec<usize> = (0..names.len()).filter(|i| !COMMON.contains(&names[*i])).collect();
        let line_no = common[0].map(|c| batch.column(c).as_primitive::<Int64Type>().clone());
        for row in 0..batch.num_rows() {
            let mut text = String::with_capacity(256);
            text.push_str("{\"kind\": ");
            string(&mut text, kind);
            for (name, col) in COMMON.iter().zip(&common) {
                text.push_str(", ");
                string(&mut text, name);
                text.push_str(": ");
                match col {
                    Some(c) => value(&mut text, batch.column(*c), row),
                    None => text.push_str("null"),
                }
            }
            for &c in &fields {
                let array = batch.column(c);
                if array.is_null(row) {
                    continue;
                }
                text.push_str(", ");
                string(&mut text, names[c]);
                text.push_str(": ");
                value(&mut text, array, row);
            }
            text.push_str("}\n");
            let at = line_no.as_ref().map(|l| l.value(row)).unwrap_or(0);
            self.pending.push((at, text));
        }
        Ok(())
    }

    fn end_block(&mut self) -> Result<()> {
        self.pending.sort_by_key(|(line_no, _)| *line_no);
        let text: String = self.pending.drain(..).map(|(_, t)| t).collect();
        if text.is_empty() {
            return Ok(());
        }
        if self.live {
            return (self.out)(&text);
        }
        if self.held.is_none() {
            self.held = Some(tempfile::tempfile().map_err(|e| Error::Write { path: "spool".into(), source: e })?);
        }
        let held = self.held.as_mut().expect("held lines");
        held.write_all(text.as_bytes()).map_err(|e| Error::Write { path: "spool".into(), source: e })
    }

    fn settle(&mut self) -> Result<()> {
        if !self.live {
            self.release()?;
            self.live = true;
        }
        Ok(())
    }

    fn close(&mut self) -> Result<Vec<String>> {
        self.end_block()?;
        self.release()?;
        self.live = true;
        Ok(Vec::new())
    }

    fn abort(&mut self) {
        self.pending.clear();
        self.held = None;
    }
}

/// Row `row` of `array` as JSON.
fn value(out: &mut String, array: &ArrayRef, row: usize) {
    if array.is_null(row) {
        out.push_str("null");
        return;
    }
    match array.data_type() {
        DataType::Int64 => {
            let _ = write!(out, "{}", array.as_primitive::<Int64Type>().value(row));
        }
        DataType::Float64 => float(out, array.as_primitive::<Float64Type>().value(row)),
        DataType::Boolean => out.push_str(if array.as_boolean().value(row) { "true" } else { "false" }),
        DataType::Utf8 => string(out, array.as_string::<i32>().value(row)),
        DataType::Timestamp(_, _) => {
            let us = array.as_primitive::<TimestampMicrosecondType>().value(row);
            string(out, &iso_micros(us));
        }
        DataType::List(_) => {
            let list = array.as_list::<i32>();
            let items = list.value(row);
            out.push('[');
            for i in 0..items.len() {
                if i > 0 {
                    out.push_str(", ");
                }
                value(out, &items, i);
            }
            out.push(']');
        }
        DataType::Struct(fields) => {
            let record = array.as_struct();
            out.push('{');
            for (i, field) in fields.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                string(out, field.name());
                out.push_str(": ");
                value(out, record.column(i), row);
            }
            out.push('}');
        }
        _ => out.push_str("null"),
    }
}

/// A float as Python's `json.dumps` writes it (`repr`; `NaN`, `Infinity`, `-Infinity`).
fn float(out: &mut String, f: f64) {
    if f.is_nan() {
        out.push_str("NaN");
    } else if f.is_infinite() {
        out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
    } else {
        out.push_str(&py_float_repr(f));
    }
}

/// `2026-07-28T17:06:32.000137+00:00`: the microseconds always written.
fn iso_micros(us: i64) -> String {
    const DAY: i64 = 86_400_000_000;
    let date = Date::from_days(us.div_euclid(DAY));
    let t = us.rem_euclid(DAY);
    format!(
        "{}T{:02}:{:02}:{:02}.{:06}+00:00",
        date.iso(),
        t / 3_600_000_000,
        t / 60_000_000 % 60,
        t / 1_000_000 % 60,
        t % 1_000_000
    )
}

/// A JSON string as Python writes it with `ensure_ascii=False`, terminal controls escaped.
fn string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20
                || (0x7F..=0x9F).contains(&(c as u32))
                || crate::text::is_format_control(c as u32) =>
            {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_and_floats_as_python_writes_them() {
        let mut out = String::new();
        string(&mut out, "a\"b\\c\n\u{1b}[0m\u{7f}\u{202e}é");
        assert_eq!(out, r#""a\"b\\c\n\u001b[0m\u007f\u202eé""#);
        for (f, want) in [(1.1, "1.1"), (1e-5, "1e-05"), (1e16, "1e+16"), (2.0, "2.0"), (f64::NAN, "NaN")] {
            let mut out = String::new();
            float(&mut out, f);
            assert_eq!(out, want);
        }
        assert_eq!(iso_micros(0), "1970-01-01T00:00:00.000000+00:00");
    }
}
