//! "Did you mean ...?" suggestions by edit distance.

/// Levenshtein distance between two strings, case-insensitively.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The candidate closest to `word`, if it is close enough to be a plausible typo.
pub fn nearest<'a, I>(word: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let limit = (word.chars().count() / 3).max(2);
    candidates
        .into_iter()
        .map(|c| (edit_distance(word, c), c))
        .filter(|(d, _)| *d <= limit)
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
