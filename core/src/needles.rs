//! Every literal the rules test for (anchors, `unless` strings, first keys), found in one pass.

use aho_corasick::{AhoCorasick, AhoCorasickKind};

/// The literals of all rules; `scan` tells which occur in a text.
#[derive(Clone)]
pub struct Needles {
    literals: Vec<String>,
    automaton: Option<AhoCorasick>,
    ids: Vec<usize>, // automaton pattern -> literal id (empty literals are not searched)
    empty: Vec<bool>,
}

/// Which literals occur in one text.
pub struct Present {
    seen: Vec<bool>,
}

impl Present {
    pub fn has(&self, id: usize) -> bool {
        self.seen[id]
    }
}

impl Needles {
    pub fn new() -> Needles {
        Needles { literals: Vec::new(), automaton: None, ids: Vec::new(), empty: Vec::new() }
    }

    /// The id of `literal` (added if new). Call `build` once all are added.
    pub fn add(&mut self, literal: &str) -> usize {
        if let Some(i) = self.literals.iter().position(|l| l == literal) {
            return i;
        }
        self.literals.push(literal.to_string());
        self.literals.len() - 1
    }

    pub fn build(&mut self) -> Result<(), String> {
        self.empty = self.literals.iter().map(String::is_empty).collect();
        self.ids = (0..self.literals.len()).filter(|i| !self.literals[*i].is_empty()).collect();
        let patterns: Vec<&str> = self.ids.iter().map(|i| self.literals[*i].as_str()).collect();
        self.automaton =
            Some(AhoCorasick::builder().kind(Some(AhoCorasickKind::DFA)).build(patterns).map_err(|e| e.to_string())?);
        Ok(())
    }

    /// Which literals occur in `text` (the empty literal always does).
    pub fn scan(&self, text: &str) -> Present {
        let mut seen: Vec<bool> = self.empty.clone();
        if let Some(ac) = &self.automaton {
            for m in ac.find_overlapping_iter(text) {
                seen[self.ids[m.pattern().as_usize()]] = true;
            }
        }
        Present { seen }
    }
}

impl Default for Needles {
    fn default() -> Self {
        Needles::new()
    }
}
