//! Rules compiled for matching (mirrors `logparse.parse.rules`): a message rule's regex read whole
//! or searched for; a stats rule's title and `key: value` pairs. Fields are set by column index of
//! the rule's kind.

use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, HashSet};

use crate::columns::Layout;
use crate::needles::{Needles, Present};
use crate::regexes::{Compiled, Spans};
use crate::spec;
use crate::stats::{first_key_positions, read_pairs, KEY_SEPARATOR, PAIR_SEPARATOR};
use crate::values::{convert, derive, derived_value, FieldType, Value};

pub const MESSAGE_GROUP: &str = "__msg";

/// An event's fields: (column, value), each column at most once.
#[derive(Debug, Default, Clone)]
pub struct Fields(pub Vec<(usize, Value)>);

impl Fields {
    pub fn set(&mut self, col: usize, value: Value) {
        match self.0.iter_mut().find(|(c, _)| *c == col) {
            Some(slot) => slot.1 = value,
            None => self.0.push((col, value)),
        }
    }

    pub fn get(&self, col: usize) -> Option<&Value> {
        self.0.iter().find(|(c, _)| *c == col).map(|(_, v)| v)
    }
}

/// A field a regex gives: its column, type and group indices.
#[derive(Clone)]
struct FieldGroups {
    col: usize,
    typ: FieldType,
    groups: Vec<usize>,
}

fn field_groups(
    compiled: &Compiled,
    pattern: &spec::Pattern,
    layout: &Layout,
    types: &BTreeMap<String, FieldType>,
) -> Vec<FieldGroups> {
    let mut out = Vec::new();
    for (name, aliases) in &pattern.groups {
        let (Some(col), Some(typ)) = (layout.index.get(name), types.get(name)) else { continue };
        out.push(FieldGroups { col: *col, typ: *typ, groups: compiled.indices(aliases) });
    }
    out
}

fn fill(fields: &mut Fields, spans: &Spans<'_>, text: &str, groups: &[FieldGroups]) {
    for f in groups {
        if let Some(captured) = spans.last(text, &f.groups) {
            fields.set(f.col, convert(captured, f.typ));
        }
    }
}

fn types_of(types: &BTreeMap<String, String>) -> Result<BTreeMap<String, FieldType>, String> {
    types.iter().map(|(k, v)| Ok((k.clone(), FieldType::parse(v)?))).collect()
}

fn constants_of(
    constants: &BTreeMap<String, serde_json::Value>,
    layout: &Layout,
    types: &BTreeMap<String, FieldType>,
) -> Vec<(usize, Value)> {
    let mut out = Vec::new();
    for (name, value) in constants {
        let Some(col) = layout.index.get(name) else { continue };
        let v = match value {
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => match (n.as_i64(), types.get(name)) {
                (Some(i), Some(FieldType::Float)) => Value::Float(i as f64),
                (Some(i), _) => Value::Int(i),
                (None, _) => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            serde_json::Value::String(s) => Value::Str(s.clone()),
            _ => Value::Null,
        };
        out.push((*col, v));
    }
    out
}

/// What every rule has.
#[derive(Clone)]
pub struct Head {
    /// A fallback rule is tried after every other rule and after searching.
    pub fallback: bool,
    levels: Option<HashSet<String>>,
}

impl Head {
    pub fn allows_level(&self, level: Option<&str>) -> bool {
        match &self.levels {
            None => true,
            Some(levels) => levels.contains(level.unwrap_or("")),
        }
    }
}

/// A part of a template: literal text, or a field's column.
#[derive(Clone)]
enum Piece {
    Text(String),
    Field(Option<usize>),
}

#[derive(Clone)]
pub struct RegexRule {
    pub head: Head,
    anchors: Vec<usize>,
    unless: Vec<usize>,
    anchor_texts: Vec<String>,
    anchor_finders: Vec<memchr::memmem::Finder<'static>>,
    unless_finders: Vec<memchr::memmem::Finder<'static>>,
    full: Compiled,
    full_fields: Vec<FieldGroups>,
    search: Compiled,
    search_fields: Vec<FieldGroups>,
    message_group: usize,
    find: Vec<(Compiled, Vec<FieldGroups>)>,
    constants: Vec<(usize, Value)>,
    templates: Vec<(usize, Vec<Piece>)>,
    derive: Vec<DeriveSpec>,
}

/// A derived field: (column, type, function, its source group in the full regex, in the search regex).
type DeriveSpec = (usize, FieldType, String, Vec<usize>, Vec<usize>);

#[derive(Clone)]
pub struct StatsKey {
    field: Option<(usize, FieldType)>,
    units: Vec<String>,
    value: Option<(Compiled, Vec<FieldGroups>)>,
    pattern: Option<(Compiled, Vec<FieldGroups>)>,
}

#[derive(Clone)]
pub struct StatsRule {
    pub head: Head,
    first: Vec<usize>,
    first_texts: Vec<String>,
    first_finders: Vec<memchr::memmem::Finder<'static>>,
    title: Compiled,
    title_fields: Vec<FieldGroups>,
    search_title: Compiled,
    search_title_fields: Vec<FieldGroups>,
    message_group: usize,
    require: Vec<String>,
    unless: Vec<String>,
    keys: FxHashMap<String, StatsKey>,
    key_patterns: Vec<StatsKey>,
    // keys read by a key pattern: the pattern's index and the fields its groups gave (None: no
    // pattern reads the key); a log prints the same few keys on every line
    pattern_memo: std::cell::RefCell<FxHashMap<String, Option<PatternMatch>>>,
    constants: Vec<(usize, Value)>,
    extra_col: Option<usize>,
}

/// A key pattern that read a stats key: the pattern's index and the fields its groups gave.
type PatternMatch = (usize, Vec<(usize, Value)>);

/// Keys remembered per stats rule, at most (a hostile log could print endless new keys).
const PATTERN_MEMO_KEYS: usize = 1024;

#[derive(Clone)]
pub enum Rule {
    Regex(RegexRule),
    Stats(StatsRule),
}

fn finders_of(items: &[String]) -> Vec<memchr::memmem::Finder<'static>> {
    items.iter().map(|s| memchr::memmem::Finder::new(s.as_bytes()).into_owned()).collect()
}

fn parse_template(template: &str, layout: &Layout) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut rest = template;
    let mut text = String::new();
    while let Some(open) = rest.find('{') {
        text.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) if close > 0 && after[..close].chars().all(|c| c.is_alphanumeric() || c == '_') => {
                out.push(Piece::Text(std::mem::take(&mut text)));
                out.push(Piece::Field(layout.index.get(&after[..close]).copied()));
                rest = &after[close + 1..];
            }
            _ => {
                text.push('{');
                rest = after;
            }
        }
    }
    text.push_str(rest);
    out.push(Piece::Text(text));
    out
}

impl Rule {
    pub fn from_spec(
        rule: &spec::Rule,
        layouts: &BTreeMap<String, Layout>,
        needles: &mut Needles,
    ) -> Result<Rule, String> {
        let layout_of = |kind: &str| layouts.get(kind).ok_or_else(|| format!("no columns for kind {kind}"));
        let ids = |needles: &mut Needles, items: &[String], suffix: &str| -> Vec<usize> {
            items.iter().map(|s| needles.add(&format!("{s}{suffix}"))).collect()
        };
        Ok(match rule {
            spec::Rule::Regex {
                name,
                kind,
                fallback,
                levels,
                anchors,
                unless,
                full,
                search,
                find,
                constants,
                templates,
                derive,
                types,
            } => {
                let layout = layout_of(kind)?;
                let types = types_of(types)?;
                let full_c = Compiled::new(&full.pattern, name)?;
                let search_c = Compiled::new(&search.pattern, name)?;
                let mut finds = Vec::new();
                for p in find {
                    let c = Compiled::new(&p.pattern, name)?;
                    let f = field_groups(&c, p, layout, &types);
                    finds.push((c, f));
                }
                let mut derived = Vec::new();
                for (field, (function, source)) in derive {
                    let Some(col) = layout.index.get(field) else { continue };
                    let aliases = full.groups.get(source).cloned().unwrap_or_default();
                    let saliases = search.groups.get(source).cloned().unwrap_or_default();
                    derived.push((
                        *col,
                        *types.get(field).unwrap_or(&FieldType::Float),
                        function.clone(),
                        full_c.indices(&aliases),
                        search_c.indices(&saliases),
                    ));
                }
                Rule::Regex(RegexRule {
                    head: Head { fallback: *fallback, levels: levels.as_ref().map(|l| l.iter().cloned().collect()) },
                    anchors: ids(needles, anchors, ""),
                    unless: ids(needles, unless, ""),
                    anchor_texts: anchors.clone(),
                    anchor_finders: finders_of(anchors),
                    unless_finders: finders_of(unless),
                    full_fields: field_groups(&full_c, full, layout, &types),
                    search_fields: field_groups(&search_c, search, layout, &types),
                    message_group: search_c.index(MESSAGE_GROUP).ok_or("search pattern without __msg")?,
                    full: full_c,
                    search: search_c,
                    find: finds,
                    constants: constants_of(constants, layout, &types),
                    templates: templates
                        .iter()
                        .filter_map(|(k, v)| layout.index.get(k).map(|c| (*c, parse_template(v, layout))))
                        .collect(),
                    derive: derived,
                })
            }
            spec::Rule::Stats {
                name,
                kind,
                levels,
                title,
                search_title,
                first,
                require,
                unless,
                keys,
                key_patterns,
                constants,
                types,
            } => {
                let layout = layout_of(kind)?;
                let types = types_of(types)?;
                let entry = |e: &spec::StatsEntry| -> Result<StatsKey, String> {
                    let compile = |p: &spec::Pattern| -> Result<(Compiled, Vec<FieldGroups>), String> {
                        let c = Compiled::new(&p.pattern, name)?;
                        let f = field_groups(&c, p, layout, &types);
                        Ok((c, f))
                    };
                    Ok(StatsKey {
                        field: match &e.field {
                            Some(f) => Some((
                                *layout.index.get(f).ok_or(format!("no column {f}"))?,
                                *types.get(f).unwrap_or(&FieldType::Str),
                            )),
                            None => None,
                        },
                        units: e.units.clone(),
                        value: e.value.as_ref().map(compile).transpose()?,
                        pattern: e.pattern.as_ref().map(compile).transpose()?,
                    })
                };
                let title_c = Compiled::new(&title.pattern, name)?;
                let search_c = Compiled::new(&search_title.pattern, name)?;
                Rule::Stats(StatsRule {
                    head: Head { fallback: false, levels: levels.as_ref().map(|l| l.iter().cloned().collect()) },
                    first: ids(needles, first, KEY_SEPARATOR),
                    first_texts: first.iter().map(|k| format!("{k}{KEY_SEPARATOR}")).collect(),
                    first_finders: first
                        .iter()
                        .map(|k| memchr::memmem::Finder::new(format!("{k}{KEY_SEPARATOR}").as_bytes()).into_owned())
                        .collect(),
                    title_fields: field_groups(&title_c, title, layout, &types),
                    search_title_fields: field_groups(&search_c, search_title, layout, &types),
                    message_group: search_c.index(MESSAGE_GROUP).ok_or("search title without __msg")?,
                    title: title_c,
                    search_title: search_c,
                    require: require.clone(),
                    unless: unless.clone(),
                    keys: keys.iter().map(|e| Ok((e.key.clone(), entry(e)?))).collect::<Result<_, String>>()?,
                    key_patterns: key_patterns.iter().map(entry).collect::<Result<_, _>>()?,
                    pattern_memo: Default::default(),
                    constants: constants_of(constants, layout, &types),
                    extra_col: layout.index.get("extra").copied(),
                })
            }
        })
    }

    pub fn head(&self) -> &Head {
        match self {
            Rule::Regex(r) => &r.head,
            Rule::Stats(r) => &r.head,
        }
    }

    /// Literals one of which must be in a text this rule applies to (None: no such literal: the
    /// rule may apply to any text).
    pub fn exclusion(&self) -> Option<Vec<String>> {
        match self {
            Rule::Regex(r) => r.anchor_texts.iter().find(|a| !a.is_empty()).map(|a| vec![a.clone()]),
            Rule::Stats(r) => Some(r.first_texts.clone()),
        }
    }

    /// `allows_text` without a scan of every literal: the rule's own literals searched directly.
    pub fn allows_text_direct(&self, text: &str) -> bool {
        let has = |f: &memchr::memmem::Finder<'static>| f.find(text.as_bytes()).is_some();
        match self {
            Rule::Regex(r) => r.anchor_finders.iter().all(has) && !r.unless_finders.iter().any(has),
            Rule::Stats(r) => r.first_finders.iter().any(has),
        }
    }

    /// Whether the rule may apply to a text whose literals are `present`.
    pub fn allows_text(&self, present: &Present) -> bool {
        match self {
            Rule::Regex(r) => r.anchors.iter().all(|i| present.has(*i)) && !r.unless.iter().any(|i| present.has(*i)),
            Rule::Stats(r) => r.first.iter().any(|i| present.has(*i)),
        }
    }
}

impl RegexRule {
    pub fn match_body(&self, body: &str) -> Option<Fields> {
        let spans = self.full.captures(body)?;
        let mut fields = Fields(self.constants.clone());
        fill(&mut fields, &spans, body, &self.full_fields);
        let derive_groups: Vec<(usize, FieldType, &str, Option<&str>)> = self
            .derive
            .iter()
            .map(|(col, typ, f, groups, _)| (*col, *typ, f.as_str(), spans.last(body, groups)))
            .collect();
        self.finish(&mut fields, body, &derive_groups);
        Some(fields)
    }

    pub fn search(&self, text: &str) -> Option<(usize, Fields)> {
        let spans = self.search.captures(text)?;
        let start = spans.get(self.message_group)?.0;
        let mut fields = Fields(self.constants.clone());
        fill(&mut fields, &spans, text, &self.search_fields);
        let derive_groups: Vec<(usize, FieldType, &str, Option<&str>)> = self
            .derive
            .iter()
            .map(|(col, typ, f, _, groups)| (*col, *typ, f.as_str(), spans.last(text, groups)))
            .collect();
        self.finish(&mut fields, &text[start..], &derive_groups);
        Some((start, fields))
    }

    fn finish(&self, fields: &mut Fields, message: &str, derive_groups: &[(usize, FieldType, &str, Option<&str>)]) {
        for (compiled, groups) in &self.find {
            let Some(spans) = compiled.captures(message) else { continue };
            for f in groups {
                if let Some(captured) = spans.last(message, &f.groups) {
                    if matches!(fields.get(f.col), None | Some(Value::Null)) {
                        fields.set(f.col, convert(captured, f.typ));
                    }
                }
            }
        }
        for (col, pieces) in &self.templates {
            let mut out = String::new();
            for piece in pieces {
                match piece {
                    Piece::Text(t) => out.push_str(t),
                    Piece::Field(Some(c)) => out.push_str(&fields.get(*c).map(Value::py_str).unwrap_or_default()),
                    Piece::Field(None) => {}
                }
            }
            fields.set(*col, Value::Str(out.trim_end_matches([':', ' ']).to_string()));
        }
        for (col, typ, function, captured) in derive_groups {
            if let Some(text) = captured {
                let value = derive(function, text).map(|n| derived_value(function, n, *typ)).unwrap_or(Value::Null);
                fields.set(*col, value);
            }
        }
    }
}

impl StatsRule {
    pub fn match_body(&self, body: &str) -> Option<Fields> {
        for at in first_key_positions(body, &self.first_finders) {
            let head = &body[..at];
            if let Some(spans) = self.title.captures(head) {
                let mut fields = Fields(self.constants.clone());
                let from_title = self.title_values(&spans, head, &self.title_fields);
                if let Some(f) = self.pairs(&body[at..], &mut fields, from_title) {
                    return Some(f);
                }
            }
        }
        None
    }

    pub fn search(&self, text: &str) -> Option<(usize, Fields)> {
        for at in first_key_positions(text, &self.first_finders) {
            let head = &text[..at];
            if let Some(spans) = self.search_title.captures(head) {
                let start = spans.get(self.message_group)?.0;
                let mut fields = Fields(self.constants.clone());
                let from_title = self.title_values(&spans, head, &self.search_title_fields);
                if let Some(f) = self.pairs(&text[at..], &mut fields, from_title) {
                    return Some((start, f));
                }
            }
        }
        None
    }

    fn title_values(&self, spans: &Spans<'_>, head: &str, groups: &[FieldGroups]) -> Vec<(usize, Value)> {
        groups.iter().filter_map(|f| spans.last(head, &f.groups).map(|t| (f.col, convert(t, f.typ)))).collect()
    }

    fn pairs(&self, text: &str, fields: &mut Fields, from_title: Vec<(usize, Value)>) -> Option<Fields> {
        let pairs = read_pairs(text)?;
        if self.require.iter().any(|k| !pairs.iter().any(|(key, _)| key == k))
            || self.unless.iter().any(|k| pairs.iter().any(|(key, _)| key == k))
        {
            return None;
        }
        let mut from_line: Vec<usize> = Vec::with_capacity(pairs.len() + from_title.len());
        for (col, value) in from_title {
            fields.set(col, value);
            from_line.push(col);
        }
        let mut extra: Vec<(String, String)> = Vec::new();
        let mut got: Vec<(usize, Value)> = Vec::with_capacity(4);
        let last = pairs.len().saturating_sub(1);
        for (i, (key, whole)) in pairs.iter().enumerate() {
            got.clear();
            let mut cut: &str = "";
            let mut ok = self.value_fields(key, whole, &mut got);
            // a line cut short: its last value is followed by a key without a value
            if !ok && i == last {
                if let Some(at) = whole.find(PAIR_SEPARATOR) {
                    got.clear();
                    if self.value_fields(key, &whole[..at], &mut got) {
                        ok = true;
                        cut = &whole[at + PAIR_SEPARATOR.len()..];
                    }
                }
            }
            if !ok || got.iter().any(|(col, _)| from_line.contains(col)) {
                extra.push((key.to_string(), whole.to_string()));
                continue;
            }
            for (col, v) in got.drain(..) {
                from_line.push(col);
                fields.set(col, v);
            }
            if !cut.is_empty() {
                extra.push((cut.to_string(), String::new()));
            }
        }
        if !extra.is_empty() {
            if let Some(col) = self.extra_col {
                fields.set(col, Value::Pairs(extra));
            }
        }
        Some(std::mem::take(fields))
    }

    fn value_fields(&self, key: &str, value: &str, out: &mut Vec<(usize, Value)>) -> bool {
        let put = |out: &mut Vec<(usize, Value)>, col: usize, v: Value| match out.iter_mut().find(|(c, _)| *c == col) {
            Some(slot) => slot.1 = v,
            None => out.push((col, v)),
        };
        let entry = match self.keys.get(key) {
            Some(e) => e,
            None => {
                let Some((index, got)) = self.key_pattern(key) else { return false };
                for (col, v) in got {
                    put(out, col, v);
                }
                &self.key_patterns[index]
            }
        };
        if let Some((compiled, groups)) = &entry.value {
            let Some(spans) = compiled.captures(value) else { return false };
            for f in groups {
                if let Some(t) = spans.last(value, &f.groups) {
                    put(out, f.col, convert(t, f.typ));
                }
            }
        }
        if let Some((col, typ)) = entry.field {
            match typed_value(value, typ, &entry.units) {
                Some(v) => put(out, col, v),
                None => return false,
            }
        }
        true
    }
}

impl StatsRule {
    /// The first key pattern that reads `key` and the fields its groups give (remembered).
    fn key_pattern(&self, key: &str) -> Option<PatternMatch> {
        if let Some(found) = self.pattern_memo.borrow().get(key) {
            return found.clone();
        }
        let mut found = None;
        for (index, e) in self.key_patterns.iter().enumerate() {
            let Some((compiled, groups)) = &e.pattern else { continue };
            if let Some(spans) = compiled.captures(key) {
                let got = groups
                    .iter()
                    .filter_map(|f| spans.last(key, &f.groups).map(|t| (f.col, convert(t, f.typ))))
                    .collect();
                found = Some((index, got));
                break;
            }
        }
        let mut memo = self.pattern_memo.borrow_mut();
        if memo.len() >= PATTERN_MEMO_KEYS {
            memo.clear();
        }
        memo.insert(key.to_string(), found.clone());
        found
    }
}

/// A stats value read as its type; a number may be followed by one of `units`.
pub fn typed_value(value: &str, typ: FieldType, units: &[String]) -> Option<Value> {
    match typ {
        FieldType::Int | FieldType::Float => {
            let (number, unit) = crate::values::split_number(value)?;
            if !unit.is_empty() && !units.iter().any(|u| u == unit) {
                return None;
            }
            match convert(number, typ) {
                Value::Null => None,
                v => Some(v),
            }
        }
        _ => match convert(value, typ) {
            Value::Null => None,
            v => Some(v),
        },
    }
}
