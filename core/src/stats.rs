//! Stats messages as `key: value` pairs (mirrors `logparse.parse.stats`).

use memchr::memmem::Finder;

pub const PAIR_SEPARATOR: &str = ", ";
pub const KEY_SEPARATOR: &str = ": ";
const TRAILING: [char; 4] = [' ', '\t', ',', '.'];

/// The `key: value` pairs of `text`, or None when it does not begin with a key. A value continued
/// by pieces without a key is the text from its start to the end of its last piece.
pub fn read_pairs(text: &str) -> Option<Vec<(&str, &str)>> {
    let text = text.trim_end_matches(TRAILING);
    let bytes = text.as_bytes();
    let mut pairs: Vec<(&str, &str)> = Vec::with_capacity(16);
    let mut value_start = 0usize;
    let mut piece_start = 0usize;
    loop {
        // the next ", " (a comma followed by a space)
        let mut piece_end = text.len();
        let mut at = piece_start;
        while let Some(i) = memchr::memchr(b',', &bytes[at..]) {
            let j = at + i;
            if bytes.get(j + 1) == Some(&b' ') {
                piece_end = j;
                break;
            }
            at = j + 1;
        }
        // the first ": " in the piece
        let piece = &bytes[piece_start..piece_end];
        let mut cut = None;
        let mut at = 0;
        while let Some(i) = memchr::memchr(b':', &piece[at..]) {
            let j = at + i;
            if piece.get(j + 1) == Some(&b' ') {
                cut = Some(j);
                break;
            }
            at = j + 1;
        }
        match cut {
            Some(cut) if cut > 0 => {
                value_start = piece_start + cut + KEY_SEPARATOR.len();
                pairs.push((&text[piece_start..piece_start + cut], &text[value_start..piece_end]));
            }
            _ => {
                let last = pairs.last_mut()?;
                last.1 = &text[value_start..piece_end];
            }
        }
        if piece_end >= text.len() {
            break;
        }
        piece_start = piece_end + PAIR_SEPARATOR.len();
    }
    Some(pairs)
}

/// Every position where one of the first keys (with its separator) begins, in order.
pub fn first_key_positions(text: &str, needles: &[Finder<'static>]) -> Vec<usize> {
    let mut found: Vec<usize> = Vec::new();
    for finder in needles {
        found.extend(finder.find_iter(text.as_bytes()));
    }
    found.sort_unstable();
    found.dedup();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_pairs_with_commas_inside_values() {
        let pairs = read_pairs("#token: full=1, swa=2, token usage: 0.5, ").unwrap();
        assert_eq!(pairs, vec![("#token", "full=1, swa=2"), ("token usage", "0.5")]);
        assert!(read_pairs("no key here").is_none());
        assert_eq!(read_pairs("a: 1, , b: 2").unwrap(), vec![("a", "1, "), ("b", "2")]);
    }
}
