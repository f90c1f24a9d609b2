//! Symmetric primitives for context, through OpenSSL: hashes and AEADs in
//! MB/s (10^6 bytes per second) at 1 KiB and 16 KiB per call, each with a
//! context set up once and reused, as `openssl speed -evp` does.

use crate::schema::run_file::SymmetricRecord;
use anyhow::Result;
use openssl::cipher::{Cipher, CipherRef};
use openssl::cipher_ctx::CipherCtx;
use openssl::hash::{Hasher, MessageDigest};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Input sizes per call, bytes.
pub const CHUNKS: [usize; 2] = [1024, 16 * 1024];

/// The primitives: (name, kind). SM3 and SM4-GCM (China's hash and block
/// cipher, beside SM2 in pqcbench's symmetric context) only where the
/// linked OpenSSL offers them.
pub const PRIMITIVES: [(&str, &str); 10] = [
    ("SHA-256", "hash"),
    ("SHA-512", "hash"),
    ("SHA3-256", "hash"),
    ("SHAKE128", "hash"),
    ("SHAKE256", "hash"),
    ("AES-128-GCM", "aead"),
    ("AES-256-GCM", "aead"),
    ("ChaCha20-Poly1305", "aead"),
    ("SM3", "hash"),
    ("SM4-GCM", "aead"),
];

/// Primitives skipped, not failed, when this OpenSSL lacks them.
const OPTIONAL: [&str; 2] = ["SM3", "SM4-GCM"];

/// One call of a primitive on a buffer.
type Call = Box<dyn FnMut(&[u8]) -> Result<()>>;

fn one_call(name: &str) -> Result<Call> {
    let digest = |md: MessageDigest, xof: Option<usize>| -> Result<Call> {
        let mut h = Hasher::new(md)?;
        let mut out = vec![0u8; xof.unwrap_or(0)];
        Ok(Box::new(move |data| {
            h.update(data)?;
            if xof.is_some() {
                h.finish_xof(&mut out)?;
            } else {
                std::hint::black_box(h.finish()?);
            }
            Ok(())
        }))
    };
    let aead = |c: &CipherRef, key: usize| -> Result<Call> {
        let mut ctx = CipherCtx::new()?;
        ctx.encrypt_init(Some(c), Some(&vec![7u8; key]), Some(&[9u8; 12]))?;
        let mut out = vec![];
        let mut tag = [0u8; 16];
        Ok(Box::new(move |data| {
            ctx.encrypt_init(None, None, Some(&[9u8; 12]))?;
            out.clear();
            ctx.cipher_update_vec(data, &mut out)?;
            ctx.cipher_final_vec(&mut out)?;
            ctx.tag(&mut tag)?;
            Ok(())
        }))
    };
    match name {
        "SHA-256" => digest(MessageDigest::sha256(), None),
        "SHA-512" => digest(MessageDigest::sha512(), None),
        "SHA3-256" => digest(MessageDigest::sha3_256(), None),
        "SHAKE128" => digest(MessageDigest::shake_128(), Some(32)),
        "SHAKE256" => digest(MessageDigest::shake_256(), Some(64)),
        "AES-128-GCM" => aead(Cipher::aes_128_gcm(), 16),
        "AES-256-GCM" => aead(Cipher::aes_256_gcm(), 32),
        "ChaCha20-Poly1305" => aead(Cipher::chacha20_poly1305(), 32),
        "SM3" => digest(MessageDigest::sm3(), None),
        "SM4-GCM" => {
            let sm4 = Cipher::fetch(None, "SM4-GCM", None)?;
            aead(&sm4, 16)
        }
        other => anyhow::bail!("unknown symmetric primitive {other}"),
    }
}

/// Measures every primitive at every chunk size for `seconds` each.
/// Returns what finished when `cancel` is set.
pub fn measure_all(seconds: f64, cancel: &AtomicBool) -> Result<Vec<SymmetricRecord>> {
    let mut out = vec![];
    for (name, kind) in PRIMITIVES {
        for chunk in CHUNKS {
            if cancel.load(Ordering::SeqCst) {
                return Ok(out);
            }
            let mut f = match one_call(name) {
                Ok(f) => f,
                Err(e) if OPTIONAL.contains(&name) => {
                    log::warn!("[sym] {name}: skipped, this OpenSSL lacks it ({e:#})");
                    break;
                }
                Err(e) => return Err(e),
            };
            let data = vec![0x5Au8; chunk];
            // Short warm-up, then whole batches until the window is full.
            let warm = Instant::now();
            while warm.elapsed() < Duration::from_secs_f64((seconds / 10.0).min(0.1)) {
                f(&data)?;
            }
            let window = Duration::from_secs_f64(seconds);
            let (mut n, t) = (0u64, Instant::now());
            while t.elapsed() < window {
                for _ in 0..16 {
                    f(&data)?;
                }
                n += 16;
            }
            let s = t.elapsed().as_secs_f64();
            out.push(SymmetricRecord {
                algorithm: name.into(),
                kind: kind.into(),
                provider: "openssl".into(),
                chunk_bytes: chunk,
                mb_per_sec: (n as f64 * chunk as f64) / s / 1e6,
                iterations: n,
                seconds: s,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_primitive_runs() {
        let r = measure_all(0.005, &AtomicBool::new(false)).unwrap();
        assert_eq!(r.len(), PRIMITIVES.len() * CHUNKS.len());
        assert!(r.iter().all(|s| s.mb_per_sec > 0.0 && s.iterations > 0));
    }
}
