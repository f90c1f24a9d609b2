//! What every measured algorithm offers the sweep: a KEM or a signature
//! scheme holding its own key material and buffers, so that each operation
//! can be repeated on its own and checked afterwards.

use anyhow::Result;

/// Bytes of the keys a scheme holds, read from real buffers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyBytes {
    /// Raw public key (for EC keys the uncompressed point).
    pub public_raw: usize,
    /// Raw secret key as the library exports it (absent when it exports none).
    pub secret_raw: Option<usize>,
    /// DER SubjectPublicKeyInfo, for OpenSSL keys.
    pub public_der: Option<usize>,
    /// DER PKCS#8 PrivateKeyInfo, for OpenSSL keys.
    pub secret_der: Option<usize>,
}

impl KeyBytes {
    /// Element-wise maximum (DER lengths vary a little between keys).
    pub fn max(&self, o: &KeyBytes) -> KeyBytes {
        let m = |a: Option<usize>, b: Option<usize>| match (a, b) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        KeyBytes {
            public_raw: self.public_raw.max(o.public_raw),
            secret_raw: m(self.secret_raw, o.secret_raw),
            public_der: m(self.public_der, o.public_der),
            secret_der: m(self.secret_der, o.secret_der),
        }
    }
}

/// A key encapsulation mechanism (or a key exchange modelled as one).
pub trait KemScheme {
    /// Makes a new key pair and keeps it.
    fn keygen(&mut self) -> Result<()>;
    /// Encapsulates against the kept public key; keeps ciphertext and secret.
    fn encaps(&mut self) -> Result<()>;
    /// Decapsulates the kept ciphertext with the kept secret key.
    fn decaps(&mut self) -> Result<()>;
    /// (secret from the last encapsulation, secret from the last decapsulation).
    fn secrets(&self) -> (&[u8], &[u8]);
    /// The kept ciphertext, to corrupt it in the correctness gate.
    fn ciphertext_mut(&mut self) -> &mut [u8];
    /// Sizes of the kept keys.
    fn key_bytes(&self) -> Result<KeyBytes>;
}

/// A signature scheme.
pub trait SigScheme {
    /// Makes a new key pair and keeps it.
    fn keygen(&mut self) -> Result<()>;
    /// Signs the kept message; keeps the signature.
    fn sign(&mut self) -> Result<()>;
    /// Verifies the kept signature on the kept message; `Ok(false)` for a rejection.
    fn verify(&mut self) -> Result<bool>;
    /// The kept message, to corrupt it in the correctness gate.
    fn message_mut(&mut self) -> &mut Vec<u8>;
    /// The kept signature, to corrupt it in the correctness gate.
    fn signature_mut(&mut self) -> &mut Vec<u8>;
    /// Largest signature the scheme can produce, bytes.
    fn max_signature_len(&self) -> usize;
    /// Sizes of the kept keys.
    fn key_bytes(&self) -> Result<KeyBytes>;
    /// For stateful schemes (XMSS, LMS): (signatures the kept key has
    /// left, signatures it allows in all); `None` for stateless ones.
    fn signature_budget(&self) -> Option<Result<(u64, u64)>> {
        None
    }
}

/// An opened algorithm.
pub enum Scheme {
    /// A KEM.
    Kem(Box<dyn KemScheme>),
    /// A signature scheme.
    Sig(Box<dyn SigScheme>),
}
