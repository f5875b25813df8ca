//! One engine's grammar as the core runs it: the spec compiled once, shared by every thread.

use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::columns::{arrow_type, Layout};
use crate::derive::Derivation;
use crate::error::{Error, Result};
use crate::line::LineParser;
use crate::spec::{self, Spec};

/// The name of the UTC instant column ingest adds after `ts`.
pub const TIME: &str = "time";

/// A compiled grammar: kinds, their columns and the finished tables' schemas, and a pool of line
/// parsers (one per thread at a time).
pub struct Compiled {
    /// The engine's name (the `engine` column).
    pub engine: String,
    /// Every kind, sorted; a kind is known by its index here.
    pub kinds: Vec<String>,
    /// Per kind, the columns the parser fills.
    pub layouts: Vec<Layout>,
    /// Per kind, the schema of its finished table (`time` after `ts`, derived columns last).
    pub schemas: Vec<SchemaRef>,
    /// Per kind, its derived columns.
    pub derived: Vec<Vec<Derivation>>,
    /// Per kind, the index of `ts` in the parser's columns (`time` goes after it).
    pub ts_column: Vec<usize>,
    /// Per kind, the `extra` column of stats rules, if any.
    pub extra_column: Vec<Option<usize>>,
    /// Per rule, its kind's index and its name.
    pub rule_kind: Vec<usize>,
    /// Per rule, its name.
    pub rule_names: Vec<String>,
    /// The index of `unparsed`.
    pub unparsed: usize,
    /// The `raw` column of `unparsed`.
    pub raw_column: Option<usize>,
    parsers: Mutex<Vec<LineParser>>,
    template: Mutex<LineParser>, // cloned for each further thread: its regexes shared, not compiled again
}

impl Compiled {
    /// Compile a grammar sent as JSON (`logparse.engine.spec`).
    pub fn from_json(text: &str) -> Result<Compiled> {
        Compiled::new(Spec::from_json(text).map_err(Error::Grammar)?)
    }

    /// Compile `spec`.
    pub(crate) fn new(spec: Spec) -> Result<Compiled> {
        let kinds: Vec<String> = spec.kinds.keys().cloned().collect();
        let index: HashMap<&str, usize> = kinds.iter().enumerate().map(|(i, k)| (k.as_str(), i)).collect();
        let mut layouts = Vec::new();
        let mut by_name = std::collections::BTreeMap::new();
        for (kind, columns) in &spec.kinds {
            let layout = Layout::new(columns).map_err(Error::Grammar)?;
            by_name.insert(kind.clone(), layout.clone());
            layouts.push(layout);
        }
        let unparsed =
            *index.get("unparsed").ok_or_else(|| Error::Grammar("the grammar has no kind unparsed".into()))?;
        let mut rule_kind = Vec::new();
        let mut rule_names = Vec::new();
        for rule in &spec.rules {
            let (name, kind) = match rule {
                spec::Rule::Regex { name, kind, .. } | spec::Rule::Stats { name, kind, .. } => (name, kind),
            };
            rule_kind.push(
                *index
                    .get(kind.as_str())
                    .ok_or_else(|| Error::Grammar(format!("rule {name}: no columns for kind {kind}")))?,
            );
            rule_names.push(name.clone());
        }
        let mut derived = Vec::new();
        let mut schemas = Vec::new();
        let mut ts_column = Vec::new();
        for (k, kind) in kinds.iter().enumerate() {
            let layout = &layouts[k];
            let ts = *layout.index.get("ts").ok_or_else(|| Error::Grammar(format!("kind {kind} has no ts column")))?;
            ts_column.push(ts);
            let rules: Vec<Derivation> = spec
                .derived
                .get(kind)
                .map(|list| {
                    list.iter()
                        .map(|(target, sources)| Derivation {
                            target: target.clone(),
                            sources: sources.iter().map(|(s, f)| (layout.index.get(s).copied(), *f)).collect(),
                        })
                        .collect()
                })
                .unwrap_or_default();
            let meta = spec.metadata.get(kind);
            let field = |name: &str, typ: DataType| {
                let f = Field::new(name, typ, true);
                match meta.and_then(|m| m.get(name)) {
                    Some(m) => f.with_metadata(m.clone()),
                    None => f,
                }
            };
            let mut fields = Vec::new();
            for (i, (name, typ)) in layout.names.iter().zip(&layout.types).enumerate() {
                fields.push(field(name, arrow_type(*typ)));
                if i == ts {
                    fields.push(field(TIME, DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))));
                }
            }
            for d in &rules {
                fields.push(field(&d.target, DataType::Float64));
            }
            schemas.push(Arc::new(Schema::new(fields)));
            derived.push(rules);
        }
        let extra_column = layouts.iter().map(|l| l.index.get("extra").copied()).collect();
        let raw_column = layouts[unparsed].index.get("raw").copied();
        let template = LineParser::new(&spec, &by_name).map_err(Error::Grammar)?;
        Ok(Compiled {
            engine: spec.engine.clone(),
            kinds,
            layouts,
            schemas,
            derived,
            ts_column,
            extra_column,
            rule_kind,
            rule_names,
            unparsed,
            raw_column,
            parsers: Mutex::new(vec![template.clone()]),
            template: Mutex::new(template),
        })
    }

    /// A line parser of this grammar, from the pool (give it back with [`Compiled::give_back`]).
    pub fn take_parser(&self) -> Result<LineParser> {
        if let Some(parser) = self.parsers.lock().expect("parser pool").pop() {
            return Ok(parser);
        }
        Ok(self.template.lock().expect("parser template").clone())
    }

    /// Return a parser to the pool.
    pub fn give_back(&self, parser: LineParser) {
        self.parsers.lock().expect("parser pool").push(parser);
    }

    /// The index of a kind.
    pub fn kind_index(&self, kind: &str) -> Option<usize> {
        self.kinds.iter().position(|k| k == kind)
    }
}
