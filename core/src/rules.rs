//! Rules compiled for matching (mirrors `logparse.parse.rules`): a message rule's regex read whole
//! or searched for; a stats rule's title and `key: value` pairs.

use memchr::memmem::Finder;
use regex::{Captures, Regex};
use std::collections::{BTreeMap, HashMap, HashSet};

use crate::envelope::last_capture;
use crate::spec;
use crate::stats::{first_key_positions, read_pairs, KEY_SEPARATOR};
use crate::values::{convert, derive, derived_value, FieldType, Value};

pub const MESSAGE_GROUP: &str = "__msg";
pub type Fields = BTreeMap<String, Value>;

struct Compiled {
    regex: Regex,
    groups: Vec<(String, Vec<String>)>,
}

impl Compiled {
    fn new(p: &spec::Pattern, what: &str) -> Result<Compiled, String> {
        let regex = Regex::new(&p.pattern).map_err(|e| format!("{what}: {e}"))?;
        Ok(Compiled { regex, groups: p.groups.iter().map(|(k, v)| (k.clone(), v.clone())).collect() })
    }

    fn aliases(&self, name: &str) -> &[String] {
        self.groups.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_slice()).unwrap_or(&[])
    }
}

fn types_of(types: &BTreeMap<String, String>) -> Result<HashMap<String, FieldType>, String> {
    types.iter().map(|(k, v)| Ok((k.clone(), FieldType::parse(v)?))).collect()
}

/// A constant of a rule (`set = {...}`) as a value of its field's type.
fn constant(value: &serde_json::Value) -> Value {
    match value {
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::Int(i)
            } else {
                Value::Float(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        serde_json::Value::String(s) => Value::Str(s.clone()),
        _ => Value::Null,
    }
}

fn typed_constant(value: &serde_json::Value, typ: Option<&FieldType>) -> Value {
    match (constant(value), typ) {
        (Value::Int(i), Some(FieldType::Float)) => Value::Float(i as f64),
        (v, _) => v,
    }
}

/// What every rule has.
pub struct Head {
    pub name: String,
    pub kind: String,
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

pub struct RegexRule {
    pub head: Head,
    pub anchors: Vec<Finder<'static>>,
    pub unless: Vec<Finder<'static>>,
    full: Compiled,
    search: Compiled,
    find: Vec<Compiled>,
    constants: Vec<(String, Value)>,
    templates: Vec<(String, String)>,
    derive: Vec<(String, String, String)>,
    types: HashMap<String, FieldType>,
}

pub struct StatsKey {
    field: Option<String>,
    units: Vec<String>,
    value: Option<Compiled>,
    pattern: Option<Compiled>,
}

pub struct StatsRule {
    pub head: Head,
    pub first: Vec<Finder<'static>>,
    title: Compiled,
    search_title: Compiled,
    require: Vec<String>,
    keys: HashMap<String, StatsKey>,
    key_patterns: Vec<StatsKey>,
    constants: Vec<(String, Value)>,
    types: HashMap<String, FieldType>,
}

pub enum Rule {
    Regex(RegexRule),
    Stats(StatsRule),
    /// a rule only the reference parser runs: a line it could take is left to it
    Reference { head: Head, anchors: Vec<Finder<'static>>, first: Vec<Finder<'static>> },
}

fn finders(items: &[String], suffix: &str) -> Vec<Finder<'static>> {
    items.iter().map(|s| Finder::new(format!("{s}{suffix}").as_bytes()).into_owned()).collect()
}

fn contains_all(text: &str, needles: &[Finder<'static>]) -> bool {
    needles.iter().all(|f| f.find(text.as_bytes()).is_some())
}

fn contains_any(text: &str, needles: &[Finder<'static>]) -> bool {
    needles.iter().any(|f| f.find(text.as_bytes()).is_some())
}

impl Rule {
    pub fn from_spec(rule: &spec::Rule) -> Result<Rule, String> {
        Ok(match rule {
            spec::Rule::Regex {
                name, kind, fallback, levels, anchors, unless, full, search, find, constants, templates, derive,
                types,
            } => {
                let types = types_of(types)?;
                Rule::Regex(RegexRule {
                    head: Head { name: name.clone(), kind: kind.clone(), fallback: *fallback,
                                 levels: levels.as_ref().map(|l| l.iter().cloned().collect()) },
                    anchors: finders(anchors, ""),
                    unless: finders(unless, ""),
                    full: Compiled::new(full, name)?,
                    search: Compiled::new(search, name)?,
                    find: find.iter().map(|p| Compiled::new(p, name)).collect::<Result<_, _>>()?,
                    constants: constants.iter().map(|(k, v)| (k.clone(), typed_constant(v, types.get(k)))).collect(),
                    templates: templates.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                    derive: derive.iter().map(|(k, (f, s))| (k.clone(), f.clone(), s.clone())).collect(),
                    types,
                })
            }
            spec::Rule::Stats {
                name, kind, levels, title, search_title, first, require, keys, key_patterns, constants, types,
            } => {
                let types = types_of(types)?;
                let entry = |e: &spec::StatsEntry| -> Result<StatsKey, String> {
                    Ok(StatsKey {
                        field: e.field.clone(),
                        units: e.units.clone(),
                        value: e.value.as_ref().map(|p| Compiled::new(p, name)).transpose()?,
                        pattern: e.pattern.as_ref().map(|p| Compiled::new(p, name)).transpose()?,
                    })
                };
                Rule::Stats(StatsRule {
                    head: Head { name: name.clone(), kind: kind.clone(), fallback: false,
                                 levels: levels.as_ref().map(|l| l.iter().cloned().collect()) },
                    first: finders(first, KEY_SEPARATOR),
                    title: Compiled::new(title, name)?,
                    search_title: Compiled::new(search_title, name)?,
                    require: require.clone(),
                    keys: keys.iter().map(|e| Ok((e.key.clone(), entry(e)?))).collect::<Result<_, String>>()?,
                    key_patterns: key_patterns.iter().map(entry).collect::<Result<_, _>>()?,
                    constants: constants.iter().map(|(k, v)| (k.clone(), typed_constant(v, types.get(k)))).collect(),
                    types,
                })
            }
            spec::Rule::Reference { name, kind, fallback, anchors, first } => Rule::Reference {
                head: Head { name: name.clone(), kind: kind.clone(), fallback: *fallback, levels: None },
                anchors: finders(anchors, ""),
                first: finders(first, KEY_SEPARATOR),
            },
        })
    }

    pub fn head(&self) -> &Head {
        match self {
            Rule::Regex(r) => &r.head,
            Rule::Stats(r) => &r.head,
            Rule::Reference { head, .. } => head,
        }
    }

    /// Whether the rule may apply to `text` at all (anchors, `unless`, first keys).
    pub fn allows_text(&self, text: &str) -> bool {
        match self {
            Rule::Regex(r) => contains_all(text, &r.anchors) && !contains_any(text, &r.unless),
            Rule::Stats(r) => contains_any(text, &r.first),
            Rule::Reference { anchors, first, .. } => {
                if first.is_empty() { contains_all(text, anchors) } else { contains_any(text, first) }
            }
        }
    }
}

impl RegexRule {
    pub fn match_body(&self, body: &str) -> Option<Fields> {
        let caps = self.full.regex.captures(body)?;
        Some(self.fields(&self.full, &caps, body))
    }

    pub fn search(&self, text: &str) -> Option<(usize, Fields)> {
        let caps = self.search.regex.captures(text)?;
        let start = caps.name(MESSAGE_GROUP)?.start();
        Some((start, self.fields(&self.search, &caps, &text[start..])))
    }

    fn fields(&self, compiled: &Compiled, caps: &Captures<'_>, message: &str) -> Fields {
        let mut fields: Fields = self.constants.iter().cloned().collect();
        for (name, aliases) in &compiled.groups {
            let Some(typ) = self.types.get(name) else { continue };
            if let Some(text) = last_capture(caps, aliases) {
                fields.insert(name.clone(), convert(text, *typ));
            }
        }
        for find in &self.find {
            let Some(found) = find.regex.captures(message) else { continue };
            for (name, aliases) in &find.groups {
                let Some(typ) = self.types.get(name) else { continue };
                if let Some(text) = last_capture(&found, aliases) {
                    if matches!(fields.get(name), None | Some(Value::Null)) {
                        fields.insert(name.clone(), convert(text, *typ));
                    }
                }
            }
        }
        for (name, template) in &self.templates {
            let filled = fill_template(template, &fields);
            fields.insert(name.clone(), Value::Str(filled.trim_end_matches([':', ' ']).to_string()));
        }
        for (name, function, source) in &self.derive {
            if let Some(text) = last_capture(caps, compiled.aliases(source)) {
                let typ = self.types.get(name).copied().unwrap_or(FieldType::Float);
                let value = derive(function, text).map(|n| derived_value(function, n, typ)).unwrap_or(Value::Null);
                fields.insert(name.clone(), value);
            }
        }
        fields
    }
}

/// `{name}` in a template replaced by the field's text, as Python's `str()` prints it.
fn fill_template(template: &str, fields: &Fields) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) if close > 0 && after[..close].chars().all(|c| c.is_alphanumeric() || c == '_') => {
                let name = &after[..close];
                out.push_str(&fields.get(name).map(Value::py_str).unwrap_or_default());
                rest = &after[close + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

impl StatsRule {
    pub fn match_body(&self, body: &str) -> Option<Fields> {
        for at in first_key_positions(body, &self.first) {
            if let Some(title) = self.title.regex.captures(&body[..at]) {
                if let Some(fields) = self.pairs(&body[at..], &self.title, &title) {
                    return Some(fields);
                }
            }
        }
        None
    }

    pub fn search(&self, text: &str) -> Option<(usize, Fields)> {
        for at in first_key_positions(text, &self.first) {
            if let Some(title) = self.search_title.regex.captures(&text[..at]) {
                if let Some(fields) = self.pairs(&text[at..], &self.search_title, &title) {
                    return Some((title.name(MESSAGE_GROUP)?.start(), fields));
                }
            }
        }
        None
    }

    fn field_type(&self, name: &str) -> FieldType {
        self.types.get(name).copied().unwrap_or(FieldType::Str)
    }

    fn pairs(&self, text: &str, compiled: &Compiled, title: &Captures<'_>) -> Option<Fields> {
        let pairs = read_pairs(text)?;
        if self.require.iter().any(|k| !pairs.iter().any(|(key, _)| key == k)) {
            return None;
        }
        let mut fields: Fields = self.constants.iter().cloned().collect();
        let mut from_line: HashSet<String> = HashSet::new();
        for (name, aliases) in &compiled.groups {
            if name.starts_with('_') {
                continue;
            }
            if let Some(value) = last_capture(title, aliases) {
                fields.insert(name.clone(), convert(value, self.field_type(name)));
                from_line.insert(name.clone());
            }
        }
        let mut extra: Vec<(String, String)> = Vec::new();
        for (key, value) in pairs {
            let got = self.entry_for(&key).and_then(|(entry, key_caps)| self.value_fields(entry, &value, key_caps));
            match got {
                Some(got) if !got.iter().any(|(name, _)| from_line.contains(name)) => {
                    for (name, v) in got {
                        from_line.insert(name.clone());
                        fields.insert(name, v);
                    }
                }
                _ => extra.push((key, value)),
            }
        }
        if !extra.is_empty() {
            fields.insert("extra".to_string(), Value::Pairs(extra));
        }
        Some(fields)
    }

    fn entry_for<'k>(&self, key: &'k str) -> Option<(&StatsKey, Option<(&Compiled, Captures<'k>)>)> {
        if let Some(entry) = self.keys.get(key) {
            return Some((entry, None));
        }
        for entry in &self.key_patterns {
            let pattern = entry.pattern.as_ref()?;
            if let Some(caps) = pattern.regex.captures(key) {
                return Some((entry, Some((pattern, caps))));
            }
        }
        None
    }

    fn value_fields(&self, entry: &StatsKey, value: &str, key_caps: Option<(&Compiled, Captures<'_>)>) -> Option<Vec<(String, Value)>> {
        let mut out: Vec<(String, Value)> = Vec::new();
        let mut put = |name: &str, v: Value| {
            if let Some(slot) = out.iter_mut().find(|(n, _)| n == name) {
                slot.1 = v;
            } else {
                out.push((name.to_string(), v));
            }
        };
        if let Some((compiled, caps)) = key_caps {
            for (name, aliases) in &compiled.groups {
                if name.starts_with('_') {
                    continue;
                }
                if let Some(text) = last_capture(&caps, aliases) {
                    put(name, convert(text, self.field_type(name)));
                }
            }
        }
        if let Some(compiled) = &entry.value {
            let caps = compiled.regex.captures(value)?;
            for (name, aliases) in &compiled.groups {
                if name.starts_with('_') {
                    continue;
                }
                if let Some(text) = last_capture(&caps, aliases) {
                    put(name, convert(text, self.field_type(name)));
                }
            }
        }
        if let Some(field) = &entry.field {
            let typed = typed_value(value, self.field_type(field), &entry.units)?;
            put(field, typed);
        }
        Some(out)
    }
}

/// A stats value read as its type; a number may be followed by one of `units`.
pub fn typed_value(value: &str, typ: FieldType, units: &[String]) -> Option<Value> {
    match typ {
        FieldType::Int | FieldType::Float => {
            let caps = crate::values::leading_number_re().captures(value)?;
            let unit = caps.get(2).map(|m| m.as_str()).unwrap_or("");
            if !unit.is_empty() && !units.iter().any(|u| u == unit) {
                return None;
            }
            match convert(&caps[1], typ) {
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
