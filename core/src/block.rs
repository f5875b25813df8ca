//! A block of lines into tables: split, decode, parse, fill columns (no Python involved).

use arrow_array::RecordBatch;
use rustc_hash::{FxHashMap, FxHashSet};
use std::borrow::Cow;

use crate::columns::{Common, Table};
use crate::compiled::Compiled;
use crate::error::Result;
use crate::line::{LineParser, PARTIAL_RULE};
use crate::read::{block_raws, decode, Block};
use crate::stamps::StampParts;
use crate::values::Value;

/// One kind's rows of a block: the batch (printed columns, no `time` yet) and, per row, its line's
/// place in the block.
pub struct KindRows {
    /// The kind's index in [`Compiled::kinds`].
    pub kind: usize,
    /// The rows, in line order.
    pub batch: RecordBatch,
    /// Per row, `line_no - first_line`.
    pub offsets: Vec<u32>,
}

/// What one block gave.
pub struct ParsedBlock {
    /// The number of the block's first line.
    pub first_line: i64,
    /// The block's lines.
    pub lines: usize,
    /// One entry per kind with rows, in kind order.
    pub tables: Vec<KindRows>,
    /// Every line's most complete stamp, in line order.
    pub stamps: Vec<Option<StampParts>>,
    /// Lines per rule (index into the rules; `None`: unparsed, `Some(usize::MAX)`: CRI partial).
    pub rule_lines: FxHashMap<Option<usize>, u64>,
    /// Lines per (stats rule, key no vocabulary knew).
    pub extra_keys: FxHashMap<(usize, String), u64>,
    /// The ranks seen.
    pub ranks: FxHashSet<String>,
    /// Lines that were not UTF-8.
    pub invalid_utf8_lines: u64,
    /// Lines holding NUL.
    pub nul_lines: u64,
    /// Bytes of the longest line.
    pub longest_line: u64,
}

/// The rule index that stands for a CRI partial line in [`ParsedBlock::rule_lines`].
pub const PARTIAL: usize = usize::MAX;

/// Parse the lines of `block` with `parser` (a parser of `grammar`).
pub fn parse_block(grammar: &Compiled, parser: &mut LineParser, block: &Block) -> Result<ParsedBlock> {
    parser.reset();
    let mut tables: Vec<Option<(Table, Vec<u32>)>> = (0..grammar.kinds.len()).map(|_| None).collect();
    let mut stamps = Vec::with_capacity(block.lines);
    let mut rule_lines: FxHashMap<Option<usize>, u64> = FxHashMap::default();
    let mut extra_keys: FxHashMap<(usize, String), u64> = FxHashMap::default();
    let mut ranks: FxHashSet<String> = FxHashSet::default();
    let mut last_rank: Option<String> = None;
    let (mut invalid, mut nul, mut longest) = (0u64, 0u64, 0u64);
    for (i, raw) in block_raws(block).enumerate() {
        let line_no = block.first_line + i as i64;
        longest = longest.max((raw.len() - usize::from(raw.ends_with(b"\r"))) as u64);
        let (text, bad): (Cow<'_, str>, bool) = decode(raw);
        invalid += u64::from(bad);
        if memchr::memchr(0, raw).is_some() {
            nul += 1;
        }
        let event = parser.parse(&text);
        stamps.push(event.reading.stamp);
        if let Some(rank) = &event.reading.rank {
            if last_rank.as_ref() != Some(rank) {
                ranks.insert(rank.clone());
                last_rank = Some(rank.clone());
            }
        }
        let (kind, rule_name, rule_key) = match event.rule {
            Some(index) => (grammar.rule_kind[index], Some(grammar.rule_names[index].as_str()), Some(index)),
            None if event.partial => (grammar.unparsed, Some(PARTIAL_RULE), Some(PARTIAL)),
            None => (grammar.unparsed, None, None),
        };
        *rule_lines.entry(rule_key).or_insert(0) += 1;
        let (table, offsets) =
            tables[kind].get_or_insert_with(|| (Table::new(grammar.layouts[kind].clone()), Vec::new()));
        offsets.push(i as u32);
        let common = Common {
            line_no,
            engine: &grammar.engine,
            reading: &event.reading,
            prefix: event.prefix.as_deref(),
            rule: rule_name,
        };
        match event.rule {
            None => {
                let fields: Vec<(usize, Value)> =
                    grammar.raw_column.map(|c| vec![(c, Value::Str(text.into_owned()))]).unwrap_or_default();
                table.push(&common, &fields);
            }
            Some(index) => {
                if let Some(col) = grammar.extra_column[kind] {
                    if let Some(Value::Pairs(pairs)) = event.fields.get(col) {
                        let keys: FxHashSet<&str> = pairs.iter().map(|(k, _)| k.as_str()).collect();
                        for key in keys {
                            *extra_keys.entry((index, key.to_string())).or_insert(0) += 1;
                        }
                    }
                }
                table.push(&common, &event.fields.0);
            }
        }
    }
    let mut out = Vec::new();
    for (kind, slot) in tables.into_iter().enumerate() {
        if let Some((mut table, offsets)) = slot {
            out.push(KindRows { kind, batch: table.finish()?, offsets });
        }
    }
    Ok(ParsedBlock {
        first_line: block.first_line,
        lines: stamps.len(),
        tables: out,
        stamps,
        rule_lines,
        extra_keys,
        ranks,
        invalid_utf8_lines: invalid,
        nul_lines: nul,
        longest_line: longest,
    })
}
