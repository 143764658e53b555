//! Sealing: every stored value under AES-256-GCM, bound to its record.

use aws_lc_rs::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};

use crate::StoreError;

/// Seals and opens stored values (AES-256-GCM, a random 96-bit nonce per value).
pub struct Sealer {
    key: LessSafeKey,
}

impl Sealer {
    /// `key`: 32 bytes (derived from `OPENAPI_MCP_STORE_KEY`).
    pub fn new(key: &[u8; 32]) -> Self {
        // A 32-byte key is always a valid AES-256 key.
        let unbound = UnboundKey::new(&AES_256_GCM, key).unwrap_or_else(|_| unreachable!());
        Sealer {
            key: LessSafeKey::new(unbound),
        }
    }

    fn aad(kind: &str, key: &str) -> Vec<u8> {
        let mut aad = Vec::with_capacity(kind.len() + key.len() + 1);
        aad.extend_from_slice(kind.as_bytes());
        aad.push(0);
        aad.extend_from_slice(key.as_bytes());
        aad
    }

    pub fn seal(&self, kind: &str, key: &str, plain: &[u8]) -> Vec<u8> {
        let mut nonce = [0u8; NONCE_LEN];
        crate::random_bytes(&mut nonce);
        let mut buf = plain.to_vec();
        // Sealing fails only for inputs far beyond what is stored here.
        if self
            .key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(Self::aad(kind, key)),
                &mut buf,
            )
            .is_err()
        {
            return Vec::new();
        }
        let mut out = nonce.to_vec();
        out.extend_from_slice(&buf);
        out
    }

    pub fn open(&self, kind: &str, key: &str, sealed: &[u8]) -> Result<Vec<u8>, StoreError> {
        if sealed.len() < NONCE_LEN {
            return Err(StoreError::Sealed);
        }
        let (nonce, rest) = sealed.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| StoreError::Sealed)?;
        let mut buf = rest.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(Self::aad(kind, key)), &mut buf)
            .map_err(|_| StoreError::Sealed)?;
        Ok(plain.to_vec())
    }
}
