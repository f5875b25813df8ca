//! A grammar regex compiled once, matched without allocating: its capture slots are reused, and
//! each field's groups are known by index.

use regex::{CaptureLocations, Regex};
use std::cell::RefCell;
use std::collections::BTreeMap;

/// A regex and, per field (by the caller's index), the group indices that give it, in pattern order.
pub struct Compiled {
    pub regex: Regex,
    locs: RefCell<CaptureLocations>,
    group_index: BTreeMap<String, usize>,
    // no end anchor: a match's groups can be read on the haystack cut at the match's end, which
    // keeps the capture engine's work to the match (the match itself is found by a DFA)
    cuttable: bool,
    // one-pass patterns are matched with their captures at once (the fastest engine); others are
    // found by a DFA first, then their groups read on the match alone
    onepass: bool,
    // the last text whose groups `captures_memo` read (the capture slots still hold them)
    memo: RefCell<String>,
}

/// The spans of one match's groups (byte offsets into the haystack).
pub struct Spans<'c> {
    compiled: &'c Compiled,
}

impl Compiled {
    pub fn new(pattern: &str, what: &str) -> Result<Compiled, String> {
        let regex = Regex::new(pattern).map_err(|e| format!("{what}: {e}"))?;
        let locs = RefCell::new(regex.capture_locations());
        let group_index =
            regex.capture_names().enumerate().filter_map(|(i, n)| n.map(|n| (n.to_string(), i))).collect();
        let cuttable =
            !pattern.contains('$') && !pattern.contains(r"\z") && !pattern.contains(r"\b") && !pattern.contains(r"\B");
        let onepass = regex_automata::dfa::onepass::DFA::new(pattern).is_ok();
        Ok(Compiled { regex, locs, group_index, cuttable, onepass, memo: RefCell::new(String::from("\u{0}")) })
    }

    /// The indices of groups `names` (those that exist).
    pub fn indices(&self, names: &[String]) -> Vec<usize> {
        names.iter().filter_map(|n| self.group_index.get(n).copied()).collect()
    }

    pub fn index(&self, name: &str) -> Option<usize> {
        self.group_index.get(name).copied()
    }

    /// Match `text` (the pattern carries its own anchors); Some(spans) on a match.
    pub fn captures(&self, text: &str) -> Option<Spans<'_>> {
        let mut locs = self.locs.borrow_mut();
        if self.onepass || !self.cuttable {
            self.regex.captures_read(&mut locs, text)?;
        } else {
            self.regex.captures_read(&mut locs, &text[..self.regex.find(text)?.end()])?;
        }
        Some(Spans { compiled: self })
    }

    /// Like `captures`, remembering the last match: when a line's match is the same text as the
    /// last one's, its groups are where they were, without running the capture engine again.
    /// (Only for patterns whose groups can be read on the match alone; nothing else may use this
    /// pattern's capture slots.)
    pub fn captures_memo(&self, text: &str) -> Option<Spans<'_>> {
        if !self.cuttable || self.onepass {
            return self.captures(text);
        }
        let end = self.regex.find(text)?.end();
        let matched = &text[..end];
        let mut memo = self.memo.borrow_mut();
        if *memo != matched {
            let mut locs = self.locs.borrow_mut();
            self.regex.captures_read(&mut locs, matched)?;
            memo.clear();
            memo.push_str(matched);
        }
        Some(Spans { compiled: self })
    }

    pub fn is_match(&self, text: &str) -> bool {
        self.regex.is_match(text)
    }
}

impl Spans<'_> {
    /// The span of group `i`, if it took part.
    pub fn get(&self, i: usize) -> Option<(usize, usize)> {
        self.compiled.locs.borrow().get(i)
    }

    /// The last of `groups` that captured, as text of `haystack`.
    pub fn last<'t>(&self, haystack: &'t str, groups: &[usize]) -> Option<&'t str> {
        let locs = self.compiled.locs.borrow();
        groups.iter().rev().find_map(|i| locs.get(*i)).map(|(s, e)| &haystack[s..e])
    }

    pub fn end(&self) -> usize {
        self.get(0).map(|(_, e)| e).unwrap_or(0)
    }
}
