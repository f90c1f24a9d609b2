//! Request mixes: a request that is several operations, served together
//! in one batch. `tls13-server` is the server's side of a TLS 1.3
//! handshake with the X25519MLKEM768 group and an ML-DSA-65 certificate:
//! one ML-KEM-768 encapsulation to the client's key share, one X25519 key
//! pair and shared secret (OpenSSL, on the CPU), and one ML-DSA-65
//! signature (CertificateVerify).

use super::live::{BackendWorker, Worker};
use crate::backend::{Backend, BatchConfig};
use crate::core::catalog::{Algorithm, Operation};
use crate::schema::device::GateReport;
use openssl::derive::Deriver;
use openssl::pkey::{Id, PKey, Private, Public};

/// A request mix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mix {
    /// The server side of a TLS 1.3 handshake: X25519MLKEM768 key
    /// exchange, ML-DSA-65 signature.
    Tls13Server,
}

impl Mix {
    /// Every mix.
    pub const ALL: [Mix; 1] = [Mix::Tls13Server];

    /// The name on the command line and in the run file.
    pub fn name(self) -> &'static str {
        match self {
            Mix::Tls13Server => "tls13-server",
        }
    }

    /// The mix named `s`; an unknown name is refused, naming it and the
    /// mixes there are.
    pub fn parse(s: &str) -> Result<Mix, String> {
        Mix::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                let names: Vec<&str> = Mix::ALL.iter().map(|m| m.name()).collect();
                format!(
                    "invalid --mix '{s}': no such request mix (mixes: {})",
                    names.join(", ")
                )
            })
    }

    /// The post-quantum operations of one request, each batched by the
    /// backend.
    pub fn operations(self) -> [(Algorithm, Operation); 2] {
        match self {
            Mix::Tls13Server => [
                (Algorithm::MlKem768, Operation::Encaps),
                (Algorithm::MlDsa65, Operation::Sign),
            ],
        }
    }

    /// What one request is, for the run file's `algorithm` field.
    pub fn describe(self) -> &'static str {
        match self {
            Mix::Tls13Server => "X25519MLKEM768 + ML-DSA-65",
        }
    }

    /// The operations of one request, for the run file's `operation`
    /// field.
    pub fn operation_names(self) -> &'static str {
        match self {
            Mix::Tls13Server => "ML-KEM-768 encaps + X25519 keygen and derive + ML-DSA-65 sign",
        }
    }
}

/// The X25519 half of the key exchange, as a server does it: for each
/// request a fresh key pair and the secret shared with the client's key
/// share. One client key share serves every request (a server cannot tell).
pub struct X25519Server {
    client: PKey<Private>,
    client_share: PKey<Public>,
    /// The last request's key pair and secret, for the gate.
    last: Option<(PKey<Private>, Vec<u8>)>,
}

impl X25519Server {
    /// A client key share to answer.
    pub fn new() -> anyhow::Result<Self> {
        let client = PKey::generate_x25519()?;
        let client_share = PKey::public_key_from_raw_bytes(&client.raw_public_key()?, Id::X25519)?;
        Ok(X25519Server {
            client,
            client_share,
            last: None,
        })
    }

    /// `n` requests' key pairs and shared secrets.
    pub fn serve(&mut self, n: usize) -> anyhow::Result<()> {
        for _ in 0..n {
            let key = PKey::generate_x25519()?;
            let secret = {
                let mut d = Deriver::new(&key)?;
                d.set_peer(&self.client_share)?;
                d.derive_to_vec()?
            };
            self.last = Some((key, secret));
        }
        Ok(())
    }

    /// The gate: the client, from the last request's public key, derives
    /// the secret the server did.
    pub fn check(&mut self) -> anyhow::Result<GateReport> {
        let Some((key, secret)) = self.last.take() else {
            return Ok(GateReport {
                checked_ops: 0,
                checks: vec![],
                coverage: None,
            });
        };
        let share = PKey::public_key_from_raw_bytes(&key.raw_public_key()?, Id::X25519)?;
        let mut d = Deriver::new(&self.client)?;
        d.set_peer(&share)?;
        anyhow::ensure!(
            d.derive_to_vec()? == secret,
            "X25519: the client derived another secret than the server"
        );
        Ok(GateReport {
            checked_ops: 1,
            checks: vec!["X25519 secret derived again by the client".into()],
            coverage: None,
        })
    }
}

/// A worker serving whole requests of a mix: a batch of `n` runs `n` of
/// each post-quantum operation as one batch each, and `n` X25519 halves.
pub struct MixWorker {
    parts: Vec<BackendWorker>,
    x25519: X25519Server,
    /// The backend the batches were prepared on: declared after them, so
    /// dropped after them.
    _backend: Box<dyn Backend>,
}

impl MixWorker {
    /// Prepares every operation of `mix` at every batch size up to
    /// `max_batch` on `backend`, which it keeps.
    pub fn new(
        mut backend: Box<dyn Backend>,
        mix: Mix,
        cfg: &BatchConfig,
        max_batch: usize,
    ) -> anyhow::Result<Self> {
        let parts = mix
            .operations()
            .into_iter()
            .map(|(alg, op)| BackendWorker::new(backend.as_mut(), alg, op, cfg, max_batch))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let x25519 = X25519Server::new()?;
        Ok(MixWorker {
            parts,
            x25519,
            _backend: backend,
        })
    }
}

impl Worker for MixWorker {
    fn serve(&mut self, n: usize) -> anyhow::Result<()> {
        for p in &mut self.parts {
            p.serve(n)?;
        }
        self.x25519.serve(n)
    }
    fn check(&mut self) -> anyhow::Result<GateReport> {
        let mut total = self.x25519.check()?;
        for p in &mut self.parts {
            let g = p.check()?;
            total.checked_ops += g.checked_ops;
            total.checks.extend(g.checks);
        }
        Ok(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mix_is_named_and_an_unknown_one_refused_by_name() {
        assert_eq!(Mix::parse("tls13-server"), Ok(Mix::Tls13Server));
        let e = Mix::parse("tls12").unwrap_err();
        assert!(e.contains("'tls12'") && e.contains("tls13-server"), "{e}");
    }

    #[test]
    fn the_x25519_half_agrees_with_the_client() {
        let mut x = X25519Server::new().unwrap();
        assert_eq!(x.check().unwrap().checked_ops, 0);
        x.serve(3).unwrap();
        assert_eq!(x.check().unwrap().checked_ops, 1);
        // A secret that differs is caught.
        x.serve(1).unwrap();
        if let Some((_, s)) = x.last.as_mut() {
            s[0] ^= 1;
        }
        assert!(x.check().is_err());
    }
}
