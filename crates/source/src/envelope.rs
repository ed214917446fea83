//! Sealed envelopes: a vendor's submission encrypted at rest so that nobody can read it before the deadline.
//!
//! ## The threat model
//! Each envelope is sealed twice with HPKE (RFC 9180: X25519, HKDF-SHA256, ChaCha20-Poly1305):
//! - the **inner layer** to the tender's **opening key**, made on the buyer's desktop when the tender is
//!   published; its secret half never leaves that desktop's keychain;
//! - the **outer layer** to the tender's **deadline key**, made by the service at publishing; its secret half is
//!   stored only wrapped by the service's **key-wrapping key**, which lives outside the database (a file or the
//!   service's secret store), and the service unwraps it only when its clock says the submission deadline has
//!   passed ([`crate::tender::Tender::may_release_deadline_key`]).
//!
//! Before the deadline, therefore:
//! - someone with the database (an administrator, a backup, a thief) holds ciphertext and a wrapped key: nothing
//!   readable without both the service's key-wrapping key and the buyer's opening key;
//! - the buyer holds the opening key but cannot remove the outer layer; the service does not serve envelopes
//!   before the deadline;
//! - the service, even if it unwrapped its deadline key early, meets the buyer's layer.
//!
//! Limits, stated: the service sees each file's plaintext in memory while it inspects it on upload (the default-deny
//! inspection must read the file to refuse it with a reason to the vendor); a compromised running service could
//! keep a copy then. The buyer and the service together (collusion, or one party holding both keys) can open early.
//! Losing the opening key loses the submissions: the desktop keeps it in the keychain, and the tender says so.
//!
//! **Uploads in progress** (a vendor's file sent in chunks, resumable, before it is inspected and sealed): each chunk
//! is sealed on arrival with HPKE (the same suite) to the service's **key-wrapping key**
//! ([`seal_upload_chunk`]), its associated data binding the upload's id and the chunk's first byte, so a chunk
//! cannot be moved to another upload or position undetected. Every chunk has its own ephemeral key, so a chunk sent
//! again after a cut connection never reuses a nonce. The database holds only these sealed chunks; someone with the
//! database and without the key file reads nothing of a half-uploaded file. The running service opens the chunks
//! when the upload finishes (to check its size and SHA-256 and inspect it) and again when the vendor submits (to seal
//! the file as an envelope above); the chunks are deleted in the submission's transaction, and abandoned uploads
//! when they expire. Limit: whoever holds the key-wrapping key and the database can read an upload in progress (not
//! a sealed envelope, which also needs the buyer's opening key).
//!
//! Each layer's associated data binds the envelope to its tender, vendor, kind, submission number and the published
//! version's content hash, so an envelope cannot be moved to another vendor, tender or version undetected.

use hpke::aead::ChaCha20Poly1305;
use hpke::kdf::HkdfSha256;
use hpke::kem::X25519HkdfSha256;
use hpke::{Deserializable, Kem as _, OpModeR, OpModeS, Serializable};
use zeroize::Zeroizing;

type Kem = X25519HkdfSha256;

const FORMAT: u8 = 1;
const INNER_INFO: &[u8] = b"pactwise-source envelope inner v1";
const OUTER_INFO: &[u8] = b"pactwise-source envelope outer v1";
const ENCAPPED_LEN: usize = 32;

/// Why an envelope could not be sealed or opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvelopeError {
    #[error("the key is not a valid tender key")]
    BadKey,
    #[error("the envelope is damaged or not an envelope of this format")]
    Malformed,
    #[error("the envelope does not open with this key for this tender, vendor and submission")]
    WrongKeyOrContext,
    #[error("sealing failed")]
    Seal,
}

/// A tender key pair (opening key or deadline key). The secret half is zeroed when dropped.
pub struct KeyPair {
    secret: Zeroizing<Vec<u8>>,
    public: PublicKey,
}

/// The public half of a tender key: 32 bytes, shown and stored as hex.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PublicKey(#[serde(with = "hex_bytes")] pub [u8; 32]);

impl KeyPair {
    /// A fresh key pair from the operating system's random source.
    pub fn generate() -> Self {
        let (secret, _) = Kem::gen_keypair();
        Self::from_parts(&secret)
    }

    /// The key pair whose secret half is these 32 bytes (as kept in a keychain or unwrapped by the service).
    pub fn from_secret(bytes: &[u8]) -> Result<Self, EnvelopeError> {
        let secret = <Kem as hpke::Kem>::PrivateKey::from_bytes(bytes).map_err(|_| EnvelopeError::BadKey)?;
        Ok(Self::from_parts(&secret))
    }

    fn from_parts(secret: &<Kem as hpke::Kem>::PrivateKey) -> Self {
        let public = Kem::sk_to_pk(secret);
        let mut public_bytes = [0u8; 32];
        public_bytes.copy_from_slice(&public.to_bytes());
        Self { secret: Zeroizing::new(secret.to_bytes().to_vec()), public: PublicKey(public_bytes) }
    }

    pub fn public(&self) -> &PublicKey {
        &self.public
    }

    /// The secret half, for the keychain (opening key) or for wrapping (deadline key). Never log it.
    pub fn secret_bytes(&self) -> &[u8] {
        &self.secret
    }

    fn private(&self) -> Result<<Kem as hpke::Kem>::PrivateKey, EnvelopeError> {
        <Kem as hpke::Kem>::PrivateKey::from_bytes(&self.secret).map_err(|_| EnvelopeError::BadKey)
    }
}

impl std::fmt::Debug for KeyPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyPair").field("public", &self.public).finish_non_exhaustive()
    }
}

/// Which envelope of a submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EnvelopeKind {
    Technical,
    Price,
}

/// What an envelope belongs to; bound into both layers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvelopeContext<'a> {
    pub tender_id: &'a str,
    pub vendor_id: &'a str,
    pub kind: EnvelopeKind,
    /// 1 for the first submission, 2 for its first replacement, …
    pub submission: u32,
    /// The published version's content hash.
    pub published_hash: &'a str,
    /// The file's name within the envelope (one envelope per file or per answer set).
    pub part: &'a str,
}

impl EnvelopeContext<'_> {
    fn aad(&self) -> Vec<u8> {
        let kind = match self.kind {
            EnvelopeKind::Technical => "technical",
            EnvelopeKind::Price => "price",
        };
        // Length-prefixed fields: no two contexts share an encoding.
        let mut out = Vec::new();
        for field in
            [self.tender_id, self.vendor_id, kind, &self.submission.to_string(), self.published_hash, self.part]
        {
            out.extend_from_slice(&(field.len() as u32).to_be_bytes());
            out.extend_from_slice(field.as_bytes());
        }
        out
    }
}

/// Seals `plaintext` to the opening key (inside) and the deadline key (outside).
pub fn seal(
    plaintext: &[u8],
    context: &EnvelopeContext<'_>,
    opening: &PublicKey,
    deadline: &PublicKey,
) -> Result<Vec<u8>, EnvelopeError> {
    let aad = context.aad();
    let inner = seal_layer(plaintext, &aad, opening, INNER_INFO)?;
    seal_layer(&inner, &aad, deadline, OUTER_INFO)
}

/// Removes the service's layer with the deadline key (after the deadline): what remains is readable only with the
/// opening key.
pub fn remove_deadline_layer(
    sealed: &[u8],
    context: &EnvelopeContext<'_>,
    deadline: &KeyPair,
) -> Result<Vec<u8>, EnvelopeError> {
    open_layer(sealed, &context.aad(), deadline, OUTER_INFO)
}

/// Opens what [`remove_deadline_layer`] returned, with the opening key (on the buyer's desktop).
pub fn open(inner: &[u8], context: &EnvelopeContext<'_>, opening: &KeyPair) -> Result<Vec<u8>, EnvelopeError> {
    open_layer(inner, &context.aad(), opening, INNER_INFO)
}

fn seal_layer(plaintext: &[u8], aad: &[u8], to: &PublicKey, info: &[u8]) -> Result<Vec<u8>, EnvelopeError> {
    let public = <Kem as hpke::Kem>::PublicKey::from_bytes(&to.0).map_err(|_| EnvelopeError::BadKey)?;
    let (encapped, ciphertext) =
        hpke::single_shot_seal::<ChaCha20Poly1305, HkdfSha256, Kem>(&OpModeS::Base, &public, info, plaintext, aad)
            .map_err(|_| EnvelopeError::Seal)?;
    let mut out = Vec::with_capacity(1 + ENCAPPED_LEN + ciphertext.len());
    out.push(FORMAT);
    out.extend_from_slice(&encapped.to_bytes());
    out.extend_from_slice(&ciphertext);
    Ok(out)
}

fn open_layer(sealed: &[u8], aad: &[u8], with: &KeyPair, info: &[u8]) -> Result<Vec<u8>, EnvelopeError> {
    if sealed.first() != Some(&FORMAT) || sealed.len() < 1 + ENCAPPED_LEN + 16 {
        return Err(EnvelopeError::Malformed);
    }
    let encapped = <Kem as hpke::Kem>::EncappedKey::from_bytes(&sealed[1..1 + ENCAPPED_LEN])
        .map_err(|_| EnvelopeError::Malformed)?;
    hpke::single_shot_open::<ChaCha20Poly1305, HkdfSha256, Kem>(
        &OpModeR::Base,
        &with.private()?,
        &encapped,
        info,
        &sealed[1 + ENCAPPED_LEN..],
        aad,
    )
    .map_err(|_| EnvelopeError::WrongKeyOrContext)
}

/// The service's key-wrapping: the deadline key's secret half sealed to the service's wrapping key, with the tender
/// id as context, so the database holds only the wrapped form.
pub fn wrap_deadline_key(deadline: &KeyPair, tender_id: &str, wrapping: &PublicKey) -> Result<Vec<u8>, EnvelopeError> {
    seal_layer(deadline.secret_bytes(), tender_id.as_bytes(), wrapping, b"pactwise-source deadline key v1")
}

/// Unwraps a deadline key. The caller decides when (the tender's rule); this only does the cryptography.
pub fn unwrap_deadline_key(wrapped: &[u8], tender_id: &str, wrapping: &KeyPair) -> Result<KeyPair, EnvelopeError> {
    let secret =
        Zeroizing::new(open_layer(wrapped, tender_id.as_bytes(), wrapping, b"pactwise-source deadline key v1")?);
    KeyPair::from_secret(&secret)
}

const UPLOAD_INFO: &[u8] = b"pactwise-source upload chunk v1";

fn upload_aad(upload_id: &str, first_byte: u64) -> Vec<u8> {
    let mut aad = Vec::with_capacity(4 + upload_id.len() + 8);
    aad.extend_from_slice(&(upload_id.len() as u32).to_be_bytes());
    aad.extend_from_slice(upload_id.as_bytes());
    aad.extend_from_slice(&first_byte.to_be_bytes());
    aad
}

/// Seals one chunk of an upload in progress to the service's key-wrapping key (see the threat model above).
pub fn seal_upload_chunk(
    chunk: &[u8],
    upload_id: &str,
    first_byte: u64,
    wrapping: &PublicKey,
) -> Result<Vec<u8>, EnvelopeError> {
    seal_layer(chunk, &upload_aad(upload_id, first_byte), wrapping, UPLOAD_INFO)
}

/// Opens a chunk sealed by [`seal_upload_chunk`] for the same upload and first byte.
pub fn open_upload_chunk(
    sealed: &[u8],
    upload_id: &str,
    first_byte: u64,
    wrapping: &KeyPair,
) -> Result<Vec<u8>, EnvelopeError> {
    open_layer(sealed, &upload_aad(upload_id, first_byte), wrapping, UPLOAD_INFO)
}

mod hex_bytes {
    pub fn serialize<S: serde::Serializer>(bytes: &[u8; 32], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&hex::encode(bytes))
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<[u8; 32], D::Error> {
        let text: String = serde::Deserialize::deserialize(deserializer)?;
        let bytes = hex::decode(text).map_err(serde::de::Error::custom)?;
        bytes.try_into().map_err(|_| serde::de::Error::custom("a tender key has 32 bytes"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upload_chunk_opens_only_for_its_upload_and_position_with_the_wrapping_key() {
        let wrapping = KeyPair::generate();
        let sealed = seal_upload_chunk(b"chunk of a file", "upload-1", 4096, wrapping.public()).unwrap();
        assert!(!sealed.windows(5).any(|w| w == b"chunk"));
        assert_eq!(open_upload_chunk(&sealed, "upload-1", 4096, &wrapping).unwrap(), b"chunk of a file");
        assert!(open_upload_chunk(&sealed, "upload-2", 4096, &wrapping).is_err());
        assert!(open_upload_chunk(&sealed, "upload-1", 0, &wrapping).is_err());
        assert!(open_upload_chunk(&sealed, "upload-1", 4096, &KeyPair::generate()).is_err());
        let again = seal_upload_chunk(b"chunk of a file", "upload-1", 4096, wrapping.public()).unwrap();
        assert_ne!(sealed, again, "a chunk sent again is sealed under a fresh key");
    }

    fn context(vendor: &str, submission: u32) -> EnvelopeContext<'_> {
        EnvelopeContext {
            tender_id: "tender-1",
            vendor_id: vendor,
            kind: EnvelopeKind::Technical,
            submission,
            published_hash: "abc123",
            part: "answers.pdf",
        }
    }

    #[test]
    fn both_keys_open_it_and_neither_alone_does() {
        let (opening, deadline) = (KeyPair::generate(), KeyPair::generate());
        let plaintext = b"Our technical answer: 24/7 support, 4-hour response.";
        let sealed = seal(plaintext, &context("v1", 1), opening.public(), deadline.public()).unwrap();
        assert!(!sealed.windows(8).any(|w| w == &plaintext[..8]), "plaintext visible in the envelope");
        // The opening key alone meets the deadline layer.
        assert_eq!(open(&sealed, &context("v1", 1), &opening).unwrap_err(), EnvelopeError::WrongKeyOrContext);
        // The deadline key alone leaves the buyer's layer.
        let inner = remove_deadline_layer(&sealed, &context("v1", 1), &deadline).unwrap();
        assert!(!inner.windows(8).any(|w| w == &plaintext[..8]));
        assert_eq!(open(&inner, &context("v1", 1), &opening).unwrap(), plaintext);
    }

    #[test]
    fn an_envelope_does_not_open_as_another_vendors_or_submissions() {
        let (opening, deadline) = (KeyPair::generate(), KeyPair::generate());
        let sealed = seal(b"price 100", &context("v1", 2), opening.public(), deadline.public()).unwrap();
        for other in [context("v2", 2), context("v1", 1)] {
            assert_eq!(
                remove_deadline_layer(&sealed, &other, &deadline).unwrap_err(),
                EnvelopeError::WrongKeyOrContext
            );
        }
        let mut damaged = sealed.clone();
        let last = damaged.len() - 1;
        damaged[last] ^= 1;
        assert!(remove_deadline_layer(&damaged, &context("v1", 2), &deadline).is_err());
        assert_eq!(
            remove_deadline_layer(&sealed[..20], &context("v1", 2), &deadline).unwrap_err(),
            EnvelopeError::Malformed
        );
    }

    #[test]
    fn the_deadline_key_round_trips_through_wrapping_only_with_the_wrapping_key() {
        let (deadline, wrapping, other) = (KeyPair::generate(), KeyPair::generate(), KeyPair::generate());
        let wrapped = wrap_deadline_key(&deadline, "tender-1", wrapping.public()).unwrap();
        assert!(!wrapped.windows(32).any(|w| w == deadline.secret_bytes()));
        let unwrapped = unwrap_deadline_key(&wrapped, "tender-1", &wrapping).unwrap();
        assert_eq!(unwrapped.public(), deadline.public());
        assert!(unwrap_deadline_key(&wrapped, "tender-1", &other).is_err());
        assert!(unwrap_deadline_key(&wrapped, "tender-2", &wrapping).is_err());
    }

    #[test]
    fn a_key_from_its_secret_is_the_same_key() {
        let key = KeyPair::generate();
        let again = KeyPair::from_secret(key.secret_bytes()).unwrap();
        assert_eq!(again.public(), key.public());
        assert_eq!(KeyPair::from_secret(&[1, 2, 3]).unwrap_err(), EnvelopeError::BadKey);
        assert!(!format!("{key:?}").contains(&hex::encode(key.secret_bytes())));
    }
}
