//! "Did you mean ...?" suggestions by edit distance.

/// Words longer than this get no suggestion: a typo is a slip in a name of a few dozen
/// characters, and comparing long keys would cost the square of their length.
pub const LONGEST_SUGGESTED: usize = 256;

/// Levenshtein distance between two strings, case-insensitively.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    distance_within(&a, &b, usize::MAX).unwrap_or(usize::MAX)
}

/// The edit distance of `a` and `b` if it is at most `limit`. Only the band of `limit` cells
/// either side of the diagonal can stay within it, so the cost is `|a| × (2 limit + 1)`, and
/// the walk stops as soon as a whole row is past the limit.
fn distance_within(a: &[char], b: &[char], limit: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > limit {
        return None;
    }
    let far = usize::MAX / 2;
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![far; b.len() + 1];
    for i in 1..=a.len() {
        let lo = i.saturating_sub(limit).max(1);
        let hi = i.saturating_add(limit).min(b.len());
        cur.fill(far);
        cur[0] = i;
        let mut best = cur[0];
        for j in lo..=hi {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            best = best.min(cur[j]);
        }
        if best > limit {
            return None;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    Some(prev[b.len()]).filter(|&d| d <= limit)
}

/// The candidate closest to `word`, if it is close enough to be a plausible typo.
pub fn nearest<'a, I>(word: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let word: Vec<char> = word.to_lowercase().chars().collect();
    if word.len() > LONGEST_SUGGESTED {
        return None;
    }
    let limit = (word.len() / 3).max(2);
    candidates
        .into_iter()
        .filter(|c| c.len() <= 4 * (LONGEST_SUGGESTED + limit))
        .filter_map(|c| {
            let cand: Vec<char> = c.to_lowercase().chars().collect();
            distance_within(&word, &cand, limit).map(|d| (d, c))
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// `" (did you mean `x`?)"` or an empty string.
pub fn did_you_mean<'a, I>(word: &str, candidates: I) -> String
where
    I: IntoIterator<Item = &'a str>,
{
    match nearest(word, candidates) {
        Some(c) => format!(" (did you mean `{c}`?)"),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("pagerank", "pagerank"), 0);
        assert_eq!(edit_distance("pagernk", "pagerank"), 1);
        assert_eq!(edit_distance("DAMPING", "damping"), 0);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn the_band_agrees_with_the_full_distance() {
        let words = [
            "", "a", "ab", "kitten", "sitting", "pagerank", "pagernak", "xyzzy",
        ];
        for a in words {
            for b in words {
                let (ca, cb): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
                let full = edit_distance(a, b);
                for limit in 0..10 {
                    let banded = distance_within(&ca, &cb, limit);
                    assert_eq!(
                        banded,
                        Some(full).filter(|&d| d <= limit),
                        "{a} {b} {limit}"
                    );
                }
            }
        }
    }

    #[test]
    fn long_words_get_no_suggestion_and_cost_little() {
        let key = "y".repeat(1 << 20);
        let near = "y".repeat((1 << 20) - 1);
        assert_eq!(nearest(&key, [near.as_str()]), None);
        let short = "a".repeat(LONGEST_SUGGESTED);
        let typo = format!("b{}", &short[1..]);
        assert_eq!(nearest(&typo, [short.as_str()]), Some(short.as_str()));
    }

    #[test]
    fn suggests_only_plausible_names() {
        assert_eq!(nearest("pagernak", ["bfs", "pagerank"]), Some("pagerank"));
        assert_eq!(nearest("xyz", ["bfs", "pagerank"]), None);
        assert_eq!(
            did_you_mean("thraeds", ["threads", "cache"]),
            " (did you mean `threads`?)"
        );
    }
}
