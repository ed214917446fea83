//! The model policy, in one place: the client knows exactly one model. Any other identifier, wherever it comes from
//! (configuration, the database, an environment variable, a request field), is mapped back to it, and the client
//! resolves it again immediately before each request is serialized, so no override can get around it.

/// The one model every call uses: Claude Haiku 5.5.
pub const MODEL_ID: &str = "claude-haiku-5-5";

/// The most output tokens the model can produce in one reply.
pub const MAX_OUTPUT_TOKENS: u32 = 128_000;

/// The wire-format version header value.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Map any requested model identifier to the one model. A different identifier is logged (it is not secret) and
/// ignored.
pub fn resolve_model(requested: Option<&str>) -> &'static str {
    if let Some(requested) = requested
        && requested != MODEL_ID
    {
        tracing::warn!(requested, resolved = MODEL_ID, "a different model was requested; using the one allowed model");
    }
    MODEL_ID
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_identifier_resolves_to_the_one_model() {
        for requested in [None, Some(""), Some("claude-opus-5-5"), Some("claude-haiku-5-5"), Some("gpt-x")] {
            assert_eq!(resolve_model(requested), "claude-haiku-5-5");
        }
    }
}
