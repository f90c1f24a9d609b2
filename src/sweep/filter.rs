//! The `--filter` language over the algorithm registry: name, family,
//! provider, level and kind terms, exclusions, and the closest names
//! offered when a pattern matches nothing.

use crate::core::catalog::Kind;
use crate::sweep::registry::Entry;
use anyhow::{bail, Result};

/// Lower-case with separators removed, for loose name matching.
pub fn normalize(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '*' || *c == '+')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Other names accepted for a family, normalised: (alias, name). FIPS 206
/// names Falcon FN-DSA, so `FN-DSA-512` selects Falcon-512 (and
/// `FN-DSA*` every Falcon set).
pub const ALIASES: [(&str, &str); 1] = [("fndsa", "falcon")];

/// A normalised pattern with a leading alias replaced by what it stands for.
pub fn dealias(normalized: &str) -> String {
    for (alias, name) in ALIASES {
        if let Some(rest) = normalized.strip_prefix(alias) {
            return format!("{name}{rest}");
        }
    }
    normalized.to_string()
}

fn glob(pattern: &str, text: &str) -> bool {
    // Iterative glob with `*` only.
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// One `--filter` term.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Term {
    /// A name pattern: case- and separator-insensitive; `*` is a wildcard,
    /// otherwise a substring; pqc-sig-bench-c's spelling of a name
    /// (`P-256`, `RSA-PKCS1v15-2048`) matches too.
    Name(String),
    /// `family:NAME` (same matching as names).
    Family(String),
    /// `provider:liboqs|openssl|composite`.
    Provider(String),
    /// `level:N` (NIST category).
    Level(u8),
    /// `kind:kem|sig`.
    Kind(Kind),
}

fn pattern_matches(pattern: &str, text: &str) -> bool {
    let (p, t) = (dealias(&normalize(pattern)), normalize(text));
    if p.contains('*') {
        glob(&p, &t)
    } else {
        t.contains(&p)
    }
}

impl Term {
    /// Parses `family:x`, `provider:x`, `level:n`, `kind:x` or a name pattern.
    pub fn parse(s: &str) -> Result<Term> {
        let s = s.trim();
        let Some((k, v)) = s.split_once(':') else {
            return Ok(Term::Name(s.to_string()));
        };
        let v = v.trim();
        Ok(match k.trim().to_ascii_lowercase().as_str() {
            "family" => Term::Family(v.to_string()),
            "provider" => {
                let valid = ["liboqs", "openssl", "composite"];
                let p = v.to_ascii_lowercase();
                if !valid.contains(&p.as_str()) {
                    bail!("unknown provider '{v}' in --filter; valid: {}", valid.join(", "));
                }
                Term::Provider(p)
            }
            "level" | "nist" => match v.trim_start_matches(['L', 'l']).parse::<u8>() {
                Ok(n) if (1..=5).contains(&n) => Term::Level(n),
                _ => bail!("invalid NIST level '{v}' in --filter: use 1 to 5"),
            },
            "kind" => match v.to_ascii_lowercase().as_str() {
                "kem" => Term::Kind(Kind::Kem),
                "sig" | "signature" => Term::Kind(Kind::Signature),
                _ => bail!("invalid kind '{v}' in --filter: use kem or sig"),
            },
            other => bail!(
                "unknown --filter key '{other}:'; use family:, provider:, level:, kind: or a name pattern, each with a leading ! to exclude (!family:XMSS)"
            ),
        })
    }
    fn field(&self) -> u8 {
        match self {
            // Names and families both say what to run: alternatives.
            Term::Name(_) | Term::Family(_) => 0,
            Term::Provider(_) => 2,
            Term::Level(_) => 3,
            Term::Kind(_) => 4,
        }
    }
    /// Whether `e` matches this term.
    pub fn matches(&self, e: &Entry) -> bool {
        match self {
            Term::Name(p) => {
                pattern_matches(p, &e.name)
                    || pattern_matches(p, crate::core::catalog::sig_bench_name(&e.name))
            }
            Term::Family(p) => pattern_matches(p, &e.family),
            Term::Provider(p) => e.provider.name() == p,
            Term::Level(n) => e.nist_level == Some(*n),
            Term::Kind(k) => e.kind == *k,
        }
    }
}

/// A parsed `--filter`. Inclusive terms choose: name patterns and
/// `family:` terms are alternatives (OR), and so are the terms of each of
/// `provider:`, `level:` and `kind:`; those groups must all hold (AND); no
/// inclusive term chooses everything. Exclusive terms, any term with a
/// leading `!` (`!family:XMSS`, `!Falcon-512`, `!provider:openssl`), then
/// take away every algorithm that matches any of them, as pqc-sig-bench-c's
/// `run_liboqs_no_stfl` leaves out the stateful schemes.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    include: Vec<Term>,
    exclude: Vec<Term>,
}

impl Filter {
    /// Parses comma-separated terms from every `--filter` given.
    pub fn parse(args: &[String]) -> Result<Filter> {
        let mut f = Filter::default();
        for a in args {
            for t in a.split(',') {
                let t = t.trim();
                let (exclude, term) = match t.strip_prefix('!') {
                    Some(rest) => (true, rest.trim()),
                    None => (false, t),
                };
                let empty = term.is_empty()
                    || term
                        .split_once(':')
                        .is_some_and(|(k, v)| k.trim().is_empty() || v.trim().is_empty());
                if empty && exclude {
                    bail!(
                        "invalid --filter {:?}: empty exclusion {:?}, which names nothing; write `!` before a term, e.g. `!family:XMSS`",
                        a,
                        t
                    );
                }
                if empty {
                    bail!(
                        "invalid --filter {:?}: it holds an empty term ({:?}), which would select every algorithm; give a name pattern, family:NAME, provider:NAME, level:N or kind:kem|sig (each may start with `!` to exclude), comma-separated, or leave --filter out",
                        a,
                        t
                    );
                }
                if exclude {
                    f.exclude.push(Term::parse(term)?);
                } else {
                    f.include.push(Term::parse(term)?);
                }
            }
        }
        Ok(f)
    }
    /// True when no term was given.
    pub fn is_empty(&self) -> bool {
        self.include.is_empty() && self.exclude.is_empty()
    }
    /// True when some term chooses (rather than only excludes).
    pub fn has_inclusive(&self) -> bool {
        !self.include.is_empty()
    }
    /// Whether `e` passes.
    pub fn matches(&self, e: &Entry) -> bool {
        let chosen = (0..5u8).all(|f| {
            let of: Vec<_> = self.include.iter().filter(|t| t.field() == f).collect();
            of.is_empty() || of.iter().any(|t| t.matches(e))
        });
        chosen && !self.exclude.iter().any(|t| t.matches(e))
    }
    /// The entries that pass; an error naming the closest names when a
    /// name or family pattern, inclusive or exclusive, matches nothing at
    /// all (a misspelt exclusion would otherwise exclude nothing silently).
    pub fn select(&self, all: &[Entry]) -> Result<Vec<Entry>> {
        for (t, bang) in self
            .include
            .iter()
            .map(|t| (t, ""))
            .chain(self.exclude.iter().map(|t| (t, "!")))
        {
            let (Term::Name(p) | Term::Family(p)) = t else {
                continue;
            };
            if !all.iter().any(|e| t.matches(e)) {
                let (names, key): (Vec<&str>, &str) = match t {
                    Term::Name(_) => (all.iter().map(|e| e.name.as_str()).collect(), ""),
                    _ => (all.iter().map(|e| e.family.as_str()).collect(), "family:"),
                };
                bail!(
                    "no algorithm matches '{bang}{key}{p}'; closest: {}",
                    closest(p, &names, 5).join(", ")
                );
            }
        }
        let v: Vec<Entry> = all.iter().filter(|e| self.matches(e)).cloned().collect();
        if v.is_empty() {
            bail!("no algorithm passes every --filter term together");
        }
        Ok(v)
    }
}

/// Levenshtein distance.
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

/// The `n` names closest to `query` (normalised edit distance), distinct.
pub fn closest(query: &str, names: &[&str], n: usize) -> Vec<String> {
    let q = dealias(&normalize(query));
    let mut scored: Vec<(usize, &str)> = names
        .iter()
        .map(|name| (edit_distance(&q, &normalize(name)), *name))
        .collect();
    scored.sort();
    let mut out: Vec<String> = vec![];
    for (_, name) in scored {
        if !out.iter().any(|o| o == name) {
            out.push(name.to_string());
        }
        if out.len() == n {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::registry::{all, Provider};

    /// The names of the entries of `all` that `filter` selects.
    fn names(all: &[Entry], filter: &str) -> Vec<String> {
        Filter::parse(&[filter.into()])
            .unwrap()
            .select(all)
            .unwrap()
            .into_iter()
            .map(|e| e.name)
            .collect()
    }

    #[test]
    fn globs_and_substrings() {
        assert!(pattern_matches("falcon*512", "Falcon-padded-512"));
        assert!(pattern_matches("mldsa65", "ML-DSA-65"));
        assert!(!pattern_matches("mldsa65", "ML-DSA-87"));
        assert!(glob("a*c", "abbc") && !glob("a*c", "abcd"));
    }

    #[test]
    fn fn_dsa_names_select_falcon() {
        let all = all();
        assert_eq!(names(&all, "FN-DSA-512"), vec!["Falcon-512"]);
        assert_eq!(
            names(&all, "fn_dsa_1024"),
            vec!["Falcon-1024", "Falcon-1024+Ed25519"]
        );
        assert_eq!(
            names(&all, "family:FN-DSA").len(),
            4,
            "{:?}",
            names(&all, "family:FN-DSA")
        );
        let e = Filter::parse(&["FN-DSA-513".into()])
            .unwrap()
            .select(&all)
            .unwrap_err();
        assert!(e.to_string().contains("Falcon-512"), "{e}");
    }

    #[test]
    fn closest_names_come_first() {
        let c = closest("ML-DSA-66", &["Ed25519", "ML-DSA-65", "ML-KEM-768"], 2);
        assert_eq!(c[0], "ML-DSA-65");
    }

    #[test]
    fn filters_combine_keys_with_and() {
        let all = all();
        let f = Filter::parse(&["provider:openssl,level:3,kind:sig".into()]).unwrap();
        let v = f.select(&all).unwrap();
        assert!(v
            .iter()
            .all(|e| e.provider == Provider::Openssl && e.nist_level == Some(3)));
        assert!(v.iter().any(|e| e.name == "Ed448"));
        let e = Filter::parse(&["Falcn-512".into()])
            .unwrap()
            .select(&all)
            .unwrap_err();
        assert!(e.to_string().contains("Falcon-512"), "{e}");
        assert!(Filter::parse(&["level:9".into()]).is_err());
    }

    #[test]
    fn exclusions_take_away_what_they_match() {
        let all = all();
        let pick = |f: &str| Filter::parse(&[f.into()]).unwrap().select(&all);
        let stateful = |e: &Entry| ["XMSS", "XMSS^MT", "LMS"].contains(&e.family.as_str());
        assert!(all.iter().any(stateful));
        // Exclusions alone start from everything.
        let v = pick("!family:XMSS,!family:LMS").unwrap();
        assert!(
            !v.iter().any(stateful),
            "{:?}",
            v.iter().find(|e| stateful(e))
        );
        assert_eq!(v.len(), all.iter().filter(|e| !stateful(e)).count());
        // With inclusive terms: chosen first, then taken away.
        let v = pick("provider:liboqs,!family:XMSS,!family:LMS").unwrap();
        assert!(!v.is_empty());
        assert!(v
            .iter()
            .all(|e| e.provider == Provider::Liboqs && !stateful(e)));
        let v = pick("family:ML-DSA,!ML-DSA-87,!provider:openssl").unwrap();
        let names: Vec<&str> = v.iter().map(|e| e.name.as_str()).collect();
        assert!(
            names.contains(&"ML-DSA-44") && !names.contains(&"ML-DSA-87"),
            "{names:?}"
        );
        assert!(v.iter().all(|e| e.provider != Provider::Openssl));
        // A misspelt exclusion is an error naming what exists, not a no-op.
        let e = pick("!family:XMSSS").unwrap_err().to_string();
        assert!(e.contains("!family:XMSSS") && e.contains("XMSS"), "{e}");
        let e = Filter::parse(&["!".into()]).unwrap_err().to_string();
        assert!(e.contains("empty exclusion"), "{e}");
        let e = Filter::parse(&["!provider:gnutls".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("gnutls") && e.contains("liboqs"), "{e}");
        // Everything excluded is said, not an empty run.
        assert!(pick("!kind:kem,!kind:sig").is_err());
    }

    #[test]
    fn sig_bench_spellings_select_our_algorithms() {
        let all = all();
        assert_eq!(names(&all, "RSA-PKCS1v15-2048"), vec!["RSA-PKCS1-2048"]);
        assert!(names(&all, "P-384").contains(&"ECDSA-P384".to_string()));
    }
}
