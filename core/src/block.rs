//! A block of lines into tables: split, decode, parse, fill columns (no Python involved).

use arrow_array::RecordBatch;
use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::columns::{Common, Layout, StampColumns, Table};
use crate::line::{LineParser, Outcome, PARTIAL_RULE};
use crate::values::Value;

/// What a block gave.
pub struct BlockOutput {
    pub tables: BTreeMap<String, RecordBatch>,
    pub stamps: RecordBatch,
    /// lines a rule only the reference parser runs could take: (line number, text)
    pub reference: Vec<(i64, String)>,
    pub counts: BTreeMap<String, usize>,
    pub lines: usize,
    pub invalid_utf8_lines: usize,
    pub nul_lines: usize,
    pub longest_line: usize,
}

/// The grammar-independent part of a block: the engine's name and the kinds' layouts.
pub struct Shape {
    pub engine: String,
    pub layouts: BTreeMap<String, Layout>,
}

/// The lines of `data` (`n_lines` of them, as the reader counted), parsed from line `first_line`.
pub fn parse_block(parser: &mut LineParser, shape: &Shape, data: &[u8], n_lines: usize, first_line: i64)
    -> Result<BlockOutput, String> {
    parser.reset();
    let mut tables: BTreeMap<String, Table> = BTreeMap::new();
    let mut stamps = StampColumns::default();
    let mut out_reference = Vec::new();
    let (mut invalid, mut nul, mut longest) = (0usize, 0usize, 0usize);
    for (i, raw) in data.split(|b| *b == b'\n').take(n_lines).enumerate() {
        let line_no = first_line + i as i64;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        longest = longest.max(raw.len());
        let text: Cow<'_, str> = match std::str::from_utf8(raw) {
            Ok(t) => Cow::Borrowed(t),
            Err(_) => {
                invalid += 1;
                String::from_utf8_lossy(raw)
            }
        };
        if memchr::memchr(0, raw).is_some() {
            nul += 1;
        }
        let event = match parser.parse(&text) {
            Outcome::Event(e) => e,
            Outcome::Reference => {
                out_reference.push((line_no, text.into_owned()));
                stamps.push(None);
                continue;
            }
        };
        stamps.push(event.reading.stamp.as_ref());
        let (kind, rule_name) = match event.rule {
            Some(index) => {
                let head = parser.rules[index].head();
                (head.kind.as_str(), Some(head.name.as_str()))
            }
            None => ("unparsed", if event.partial { Some(PARTIAL_RULE) } else { None }),
        };
        let table = match tables.get_mut(kind) {
            Some(t) => t,
            None => {
                let layout = shape.layouts.get(kind).ok_or_else(|| format!("no layout for kind {kind}"))?;
                tables.entry(kind.to_string()).or_insert_with(|| Table::new(layout.clone()))
            }
        };
        let common = Common { line_no, engine: &shape.engine, reading: &event.reading,
                              prefix: event.prefix.as_deref(), rule: rule_name };
        if event.rule.is_none() {
            let raw_col = shape.layouts.get(kind).and_then(|l| l.index.get("raw").copied());
            let fields: Vec<(usize, Value)> = raw_col.map(|c| vec![(c, Value::Str(text.into_owned()))]).unwrap_or_default();
            table.push(&common, &fields);
        } else {
            table.push(&common, &event.fields.0);
        }
    }
    let mut counts = BTreeMap::new();
    let mut batches = BTreeMap::new();
    for (kind, mut table) in tables {
        counts.insert(kind.clone(), table.rows());
        batches.insert(kind, table.finish()?);
    }
    let lines = n_lines.min(data.split(|b| *b == b'\n').count());
    Ok(BlockOutput {
        tables: batches, stamps: stamps.finish()?, reference: out_reference, counts, lines,
        invalid_utf8_lines: invalid, nul_lines: nul, longest_line: longest,
    })
}
