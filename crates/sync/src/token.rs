//! The device token: issued by the sync service at sign-in, kept in the OS keychain (`keyring`) and nowhere else.
//! `DeviceToken` redacts itself when printed.

use std::fmt;
use std::sync::Mutex;

pub const KEYRING_SERVICE: &str = "pactwise-desk";
pub const KEYRING_USER: &str = "sync-device-token";

#[derive(Clone, PartialEq, Eq)]
pub struct DeviceToken(String);

impl DeviceToken {
    pub fn new(token: impl Into<String>) -> Self {
        Self(token.into().trim().to_string())
    }

    /// The token text, for the `Authorization` header and the keychain only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for DeviceToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DeviceToken(<redacted>)")
    }
}

impl fmt::Display for DeviceToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenStoreError {
    #[error("the OS keychain is not available ({0}); on Linux a Secret Service (for example gnome-keyring) must run")]
    Unavailable(String),
    #[error("the OS keychain refused the operation: {0}")]
    Failed(String),
}

pub trait TokenStore: Send + Sync {
    fn get(&self) -> Result<Option<DeviceToken>, TokenStoreError>;
    fn set(&self, token: &DeviceToken) -> Result<(), TokenStoreError>;
    /// Forget the token (sign-out); clearing when none is set is not an error.
    fn clear(&self) -> Result<(), TokenStoreError>;
}

/// The OS keychain entry.
#[derive(Debug, Clone)]
pub struct KeyringTokenStore {
    service: String,
    user: String,
}

impl Default for KeyringTokenStore {
    fn default() -> Self {
        Self::new(KEYRING_SERVICE, KEYRING_USER)
    }
}

impl KeyringTokenStore {
    /// A named entry; the app uses the default, tests their own names.
    pub fn new(service: impl Into<String>, user: impl Into<String>) -> Self {
        Self { service: service.into(), user: user.into() }
    }

    fn entry(&self) -> Result<keyring::Entry, TokenStoreError> {
        keyring::Entry::new(&self.service, &self.user).map_err(store_error)
    }
}

fn store_error(error: keyring::Error) -> TokenStoreError {
    match error {
        keyring::Error::NoDefaultStore | keyring::Error::NoStorageAccess(_) | keyring::Error::PlatformFailure(_) => {
            TokenStoreError::Unavailable(error.to_string())
        }
        keyring::Error::BadEncoding(_) | keyring::Error::BadDataFormat(..) => {
            TokenStoreError::Failed("the stored sync token is not readable; sign in again".to_string())
        }
        other => TokenStoreError::Failed(other.to_string()),
    }
}

impl TokenStore for KeyringTokenStore {
    fn get(&self) -> Result<Option<DeviceToken>, TokenStoreError> {
        match self.entry()?.get_password() {
            Ok(text) if !text.trim().is_empty() => Ok(Some(DeviceToken::new(text))),
            Ok(_) | Err(keyring::Error::NoEntry) => Ok(None),
            Err(other) => Err(store_error(other)),
        }
    }

    fn set(&self, token: &DeviceToken) -> Result<(), TokenStoreError> {
        self.entry()?.set_password(token.expose()).map_err(store_error)
    }

    fn clear(&self) -> Result<(), TokenStoreError> {
        match self.entry()?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(other) => Err(store_error(other)),
        }
    }
}

/// A token held in memory, for tests.
#[derive(Debug, Default)]
pub struct MemoryTokenStore {
    token: Mutex<Option<DeviceToken>>,
}

impl TokenStore for MemoryTokenStore {
    fn get(&self) -> Result<Option<DeviceToken>, TokenStoreError> {
        Ok(self.token.lock().unwrap_or_else(|e| e.into_inner()).clone())
    }

    fn set(&self, token: &DeviceToken) -> Result<(), TokenStoreError> {
        *self.token.lock().unwrap_or_else(|e| e.into_inner()) = Some(token.clone());
        Ok(())
    }

    fn clear(&self) -> Result<(), TokenStoreError> {
        *self.token.lock().unwrap_or_else(|e| e.into_inner()) = None;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_never_prints_its_text() {
        let token = DeviceToken::new("pwt_secret-value\n");
        assert_eq!(token.expose(), "pwt_secret-value");
        assert!(!format!("{token:?} {token}").contains("secret"));
    }

    /// Touches the real OS keychain: runs under `tests/with-keyring.sh` (which the Makefile's test target uses: a D-Bus
    /// session with an unlocked gnome-keyring); without it, fails under CI and skips elsewhere.
    #[test]
    fn the_keychain_store_keeps_reads_and_forgets_the_token() {
        if !pactwise_testkit::keychain() {
            return;
        }
        let store = KeyringTokenStore::new("pactwise-desk-test", format!("sync-token-{}", std::process::id()));
        store.clear().unwrap();
        assert_eq!(store.get().unwrap(), None);
        let token = DeviceToken::new("pws_keychain-test-token");
        store.set(&token).unwrap();
        assert_eq!(store.get().unwrap(), Some(token));
        store.clear().unwrap();
        assert_eq!(store.get().unwrap(), None);
    }

    #[test]
    fn the_memory_store_sets_gets_and_clears() {
        let store = MemoryTokenStore::default();
        assert_eq!(store.get().unwrap(), None);
        store.set(&DeviceToken::new("t")).unwrap();
        assert_eq!(store.get().unwrap(), Some(DeviceToken::new("t")));
        store.clear().unwrap();
        store.clear().unwrap();
        assert_eq!(store.get().unwrap(), None);
    }
}
