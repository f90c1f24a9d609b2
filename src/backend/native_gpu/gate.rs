//! The GPU correctness gate, as pure host-side checks over outputs copied
//! back from the device. Kept apart from the CUDA code so the same checks are
//! exercised on machines without a GPU (with outputs made by the host build
//! of the same sources, and corrupted copies of them).
//!
//! Each check takes the whole batch's host-made inputs (seeds, messages,
//! rnd: indexed by operation), and the sampled slots of everything made on
//! the device (keys, ciphertexts, outputs: `idx.len()` slots each, in `idx`
//! order), so no device buffer is ever copied back whole.
//!
//! Longer than most files: the checks of all 18 operations side by side, and
//! about 300 lines of tests that tamper with each.

use crate::backend::native_gpu::host;
use crate::core::catalog::Algorithm;
use anyhow::{anyhow, ensure};

/// At least this many operations of every batch are checked.
pub const MIN_SAMPLE: usize = 64;

/// `want` indices spread evenly over `0..n`, always including the first
/// and the last; every index when `n <= want`.
pub fn sample_indices(n: usize, want: usize) -> Vec<usize> {
    if n <= want {
        return (0..n).collect();
    }
    let mut v: Vec<usize> = (0..want).map(|k| k * (n - 1) / (want - 1)).collect();
    v.dedup();
    v
}

/// The sampled slots `idx` of a buffer of `len`-byte slots, in `idx` order:
/// what the checks below take as the GPU's outputs.
pub fn pick(buf: &[u8], idx: &[usize], len: usize) -> Vec<u8> {
    idx.iter()
        .flat_map(|&i| slot(buf, i, len).iter().copied())
        .collect()
}

fn slot(buf: &[u8], i: usize, len: usize) -> &[u8] {
    strided(buf, i, len, len)
}

/// The first `len` bytes of slot `i` of a buffer of `stride`-byte slots.
fn strided(buf: &[u8], i: usize, stride: usize, len: usize) -> &[u8] {
    &buf[i * stride..i * stride + len]
}

fn arr32(b: &[u8]) -> [u8; 32] {
    b.try_into().expect("32-byte slot")
}

/// Runs `check` on each sampled operation in `idx` order, with `j` its slot
/// among the sampled outputs and `i` its index in the batch, and stops at
/// the first that fails: "operation {i}: " and what failed.
fn each_sample(
    idx: &[usize],
    mut check: impl FnMut(usize, usize) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    for (j, &i) in idx.iter().enumerate() {
        check(j, i).map_err(|e| anyhow!("operation {i}: {e:#}"))?;
    }
    Ok(())
}

/// The public and secret key lengths of `alg`, once `pk` and `sk` are found
/// to hold `n` keys each of the sizes `standard` gives.
fn key_lengths(
    alg: Algorithm,
    n: usize,
    pk: &[u8],
    sk: &[u8],
    standard: &str,
) -> anyhow::Result<(usize, usize)> {
    let s = alg.sizes();
    let (lpk, lsk) = (s.public_key_bytes, s.secret_key_bytes);
    ensure!(
        pk.len() == n * lpk && sk.len() == n * lsk,
        "{alg}: key buffers do not have the {standard} sizes ({lpk} and {lsk} bytes per key)"
    );
    Ok((lpk, lsk))
}

fn mlkem_k(alg: Algorithm) -> anyhow::Result<usize> {
    alg.mlkem_params()
        .map(|p| p.k)
        .ok_or_else(|| anyhow!("{alg} is not ML-KEM"))
}

fn mldsa_level(alg: Algorithm) -> anyhow::Result<u32> {
    match alg {
        Algorithm::MlDsa44 => Ok(44),
        Algorithm::MlDsa65 => Ok(65),
        Algorithm::MlDsa87 => Ok(87),
        _ => Err(anyhow!("{alg} is not ML-DSA")),
    }
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

fn liboqs_kem(alg: Algorithm) -> anyhow::Result<oqs::kem::Kem> {
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

/// liboqs decapsulates the GPU ciphertext `ct` under `sk` to the GPU's
/// secret `ss`.
fn oqs_decapsulates_to(kem: &oqs::kem::Kem, sk: &[u8], ct: &[u8], ss: &[u8]) -> anyhow::Result<()> {
    ensure!(
        oqs_decaps(kem, sk, ct)? == ss,
        "liboqs decapsulates the GPU ciphertext to a different secret"
    );
    Ok(())
}

/// Whether liboqs accepts the signature `sig` of (`msg`, `ctx`) under the
/// public key `pk`.
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

/// Each sampled key pair (`pk`, `sk`: the sampled slots in `idx` order)
/// equals the one `host` makes for the same operation.
fn keys_equal_host(
    alg: Algorithm,
    idx: &[usize],
    pk: &[u8],
    sk: &[u8],
    host: impl Fn(usize) -> Result<(Vec<u8>, Vec<u8>), host::Code>,
) -> anyhow::Result<()> {
    let s = alg.sizes();
    each_sample(idx, |j, i| {
        let (hpk, hsk) = host(i).map_err(|c| anyhow!("host keygen failed with {c}"))?;
        ensure!(
            slot(pk, j, s.public_key_bytes) == hpk,
            "GPU public key differs from the host implementation's"
        );
        ensure!(
            slot(sk, j, s.secret_key_bytes) == hsk,
            "GPU secret key differs from the host implementation's"
        );
        Ok(())
    })
}

/// ML-KEM keygen: each sampled key pair equals the host implementation's
/// for the same (d, z), and liboqs agrees on a secret with it.
pub fn mlkem_keygen(
    alg: Algorithm,
    idx: &[usize],
    d: &[u8],
    z: &[u8],
    pk: &[u8],
    sk: &[u8],
) -> anyhow::Result<()> {
    let k = mlkem_k(alg)?;
    keys_equal_host(alg, idx, pk, sk, |i| {
        host::mlkem_keygen(k, &arr32(slot(d, i, 32)), &arr32(slot(z, i, 32)))
    })?;
    // The keys equal the host build's; liboqs must also agree on a secret.
    mlkem_keypairs_round_trip(alg, idx, pk, sk)
}

/// ML-KEM encaps: liboqs decapsulates each sampled GPU ciphertext to the
/// GPU's secret, and both equal the host implementation for the same m.
#[allow(clippy::too_many_arguments)]
pub fn mlkem_encaps(
    alg: Algorithm,
    idx: &[usize],
    pk: &[u8],
    sk: &[u8],
    m: &[u8],
    ct: &[u8],
    ss: &[u8],
) -> anyhow::Result<()> {
    let k = mlkem_k(alg)?;
    let s = alg.sizes();
    let (lpk, lsk, lct) = (
        s.public_key_bytes,
        s.secret_key_bytes,
        s.ciphertext_bytes.unwrap_or(0),
    );
    let kem = liboqs_kem(alg)?;
    each_sample(idx, |j, i| {
        let (gct, gss) = (slot(ct, j, lct), slot(ss, j, 32));
        oqs_decapsulates_to(&kem, slot(sk, j, lsk), gct, gss)?;
        let (hct, hss) = host::mlkem_encaps(k, slot(pk, j, lpk), &arr32(slot(m, i, 32)))
            .map_err(|c| anyhow!("host encaps failed with {c}"))?;
        ensure!(
            gct == hct && gss == hss,
            "GPU encapsulation differs from the host implementation's"
        );
        Ok(())
    })
}

/// ML-KEM decaps: each sampled GPU secret equals liboqs's decapsulation of
/// the same ciphertext (including the deliberately tampered ones, which
/// exercise implicit rejection), and untampered ones equal the secret
/// encapsulation produced.
#[allow(clippy::too_many_arguments)]
pub fn mlkem_decaps(
    alg: Algorithm,
    idx: &[usize],
    sk: &[u8],
    ct: &[u8],
    expected_ss: &[u8],
    tampered: &[usize],
    ss: &[u8],
) -> anyhow::Result<()> {
    let s = alg.sizes();
    let (lsk, lct) = (s.secret_key_bytes, s.ciphertext_bytes.unwrap_or(0));
    let kem = liboqs_kem(alg)?;
    each_sample(idx, |j, i| {
        let gss = slot(ss, j, 32);
        let dec = oqs_decaps(&kem, slot(sk, j, lsk), slot(ct, j, lct))?;
        ensure!(dec == gss, "GPU decapsulation differs from liboqs's");
        if tampered.contains(&i) {
            ensure!(
                gss != slot(expected_ss, j, 32),
                "a tampered ciphertext gave the original secret"
            );
        } else {
            ensure!(
                gss == slot(expected_ss, j, 32),
                "decapsulated secret differs from the encapsulated one"
            );
        }
        Ok(())
    })
}

/// ML-DSA keygen: each sampled key pair equals the host implementation's
/// for the same xi.
pub fn mldsa_keygen(
    alg: Algorithm,
    idx: &[usize],
    xi: &[u8],
    pk: &[u8],
    sk: &[u8],
) -> anyhow::Result<()> {
    let level = mldsa_level(alg)?;
    keys_equal_host(alg, idx, pk, sk, |i| {
        host::mldsa_keygen(level, &arr32(slot(xi, i, 32)))
    })
}

/// ML-DSA sign: each sampled GPU signature equals the host implementation's
/// for the same (sk, message, context, rnd) and verifies under liboqs.
#[allow(clippy::too_many_arguments)]
pub fn mldsa_sign(
    alg: Algorithm,
    idx: &[usize],
    pk: &[u8],
    sk: &[u8],
    msg_all: &[u8],
    msg_len: usize,
    ctx: &[u8],
    rnd: &[u8],
    sig: &[u8],
    stride: usize,
) -> anyhow::Result<()> {
    let level = mldsa_level(alg)?;
    let s = alg.sizes();
    let lsig = s.signature_bytes.unwrap_or(0);
    let oqs_sig = liboqs_sig(alg)?;
    each_sample(idx, |j, i| {
        let g = strided(sig, j, stride, lsig);
        let msg = slot(msg_all, i, msg_len);
        let h = host::mldsa_sign(
            level,
            slot(sk, j, s.secret_key_bytes),
            msg,
            ctx,
            &arr32(slot(rnd, i, 32)),
        )
        .map_err(|c| anyhow!("host sign failed with {c}"))?;
        ensure!(
            g == h,
            "GPU signature differs from the host implementation's"
        );
        let pk = slot(pk, j, s.public_key_bytes);
        ensure!(
            oqs_verifies(&oqs_sig, pk, msg, ctx, g)?,
            "liboqs rejects the GPU signature"
        );
        Ok(())
    })
}

/// ML-DSA verify: every valid signature was accepted and every deliberately
/// corrupted one rejected (the whole result vector is checked).
pub fn mldsa_verify(ok: &[i32], corrupted: &[usize]) -> anyhow::Result<()> {
    for (i, &v) in ok.iter().enumerate() {
        if corrupted.contains(&i) {
            ensure!(
                v == 0,
                "operation {i}: the GPU accepted a corrupted signature"
            );
        } else {
            ensure!(v == 1, "operation {i}: the GPU rejected a valid signature");
        }
    }
    Ok(())
}

/// Sampled outputs of a GPU whose randomness we do not control (cuPQC draws
/// from its own entropy), checked with liboqs round trips only: ML-KEM key
/// pairs have the FIPS 203 sizes (the slot lengths) and liboqs agrees on a
/// secret with each (encapsulate under the GPU public key, decapsulate under
/// the GPU secret key). `pk` and `sk` hold the sampled slots in `idx` order.
pub fn mlkem_keypairs_round_trip(
    alg: Algorithm,
    idx: &[usize],
    pk: &[u8],
    sk: &[u8],
) -> anyhow::Result<()> {
    let (lpk, lsk) = key_lengths(alg, idx.len(), pk, sk, "FIPS 203")?;
    let kem = liboqs_kem(alg)?;
    each_sample(idx, |j, _| {
        let gpk = kem
            .public_key_from_bytes(slot(pk, j, lpk))
            .ok_or_else(|| anyhow!("public key length"))?;
        let (ct, ss) = kem
            .encapsulate(gpk)
            .map_err(|e| anyhow!("liboqs encaps: {e}"))?;
        ensure!(
            oqs_decaps(&kem, slot(sk, j, lsk), ct.as_ref())? == ss.as_ref(),
            "liboqs round trip failed on the GPU key pair"
        );
        Ok(())
    })
}

/// ML-KEM encaps checked with liboqs only: liboqs decapsulates each sampled
/// GPU ciphertext (under the secret key of the pair the GPU encapsulated
/// to) to the GPU's secret, and a flipped ciphertext bit gives a different
/// one. `ct` and `ss` hold the sampled slots in `idx` order.
pub fn mlkem_ciphertexts_decapsulate(
    alg: Algorithm,
    idx: &[usize],
    sk_all: &[u8],
    ct: &[u8],
    ss: &[u8],
) -> anyhow::Result<()> {
    let s = alg.sizes();
    let (lsk, lct) = (s.secret_key_bytes, s.ciphertext_bytes.unwrap_or(0));
    let lss = s.shared_secret_bytes.unwrap_or(32);
    ensure!(
        ct.len() == idx.len() * lct && ss.len() == idx.len() * lss,
        "{alg}: ciphertext or secret buffers do not have the FIPS 203 sizes"
    );
    let kem = liboqs_kem(alg)?;
    each_sample(idx, |j, i| {
        let (gct, gss) = (slot(ct, j, lct), slot(ss, j, lss));
        let sk = slot(sk_all, i, lsk);
        oqs_decapsulates_to(&kem, sk, gct, gss)?;
        let mut flipped = gct.to_vec();
        flipped[lct / 2] ^= 0x01;
        ensure!(
            oqs_decaps(&kem, sk, &flipped)? != gss,
            "a flipped ciphertext bit still gives the GPU's secret"
        );
        Ok(())
    })
}

/// ML-DSA key pairs checked with liboqs only: FIPS 204 sizes, and a liboqs
/// signature made with each sampled GPU secret key verifies under its GPU
/// public key. `pk` and `sk` hold the sampled slots in `idx` order.
pub fn mldsa_keypairs_sign(
    alg: Algorithm,
    idx: &[usize],
    pk: &[u8],
    sk: &[u8],
    msg: &[u8],
    ctx: &[u8],
) -> anyhow::Result<()> {
    let (lpk, lsk) = key_lengths(alg, idx.len(), pk, sk, "FIPS 204")?;
    let sig = liboqs_sig(alg)?;
    each_sample(idx, |j, _| {
        let gsk = sig
            .secret_key_from_bytes(slot(sk, j, lsk))
            .ok_or_else(|| anyhow!("secret key length"))?;
        let signature = sig
            .sign_with_ctx_str(msg, ctx, gsk)
            .map_err(|e| anyhow!("liboqs sign: {e}"))?;
        ensure!(
            oqs_verifies(&sig, slot(pk, j, lpk), msg, ctx, signature.as_ref())?,
            "a liboqs signature with the GPU secret key fails under its public key"
        );
        Ok(())
    })
}

/// ML-DSA signatures checked with liboqs only: each sampled GPU signature
/// verifies under its public key, and is rejected with a flipped signature
/// bit or a flipped message bit. `sig` holds the sampled slots (`stride`
/// apart) in `idx` order.
#[allow(clippy::too_many_arguments)]
pub fn mldsa_signatures_verify(
    alg: Algorithm,
    idx: &[usize],
    pk_all: &[u8],
    msg_all: &[u8],
    msg_stride: usize,
    msg_len: usize,
    ctx: &[u8],
    sig: &[u8],
    stride: usize,
) -> anyhow::Result<()> {
    let s = alg.sizes();
    let (lpk, lsig) = (s.public_key_bytes, s.signature_bytes.unwrap_or(0));
    ensure!(
        stride >= lsig && sig.len() == idx.len() * stride,
        "{alg}: signature buffer does not hold {lsig}-byte signatures"
    );
    let oqs_sig = liboqs_sig(alg)?;
    each_sample(idx, |j, i| {
        let g = strided(sig, j, stride, lsig);
        let msg = strided(msg_all, i, msg_stride, msg_len);
        let verifies =
            |m: &[u8], sg: &[u8]| oqs_verifies(&oqs_sig, slot(pk_all, i, lpk), m, ctx, sg);
        ensure!(verifies(msg, g)?, "liboqs rejects the GPU signature");
        let mut bad = g.to_vec();
        bad[lsig / 2] ^= 0x01;
        ensure!(
            !verifies(msg, &bad)?,
            "liboqs accepts the GPU signature with a flipped bit"
        );
        if !msg.is_empty() {
            let mut m2 = msg.to_vec();
            m2[0] ^= 0x01;
            ensure!(
                !verifies(&m2, g)?,
                "the GPU signature also verifies for another message"
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
    fn fails_at(r: anyhow::Result<()>, i: usize, what: &str) {
        let e = format!("{:#}", r.expect_err("the gate should fail"));
        assert!(
            e.contains(&format!("operation {i}: ")) && e.contains(what),
            "{e}"
        );
    }

    /// `r` failed with a message that says `what`.
    fn fails_with(r: anyhow::Result<()>, what: &str) {
        let e = format!("{:#}", r.expect_err("the gate should fail"));
        assert!(e.contains(what), "{e}");
    }

    #[test]
    fn samples_are_spread_and_bounded() {
        assert_eq!(sample_indices(5, 64), vec![0, 1, 2, 3, 4]);
        let s = sample_indices(100_000, 64);
        assert_eq!(s.len(), 64);
        assert_eq!((s[0], s[63]), (0, 99_999));
        assert!(s.windows(2).all(|w| w[0] < w[1]));
    }

    /// Outputs made by the host build stand in for the GPU's: the gate
    /// accepts them, and rejects each kind of corruption.
    #[test]
    fn mlkem_gates_accept_right_and_reject_wrong_outputs() {
        let alg = Algorithm::MlKem768;
        let s = alg.sizes();
        let (lpk, lsk, lct) = (
            s.public_key_bytes,
            s.secret_key_bytes,
            s.ciphertext_bytes.unwrap(),
        );
        let n = 6;
        let mut r = rng();
        let (d, z, m) = (
            random(&mut r, 32 * n),
            random(&mut r, 32 * n),
            random(&mut r, 32 * n),
        );
        let (mut pk, mut sk, mut ct, mut ss) = (vec![], vec![], vec![], vec![]);
        for i in 0..n {
            let (p, k) =
                host::mlkem_keygen(3, &arr32(slot(&d, i, 32)), &arr32(slot(&z, i, 32))).unwrap();
            let (c, e) = host::mlkem_encaps(3, &p, &arr32(slot(&m, i, 32))).unwrap();
            pk.extend(p);
            sk.extend(k);
            ct.extend(c);
            ss.extend(e);
        }
        let idx = sample_indices(n, 4);
        let pick = |buf: &[u8], len: usize| pick(buf, &idx, len);
        mlkem_keygen(alg, &idx, &d, &z, &pick(&pk, lpk), &pick(&sk, lsk)).unwrap();
        let (spk, ssk, sct, sss) = (
            pick(&pk, lpk),
            pick(&sk, lsk),
            pick(&ct, lct),
            pick(&ss, 32),
        );
        mlkem_encaps(alg, &idx, &spk, &ssk, &m, &sct, &sss).unwrap();
        mlkem_decaps(alg, &idx, &ssk, &sct, &sss, &[], &sss).unwrap();

        assert_eq!(idx, [0, 1, 3, 5]);
        let mut bad_pk = pick(&pk, lpk);
        bad_pk[5] ^= 1;
        fails_at(
            mlkem_keygen(alg, &idx, &d, &z, &bad_pk, &pick(&sk, lsk)),
            0,
            "GPU public key differs from the host implementation's",
        );
        let mut bad_sk = pick(&sk, lsk);
        bad_sk[2 * lsk + 9] ^= 1;
        fails_at(
            mlkem_keygen(alg, &idx, &d, &z, &pick(&pk, lpk), &bad_sk),
            3,
            "GPU secret key differs from the host implementation's",
        );
        let mut bad_ss = pick(&ss, 32);
        bad_ss[40] ^= 1;
        fails_at(
            mlkem_encaps(alg, &idx, &spk, &ssk, &m, &sct, &bad_ss),
            1,
            "liboqs decapsulates the GPU ciphertext to a different secret",
        );
        fails_at(
            mlkem_decaps(alg, &idx, &ssk, &sct, &sss, &[], &bad_ss),
            1,
            "GPU decapsulation differs from liboqs's",
        );
        // A consistent encapsulation, but for another m than the host's.
        let (c5, e5) = host::mlkem_encaps(3, slot(&pk, 5, lpk), &[7; 32]).unwrap();
        let (mut other_ct, mut other_ss) = (pick(&ct, lct), pick(&ss, 32));
        other_ct[3 * lct..].copy_from_slice(&c5);
        other_ss[3 * 32..].copy_from_slice(&e5);
        fails_at(
            mlkem_encaps(alg, &idx, &spk, &ssk, &m, &other_ct, &other_ss),
            5,
            "GPU encapsulation differs from the host implementation's",
        );
        // liboqs agrees with the GPU, but not with what was encapsulated.
        // Operation 3 is the third sampled slot (idx [0, 1, 3, 5]).
        let mut bad_expected = sss.clone();
        bad_expected[2 * 32] ^= 1;
        fails_at(
            mlkem_decaps(alg, &idx, &ssk, &sct, &bad_expected, &[], &sss),
            3,
            "decapsulated secret differs from the encapsulated one",
        );

        // A tampered ciphertext: the right answer is liboqs's implicit rejection.
        let mut ct2 = ct.clone();
        ct2[lct * idx[1] + 3] ^= 0x10;
        let k3 = liboqs_kem(alg).unwrap();
        let mut gss = pick(&ss, 32);
        let rej = oqs_decaps(&k3, slot(&sk, idx[1], lsk), slot(&ct2, idx[1], lct)).unwrap();
        gss[32..64].copy_from_slice(&rej);
        let sct2 = pick(&ct2, lct);
        mlkem_decaps(alg, &idx, &ssk, &sct2, &sss, &[idx[1]], &gss).unwrap();
        // Claiming the original secret for a tampered ciphertext is caught:
        // liboqs rejects it to another secret.
        fails_at(
            mlkem_decaps(alg, &idx, &ssk, &sct2, &sss, &[idx[1]], &sss),
            1,
            "GPU decapsulation differs from liboqs's",
        );
        // And should the tampering not have taken (liboqs gives the original
        // secret too), the listed ciphertext is still caught.
        fails_at(
            mlkem_decaps(alg, &idx, &ssk, &sct, &sss, &[idx[1]], &sss),
            1,
            "a tampered ciphertext gave the original secret",
        );
    }

    #[test]
    fn mldsa_gates_accept_right_and_reject_wrong_outputs() {
        let alg = Algorithm::MlDsa44;
        let s = alg.sizes();
        let (lpk, lsk, lsig) = (
            s.public_key_bytes,
            s.secret_key_bytes,
            s.signature_bytes.unwrap(),
        );
        let stride = alg.signature_stride().unwrap();
        let n = 3;
        let mut r = rng();
        let (xi, rnd) = (random(&mut r, 32 * n), random(&mut r, 32 * n));
        let msg_len = 40;
        let msgs = vec![0xAB; msg_len * n];
        let ctx = b"ctx";
        let (mut pk, mut sk, mut sig) = (vec![], vec![], vec![0u8; stride * n]);
        for i in 0..n {
            let (p, k) = host::mldsa_keygen(44, &arr32(slot(&xi, i, 32))).unwrap();
            let g = host::mldsa_sign(
                44,
                &k,
                slot(&msgs, i, msg_len),
                ctx,
                &arr32(slot(&rnd, i, 32)),
            )
            .unwrap();
            sig[i * stride..i * stride + lsig].copy_from_slice(&g);
            pk.extend(p);
            sk.extend(k);
        }
        let idx: Vec<usize> = (0..n).collect();
        mldsa_keygen(alg, &idx, &xi, &pk, &sk).unwrap();
        mldsa_sign(alg, &idx, &pk, &sk, &msgs, msg_len, ctx, &rnd, &sig, stride).unwrap();
        let mut bad = sig.clone();
        bad[stride + 100] ^= 2;
        fails_at(
            mldsa_sign(alg, &idx, &pk, &sk, &msgs, msg_len, ctx, &rnd, &bad, stride),
            1,
            "GPU signature differs from the host implementation's",
        );
        // Signatures equal the host's, but liboqs checks them under other keys.
        let mut other_pk = pk.clone();
        other_pk.rotate_left(lpk);
        fails_at(
            mldsa_sign(
                alg, &idx, &other_pk, &sk, &msgs, msg_len, ctx, &rnd, &sig, stride,
            ),
            0,
            "liboqs rejects the GPU signature",
        );
        let mut bad_sk = sk.clone();
        bad_sk[lsk + 7] ^= 1;
        fails_at(
            mldsa_keygen(alg, &idx, &xi, &pk, &bad_sk),
            1,
            "GPU secret key differs from the host implementation's",
        );
        let mut bad_pk = pk.clone();
        bad_pk[2 * lpk + 3] ^= 1;
        fails_at(
            mldsa_keygen(alg, &idx, &xi, &bad_pk, &sk),
            2,
            "GPU public key differs from the host implementation's",
        );
        mldsa_verify(&[1, 0, 1], &[1]).unwrap();
        fails_at(
            mldsa_verify(&[1, 1, 1], &[1]),
            1,
            "the GPU accepted a corrupted signature",
        );
        fails_at(
            mldsa_verify(&[1, 0, 0], &[1]),
            2,
            "the GPU rejected a valid signature",
        );
    }
    /// The liboqs-only gates (cuPQC's) accept liboqs's own outputs and
    /// reject corrupted ones.
    #[test]
    fn liboqs_only_gates_accept_right_and_reject_wrong_outputs() {
        let alg = Algorithm::MlKem512;
        let kem = liboqs_kem(alg).unwrap();
        let (mut pk, mut sk, mut ct, mut ss) = (vec![], vec![], vec![], vec![]);
        for _ in 0..3 {
            let (p, k) = kem.keypair().unwrap();
            let (c, e) = kem.encapsulate(&p).unwrap();
            pk.extend_from_slice(p.as_ref());
            sk.extend_from_slice(k.as_ref());
            ct.extend_from_slice(c.as_ref());
            ss.extend_from_slice(e.as_ref());
        }
        let idx = [0, 1, 2];
        mlkem_keypairs_round_trip(alg, &idx, &pk, &sk).unwrap();
        mlkem_ciphertexts_decapsulate(alg, &idx, &sk, &ct, &ss).unwrap();
        let mut bad_sk = sk.clone();
        bad_sk[alg.sizes().secret_key_bytes + 10] ^= 1;
        fails_at(
            mlkem_keypairs_round_trip(alg, &idx, &pk, &bad_sk),
            1,
            "liboqs round trip failed on the GPU key pair",
        );
        let mut bad_ss = ss.clone();
        bad_ss[33] ^= 1;
        fails_at(
            mlkem_ciphertexts_decapsulate(alg, &idx, &sk, &ct, &bad_ss),
            1,
            "liboqs decapsulates the GPU ciphertext to a different secret",
        );
        fails_with(
            mlkem_keypairs_round_trip(alg, &idx, &pk[1..], &sk),
            "ML-KEM-512: key buffers do not have the FIPS 203 sizes (800 and 1632 bytes per key)",
        );
        fails_with(
            mlkem_ciphertexts_decapsulate(alg, &idx, &sk, &ct[1..], &ss),
            "ML-KEM-512: ciphertext or secret buffers do not have the FIPS 203 sizes",
        );

        let alg = Algorithm::MlDsa44;
        let sig = liboqs_sig(alg).unwrap();
        let stride = alg.signature_stride().unwrap();
        let (msg_len, msg_stride) = (5, 8);
        let msgs = vec![0xAB; msg_stride * 2];
        let (mut pk, mut sk, mut sigs) = (vec![], vec![], vec![0u8; stride * 2]);
        for i in 0..2 {
            let (p, k) = sig.keypair().unwrap();
            let m = &msgs[i * msg_stride..i * msg_stride + msg_len];
            let g = sig.sign_with_ctx_str(m, &[], &k).unwrap();
            sigs[i * stride..i * stride + g.as_ref().len()].copy_from_slice(g.as_ref());
            pk.extend_from_slice(p.as_ref());
            sk.extend_from_slice(k.as_ref());
        }
        let idx = [0, 1];
        mldsa_keypairs_sign(alg, &idx, &pk, &sk, b"m", &[]).unwrap();
        let verify = |sigs: &[u8]| {
            mldsa_signatures_verify(
                alg,
                &idx,
                &pk,
                &msgs,
                msg_stride,
                msg_len,
                &[],
                sigs,
                stride,
            )
        };
        verify(&sigs).unwrap();
        let mut bad = sigs.clone();
        bad[stride + 40] ^= 4;
        fails_at(verify(&bad), 1, "liboqs rejects the GPU signature");
        fails_with(
            verify(&sigs[1..]),
            "ML-DSA-44: signature buffer does not hold 2420-byte signatures",
        );
        let mut swapped = pk.clone();
        swapped.rotate_left(alg.sizes().public_key_bytes);
        fails_at(
            mldsa_keypairs_sign(alg, &idx, &swapped, &sk, b"m", &[]),
            0,
            "a liboqs signature with the GPU secret key fails under its public key",
        );
        fails_with(
            mldsa_keypairs_sign(alg, &idx, &pk[1..], &sk, b"m", &[]),
            "ML-DSA-44: key buffers do not have the FIPS 204 sizes (1312 and 2560 bytes per key)",
        );
    }
}
