//! A run file's shape, checked on its bytes before anything is built in
//! memory: no object repeats a key (JSON readers disagree on which value
//! wins, so a repeated `ops_per_sec` could show any figure), and no list
//! is longer than pqcprof ever writes (millions of empty records, or
//! millions of samples in one record, would take memory and time out of
//! all proportion to the file). One streaming pass, no values kept.

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;

/// The most entries a run file's `records` (or `symmetric`, `aggregates`)
/// may hold: far above a whole-catalogue sweep or a large cluster merge,
/// far below what would exhaust a reviewer's memory.
pub const MAX_RECORDS: usize = 500_000;

/// The most values any list inside a record may hold (`run_seconds`,
/// `usage`, ...): the largest `--runs` pqcprof accepts.
pub const MAX_SAMPLES: usize = 100_000;

/// The top-level lists that hold one entry per measurement.
const RECORD_LISTS: [&str; 3] = ["records", "symmetric", "aggregates"];

/// Checks `bytes`; `Err((field, message))` names the first repeated key or
/// overlong list. Invalid JSON passes: the full parse names that.
pub fn check(bytes: &[u8]) -> Result<(), (String, String)> {
    let ctx = Ctx::default();
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let result = Node { ctx: &ctx }.deserialize(&mut de);
    match (result, ctx.problem.into_inner()) {
        (Err(_), Some(p)) => Err(p),
        _ => Ok(()),
    }
}

#[derive(Debug)]
enum Step {
    Key(String),
    Index(usize),
}

#[derive(Default)]
struct Ctx {
    path: RefCell<Vec<Step>>,
    problem: RefCell<Option<(String, String)>>,
}

impl Ctx {
    fn path_text(&self) -> String {
        let mut s = String::new();
        for step in self.path.borrow().iter() {
            match step {
                Step::Key(k) if s.is_empty() => s.push_str(k),
                Step::Key(k) => {
                    s.push('.');
                    s.push_str(k);
                }
                Step::Index(i) => s.push_str(&format!("[{i}]")),
            }
        }
        s
    }

    /// The longest list allowed where the path now points.
    fn list_limit(&self) -> (usize, &'static str) {
        match self.path.borrow().as_slice() {
            [Step::Key(k)] if RECORD_LISTS.contains(&k.as_str()) => (
                MAX_RECORDS,
                "entries: a run file holds at most that many (pqcprof never writes more)",
            ),
            _ => (
                MAX_SAMPLES,
                "values: a list in a run file holds at most that many (the largest --runs)",
            ),
        }
    }

    fn fail<E: de::Error>(&self, field: String, message: String) -> E {
        *self.problem.borrow_mut() = Some((field, message));
        E::custom("run file shape")
    }
}

struct Node<'a> {
    ctx: &'a Ctx,
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let (limit, what) = self.ctx.list_limit();
        let mut i = 0usize;
        loop {
            self.ctx.path.borrow_mut().push(Step::Index(i));
            let more = seq.next_element_seed(Node { ctx: self.ctx })?;
            self.ctx.path.borrow_mut().pop();
            if more.is_none() {
                return Ok(());
            }
            i += 1;
            if i > limit {
                return Err(self.ctx.fail(
                    self.ctx.path_text(),
                    format!("more than {limit} {what}; the file is left out"),
                ));
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen: HashSet<String> = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if seen.contains(&key) {
                self.ctx.path.borrow_mut().push(Step::Key(key.clone()));
                let field = self.ctx.path_text();
                return Err(self.ctx.fail(
                    field,
                    format!(
                        "the key \"{}\" appears twice in one object: a file with repeated keys is ambiguous (readers disagree on which value counts); the file is left out",
                        key.escape_default()
                    ),
                ));
            }
            self.ctx.path.borrow_mut().push(Step::Key(key.clone()));
            map.next_value_seed(Node { ctx: self.ctx })?;
            self.ctx.path.borrow_mut().pop();
            seen.insert(key);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_keys_are_named_with_their_path() {
        let e =
            check(br#"{"records":[{"a":1},{"ops_per_sec":1,"ops_per_sec":1e12}]}"#).unwrap_err();
        assert_eq!(e.0, "records[1].ops_per_sec");
        assert!(e.1.contains("appears twice"), "{}", e.1);
        assert!(check(br#"{"a":{"b":1},"c":{"b":2}}"#).is_ok());
    }

    #[test]
    fn overlong_lists_are_refused_and_invalid_json_passes_through() {
        let many = format!("{{\"x\":[{}0]}}", "0,".repeat(MAX_SAMPLES));
        let e = check(many.as_bytes()).unwrap_err();
        assert_eq!(e.0, "x");
        assert!(e.1.contains(&format!("more than {MAX_SAMPLES}")), "{}", e.1);
        let ok = format!("{{\"records\":[{}0]}}", "0,".repeat(MAX_SAMPLES));
        assert!(check(ok.as_bytes()).is_ok());
        assert!(check(b"{\"a\":").is_ok());
        assert!(check(b"not json").is_ok());
    }
}
