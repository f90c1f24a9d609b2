//! A batch's buffers as the gate reads them ([`Slots`]: items of a fixed
//! length at a fixed stride), host buffers with guard zones around them
//! ([`Guarded`]), and the byte-level checks: poison left in an output,
//! an input changed, a guard overwritten, a verdict that is not 0 or 1.

use anyhow::{bail, ensure};
use rand::{RngCore, SeedableRng};

/// Guard bytes on each side of every host buffer pqcprof hands an
/// implementation.
pub const GUARD_BYTES: usize = 64;

/// A guard zone's expected and found bytes.
pub struct Guard<'a> {
    /// The buffer it guards, and which side (`before`, `after`).
    pub name: String,
    /// What pqcprof wrote there.
    pub expected: &'a [u8],
    /// What is there now.
    pub found: &'a [u8],
}

/// The items of one buffer: item `i` is `bytes[i * stride..][..len]`; a
/// stride of 0 is one value every item shares (a key used by all).
#[derive(Debug, Clone, Copy)]
pub struct Slots<'a> {
    /// The buffer.
    pub bytes: &'a [u8],
    /// Bytes from one item to the next (0: one item for all).
    pub stride: usize,
    /// Bytes of one item.
    pub len: usize,
}

impl<'a> Slots<'a> {
    /// Items of `len` bytes packed back to back.
    pub fn packed(bytes: &'a [u8], len: usize) -> Self {
        Slots {
            bytes,
            stride: len,
            len,
        }
    }

    /// One value every item shares.
    pub fn shared(bytes: &'a [u8]) -> Self {
        Slots {
            bytes,
            stride: 0,
            len: bytes.len(),
        }
    }

    /// Item `i`.
    pub fn get(&self, i: usize) -> &'a [u8] {
        let at = i * self.stride;
        &self.bytes[at..at + self.len]
    }

    /// How many items the buffer holds (`None`: a shared value).
    pub fn items(&self) -> Option<usize> {
        if self.stride == 0 {
            return None;
        }
        if self.bytes.len() < self.len {
            return Some(0);
        }
        Some((self.bytes.len() - self.len) / self.stride + 1)
    }
}

/// The longest run of `byte` in `item`.
fn longest_run(item: &[u8], byte: u8) -> usize {
    let (mut best, mut cur) = (0, 0);
    for &b in item {
        if b == byte {
            cur += 1;
            best = best.max(cur);
        } else {
            cur = 0;
        }
    }
    best
}

/// A run of the poison this long (or the whole item, if shorter) is poison
/// left: the odds of an honest output holding 16 equal bytes of a byte
/// drawn for the run are about 2^-120 an item.
pub const POISON_RUN: usize = 16;

/// Every item of the output `name` was written: none holds [`POISON_RUN`]
/// bytes of this run's poison in a row. Names the first item that does,
/// and how many do.
pub fn written(name: &str, out: Slots<'_>, poison: u8, run: u64) -> anyhow::Result<()> {
    let n = out.items().unwrap_or(1);
    let need = POISON_RUN.min(out.len);
    let left: Vec<usize> = (0..n)
        .filter(|&i| longest_run(out.get(i), poison) >= need)
        .collect();
    if let Some(&first) = left.first() {
        let item = out.get(first);
        let whole = item.iter().all(|&b| b == poison);
        bail!(
            "operation {first}: {name} not written by the call: {} of its {} bytes still hold run {run}'s poison byte 0x{poison:02x}{} ({} of {n} items left so)",
            if whole { "all".to_string() } else { format!("{} in a row", longest_run(item, poison)) },
            item.len(),
            if whole { "" } else { ", a part left unwritten" },
            left.len()
        );
    }
    Ok(())
}

/// The input `name` is as it was before the call, item for item.
pub fn unchanged(name: &str, before: Slots<'_>, after: Slots<'_>) -> anyhow::Result<()> {
    ensure!(
        before.len == after.len && before.items() == after.items(),
        "{name}: the buffers compared differ in shape"
    );
    let n = before.items().unwrap_or(1);
    for i in 0..n {
        let (b, a) = (before.get(i), after.get(i));
        if let Some(k) = (0..b.len()).find(|&k| b[k] != a[k]) {
            bail!(
                "operation {i}: the call changed its input {name} (a const buffer) at byte {k}: it was 0x{:02x}, it is 0x{:02x}",
                b[k],
                a[k]
            );
        }
    }
    Ok(())
}

/// Every verdict is the one its input calls for: 1 for a valid signature,
/// 0 for an invalid one, read as a little-endian integer of the slot's
/// bytes (1 byte for a plugin, 4 for a GPU kernel's flags).
pub fn verdicts(ok: Slots<'_>, valid: &[bool], poison: u8, run: u64) -> anyhow::Result<()> {
    ensure!(
        ok.items() == Some(valid.len()),
        "verdicts: {} expected, the buffer holds {:?}",
        valid.len(),
        ok.items()
    );
    for (i, &v) in valid.iter().enumerate() {
        let slot = ok.get(i);
        let value = slot
            .iter()
            .rev()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
        match (value, v) {
            (1, true) | (0, false) => {}
            (0, true) => bail!("operation {i}: a valid signature was rejected (ok = 0)"),
            (1, false) => bail!(
                "operation {i}: an invalid signature (a flipped bit, at a position drawn for run {run}) was accepted (ok = 1)"
            ),
            _ if slot.iter().all(|&b| b == poison) => bail!(
                "operation {i}: ok not written by the call: it still holds run {run}'s poison byte 0x{poison:02x}"
            ),
            (x, _) => bail!("operation {i}: ok = {x}, neither 0 (rejected) nor 1 (accepted)"),
        }
    }
    Ok(())
}

/// A guard zone still holds what pqcprof wrote there.
pub fn guard_intact(name: &str, expected: &[u8], found: &[u8]) -> anyhow::Result<()> {
    if let Some(k) = (0..expected.len()).find(|&k| expected.get(k) != found.get(k)) {
        bail!(
            "the guard bytes {name} were overwritten (byte {k} of {}: the call wrote outside the buffer it was given)",
            expected.len()
        );
    }
    Ok(())
}

/// A host buffer between two guard zones of [`GUARD_BYTES`] bytes
/// of a pattern drawn for it: the implementation gets the part between.
pub struct Guarded {
    buf: Vec<u8>,
    /// The guards' pattern, kept apart from the zones it is checked against.
    pattern: Vec<u8>,
}

impl Guarded {
    /// A buffer of `len` bytes (zeros) with its guards drawn from `seed`.
    pub fn new(len: usize, seed: u64) -> Self {
        let g = GUARD_BYTES;
        let mut pattern = vec![0u8; g];
        rand_chacha::ChaCha20Rng::seed_from_u64(seed).fill_bytes(&mut pattern);
        let mut buf = vec![0u8; len + 2 * g];
        buf[..g].copy_from_slice(&pattern);
        buf[len + g..].copy_from_slice(&pattern);
        Guarded { buf, pattern }
    }

    /// A guarded copy of `bytes`.
    pub fn from_slice(bytes: &[u8], seed: u64) -> Self {
        let mut g = Guarded::new(bytes.len(), seed);
        g.body_mut().copy_from_slice(bytes);
        g
    }

    /// The part the implementation gets.
    pub fn body(&self) -> &[u8] {
        let g = self.pattern.len();
        &self.buf[g..self.buf.len() - g]
    }

    /// The same, writable.
    pub fn body_mut(&mut self) -> &mut [u8] {
        let g = self.pattern.len();
        let end = self.buf.len() - g;
        &mut self.buf[g..end]
    }

    /// The whole buffer, guards included (what a device copy mirrors).
    pub fn raw(&self) -> &[u8] {
        &self.buf
    }

    /// The same, writable (a device copy read back into it).
    pub fn raw_mut(&mut self) -> &mut [u8] {
        &mut self.buf
    }

    /// Bytes of each guard zone.
    pub fn guard_len(&self) -> usize {
        self.pattern.len()
    }

    /// Both guard zones of the buffer `name`, with what they should hold.
    pub fn guards(&self, name: &str) -> [Guard<'_>; 2] {
        let g = self.pattern.len();
        let end = self.buf.len();
        [
            Guard {
                name: format!("before {name}"),
                expected: &self.pattern,
                found: &self.buf[..g],
            },
            Guard {
                name: format!("after {name}"),
                expected: &self.pattern,
                found: &self.buf[end - g..],
            },
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_read_items_at_their_stride_and_shared_values_for_all() {
        let b: Vec<u8> = (0..20).collect();
        let s = Slots {
            bytes: &b,
            stride: 8,
            len: 4,
        };
        assert_eq!(s.items(), Some(3));
        assert_eq!(s.get(2), &[16, 17, 18, 19]);
        let one = Slots::shared(&b[..4]);
        assert_eq!(one.items(), None);
        assert_eq!(one.get(5), &[0, 1, 2, 3]);
    }

    #[test]
    fn poison_left_whole_or_in_part_is_found_and_named() {
        let mut out = vec![0x5Au8; 4 * 32];
        for (i, b) in out.iter_mut().enumerate() {
            *b = (i * 7 % 251) as u8 ^ 0x33;
        }
        let s = |o: &[u8]| Slots::packed(o, 32).bytes.to_vec();
        assert!(written("K", Slots::packed(&out, 32), 0xC4, 3).is_ok());
        // Item 2 never written.
        let mut lazy = s(&out);
        lazy[64..96].fill(0xC4);
        let e = written("K", Slots::packed(&lazy, 32), 0xC4, 3)
            .unwrap_err()
            .to_string();
        assert!(e.contains("operation 2: K not written by the call: all of its 32 bytes still hold run 3's poison byte 0xc4 (1 of 4 items left so)"), "{e}");
        // Item 1 half written.
        let mut half = s(&out);
        half[48..64].fill(0xC4);
        let e = written("K", Slots::packed(&half, 32), 0xC4, 3)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("operation 1: K not written")
                && e.contains("16 in a row")
                && e.contains("a part left unwritten"),
            "{e}"
        );
        // Fifteen in a row is not poison.
        let mut near = s(&out);
        near[0..15].fill(0xC4);
        assert!(written("K", Slots::packed(&near, 32), 0xC4, 3).is_ok());
    }

    #[test]
    fn a_changed_input_names_the_item_and_byte() {
        let before = vec![1u8; 30];
        let mut after = before.clone();
        assert!(unchanged("ek", Slots::packed(&before, 10), Slots::packed(&after, 10)).is_ok());
        after[23] = 9;
        let e = unchanged("ek", Slots::packed(&before, 10), Slots::packed(&after, 10))
            .unwrap_err()
            .to_string();
        assert_eq!(e, "operation 2: the call changed its input ek (a const buffer) at byte 3: it was 0x01, it is 0x09");
    }

    #[test]
    fn verdicts_must_be_what_each_input_calls_for() {
        let valid = [true, false, true];
        assert!(verdicts(Slots::packed(&[1, 0, 1], 1), &valid, 0x77, 1).is_ok());
        let le = [1u8, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0];
        assert!(verdicts(Slots::packed(&le, 4), &valid, 0x77, 1).is_ok());
        let e = |ok: &[u8]| {
            verdicts(Slots::packed(ok, 1), &valid, 0x77, 4)
                .unwrap_err()
                .to_string()
        };
        assert!(e(&[1, 1, 1]).contains("operation 1: an invalid signature"));
        assert!(e(&[1, 0, 0]).contains("operation 2: a valid signature was rejected"));
        assert!(e(&[1, 0, 0x77]).contains(
            "operation 2: ok not written by the call: it still holds run 4's poison byte 0x77"
        ));
        assert!(e(&[1, 0, 2]).contains("operation 2: ok = 2"));
    }

    #[test]
    fn guards_catch_a_write_past_either_end() {
        let mut g = Guarded::new(10, 99);
        g.body_mut().fill(3);
        let check = |g: &Guarded| -> anyhow::Result<()> {
            for z in g.guards("c") {
                guard_intact(&z.name, z.expected, z.found)?;
            }
            Ok(())
        };
        check(&g).unwrap();
        assert_eq!(g.body(), &[3; 10]);
        // One byte past the end.
        let mut past = Guarded::from_slice(&[3; 10], 99);
        past.buf[10 + GUARD_BYTES] ^= 1;
        let e = check(&past).unwrap_err().to_string();
        assert!(
            e.contains("the guard bytes after c were overwritten (byte 0 of 64"),
            "{e}"
        );
        // One byte before the start.
        let mut before = Guarded::from_slice(&[3; 10], 99);
        before.buf[GUARD_BYTES - 1] ^= 1;
        let e = check(&before).unwrap_err().to_string();
        assert!(
            e.contains("the guard bytes before c were overwritten (byte 63"),
            "{e}"
        );
    }
}
