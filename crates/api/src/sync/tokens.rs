//! The device token's home: one keychain entry per device id (the OS keychain in the app, memory in tests).

use crate::ApiError;
use pactwise_domain::ErrorCode;
use pactwise_sync::{KeyringTokenStore, MemoryTokenStore, TokenStore, TokenStoreError};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use uuid::Uuid;

/// Where the device token of a sync sign-in is kept: one entry per device id, so two data directories on one
/// machine (two devices to the service) never overwrite each other's token.
pub trait SyncTokens: Send + Sync {
    fn store_for(&self, device: Uuid) -> Arc<dyn TokenStore>;
}

/// The OS keychain (service `pactwise-desk`, entry `sync-device-token/<device id>`).
#[derive(Debug, Default, Clone, Copy)]
pub struct KeyringSyncTokens;

impl SyncTokens for KeyringSyncTokens {
    fn store_for(&self, device: Uuid) -> Arc<dyn TokenStore> {
        Arc::new(KeyringTokenStore::new(
            pactwise_sync::token::KEYRING_SERVICE,
            format!("{}/{device}", pactwise_sync::token::KEYRING_USER),
        ))
    }
}

/// Tokens in memory (tests).
#[derive(Debug, Default)]
pub struct MemorySyncTokens {
    stores: Mutex<HashMap<Uuid, Arc<MemoryTokenStore>>>,
}

impl SyncTokens for MemorySyncTokens {
    fn store_for(&self, device: Uuid) -> Arc<dyn TokenStore> {
        self.stores.lock().unwrap_or_else(|e| e.into_inner()).entry(device).or_default().clone()
    }
}

pub(crate) fn token_error(e: TokenStoreError) -> ApiError {
    match e {
        TokenStoreError::Unavailable(_) => ApiError::new(
            ErrorCode::Storage,
            "the OS keychain cannot be reached, so the sync sign-in cannot be kept; unlock your keyring (Secret \
             Service) and sign in again",
        ),
        TokenStoreError::Failed(m) => ApiError::new(ErrorCode::Storage, format!("the OS keychain refused: {m}")),
    }
}
