//! Lists in messages kept short: a message names a count and the first
//! few of a list, never the whole of one that may run to thousands (files,
//! ranks, records, symbols); the whole list goes to the debug log (`-v`).
//! The edit distance orders names by how near they are to one typed.

/// How many items a message names before it says how many more there are.
pub const SHOWN: usize = 3;

/// `items` joined by `sep` when there are at most `shown`, else the first
/// `shown` and `and N more`; `items` in full are logged at debug level
/// (`-v`) under `what` when some were left unsaid.
pub fn few<S: AsRef<str>>(what: &str, items: &[S], shown: usize, sep: &str) -> String {
    let all: Vec<&str> = items.iter().map(AsRef::as_ref).collect();
    if all.len() <= shown {
        return all.join(sep);
    }
    log::debug!("{what}, all {}: {}", all.len(), all.join(sep));
    format!(
        "{}{sep}and {} more (all with -v)",
        all[..shown].join(sep),
        all.len() - shown
    )
}

/// The edit distance (insertions, deletions, substitutions) between two
/// strings, by characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diag + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_list_is_cut_to_a_few_and_a_count() {
        let items: Vec<String> = (0..100).map(|i| format!("f{i}")).collect();
        assert_eq!(
            few("files", &items, 3, ", "),
            "f0, f1, f2, and 97 more (all with -v)"
        );
        assert_eq!(few("files", &items[..3], 3, ", "), "f0, f1, f2");
    }

    #[test]
    fn the_edit_distance_counts_single_character_edits() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("libqs-cpu", "liboqs-cpu"), 1);
        assert_eq!(edit_distance("", "cupqc"), 5);
    }
}
