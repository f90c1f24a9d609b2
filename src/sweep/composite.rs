//! Composites built from two real parts, both operations done for real and
//! sizes summed: ML-DSA or Falcon (liboqs) + Ed25519 (OpenSSL) signatures,
//! and ML-KEM or HQC (liboqs) + X25519 (OpenSSL) hybrid KEMs.
//!
//! Signature: `sig = sig_pqc ‖ sig_ed25519`; it verifies only when both
//! parts do. Ed25519 signatures have a fixed length, so the split is taken
//! from the end (a Falcon signature's length varies). KEM: `ct = ct_mlkem ‖ ct_x25519` (the X25519 ciphertext is the
//! ephemeral public key) and the shared secret is
//! `SHA3-256(ss_mlkem ‖ ss_x25519 ‖ ct_x25519)`, in the spirit of X-Wing
//! (draft-connolly-cfrg-xwing-kem), not a standardised combiner.

use crate::sweep::openssl::{OsslAlg, OsslKem, OsslSig};
use crate::sweep::oqs::{OqsKem, OqsSig};
use crate::sweep::scheme::{KemScheme, KeyBytes, SigScheme};
use anyhow::{ensure, Result};
use openssl::hash::{hash, MessageDigest};

fn sum(a: KeyBytes, b: KeyBytes) -> KeyBytes {
    KeyBytes {
        public_raw: a.public_raw + b.public_raw,
        secret_raw: a.secret_raw.zip(b.secret_raw).map(|(x, y)| x + y),
        public_der: None,
        secret_der: None,
    }
}

/// A liboqs signature + Ed25519.
pub struct CompositeSig {
    a: OqsSig,
    b: OsslSig,
    msg: Vec<u8>,
    sig: Vec<u8>,
}

impl CompositeSig {
    /// Opens liboqs's `pqc` (e.g. `ML-DSA-65`) with OpenSSL's Ed25519.
    pub fn open(pqc: &str, message: Vec<u8>) -> Result<Self> {
        Ok(CompositeSig {
            a: OqsSig::open(pqc, message.clone())?,
            b: OsslSig::open(OsslAlg::EdDsa(true), message.clone())?,
            msg: message,
            sig: vec![],
        })
    }
    fn sync_message(&mut self) {
        if *self.a.message_mut() != self.msg {
            self.a.message_mut().clone_from(&self.msg);
            self.b.message_mut().clone_from(&self.msg);
        }
    }
}

impl SigScheme for CompositeSig {
    fn keygen(&mut self) -> Result<()> {
        self.a.keygen()?;
        self.b.keygen()
    }
    fn sign(&mut self) -> Result<()> {
        self.sync_message();
        self.a.sign()?;
        self.b.sign()?;
        self.sig.clear();
        self.sig.extend_from_slice(self.a.signature_mut());
        self.sig.extend_from_slice(self.b.signature_mut());
        Ok(())
    }
    fn verify(&mut self) -> Result<bool> {
        self.sync_message();
        let Some(split) = self.sig.len().checked_sub(self.b.max_signature_len()) else {
            return Ok(false);
        };
        self.a.signature_mut().clear();
        self.a.signature_mut().extend_from_slice(&self.sig[..split]);
        self.b.signature_mut().clear();
        self.b.signature_mut().extend_from_slice(&self.sig[split..]);
        let ra = self.a.verify()?;
        let rb = self.b.verify()?;
        Ok(ra && rb)
    }
    fn message_mut(&mut self) -> &mut Vec<u8> {
        &mut self.msg
    }
    fn signature_mut(&mut self) -> &mut Vec<u8> {
        &mut self.sig
    }
    fn max_signature_len(&self) -> usize {
        self.a.max_signature_len() + self.b.max_signature_len()
    }
    fn key_bytes(&self) -> Result<KeyBytes> {
        Ok(sum(self.a.key_bytes()?, self.b.key_bytes()?))
    }
}

/// A liboqs KEM + X25519.
pub struct CompositeKem {
    a: OqsKem,
    b: OsslKem,
    ct: Vec<u8>,
    ss_enc: Vec<u8>,
    ss_dec: Vec<u8>,
}

impl CompositeKem {
    /// Opens liboqs's `pqc` (e.g. `ML-KEM-768`) with OpenSSL's X25519.
    pub fn open(pqc: &str) -> Result<Self> {
        Ok(CompositeKem {
            a: OqsKem::open(pqc)?,
            b: OsslKem::open(OsslAlg::Xdh(true))?,
            ct: vec![],
            ss_enc: vec![],
            ss_dec: vec![],
        })
    }
    fn combine(ss_a: &[u8], ss_b: &[u8], ct_b: &[u8]) -> Result<Vec<u8>> {
        let mut input = Vec::with_capacity(ss_a.len() + ss_b.len() + ct_b.len());
        input.extend_from_slice(ss_a);
        input.extend_from_slice(ss_b);
        input.extend_from_slice(ct_b);
        Ok(hash(MessageDigest::sha3_256(), &input)?.to_vec())
    }
}

impl KemScheme for CompositeKem {
    fn keygen(&mut self) -> Result<()> {
        self.a.keygen()?;
        self.b.keygen()
    }
    fn encaps(&mut self) -> Result<()> {
        self.a.encaps()?;
        self.b.encaps()?;
        self.ct.clear();
        self.ct.extend_from_slice(self.a.ciphertext_mut());
        self.ct.extend_from_slice(self.b.ciphertext_mut());
        let ct_b = self.b.ciphertext_mut().to_vec();
        self.ss_enc = Self::combine(self.a.secrets().0, self.b.secrets().0, &ct_b)?;
        Ok(())
    }
    fn decaps(&mut self) -> Result<()> {
        let la = self.a.ciphertext_mut().len();
        let lb = self.b.ciphertext_mut().len();
        ensure!(self.ct.len() == la + lb, "composite ciphertext length");
        self.a.ciphertext_mut().copy_from_slice(&self.ct[..la]);
        self.b.ciphertext_mut().copy_from_slice(&self.ct[la..]);
        self.a.decaps()?;
        self.b.decaps()?;
        self.ss_dec = Self::combine(self.a.secrets().1, self.b.secrets().1, &self.ct[la..])?;
        Ok(())
    }
    fn secrets(&self) -> (&[u8], &[u8]) {
        (&self.ss_enc, &self.ss_dec)
    }
    fn ciphertext_mut(&mut self) -> &mut [u8] {
        &mut self.ct
    }
    fn key_bytes(&self) -> Result<KeyBytes> {
        Ok(sum(self.a.key_bytes()?, self.b.key_bytes()?))
    }
}
