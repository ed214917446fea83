//! The Anthropic API key. It lives in the OS keychain (through `keyring`) and nowhere else: never in the database,
//! files or logs. `ApiKey` redacts itself in `Debug` and `Display`, so printing one by mistake leaks nothing.

use std::fmt;
use std::sync::Mutex;

/// The keychain service name.
pub const KEYRING_SERVICE: &str = "pactwise-desk";
/// The keychain entry (user) name.
pub const KEYRING_USER: &str = "anthropic-api-key";

/// An API key. Its text is reachable only inside this crate (to build the request header and write the keychain).
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Accept a key as typed or piped in: surrounding whitespace (a trailing newline) is removed; an empty key or one
    /// with inner whitespace or control characters is refused.
    pub fn parse(text: &str) -> Result<Self, ApiKeyError> {
        let key = text.trim();
        if key.is_empty() {
            return Err(ApiKeyError::Empty);
        }
        if key.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(ApiKeyError::Malformed);
        }
        if !key.is_ascii() {
            return Err(ApiKeyError::Malformed);
        }
        Ok(Self(key.to_string()))
    }

    /// Read a key from a stream (the CLI's stdin for `pactwise settings api-key`), so it never appears in argv or
    /// shell history.
    pub fn read_from(mut reader: impl std::io::Read) -> Result<Self, ApiKeyError> {
        let mut text = String::new();
        reader.read_to_string(&mut text).map_err(|_| ApiKeyError::Unreadable)?;
        Self::parse(&text)
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiKeyError {
    #[error("the API key is empty; paste the key from the Anthropic console")]
    Empty,
    #[error(
        "the API key contains spaces, control or non-ASCII characters; paste exactly the key from the Anthropic console"
    )]
    Malformed,
    #[error("the API key could not be read from standard input (it must be UTF-8 text); pipe or paste only the key")]
    Unreadable,
}

/// Reading or writing the keychain failed. Messages never contain the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyStoreError {
    #[error(
        "the OS keychain is not available ({0}); on Linux a Secret Service (for example gnome-keyring) must be running \
         in the session"
    )]
    Unavailable(String),
    #[error("the OS keychain refused the operation: {0}")]
    Failed(String),
}

/// Where the API key comes from. Read again for every model call, so setting or clearing it takes effect at once.
pub trait ApiKeySource: Send + Sync {
    /// The stored key, or `None` when none is set.
    fn get(&self) -> Result<Option<ApiKey>, KeyStoreError>;
    fn set(&self, key: &ApiKey) -> Result<(), KeyStoreError>;
    /// Remove the key; clearing when none is set is not an error.
    fn clear(&self) -> Result<(), KeyStoreError>;
}

/// The OS keychain: Secret Service on Linux, Keychain on macOS, Credential Manager on Windows.
#[derive(Debug, Clone)]
pub struct KeyringApiKeySource {
    service: String,
    user: String,
}

impl Default for KeyringApiKeySource {
    fn default() -> Self {
        Self::new(KEYRING_SERVICE, KEYRING_USER)
    }
}

impl KeyringApiKeySource {
    /// A named entry; the app uses [`KeyringApiKeySource::default`], tests use their own names.
    pub fn new(service: impl Into<String>, user: impl Into<String>) -> Self {
        Self { service: service.into(), user: user.into() }
    }

    fn entry(&self) -> Result<keyring::Entry, KeyStoreError> {
        keyring::Entry::new(&self.service, &self.user).map_err(store_error)
    }
}

fn store_error(error: keyring::Error) -> KeyStoreError {
    match error {
        keyring::Error::NoDefaultStore | keyring::Error::NoStorageAccess(_) | keyring::Error::PlatformFailure(_) => {
            KeyStoreError::Unavailable(error.to_string())
        }
        // These two carry the stored bytes; describe them without passing anything of the data along.
        keyring::Error::BadEncoding(_) | keyring::Error::BadDataFormat(..) => {
            KeyStoreError::Failed("the stored key is not readable text; set it again".to_string())
        }
        other => KeyStoreError::Failed(other.to_string()),
    }
}

impl ApiKeySource for KeyringApiKeySource {
    fn get(&self) -> Result<Option<ApiKey>, KeyStoreError> {
        match self.entry()?.get_password() {
            Ok(text) => Ok(ApiKey::parse(&text).ok()),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(other) => Err(store_error(other)),
        }
    }

    fn set(&self, key: &ApiKey) -> Result<(), KeyStoreError> {
        self.entry()?.set_password(key.expose()).map_err(store_error)
    }

    fn clear(&self) -> Result<(), KeyStoreError> {
        match self.entry()?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(other) => Err(store_error(other)),
        }
    }
}

/// A key held in memory, for tests and demos.
#[derive(Debug, Default)]
pub struct InMemoryApiKeySource {
    key: Mutex<Option<ApiKey>>,
}

impl InMemoryApiKeySource {
    pub fn with_key(key: ApiKey) -> Self {
        Self { key: Mutex::new(Some(key)) }
    }

    pub fn empty() -> Self {
        Self::default()
    }
}

impl ApiKeySource for InMemoryApiKeySource {
    fn get(&self) -> Result<Option<ApiKey>, KeyStoreError> {
        Ok(self.key.lock().unwrap_or_else(|e| e.into_inner()).clone())
    }

    fn set(&self, key: &ApiKey) -> Result<(), KeyStoreError> {
        *self.key.lock().unwrap_or_else(|e| e.into_inner()) = Some(key.clone());
        Ok(())
    }

    fn clear(&self) -> Result<(), KeyStoreError> {
        *self.key.lock().unwrap_or_else(|e| e.into_inner()) = None;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_never_prints_its_text() {
        let key = ApiKey::parse("sk-ant-secret-123\n").unwrap();
        assert_eq!(key.expose(), "sk-ant-secret-123");
        assert!(!format!("{key:?}").contains("secret"));
        assert!(!format!("{key}").contains("secret"));
        let source = InMemoryApiKeySource::with_key(key);
        assert!(!format!("{source:?}").contains("secret"));
    }

    #[test]
    fn empty_or_spaced_keys_are_refused() {
        assert_eq!(ApiKey::parse("  \n"), Err(ApiKeyError::Empty));
        assert_eq!(ApiKey::parse("sk ant"), Err(ApiKeyError::Malformed));
    }

    #[test]
    fn a_key_piped_on_standard_input_loses_its_trailing_newline() {
        let key = ApiKey::read_from("sk-ant-piped\n".as_bytes()).unwrap();
        assert_eq!(key.expose(), "sk-ant-piped");
        assert_eq!(ApiKey::read_from(&[0xff, 0xfe][..]), Err(ApiKeyError::Unreadable));
        assert_eq!(ApiKey::read_from("".as_bytes()), Err(ApiKeyError::Empty));
    }

    /// Touches the real OS keychain: runs under `tests/with-keyring.sh` (the Makefile runs tests inside a D-Bus
    /// session with an unlocked gnome-keyring); without it, fails under CI and skips elsewhere.
    #[test]
    fn keyring_source_stores_reads_and_clears_a_key() {
        if !pactwise_testkit::keychain() {
            return;
        }
        let source = KeyringApiKeySource::new("pactwise-desk-test", format!("key-{}", std::process::id()));
        source.clear().unwrap();
        assert_eq!(source.get().unwrap(), None);
        let key = ApiKey::parse("sk-ant-keyring-test").unwrap();
        source.set(&key).unwrap();
        assert_eq!(source.get().unwrap(), Some(key));
        source.clear().unwrap();
        assert_eq!(source.get().unwrap(), None);
        source.clear().unwrap();
    }
}
