//! The sampled items of a run judged against the reference: pqcprof's host
//! build of FIPS 203/204 (`cuda/native`, the kernels' own source, proven
//! byte-exact against liboqs, OpenSSL and RustCrypto in the tests) computes
//! each item's outputs from the copy of its inputs taken before the call.
//! Where the implementation draws its own randomness (liboqs, cuPQC, the
//! operations an ABI 1.1 plugin declares in `own_randomness`), the outputs
//! cannot be known in advance and are judged by round trips instead; around
//! the timed runs, liboqs cross-checks the sample too.

use super::slots::Slots;
use crate::backend::native_gpu::host;
use crate::core::catalog::{Algorithm, Operation};
use anyhow::{anyhow, bail, ensure};

/// The sampled items of one run, gathered: slot `j` of every buffer holds
/// item `items[j]` of the batch (a shared value serves every item). Inputs
/// are as they were before the call, outputs as the call left them. A
/// randomness input that is `None` was drawn by the implementation itself.
pub enum Sampled<'a> {
    /// Nothing judged item by item here (a verification's verdicts are all
    /// checked against what each input calls for).
    Nothing,
    /// ML-KEM key generation.
    KemKeygen {
        /// d and z (None: drawn inside).
        seeds: Option<(Slots<'a>, Slots<'a>)>,
        /// Out: encapsulation keys.
        ek: Slots<'a>,
        /// Out: decapsulation keys.
        dk: Slots<'a>,
    },
    /// ML-KEM encapsulation.
    KemEncaps {
        /// The encapsulation keys.
        ek: Slots<'a>,
        /// m (None: drawn inside).
        m: Option<Slots<'a>>,
        /// The decapsulation keys of `ek`, for the round trip.
        dk: Option<Slots<'a>>,
        /// Out: ciphertexts.
        c: Slots<'a>,
        /// Out: shared secrets.
        k: Slots<'a>,
    },
    /// ML-KEM decapsulation (deterministic: always exact).
    KemDecaps {
        /// The decapsulation keys.
        dk: Slots<'a>,
        /// The ciphertexts (tampered ones among them).
        c: Slots<'a>,
        /// Out: shared secrets.
        k: Slots<'a>,
    },
    /// ML-DSA key generation.
    DsaKeygen {
        /// xi (None: drawn inside).
        xi: Option<Slots<'a>>,
        /// Out: public keys.
        pk: Slots<'a>,
        /// Out: secret keys.
        sk: Slots<'a>,
    },
    /// ML-DSA signing (pure, with a context).
    DsaSign {
        /// The secret keys.
        sk: Slots<'a>,
        /// Their public keys, for verifying what was signed.
        pk: Option<Slots<'a>>,
        /// The messages.
        msg: Slots<'a>,
        /// The context string.
        ctx: &'a [u8],
        /// rnd (None: drawn inside).
        rnd: Option<Slots<'a>>,
        /// Out: signatures (the first `signature_bytes` of each slot).
        sig: Slots<'a>,
    },
}

impl<'a> Sampled<'a> {
    /// The sample of `op` of `alg` from its gathered buffers, found by
    /// their ABI names (`seeds` as d ‖ z, or `d` and `z`; `ek`, `dk`, `m`,
    /// `c`, `K`; `xi`, `pk`, `sk`, `msg`, `rnd`, `signature`): a missing
    /// randomness input means the implementation drew its own. `pair` is
    /// the other half of each item's key pair (encaps: dk; sign: pk).
    pub fn from_buffers(
        alg: Algorithm,
        op: Operation,
        get: &dyn Fn(&str) -> Option<Slots<'a>>,
        pair: Option<Slots<'a>>,
        ctx: &'a [u8],
    ) -> anyhow::Result<Sampled<'a>> {
        let need = |name: &str| get(name).ok_or_else(|| anyhow!("the sample has no {name}"));
        let kem = alg.mlkem_params().is_some();
        Ok(match (op, kem) {
            (Operation::KeyGen, true) => Sampled::KemKeygen {
                seeds: match (get("d"), get("z"), get("seeds")) {
                    (Some(d), Some(z), _) => Some((d, z)),
                    (_, _, Some(s)) => Some((
                        Slots {
                            bytes: s.bytes,
                            stride: s.stride,
                            len: 32,
                        },
                        Slots {
                            bytes: &s.bytes[32.min(s.bytes.len())..],
                            stride: s.stride,
                            len: 32,
                        },
                    )),
                    _ => None,
                },
                ek: need("ek")?,
                dk: need("dk")?,
            },
            (Operation::KeyGen, false) => Sampled::DsaKeygen {
                xi: get("xi"),
                pk: need("pk")?,
                sk: need("sk")?,
            },
            (Operation::Encaps, _) => Sampled::KemEncaps {
                ek: need("ek")?,
                m: get("m"),
                dk: pair,
                c: need("c")?,
                k: need("K")?,
            },
            (Operation::Decaps, _) => Sampled::KemDecaps {
                dk: need("dk")?,
                c: need("c")?,
                k: need("K")?,
            },
            (Operation::Sign, _) => Sampled::DsaSign {
                sk: need("sk")?,
                pk: pair,
                msg: need("msg")?,
                ctx,
                rnd: get("rnd"),
                sig: need("signature")?,
            },
            (Operation::Verify, _) => Sampled::Nothing,
        })
    }
}

/// `got` equals the reference's `want`, else the first differing byte.
pub fn same(what: &str, got: &[u8], want: &[u8]) -> anyhow::Result<()> {
    if let Some(b) = (0..got.len().min(want.len())).find(|&b| got[b] != want[b]) {
        bail!(
            "{what} differs from the reference (pqcprof's host build of FIPS 203/204) at byte {b}: expected 0x{:02x}, got 0x{:02x}",
            want[b],
            got[b]
        );
    }
    ensure!(
        got.len() == want.len(),
        "{what} is {} bytes, the reference's {}",
        got.len(),
        want.len()
    );
    Ok(())
}

fn arr32(b: &[u8]) -> anyhow::Result<[u8; 32]> {
    b.try_into()
        .map_err(|_| anyhow!("a 32-byte seed, got {} bytes", b.len()))
}

fn mlkem_k(alg: Algorithm) -> anyhow::Result<usize> {
    alg.mlkem_params()
        .map(|p| p.k)
        .ok_or_else(|| anyhow!("{alg} is not ML-KEM"))
}

/// The ML-DSA level of `alg` (44, 65, 87).
pub fn mldsa_level(alg: Algorithm) -> anyhow::Result<u32> {
    match alg {
        Algorithm::MlDsa44 => Ok(44),
        Algorithm::MlDsa65 => Ok(65),
        Algorithm::MlDsa87 => Ok(87),
        _ => Err(anyhow!("{alg} is not ML-DSA")),
    }
}

fn code(what: &'static str) -> impl Fn(host::Code) -> anyhow::Error {
    move |c| anyhow!("the reference's {what} failed with {c}")
}

/// Runs `check` on each sampled item (`j` its slot, `i` its place in the
/// batch) and stops at the first that fails: "operation {i}: " and why.
fn each(
    items: &[usize],
    mut check: impl FnMut(usize, usize) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    for (j, &i) in items.iter().enumerate() {
        check(j, i).map_err(|e| anyhow!("operation {i}: {e:#}"))?;
    }
    Ok(())
}

/// The sample of one run judged: a line saying what was checked (none
/// when there was nothing to judge item by item), one more for liboqs's
/// cross-check when `cross`, or the first failure.
pub fn check(
    alg: Algorithm,
    op: Operation,
    items: &[usize],
    s: &Sampled<'_>,
    cross: bool,
) -> anyhow::Result<Vec<String>> {
    let mut extra = vec![];
    let line = match s {
        Sampled::Nothing => return Ok(vec![]),
        Sampled::KemKeygen { seeds, ek, dk } => {
            let k = mlkem_k(alg)?;
            match seeds {
                Some((d, z)) => {
                    each(items, |j, _| {
                        let (wek, wdk) =
                            host::mlkem_keygen(k, &arr32(d.get(j))?, &arr32(z.get(j))?)
                                .map_err(code("keygen"))?;
                        same("ek", ek.get(j), &wek)?;
                        same("dk", dk.get(j), &wdk)
                    })?;
                    if cross {
                        mlkem_keypairs_round_trip(alg, items, *ek, *dk)?;
                    }
                    {
                        if cross {
                            extra.push("before and after the timed runs, on the same sample: liboqs agrees on a secret with each".to_string());
                        }
                        "the sampled items of every run: (ek, dk) equal the reference's for the same d || z, byte for byte".to_string()
                    }
                }
                None => {
                    mlkem_keypairs_round_trip(alg, items, *ek, *dk)?;
                    "the sampled items of every run: liboqs encapsulates to each ek and the dk decapsulates to the same secret, by liboqs and by the reference (the implementation draws its own d, z)".into()
                }
            }
        }
        Sampled::KemEncaps { ek, m, dk, c, k } => {
            let rank = mlkem_k(alg)?;
            match m {
                Some(m) => {
                    each(items, |j, _| {
                        let (wc, wk) = host::mlkem_encaps(rank, ek.get(j), &arr32(m.get(j))?)
                            .map_err(code("encapsulation"))?;
                        same("c", c.get(j), &wc)?;
                        same("K", k.get(j), &wk)
                    })?;
                    if let (true, Some(dk)) = (cross, dk) {
                        let kem = liboqs_kem(alg)?;
                        each(items, |j, _| {
                            ensure!(
                                oqs_decaps(&kem, dk.get(j), c.get(j))? == k.get(j),
                                "liboqs decapsulates c to another secret than K"
                            );
                            Ok(())
                        })?;
                        extra.push("before and after the timed runs, on the same sample: liboqs decapsulates each c to its K".to_string());
                    }
                    "the sampled items of every run: (c, K) equal the reference's for the same ek and m, byte for byte".into()
                }
                None => {
                    let dk =
                        dk.ok_or_else(|| anyhow!("a round trip needs the decapsulation keys"))?;
                    each(items, |j, _| {
                        let back = host::mlkem_decaps(rank, c.get(j), dk.get(j))
                            .map_err(code("decapsulation"))?;
                        ensure!(
                            back[..] == *k.get(j),
                            "c does not decapsulate to K under the key pair's dk (the reference's decapsulation)"
                        );
                        let mut flipped = c.get(j).to_vec();
                        let at = flipped.len() / 2;
                        flipped[at] ^= 0x01;
                        let other = host::mlkem_decaps(rank, &flipped, dk.get(j))
                            .map_err(code("decapsulation"))?;
                        ensure!(
                            other[..] != *k.get(j),
                            "a ciphertext with a flipped bit still gives K"
                        );
                        Ok(())
                    })?;
                    if cross {
                        let kem = liboqs_kem(alg)?;
                        each(items, |j, _| {
                            ensure!(
                                oqs_decaps(&kem, dk.get(j), c.get(j))? == k.get(j),
                                "liboqs decapsulates c to another secret than K"
                            );
                            Ok(())
                        })?;
                        extra.push("before and after the timed runs, on the same sample: liboqs decapsulates each c to its K".to_string());
                    }
                    "the sampled items of every run: each c decapsulates to its K and a flipped bit of c does not (the implementation draws its own m)".into()
                }
            }
        }
        Sampled::KemDecaps { dk, c, k } => {
            let rank = mlkem_k(alg)?;
            each(items, |j, _| {
                let want =
                    host::mlkem_decaps(rank, c.get(j), dk.get(j)).map_err(code("decapsulation"))?;
                same("K", k.get(j), &want)
            })?;
            if cross {
                let kem = liboqs_kem(alg)?;
                each(items, |j, _| {
                    ensure!(
                        oqs_decaps(&kem, dk.get(j), c.get(j))? == k.get(j),
                        "K differs from liboqs's decapsulation"
                    );
                    Ok(())
                })?;
            }
            {
                if cross {
                    extra.push(
                        "before and after the timed runs, on the same sample: liboqs agrees"
                            .to_string(),
                    );
                }
                "the sampled items of every run: K equals the reference's decapsulation of the same (dk, c), byte for byte, tampered ciphertexts (implicit rejection) included".to_string()
            }
        }
        Sampled::DsaKeygen { xi, pk, sk } => match xi {
            Some(xi) => {
                let level = mldsa_level(alg)?;
                each(items, |j, _| {
                    let (wpk, wsk) =
                        host::mldsa_keygen(level, &arr32(xi.get(j))?).map_err(code("keygen"))?;
                    same("pk", pk.get(j), &wpk)?;
                    same("sk", sk.get(j), &wsk)
                })?;
                if cross {
                    mldsa_keypairs_sign(alg, items, *pk, *sk, b"pqcprof", &[])?;
                }
                {
                    if cross {
                        extra.push("before and after the timed runs, on the same sample: a liboqs signature with each sk verifies under its pk".to_string());
                    }
                    "the sampled items of every run: (pk, sk) equal the reference's for the same xi, byte for byte".to_string()
                }
            }
            None => {
                mldsa_keypairs_sign(alg, items, *pk, *sk, b"pqcprof", &[])?;
                "the sampled items of every run: a liboqs signature made with each sk verifies under its pk, by liboqs and by the reference (the implementation draws its own xi)".into()
            }
        },
        Sampled::DsaSign {
            sk,
            pk,
            msg,
            ctx,
            rnd,
            sig,
        } => {
            let level = mldsa_level(alg)?;
            let lsig = alg.sizes().signature_bytes.unwrap_or(0);
            match rnd {
                Some(rnd) => {
                    each(items, |j, _| {
                        let want = host::mldsa_sign(
                            level,
                            sk.get(j),
                            msg.get(j),
                            ctx,
                            &arr32(rnd.get(j))?,
                        )
                        .map_err(code("signing"))?;
                        same("signature", &sig.get(j)[..lsig], &want)
                    })?;
                    if let (true, Some(pk)) = (cross, pk) {
                        mldsa_signatures_verify(alg, items, *pk, *msg, ctx, *sig)?;
                    }
                    {
                        if cross && pk.is_some() {
                            extra.push("before and after the timed runs, on the same sample: liboqs verifies each and rejects a flipped bit".to_string());
                        }
                        "the sampled items of every run: signatures equal the reference's for the same (sk, message, context, rnd), byte for byte".to_string()
                    }
                }
                None => {
                    let pk = pk.ok_or_else(|| anyhow!("a round trip needs the public keys"))?;
                    each(items, |j, _| {
                        let s = &sig.get(j)[..lsig];
                        let ok = host::mldsa_verify(level, pk.get(j), msg.get(j), ctx, s)
                            .map_err(code("verification"))?;
                        ensure!(
                            ok,
                            "the signature does not verify (the reference's verification)"
                        );
                        let mut bad = s.to_vec();
                        bad[0] ^= 0x01;
                        let ok = host::mldsa_verify(level, pk.get(j), msg.get(j), ctx, &bad)
                            .map_err(code("verification"))?;
                        ensure!(!ok, "the signature with a flipped bit still verifies");
                        Ok(())
                    })?;
                    if cross {
                        mldsa_signatures_verify(alg, items, pk, *msg, ctx, *sig)?;
                        extra.push("before and after the timed runs, on the same sample: liboqs verifies each and rejects a flipped bit".to_string());
                    }
                    "the sampled items of every run: each signature verifies under its pk and not with a flipped bit (the implementation draws its own rnd)".into()
                }
            }
        }
    };
    let _ = op;
    Ok(std::iter::once(line).chain(extra).collect())
}

/// A liboqs object for `alg`, which liboqs names `id` when it is a `kind`.
fn liboqs<A, T>(
    alg: Algorithm,
    id: Option<A>,
    kind: &str,
    new: impl FnOnce(A) -> oqs::Result<T>,
) -> anyhow::Result<T> {
    oqs::init();
    new(id.ok_or_else(|| anyhow!("{alg} is not a {kind}"))?)
        .map_err(|e| anyhow!("liboqs {alg}: {e}"))
}

pub(super) fn liboqs_kem(alg: Algorithm) -> anyhow::Result<oqs::kem::Kem> {
    liboqs(alg, alg.liboqs_kem(), "KEM", oqs::kem::Kem::new)
}

fn liboqs_sig(alg: Algorithm) -> anyhow::Result<oqs::sig::Sig> {
    liboqs(alg, alg.liboqs_sig(), "signature", oqs::sig::Sig::new)
}

/// liboqs decapsulation of arbitrary bytes.
fn oqs_decaps(kem: &oqs::kem::Kem, sk: &[u8], ct: &[u8]) -> anyhow::Result<Vec<u8>> {
    let sk = kem
        .secret_key_from_bytes(sk)
        .ok_or_else(|| anyhow!("secret key length"))?;
    let ct = kem
        .ciphertext_from_bytes(ct)
        .ok_or_else(|| anyhow!("ciphertext length"))?;
    Ok(kem
        .decapsulate(sk, ct)
        .map_err(|e| anyhow!("liboqs decaps: {e}"))?
        .into_vec())
}

/// Whether liboqs accepts the signature `sig` of (`msg`, `ctx`) under `pk`.
fn oqs_verifies(
    oqs_sig: &oqs::sig::Sig,
    pk: &[u8],
    msg: &[u8],
    ctx: &[u8],
    sig: &[u8],
) -> anyhow::Result<bool> {
    let pk = oqs_sig
        .public_key_from_bytes(pk)
        .ok_or_else(|| anyhow!("public key length"))?;
    let sig = oqs_sig
        .signature_from_bytes(sig)
        .ok_or_else(|| anyhow!("signature length"))?;
    Ok(oqs_sig.verify_with_ctx_str(msg, sig, ctx, pk).is_ok())
}

/// ML-KEM key pairs checked with liboqs: it encapsulates to each ek and the
/// pair's dk decapsulates to the same secret.
pub fn mlkem_keypairs_round_trip(
    alg: Algorithm,
    items: &[usize],
    ek: Slots<'_>,
    dk: Slots<'_>,
) -> anyhow::Result<()> {
    let kem = liboqs_kem(alg)?;
    let rank = mlkem_k(alg)?;
    each(items, |j, _| {
        let gpk = kem
            .public_key_from_bytes(ek.get(j))
            .ok_or_else(|| anyhow!("public key length"))?;
        let (ct, ss) = kem
            .encapsulate(gpk)
            .map_err(|e| anyhow!("liboqs encaps: {e}"))?;
        ensure!(
            oqs_decaps(&kem, dk.get(j), ct.as_ref())? == ss.as_ref(),
            "liboqs round trip failed on the key pair (dk does not decapsulate what liboqs encapsulated to ek)"
        );
        let back =
            host::mlkem_decaps(rank, ct.as_ref(), dk.get(j)).map_err(code("decapsulation"))?;
        ensure!(
            back[..] == *ss.as_ref(),
            "the reference's decapsulation under dk of what liboqs encapsulated to ek gives another secret"
        );
        Ok(())
    })
}

/// ML-DSA key pairs checked with liboqs: a liboqs signature made with each
/// sk verifies under its pk.
pub fn mldsa_keypairs_sign(
    alg: Algorithm,
    items: &[usize],
    pk: Slots<'_>,
    sk: Slots<'_>,
    msg: &[u8],
    ctx: &[u8],
) -> anyhow::Result<()> {
    let sig = liboqs_sig(alg)?;
    let level = mldsa_level(alg)?;
    each(items, |j, _| {
        let gsk = sig
            .secret_key_from_bytes(sk.get(j))
            .ok_or_else(|| anyhow!("secret key length"))?;
        let signature = sig
            .sign_with_ctx_str(msg, ctx, gsk)
            .map_err(|e| anyhow!("liboqs sign: {e}"))?;
        ensure!(
            oqs_verifies(&sig, pk.get(j), msg, ctx, signature.as_ref())?,
            "a liboqs signature made with sk fails under pk"
        );
        ensure!(
            host::mldsa_verify(level, pk.get(j), msg, ctx, signature.as_ref())
                .map_err(code("verification"))?,
            "a liboqs signature made with sk fails under pk (the reference's verification)"
        );
        Ok(())
    })
}

/// ML-DSA signatures checked with liboqs: each verifies under its pk, and
/// is rejected with a flipped signature bit or a flipped message bit.
pub fn mldsa_signatures_verify(
    alg: Algorithm,
    items: &[usize],
    pk: Slots<'_>,
    msg: Slots<'_>,
    ctx: &[u8],
    sig: Slots<'_>,
) -> anyhow::Result<()> {
    let lsig = alg.sizes().signature_bytes.unwrap_or(0);
    let oqs_sig = liboqs_sig(alg)?;
    each(items, |j, _| {
        let g = &sig.get(j)[..lsig];
        let m = msg.get(j);
        let verifies = |m: &[u8], sg: &[u8]| oqs_verifies(&oqs_sig, pk.get(j), m, ctx, sg);
        ensure!(verifies(m, g)?, "liboqs rejects the signature");
        let mut bad = g.to_vec();
        bad[lsig / 2] ^= 0x01;
        ensure!(
            !verifies(m, &bad)?,
            "liboqs accepts the signature with a flipped bit"
        );
        if !m.is_empty() {
            let mut m2 = m.to_vec();
            m2[0] ^= 0x01;
            ensure!(
                !verifies(&m2, g)?,
                "the signature also verifies for another message"
            );
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngCore, SeedableRng};

    fn rng() -> rand_chacha::ChaCha20Rng {
        rand_chacha::ChaCha20Rng::seed_from_u64(0x6761_7465)
    }

    fn random(r: &mut impl RngCore, n: usize) -> Vec<u8> {
        let mut v = vec![0u8; n];
        r.fill_bytes(&mut v);
        v
    }

    /// `r` failed with a message that names operation `i` and says `what`.
    fn fails_at<T: std::fmt::Debug>(r: anyhow::Result<T>, i: usize, what: &str) {
        let e = format!("{:#}", r.expect_err("the gate should fail"));
        assert!(
            e.contains(&format!("operation {i}: ")) && e.contains(what),
            "{e}"
        );
    }

    fn p(b: &[u8], len: usize) -> Slots<'_> {
        Slots::packed(b, len)
    }

    /// Outputs made by the host build stand in for an implementation's:
    /// the reference accepts them and names each kind of corruption.
    #[test]
    fn mlkem_samples_accept_right_and_reject_wrong_outputs() {
        let alg = Algorithm::MlKem768;
        let s = alg.sizes();
        let (lpk, lsk, lct) = (
            s.public_key_bytes,
            s.secret_key_bytes,
            s.ciphertext_bytes.unwrap(),
        );
        let n = 3;
        let items = [4, 9, 30];
        let mut r = rng();
        let (d, z, m) = (
            random(&mut r, 32 * n),
            random(&mut r, 32 * n),
            random(&mut r, 32 * n),
        );
        let (mut pk, mut sk, mut ct, mut ss) = (vec![], vec![], vec![], vec![]);
        for j in 0..n {
            let (a, b) = host::mlkem_keygen(
                3,
                &arr32(&d[32 * j..32 * j + 32]).unwrap(),
                &arr32(&z[32 * j..32 * j + 32]).unwrap(),
            )
            .unwrap();
            let (c, k) =
                host::mlkem_encaps(3, &a, &arr32(&m[32 * j..32 * j + 32]).unwrap()).unwrap();
            pk.extend(a);
            sk.extend(b);
            ct.extend(c);
            ss.extend(k);
        }
        let keygen = |ek: &[u8], dk: &[u8], cross| {
            check(
                alg,
                Operation::KeyGen,
                &items,
                &Sampled::KemKeygen {
                    seeds: Some((p(&d, 32), p(&z, 32))),
                    ek: p(ek, lpk),
                    dk: p(dk, lsk),
                },
                cross,
            )
        };
        assert!(keygen(&pk, &sk, true).unwrap()[1].contains("liboqs agrees"));
        let mut bad = pk.clone();
        bad[lpk + 5] ^= 1;
        fails_at(
            keygen(&bad, &sk, false),
            9,
            "ek differs from the reference (pqcprof's host build of FIPS 203/204) at byte 5",
        );
        let encaps = |c: &[u8], k: &[u8], m: Option<Slots<'_>>| {
            check(
                alg,
                Operation::Encaps,
                &items,
                &Sampled::KemEncaps {
                    ek: p(&pk, lpk),
                    m,
                    dk: Some(p(&sk, lsk)),
                    c: p(c, lct),
                    k: p(k, 32),
                },
                false,
            )
        };
        encaps(&ct, &ss, Some(p(&m, 32))).unwrap();
        encaps(&ct, &ss, None).unwrap();
        let mut bad_k = ss.clone();
        bad_k[64] ^= 1;
        fails_at(
            encaps(&ct, &bad_k, Some(p(&m, 32))),
            30,
            "K differs from the reference",
        );
        fails_at(encaps(&ct, &bad_k, None), 30, "c does not decapsulate to K");
        // Decapsulation: a tampered ciphertext's answer is implicit rejection.
        let mut ct2 = ct.clone();
        ct2[lct + 3] ^= 0x10;
        let rej = host::mlkem_decaps(3, &ct2[lct..2 * lct], &sk[lsk..2 * lsk]).unwrap();
        let mut k2 = ss.clone();
        k2[32..64].copy_from_slice(&rej);
        let decaps = |c: &[u8], k: &[u8]| {
            check(
                alg,
                Operation::Decaps,
                &items,
                &Sampled::KemDecaps {
                    dk: p(&sk, lsk),
                    c: p(c, lct),
                    k: p(k, 32),
                },
                true,
            )
        };
        decaps(&ct2, &k2).unwrap();
        fails_at(decaps(&ct2, &ss), 9, "K differs from the reference");
    }

    #[test]
    fn mldsa_samples_accept_right_and_reject_wrong_outputs() {
        let alg = Algorithm::MlDsa44;
        let s = alg.sizes();
        let (lpk, lsk, lsig) = (
            s.public_key_bytes,
            s.secret_key_bytes,
            s.signature_bytes.unwrap(),
        );
        let stride = alg.signature_stride().unwrap();
        let items = [0, 1];
        let mut r = rng();
        let (xi, rnd) = (random(&mut r, 64), random(&mut r, 64));
        let msg = random(&mut r, 2 * 40);
        let ctx = b"ctx";
        let (mut pk, mut sk, mut sig) = (vec![], vec![], vec![0u8; 2 * stride]);
        for j in 0..2 {
            let (a, b) = host::mldsa_keygen(44, &arr32(&xi[32 * j..32 * j + 32]).unwrap()).unwrap();
            let g = host::mldsa_sign(
                44,
                &b,
                &msg[40 * j..40 * j + 40],
                ctx,
                &arr32(&rnd[32 * j..32 * j + 32]).unwrap(),
            )
            .unwrap();
            sig[j * stride..j * stride + lsig].copy_from_slice(&g);
            pk.extend(a);
            sk.extend(b);
        }
        let keygen = |pkb: &[u8], skb: &[u8], xi: Option<Slots<'_>>| {
            check(
                alg,
                Operation::KeyGen,
                &items,
                &Sampled::DsaKeygen {
                    xi,
                    pk: p(pkb, lpk),
                    sk: p(skb, lsk),
                },
                true,
            )
        };
        keygen(&pk, &sk, Some(p(&xi, 32))).unwrap();
        keygen(&pk, &sk, None).unwrap();
        let mut bad = sk.clone();
        bad[lsk + 7] ^= 1;
        fails_at(
            keygen(&pk, &bad, Some(p(&xi, 32))),
            1,
            "sk differs from the reference",
        );
        let sign = |sg: &[u8], rnd: Option<Slots<'_>>| {
            check(
                alg,
                Operation::Sign,
                &items,
                &Sampled::DsaSign {
                    sk: p(&sk, lsk),
                    pk: Some(p(&pk, lpk)),
                    msg: p(&msg, 40),
                    ctx,
                    rnd,
                    sig: Slots {
                        bytes: sg,
                        stride,
                        len: stride,
                    },
                },
                true,
            )
        };
        sign(&sig, Some(p(&rnd, 32))).unwrap();
        sign(&sig, None).unwrap();
        let mut bad = sig.clone();
        bad[stride + 100] ^= 2;
        fails_at(
            sign(&bad, Some(p(&rnd, 32))),
            1,
            "signature differs from the reference",
        );
        fails_at(sign(&bad, None), 1, "the signature does not verify");
    }

    #[test]
    fn liboqs_round_trips_reject_wrong_pairs() {
        let alg = Algorithm::MlKem512;
        let kem = liboqs_kem(alg).unwrap();
        let (mut pk, mut sk) = (vec![], vec![]);
        for _ in 0..2 {
            let (a, b) = kem.keypair().unwrap();
            pk.extend_from_slice(a.as_ref());
            sk.extend_from_slice(b.as_ref());
        }
        let s = alg.sizes();
        let rt = |sk: &[u8]| {
            mlkem_keypairs_round_trip(
                alg,
                &[5, 6],
                p(&pk, s.public_key_bytes),
                p(sk, s.secret_key_bytes),
            )
        };
        rt(&sk).unwrap();
        let mut bad = sk.clone();
        bad[s.secret_key_bytes + 10] ^= 1;
        fails_at(rt(&bad), 6, "liboqs round trip failed on the key pair");
    }
}
