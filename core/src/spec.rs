//! The grammar of one engine as Python sends it (`logparse.engine.spec`): plain data, every regex
//! already in this crate's syntax.

use serde::Deserialize;
use std::collections::BTreeMap;

/// A translated regex and, per field name, its group names in pattern order.
#[derive(Debug, Clone, Deserialize)]
pub struct Pattern {
    pub pattern: String,
    pub groups: BTreeMap<String, Vec<String>>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Token {
    pub name: String,
    pub pattern: String,
    pub groups: BTreeMap<String, Vec<String>>,
    pub partial: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Stamp {
    pub name: String,
    pub pattern: String,
    pub groups: BTreeMap<String, Vec<String>>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Container {
    pub message: Vec<String>,
    pub time: Vec<String>,
    pub level: Vec<String>,
    pub pid: Vec<String>,
    pub rank: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct StatsEntry {
    pub key: String,
    pub field: Option<String>,
    pub units: Vec<String>,
    pub value: Option<Pattern>,
    pub pattern: Option<Pattern>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type")]
pub enum Rule {
    #[serde(rename = "regex")]
    Regex {
        name: String,
        kind: String,
        fallback: bool,
        levels: Option<Vec<String>>,
        anchors: Vec<String>,
        unless: Vec<String>,
        full: Pattern,
        search: Pattern,
        find: Vec<Pattern>,
        constants: BTreeMap<String, serde_json::Value>,
        templates: BTreeMap<String, String>,
        derive: BTreeMap<String, (String, String)>,
        types: BTreeMap<String, String>,
    },
    #[serde(rename = "stats")]
    Stats {
        name: String,
        kind: String,
        levels: Option<Vec<String>>,
        title: Pattern,
        search_title: Pattern,
        first: Vec<String>,
        require: Vec<String>,
        unless: Vec<String>,
        keys: Vec<StatsEntry>,
        key_patterns: Vec<StatsEntry>,
        constants: BTreeMap<String, serde_json::Value>,
        types: BTreeMap<String, String>,
    },
}

/// A derived column: its name and its (source column, factor) pairs, the first source set winning.
pub type DerivedColumn = (String, Vec<(String, f64)>);

#[derive(Debug, Clone, Deserialize)]
pub struct Spec {
    pub version: u32,
    pub engine: String,
    pub match_limit: usize,
    pub untyped_levels: Vec<String>,
    pub levels: BTreeMap<String, String>,
    pub months: BTreeMap<String, u32>,
    pub container: Container,
    pub tokens: Vec<Token>,
    pub stamps: Vec<Stamp>,
    pub epoch_completeness: u8,
    pub rules: Vec<Rule>,
    /// kind -> [(column, type)], as `logparse.store.schema.core_columns` gives them
    pub kinds: BTreeMap<String, Vec<(String, String)>>,
    /// kind -> derived columns: (column, [(source column, factor)]), the first source set wins
    #[serde(default)]
    pub derived: BTreeMap<String, Vec<DerivedColumn>>,
    /// kind -> column -> Parquet field metadata (`description`, `unit`, ...)
    #[serde(default)]
    pub metadata: BTreeMap<String, BTreeMap<String, BTreeMap<String, String>>>,
}

impl Spec {
    pub fn from_json(text: &str) -> Result<Spec, String> {
        serde_json::from_str(text).map_err(|e| format!("bad core spec: {e}"))
    }
}
