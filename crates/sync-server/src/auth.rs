//! Passwords and device tokens. Passwords are hashed with argon2id (a random salt each); device tokens are 32
//! random bytes, shown once, and stored only as their SHA-256 (a fast hash is right for a random secret: there is
//! nothing to guess). Comparisons are constant-time.

use argon2::{Algorithm, Argon2, Params, Version};
use rand::RngCore;
use sha2::{Digest, Sha256};

const PREFIX: &str = "argon2id$v19";
/// Device tokens start with this, so a leaked one is recognisable in logs and scanners.
pub const TOKEN_PREFIX: &str = "pws_";

#[derive(Debug, thiserror::Error)]
pub enum PasswordError {
    #[error("a password needs at least 10 characters")]
    TooShort,
    #[error("the password could not be hashed")]
    Hash,
}

fn argon(m: u32, t: u32, p: u32) -> Result<Argon2<'static>, PasswordError> {
    let params = Params::new(m, t, p, Some(32)).map_err(|_| PasswordError::Hash)?;
    Ok(Argon2::new(Algorithm::Argon2id, Version::V0x13, params))
}

/// `argon2id$v19$m$t$p$salt_hex$hash_hex`.
pub fn hash_password(password: &str) -> Result<String, PasswordError> {
    if password.chars().count() < 10 {
        return Err(PasswordError::TooShort);
    }
    let (m, t, p) = (Params::DEFAULT_M_COST, Params::DEFAULT_T_COST, Params::DEFAULT_P_COST);
    let mut salt = [0u8; 16];
    rand::rng().fill_bytes(&mut salt);
    let mut out = [0u8; 32];
    argon(m, t, p)?.hash_password_into(password.as_bytes(), &salt, &mut out).map_err(|_| PasswordError::Hash)?;
    Ok(format!("{PREFIX}${m}${t}${p}${}${}", hex::encode(salt), hex::encode(out)))
}

/// Does the password match the stored hash? A malformed stored hash never matches.
pub fn verify_password(password: &str, stored: &str) -> bool {
    let Some(rest) = stored.strip_prefix(PREFIX).and_then(|r| r.strip_prefix('$')) else { return false };
    let parts: Vec<&str> = rest.split('$').collect();
    let [m, t, p, salt, hash] = parts.as_slice() else { return false };
    let (Ok(m), Ok(t), Ok(p), Ok(salt), Ok(expected)) =
        (m.parse::<u32>(), t.parse::<u32>(), p.parse::<u32>(), hex::decode(salt), hex::decode(hash))
    else {
        return false;
    };
    let Ok(argon) = argon(m, t, p) else { return false };
    let mut out = vec![0u8; expected.len().max(1)];
    if argon.hash_password_into(password.as_bytes(), &salt, &mut out).is_err() {
        return false;
    }
    constant_time_eq(&out, &expected)
}

/// A stored hash of a password nobody knows: verifying against it when a user does not exist keeps sign-in timing
/// the same for unknown and known emails.
pub fn decoy_hash() -> &'static str {
    static DECOY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DECOY.get_or_init(|| {
        let mut bytes = [0u8; 24];
        rand::rng().fill_bytes(&mut bytes);
        hash_password(&hex::encode(bytes)).unwrap_or_default()
    })
}

pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A new device token and the hash to store.
pub fn new_token() -> (String, String) {
    new_token_with(TOKEN_PREFIX)
}

/// A new random token (256 bits, hex) after `prefix`, and the hash to store: device tokens, and PactWise Source's
/// invitation links and vendor sessions.
pub fn new_token_with(prefix: &str) -> (String, String) {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    let token = format!("{prefix}{}", hex::encode(bytes));
    let hash = token_hash(&token);
    (token, hash)
}

pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// The letters of a one-time sign-in code: no 0/O, 1/I, so it reads aloud and types without mistakes.
const CODE_ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
const CODE_LEN: usize = 16;

/// A new one-time sign-in code (`ABCD-EFGH-JKLM-NPQR`, 80 random bits) and the hash to store. Like a device token
/// it is random, so a fast hash is right; it is shown once and never logged.
pub fn new_code() -> (String, String) {
    let mut bytes = [0u8; CODE_LEN];
    rand::rng().fill_bytes(&mut bytes);
    let letters: Vec<char> =
        bytes.iter().map(|b| CODE_ALPHABET[usize::from(*b) % CODE_ALPHABET.len()] as char).collect();
    let code = letters.chunks(4).map(|c| c.iter().collect::<String>()).collect::<Vec<_>>().join("-");
    let hash = code_hash(&code);
    (code, hash)
}

/// The hash of a code as a person typed it: case, spaces and dashes do not matter.
pub fn code_hash(typed: &str) -> String {
    let normalized: String =
        typed.chars().filter(|c| !c.is_whitespace() && *c != '-').map(|c| c.to_ascii_uppercase()).collect();
    hex::encode(Sha256::digest(format!("pactwise-member-code:{normalized}").as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_verifies_against_its_own_hash_only() {
        let stored = hash_password("correct horse battery").unwrap();
        assert!(stored.starts_with("argon2id$v19$"));
        assert!(!stored.contains("correct"));
        assert!(verify_password("correct horse battery", &stored));
        assert!(!verify_password("correct horse batterx", &stored));
        assert!(!verify_password("correct horse battery", "argon2id$v19$garbage"));
        assert_ne!(stored, hash_password("correct horse battery").unwrap(), "salted");
    }

    #[test]
    fn short_passwords_are_refused() {
        assert!(matches!(hash_password("short"), Err(PasswordError::TooShort)));
    }

    #[test]
    fn codes_are_random_read_in_any_case_and_are_stored_as_a_hash() {
        let (code, hash) = new_code();
        assert_eq!(code.len(), 19);
        assert_ne!(code, new_code().0);
        assert!(code.chars().all(|c| c == '-' || CODE_ALPHABET.contains(&(c as u8))));
        assert_eq!(code_hash(&code.to_lowercase().replace('-', " ")), hash);
        assert!(!hash.contains(&code.replace('-', "")));
        assert_ne!(code_hash("AAAA-AAAA-AAAA-AAAB"), code_hash("AAAA-AAAA-AAAA-AAAA"));
    }

    #[test]
    fn tokens_are_random_and_stored_as_a_hash() {
        let (a, ha) = new_token();
        let (b, _) = new_token();
        assert_ne!(a, b);
        assert!(a.starts_with(TOKEN_PREFIX) && a.len() == TOKEN_PREFIX.len() + 64);
        assert_eq!(token_hash(&a), ha);
        assert!(!ha.contains(a.strip_prefix(TOKEN_PREFIX).unwrap()));
    }
}
