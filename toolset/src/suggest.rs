//! "Did you mean": one edit distance and one closest-name rule for every place that suggests a
//! name (unknown tool arguments in [`crate::validate`], unknown names in an overrides file,
//! unknown operations in dynamic mode). They used to carry three copies of the same distance.

/// Levenshtein distance between `a` and `b`, in chars (insertions, deletions, substitutions).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Names longer than this get no suggestion: the distance costs `len(a) * len(b)`, and a name
/// that long (sent by a client) is not a typo.
pub const MAX_NAME_LEN: usize = 256;

/// How many edits a suggestion may be away: `max(len(name), len(candidate)) / divisor`, and at
/// least 2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tolerance {
    pub divisor: usize,
}

impl Tolerance {
    /// A third of the longer name: for arguments sent by a client (short names, many near ones).
    pub const THIRD: Tolerance = Tolerance { divisor: 3 };
    /// Half the longer name: for names a person wrote in a configuration file.
    pub const HALF: Tolerance = Tolerance { divisor: 2 };

    fn allows(self, distance: usize, name: &str, candidate: &str) -> bool {
        distance <= (candidate.len().max(name.len()) / self.divisor.max(1)).max(2)
    }
}

/// The candidate closest to `name` (ASCII case-insensitive edit distance) within `tolerance`.
/// Ties go to the first candidate in `candidates`' order.
pub fn closest<'a>(name: &str, candidates: &[&'a str], tolerance: Tolerance) -> Option<&'a str> {
    if name.len() > MAX_NAME_LEN {
        return None;
    }
    let lower = name.to_ascii_lowercase();
    candidates
        .iter()
        .map(|c| (edit_distance(&lower, &c.to_ascii_lowercase()), *c))
        .filter(|(d, c)| tolerance.allows(*d, name, c))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_edits() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "ab"), 2);
        assert_eq!(edit_distance("ab", ""), 2);
        assert_eq!(edit_distance("héllo", "hello"), 1);
    }

    #[test]
    fn closest_within_tolerance() {
        assert_eq!(
            closest("lstPets", &["listPets", "getPet"], Tolerance::HALF),
            Some("listPets")
        );
        assert_eq!(closest("zzzzzz", &["listPets"], Tolerance::HALF), None);
        assert_eq!(
            closest("PETID", &["petId", "tags"], Tolerance::THIRD),
            Some("petId")
        );
        // Six chars: a third allows 2 edits, half allows 3.
        assert_eq!(closest("abcxyz", &["abcdef"], Tolerance::THIRD), None);
        assert_eq!(
            closest("abcxyz", &["abcdef"], Tolerance::HALF),
            Some("abcdef")
        );
        // Ties: the first candidate.
        assert_eq!(closest("ab", &["ax", "ay"], Tolerance::THIRD), Some("ax"));
        assert_eq!(closest(&"a".repeat(300), &["a"], Tolerance::HALF), None);
    }
}
