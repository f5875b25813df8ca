//! Stats messages as `key: value` pairs (mirrors `logparse.parse.stats`).

pub const PAIR_SEPARATOR: &str = ", ";
pub const KEY_SEPARATOR: &str = ": ";
const TRAILING: [char; 4] = [' ', '\t', ',', '.'];

/// The `key: value` pairs of `text`, or None when it does not begin with a key.
pub fn read_pairs(text: &str) -> Option<Vec<(String, String)>> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for piece in text.trim_end_matches(TRAILING).split(PAIR_SEPARATOR) {
        match piece.find(KEY_SEPARATOR) {
            Some(cut) if cut > 0 => {
                pairs.push((piece[..cut].to_string(), piece[cut + KEY_SEPARATOR.len()..].to_string()));
            }
            _ => {
                let last = pairs.last_mut()?;
                last.1.push_str(PAIR_SEPARATOR);
                last.1.push_str(piece);
            }
        }
    }
    Some(pairs)
}

/// Every position where one of the `first` keys (with its separator) begins, in order.
pub fn first_key_positions(text: &str, needles: &[memchr::memmem::Finder<'static>]) -> Vec<usize> {
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
        assert_eq!(pairs, vec![("#token".into(), "full=1, swa=2".into()), ("token usage".into(), "0.5".into())]);
        assert!(read_pairs("no key here").is_none());
    }
}
