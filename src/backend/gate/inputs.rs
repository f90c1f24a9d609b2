//! Inputs that leave nothing to cache, made by the reference (pqcprof's
//! host build of FIPS 203/204) before timing: every item of a batch its own
//! key pair, its own message, its own ciphertext or signature; the invalid
//! items of a verification (and the tampered ciphertexts of a
//! decapsulation) at positions drawn again for every run. Large batches
//! are made on every core.

use super::reference::mldsa_level;
use super::slots::Slots;
use crate::backend::native_gpu::host;
use crate::core::catalog::Algorithm;
use anyhow::{anyhow, Context};
use rand::{Rng, RngCore, SeedableRng};

/// The variable that makes a run's inputs again: a number seeds them (the
/// native kernels' inputs, and the gate's samples and poison bytes).
pub const INPUT_SEED_VAR: &str = "PQCPROF_INPUT_SEED";

/// `n` bytes from `rng`.
pub fn random(rng: &mut impl RngCore, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    rng.fill_bytes(&mut v);
    v
}

/// Threads to make `n` items on: every core for large batches, one for
/// small ones (where starting threads would cost more than it saves).
fn threads_for(n: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    cores.min(n.div_ceil(64)).max(1)
}

/// Makes `n` items of `lens.len()` outputs each (`lens[k]` bytes for
/// output `k`), item `i` by `make(i, seed_i)` with a seed of its own drawn
/// from `rng`, on every core for a large batch: the outputs packed.
fn make_items(
    n: usize,
    lens: &[usize],
    rng: &mut impl RngCore,
    make: impl Fn(usize, [u8; 32]) -> anyhow::Result<Vec<Vec<u8>>> + Sync,
) -> anyhow::Result<Vec<Vec<u8>>> {
    let seeds: Vec<[u8; 32]> = (0..n)
        .map(|_| {
            let mut s = [0u8; 32];
            rng.fill_bytes(&mut s);
            s
        })
        .collect();
    let mut outs: Vec<Vec<u8>> = lens.iter().map(|&l| vec![0u8; l * n]).collect();
    let threads = threads_for(n);
    let per = n.div_ceil(threads);
    // Each thread fills its own range of every output.
    let mut ranges: Vec<Vec<&mut [u8]>> = (0..threads).map(|_| vec![]).collect();
    for (k, out) in outs.iter_mut().enumerate() {
        for (t, chunk) in out.chunks_mut((per * lens[k]).max(1)).enumerate() {
            ranges[t].push(chunk);
        }
    }
    std::thread::scope(|s| {
        let handles: Vec<_> = ranges
            .into_iter()
            .enumerate()
            .map(|(t, mut parts)| {
                let (make, seeds) = (&make, &seeds);
                s.spawn(move || -> anyhow::Result<()> {
                    let first = t * per;
                    for i in first..(first + per).min(n) {
                        let made = make(i, seeds[i])?;
                        for (k, part) in parts.iter_mut().enumerate() {
                            let l = lens[k];
                            part[(i - first) * l..(i - first + 1) * l].copy_from_slice(&made[k]);
                        }
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .map_err(|_| anyhow!("a thread making inputs panicked"))?
            })
            .collect::<anyhow::Result<Vec<()>>>()
    })?;
    Ok(outs)
}

fn code(what: &'static str) -> impl Fn(host::Code) -> anyhow::Error {
    move |c| anyhow!("the reference's {what} failed with {c}")
}

fn rank(alg: Algorithm) -> anyhow::Result<usize> {
    alg.mlkem_params()
        .map(|p| p.k)
        .ok_or_else(|| anyhow!("{alg} is not ML-KEM"))
}

/// `n` distinct key pairs of `alg` (ML-KEM or ML-DSA): (public, secret),
/// each packed.
pub fn key_pairs(
    alg: Algorithm,
    n: usize,
    rng: &mut impl RngCore,
) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
    let s = alg.sizes();
    let lens = [s.public_key_bytes, s.secret_key_bytes];
    let mut out = match alg.mlkem_params() {
        Some(p) => make_items(n, &lens, rng, |_, seed| {
            let mut r = rand_chacha::ChaCha20Rng::from_seed(seed);
            let (d, z) = (r.random(), r.random());
            let (ek, dk) = host::mlkem_keygen(p.k, &d, &z).map_err(code("keygen"))?;
            Ok(vec![ek, dk])
        }),
        None => {
            let level = mldsa_level(alg)?;
            make_items(n, &lens, rng, |_, seed| {
                let (pk, sk) = host::mldsa_keygen(level, &seed).map_err(code("keygen"))?;
                Ok(vec![pk, sk])
            })
        }
    }
    .with_context(|| format!("making {n} {alg} key pairs"))?;
    let sk = out.pop().unwrap_or_default();
    let pk = out.pop().unwrap_or_default();
    Ok((pk, sk))
}

/// A fresh encapsulation to each of the `n` keys `ek`: (c, K), packed.
/// liboqs makes them (its fastest code on this CPU, several times the
/// reference's speed), as a decapsulation's inputs are made again for every
/// run; the gate still judges every decapsulation it samples against the
/// reference. liboqs draws each m itself, so `rng` only spreads the
/// items over the threads.
pub fn encapsulations(
    alg: Algorithm,
    ek: Slots<'_>,
    n: usize,
    rng: &mut impl RngCore,
) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
    rank(alg)?;
    let kem = super::reference::liboqs_kem(alg)?;
    let lct = alg.sizes().ciphertext_bytes.unwrap_or(0);
    let mut out = make_items(n, &[lct, 32], rng, |i, _| {
        let pk = kem
            .public_key_from_bytes(ek.get(i))
            .ok_or_else(|| anyhow!("item {i}: an encapsulation key of the wrong length"))?;
        let (c, ss) = kem
            .encapsulate(pk)
            .map_err(|e| anyhow!("liboqs's encapsulation failed: {e}"))?;
        Ok(vec![c.into_vec(), ss.into_vec()])
    })
    .with_context(|| format!("making {n} {alg} ciphertexts"))?;
    let ss = out.pop().unwrap_or_default();
    let c = out.pop().unwrap_or_default();
    Ok((c, ss))
}

/// A signature of each message `msg` under each secret key `sk` with the
/// context `ctx` and fresh randomness, each in a slot of `stride` bytes.
pub fn signatures(
    alg: Algorithm,
    sk: Slots<'_>,
    msg: Slots<'_>,
    ctx: &[u8],
    n: usize,
    stride: usize,
    rng: &mut impl RngCore,
) -> anyhow::Result<Vec<u8>> {
    let level = mldsa_level(alg)?;
    let lsig = alg.sizes().signature_bytes.unwrap_or(0);
    let mut out = make_items(n, &[stride], rng, |i, rnd| {
        let mut sig =
            host::mldsa_sign(level, sk.get(i), msg.get(i), ctx, &rnd).map_err(code("signing"))?;
        sig.resize(stride.max(lsig), 0);
        Ok(vec![sig])
    })
    .with_context(|| format!("making {n} {alg} signatures"))?;
    Ok(out.pop().unwrap_or_default())
}

/// The items a run makes invalid (a verification's) or tampers with (a
/// decapsulation's): about one in 16, at least one of a batch of two or
/// more, drawn afresh every run; a single item is invalid in about half the
/// runs. Sorted.
pub fn invalid_positions(n: usize, rng: &mut impl RngCore) -> Vec<usize> {
    match n {
        0 => vec![],
        1 => {
            if rng.random::<bool>() {
                vec![0]
            } else {
                vec![]
            }
        }
        _ => {
            let k = (n / 16).max(1);
            let mut v = rand::seq::index::sample(rng, n, k).into_vec();
            v.sort_unstable();
            v
        }
    }
}

/// Flips one random bit among the first `len` bytes of item `i` (items
/// `stride` bytes apart): an invalid signature, a ciphertext that decrypts
/// to the implicit-rejection key.
pub fn flip(buf: &mut [u8], i: usize, stride: usize, len: usize, rng: &mut impl RngCore) {
    let byte = rng.random_range(0..len);
    let bit = rng.random_range(0..8);
    buf[i * stride + byte] ^= 1 << bit;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rng() -> rand_chacha::ChaCha20Rng {
        rand_chacha::ChaCha20Rng::seed_from_u64(3)
    }

    #[test]
    fn every_key_pair_is_its_own_and_the_reference_made_it() {
        let alg = Algorithm::MlKem512;
        let s = alg.sizes();
        let n = 70;
        let (ek, dk) = key_pairs(alg, n, &mut rng()).unwrap();
        assert_eq!(
            (ek.len(), dk.len()),
            (n * s.public_key_bytes, n * s.secret_key_bytes)
        );
        let eks: std::collections::BTreeSet<&[u8]> = ek.chunks(s.public_key_bytes).collect();
        assert_eq!(eks.len(), n, "distinct keys");
        // The last item (another thread's on a machine with several cores)
        // is a real pair: its dk holds its ek (FIPS 203's dk layout).
        let last_dk = &dk[(n - 1) * s.secret_key_bytes..];
        let last_ek = &ek[(n - 1) * s.public_key_bytes..];
        assert!(last_dk.windows(last_ek.len()).any(|w| w == last_ek));
        let (c, k) =
            encapsulations(alg, Slots::packed(&ek, s.public_key_bytes), n, &mut rng()).unwrap();
        let lct = s.ciphertext_bytes.unwrap();
        for i in [0, 37, n - 1] {
            let back = host::mlkem_decaps(
                2,
                &c[i * lct..(i + 1) * lct],
                &dk[i * s.secret_key_bytes..(i + 1) * s.secret_key_bytes],
            )
            .unwrap();
            assert_eq!(back[..], k[i * 32..(i + 1) * 32]);
        }
    }

    #[test]
    fn signatures_verify_and_a_flipped_bit_does_not() {
        let alg = Algorithm::MlDsa44;
        let s = alg.sizes();
        let n = 3;
        let (pk, sk) = key_pairs(alg, n, &mut rng()).unwrap();
        let msg = random(&mut rng(), n * 10);
        let stride = alg.signature_stride().unwrap();
        let mut sig = signatures(
            alg,
            Slots::packed(&sk, s.secret_key_bytes),
            Slots::packed(&msg, 10),
            b"c",
            n,
            stride,
            &mut rng(),
        )
        .unwrap();
        let lsig = s.signature_bytes.unwrap();
        let ok = |sig: &[u8], i: usize| {
            host::mldsa_verify(
                44,
                &pk[i * s.public_key_bytes..(i + 1) * s.public_key_bytes],
                &msg[i * 10..i * 10 + 10],
                b"c",
                &sig[i * stride..i * stride + lsig],
            )
            .unwrap()
        };
        assert!((0..n).all(|i| ok(&sig, i)));
        flip(&mut sig, 1, stride, lsig, &mut rng());
        assert!(ok(&sig, 0) && !ok(&sig, 1) && ok(&sig, 2));
    }

    #[test]
    fn invalid_positions_change_from_run_to_run_and_are_never_none_of_many() {
        let mut r = rng();
        let a = invalid_positions(1000, &mut r);
        let b = invalid_positions(1000, &mut r);
        assert_eq!(a.len(), 62);
        assert_ne!(a, b);
        assert!(a.windows(2).all(|w| w[0] < w[1]) && a[61] < 1000);
        assert_eq!(invalid_positions(2, &mut r).len(), 1);
        let singles: Vec<usize> = (0..64)
            .map(|_| invalid_positions(1, &mut r).len())
            .collect();
        assert!(singles.contains(&0) && singles.contains(&1));
    }
}
