//! One line into exactly one event (mirrors `logparse.parse.line`).

use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};

use crate::columns::Layout;
use crate::envelope::{Frame, Note, Peeler};
use crate::needles::Needles;
use crate::rules::{Fields, Rule};
use crate::spec;
use crate::stamps::{StampParts, Stamps};
use crate::text::{cut_chars, strip_ansi};

/// The `rule` of a CRI partial line (its record goes on on the next line).
pub const PARTIAL_RULE: &str = "partial";

/// What the layers around a message say, folded innermost-wins.
#[derive(Debug, Clone, Default)]
pub struct Reading {
    /// The innermost layer's stamp, as printed.
    pub ts: Option<String>,
    /// The outermost layer's stamp, when there are several.
    pub outer_ts: Option<String>,
    /// The innermost level (upper case, as the grammar's `[levels]` map it).
    pub level: Option<String>,
    /// The innermost rank or process label.
    pub rank: Option<String>,
    /// The innermost process id.
    pub pid: Option<i64>,
    /// The innermost task label (a scheduler's, a shipper's).
    pub task: Option<String>,
    /// The most complete stamp's parts (what `time` is made from).
    pub stamp: Option<StampParts>,
}

/// One event: its rule (None: unparsed), its envelope reading, its fields.
#[derive(Debug)]
pub struct Event {
    /// The rule that took the line (its index), None when no rule did.
    pub rule: Option<usize>,
    /// A CRI partial line, joined with the next.
    pub partial: bool,
    /// What the envelope said.
    pub reading: Reading,
    /// Text before a message found by searching that no token explains.
    pub prefix: Option<String>,
    /// The fields the rule read, by column.
    pub fields: Fields,
}

/// Reads lines of one engine's log into events; one per thread (cloned: the regexes are shared).
#[derive(Clone)]
pub struct LineParser {
    pub(crate) rules: Vec<Rule>,
    regular: Vec<usize>,
    fallback: Vec<usize>,
    peeler: Peeler,
    stamps: Stamps,
    untyped: HashSet<String>,
    match_limit: usize,
    stamp_cache: FxHashMap<String, Option<StampParts>>,
    pending: Option<String>,
    needles: Needles,
    // the regular rule that took the last line (tried first: see `predicted`), and per regular rule
    // the literals of the rules before it (None: one of them needs none)
    last_rule: Option<usize>,
    guards: Vec<Option<Option<aho_corasick::AhoCorasick>>>,
}

impl LineParser {
    pub(crate) fn new(spec: &spec::Spec, layouts: &BTreeMap<String, Layout>) -> Result<LineParser, String> {
        let mut needles = Needles::new();
        let rules: Vec<Rule> =
            spec.rules.iter().map(|r| Rule::from_spec(r, layouts, &mut needles)).collect::<Result<_, _>>()?;
        needles.build()?;
        let regular = (0..rules.len()).filter(|i| !rules[*i].head().fallback).collect();
        let fallback = (0..rules.len()).filter(|i| rules[*i].head().fallback).collect();
        Ok(LineParser {
            rules,
            regular,
            fallback,
            peeler: Peeler::new(spec)?,
            stamps: Stamps::new(spec)?,
            untyped: spec.untyped_levels.iter().cloned().collect(),
            match_limit: spec.match_limit,
            stamp_cache: FxHashMap::default(),
            pending: None,
            needles,
            last_rule: None,
            guards: Vec::new(),
        })
    }

    /// Forget a CRI partial line: the next line starts afresh (a new block of a new run).
    pub fn reset(&mut self) {
        self.pending = None;
    }

    fn stamp(&mut self, text: &str) -> Option<StampParts> {
        if let Some(found) = self.stamp_cache.get(text) {
            return *found;
        }
        if self.stamp_cache.len() > 4096 {
            self.stamp_cache.clear();
        }
        let parts = self.stamps.read(text);
        self.stamp_cache.insert(text.to_string(), parts);
        parts
    }

    fn reading(&mut self, notes: &[Note]) -> Reading {
        let stamps: Vec<&String> = notes.iter().filter_map(|n| n.ts.as_ref()).collect();
        let mut best: Option<StampParts> = None;
        for text in &stamps {
            if let Some(parts) = self.stamp(text) {
                if best.map(|b| parts.completeness >= b.completeness).unwrap_or(true) {
                    best = Some(parts);
                }
            }
        }
        let innermost = |f: &dyn Fn(&Note) -> Option<String>| notes.iter().rev().find_map(f);
        Reading {
            ts: stamps.last().map(|s| (*s).clone()),
            outer_ts: if stamps.len() > 1 { Some(stamps[0].clone()) } else { None },
            level: innermost(&|n| n.level.clone()),
            rank: innermost(&|n| n.rank.clone()),
            pid: notes.iter().rev().find_map(|n| n.pid),
            task: innermost(&|n| n.task.clone()),
            stamp: best,
        }
    }

    fn untyped_level(&self, reading: &Reading) -> bool {
        self.untyped.contains(reading.level.as_deref().unwrap_or(""))
    }

    /// The envelope of a line, peeled (colour codes off, cut at the match limit).
    pub fn frame<'a>(&self, line: &'a str) -> Frame<'a> {
        self.peeler.peel(strip_ansi(cut_chars(line, self.match_limit)), None)
    }

    /// The peeler (for the names of the notes' sources).
    pub fn peeler(&self) -> &Peeler {
        &self.peeler
    }

    /// The parts of a printed stamp, by the grammar's stamp shapes.
    pub fn read_stamp(&self, text: &str) -> Option<StampParts> {
        self.stamps.read(text)
    }

    /// Every rule (regular and fallback, in grammar order) that reads `body` whole at `level`.
    pub fn rules_reading(&self, body: &str, level: Option<&str>) -> Vec<usize> {
        let present = self.needles.scan(body);
        self.regular
            .iter()
            .chain(&self.fallback)
            .copied()
            .filter(|&i| {
                let rule = &self.rules[i];
                rule.allows_text(&present)
                    && rule.head().allows_level(level)
                    && match rule {
                        Rule::Regex(r) => r.match_body(body).is_some(),
                        Rule::Stats(r) => r.match_body(body).is_some(),
                    }
            })
            .collect()
    }

    /// The event of one line (CRI partial lines join their successor).
    pub fn parse(&mut self, line: &str) -> Event {
        let cut = cut_chars(line, self.match_limit);
        let frame = self.peeler.peel(strip_ansi(cut), self.pending.take());
        if frame.partial {
            self.pending = frame.pending.clone();
            let reading = self.reading(&frame.notes);
            return Event { rule: None, partial: true, reading, prefix: None, fields: Fields::default() };
        }
        self.match_frame(&frame)
    }

    fn match_frame(&mut self, frame: &Frame<'_>) -> Event {
        let reading = self.reading(&frame.notes);
        let unparsed =
            |reading: Reading| Event { rule: None, partial: false, reading, prefix: None, fields: Fields::default() };
        if self.untyped_level(&reading) {
            return unparsed(reading);
        }
        let body = frame.body();
        if let Some(event) = self.predicted(body, &reading) {
            return event;
        }
        let present = self.needles.scan(body);
        for i in 0..self.regular.len() {
            let index = self.regular[i];
            let rule = &self.rules[index];
            if !rule.allows_text(&present) || !rule.head().allows_level(reading.level.as_deref()) {
                continue;
            }
            let fields = match rule {
                Rule::Regex(r) => r.match_body(body),
                Rule::Stats(r) => r.match_body(body),
            };
            if let Some(fields) = fields {
                self.last_rule = Some(i);
                return Event { rule: Some(index), partial: false, reading, prefix: None, fields };
            }
        }
        if let Some(event) = self.search(frame) {
            return event;
        }
        for i in 0..self.fallback.len() {
            let index = self.fallback[i];
            let rule = &self.rules[index];
            if !rule.allows_text(&present) || !rule.head().allows_level(reading.level.as_deref()) {
                continue;
            }
            let fields = match rule {
                Rule::Regex(r) => r.match_body(body),
                Rule::Stats(r) => r.match_body(body),
            };
            if let Some(fields) = fields {
                return Event { rule: Some(index), partial: false, reading, prefix: None, fields };
            }
        }
        unparsed(reading)
    }

    /// The line taken by the rule that took the last line, when no rule before it can apply (its
    /// literals are all absent): the same outcome as trying the rules in order, sooner.
    fn predicted(&mut self, body: &str, reading: &Reading) -> Option<Event> {
        let i = self.last_rule?;
        if self.guards.len() <= i {
            self.guards.resize_with(self.regular.len(), || None);
        }
        if self.guards[i].is_none() {
            let mut literals: Vec<String> = Vec::new();
            let mut ok = true;
            for &earlier in &self.regular[..i] {
                match self.rules[earlier].exclusion() {
                    Some(l) => literals.extend(l),
                    None => ok = false,
                }
            }
            let guard = if ok { aho_corasick::AhoCorasick::new(&literals).ok() } else { None };
            self.guards[i] = Some(guard);
        }
        let guard = self.guards[i].as_ref()?.as_ref()?;
        if guard.is_match(body) {
            return None;
        }
        let index = self.regular[i];
        let rule = &self.rules[index];
        if !rule.allows_text_direct(body) || !rule.head().allows_level(reading.level.as_deref()) {
            return None;
        }
        let fields = match rule {
            Rule::Regex(r) => r.match_body(body),
            Rule::Stats(r) => r.match_body(body),
        }?;
        Some(Event { rule: Some(index), partial: false, reading: reading.clone(), prefix: None, fields })
    }

    /// A regular rule's message found anywhere in the line.
    fn search(&mut self, frame: &Frame<'_>) -> Option<Event> {
        let text = frame.search_text();
        let present = self.needles.scan(text);
        for i in 0..self.regular.len() {
            let index = self.regular[i];
            let rule = &self.rules[index];
            if !rule.allows_text(&present) {
                continue;
            }
            let found = match rule {
                Rule::Regex(r) => r.search(text),
                Rule::Stats(r) => r.search(text),
            };
            let Some((start, fields)) = found else { continue };
            let (notes, prefix) = self.peeler.scan(&text[..start]);
            let mut all: Vec<Note> = frame.notes[..frame.outer].to_vec();
            all.extend(notes);
            let reading = self.reading(&all);
            if self.untyped_level(&reading) {
                return None;
            }
            if self.rules[index].head().allows_level(reading.level.as_deref()) {
                return Some(Event { rule: Some(index), partial: false, reading, prefix, fields });
            }
        }
        None
    }
}

/// A borrowed or owned line, as the block reader decodes it.
pub type LineText<'a> = Cow<'a, str>;
