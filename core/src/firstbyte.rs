//! Which bytes a regex match can start with: tokens are only tried where they can match.

use regex_syntax::hir::{Class, Hir, HirKind};

/// A set of bytes.
#[derive(Clone, Copy)]
pub struct ByteSet([bool; 256]);

impl ByteSet {
    pub fn all() -> ByteSet {
        ByteSet([true; 256])
    }

    pub fn contains(&self, b: u8) -> bool {
        self.0[b as usize]
    }

    pub fn none() -> ByteSet {
        ByteSet([false; 256])
    }

    pub fn union(&mut self, other: &ByteSet) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a |= *b;
        }
    }
}

/// The first bytes of the matches of `pattern` (all bytes when it can match empty or cannot be
/// analysed: the set only ever skips tries that cannot succeed).
pub fn first_bytes(pattern: &str) -> ByteSet {
    match regex_syntax::parse(pattern) {
        Ok(hir) => match first(&hir) {
            (set, false) => set,
            (_, true) => ByteSet::all(),
        },
        Err(_) => ByteSet::all(),
    }
}

/// (first bytes, can match empty)
fn first(hir: &Hir) -> (ByteSet, bool) {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => (ByteSet::none(), true),
        HirKind::Literal(lit) => {
            let mut set = ByteSet::none();
            match lit.0.first() {
                Some(b) => {
                    set.0[*b as usize] = true;
                    (set, false)
                }
                None => (set, true),
            }
        }
        HirKind::Class(class) => (class_first(class), false),
        HirKind::Repetition(rep) => {
            let (set, empty) = first(&rep.sub);
            (set, empty || rep.min == 0)
        }
        HirKind::Capture(cap) => first(&cap.sub),
        HirKind::Concat(subs) => {
            let mut set = ByteSet::none();
            for sub in subs {
                let (s, empty) = first(sub);
                set.union(&s);
                if !empty {
                    return (set, false);
                }
            }
            (set, true)
        }
        HirKind::Alternation(subs) => {
            let mut set = ByteSet::none();
            let mut any_empty = false;
            for sub in subs {
                let (s, empty) = first(sub);
                set.union(&s);
                any_empty |= empty;
            }
            (set, any_empty)
        }
    }
}

fn class_first(class: &Class) -> ByteSet {
    let mut set = ByteSet::none();
    match class {
        Class::Bytes(bytes) => {
            for r in bytes.iter() {
                for b in r.start()..=r.end() {
                    set.0[b as usize] = true;
                }
            }
        }
        Class::Unicode(uni) => {
            for r in uni.iter() {
                let (lo, hi) = (r.start() as u32, r.end() as u32);
                for b in lo..=hi.min(0x7f) {
                    set.0[b as usize] = true;
                }
                if hi >= 0x80 {
                    // any non-ASCII character: its UTF-8 lead byte
                    for b in 0xc2..=0xf4u32 {
                        set.0[b as usize] = true;
                    }
                }
            }
        }
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_first_bytes() {
        let s = first_bytes(r"\A\((?P<rank>[A-Za-z_][^()]*?) pid=");
        assert!(s.contains(b'('));
        assert!(!s.contains(b'['));
        let s = first_bytes(r"\A(?:[0-9]{4}|\[)x");
        assert!(s.contains(b'7') && s.contains(b'[') && !s.contains(b'x'));
        assert!(first_bytes(r"\Aa?").contains(b'z'));
    }
}
