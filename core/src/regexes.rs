//! A grammar regex compiled once, matched without allocating: its capture slots are reused, and
//! each field's groups are known by index.

use regex::{CaptureLocations, Regex};
use regex_automata::dfa::onepass;
use regex_automata::util::primitives::NonMaxUsize;
use regex_automata::{Anchored, Input};
use std::cell::RefCell;
use std::collections::BTreeMap;

/// An anchored one-pass pattern run by the one-pass DFA itself: a short value or title is matched
/// with its captures in one pass, without the meta engine's set-up for every call.
#[derive(Clone)]
struct OnePass {
    dfa: onepass::DFA,
    cache: RefCell<onepass::Cache>,
    slots: RefCell<Vec<Option<NonMaxUsize>>>,
}

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
    direct: Option<OnePass>,
}

impl Clone for Compiled {
    /// The same compiled regex (shared, cheap) with capture slots of its own.
    fn clone(&self) -> Compiled {
        Compiled {
            regex: self.regex.clone(),
            locs: RefCell::new(self.regex.capture_locations()),
            group_index: self.group_index.clone(),
            cuttable: self.cuttable,
            onepass: self.onepass,
            memo: RefCell::new(String::from("\u{0}")),
            direct: self.direct.as_ref().map(|d| OnePass {
                dfa: d.dfa.clone(),
                cache: RefCell::new(d.dfa.create_cache()),
                slots: RefCell::new(vec![None; d.dfa.get_nfa().group_info().slot_len()]),
            }),
        }
    }
}

/// The spans of one match's groups (byte offsets into the haystack).
pub struct Spans<'c> {
    compiled: &'c Compiled,
    direct: bool, // the groups are in the one-pass DFA's slots, not in `locs`
}

impl Compiled {
    pub fn new(pattern: &str, what: &str) -> Result<Compiled, String> {
        let regex = Regex::new(pattern).map_err(|e| format!("{what}: {e}"))?;
        let locs = RefCell::new(regex.capture_locations());
        let group_index =
            regex.capture_names().enumerate().filter_map(|(i, n)| n.map(|n| (n.to_string(), i))).collect();
        let cuttable =
            !pattern.contains('$') && !pattern.contains(r"\z") && !pattern.contains(r"\b") && !pattern.contains(r"\B");
        let dfa = onepass::DFA::new(pattern).ok();
        let onepass = dfa.is_some();
        // only a pattern anchored at its start means the same searched anchored; matched whole
        // (a value, a stamp, a rule read whole) the DFA beats the meta engine's find-then-capture,
        // which wins on a token matched at the start of a long line
        let whole = pattern.starts_with(r"\A") && pattern.ends_with(r"\z");
        let direct = dfa.filter(|_| whole).map(|dfa| OnePass {
            cache: RefCell::new(dfa.create_cache()),
            slots: RefCell::new(vec![None; dfa.get_nfa().group_info().slot_len()]),
            dfa,
        });
        Ok(Compiled { regex, locs, group_index, cuttable, onepass, memo: RefCell::new(String::from("\u{0}")), direct })
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
        if let Some(d) = &self.direct {
            let input = Input::new(text).anchored(Anchored::Yes);
            let mut slots = d.slots.borrow_mut();
            if let Ok(found) = d.dfa.try_search_slots(&mut d.cache.borrow_mut(), &input, &mut slots) {
                return found.map(|_| Spans { compiled: self, direct: true });
            }
        }
        let mut locs = self.locs.borrow_mut();
        if self.onepass || !self.cuttable {
            self.regex.captures_read(&mut locs, text)?;
        } else {
            self.regex.captures_read(&mut locs, &text[..self.regex.find(text)?.end()])?;
        }
        Some(Spans { compiled: self, direct: false })
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
        Some(Spans { compiled: self, direct: false })
    }
}

impl Spans<'_> {
    /// The span of group `i`, if it took part.
    pub fn get(&self, i: usize) -> Option<(usize, usize)> {
        match (&self.compiled.direct, self.direct) {
            (Some(d), true) => {
                let slots = d.slots.borrow();
                let (start, end) = (slots.get(2 * i)?.as_ref()?, slots.get(2 * i + 1)?.as_ref()?);
                Some((start.get(), end.get()))
            }
            _ => self.compiled.locs.borrow().get(i),
        }
    }

    /// The last of `groups` that captured, as text of `haystack`.
    pub fn last<'t>(&self, haystack: &'t str, groups: &[usize]) -> Option<&'t str> {
        groups.iter().rev().find_map(|i| self.get(*i)).map(|(s, e)| &haystack[s..e])
    }

    pub fn end(&self) -> usize {
        self.get(0).map(|(_, e)| e).unwrap_or(0)
    }
}
