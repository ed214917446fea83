//! Reading a secret (the Anthropic API key, the sync password) from standard input. On a terminal the secret is
//! read without echo and ends at Enter (`rpassword`: echo is off while it is typed and back on afterwards); from a
//! pipe or a file it is read as it comes. The secret is never printed, logged or kept here.

use std::io::{IsTerminal, Read};

/// How much of piped input is the secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piped {
    /// The whole input (the API key; surrounding whitespace is the caller's to trim).
    Whole,
    /// The first line, without its line ending (the sync password).
    FirstLine,
}

/// Reads a secret: from a terminal with `prompt` shown (on the terminal itself), no echo, ending at Enter; from a
/// pipe according to `piped`.
pub fn read_secret(prompt: &str, piped: Piped) -> std::io::Result<String> {
    if std::io::stdin().is_terminal() {
        let secret = rpassword::prompt_password(prompt)?;
        return Ok(secret.trim_end_matches(['\n', '\r']).to_string());
    }
    let mut input = String::new();
    match piped {
        Piped::Whole => {
            std::io::stdin().lock().read_to_string(&mut input)?;
        }
        Piped::FirstLine => {
            std::io::stdin().read_line(&mut input)?;
            input.truncate(input.trim_end_matches(['\n', '\r']).len());
        }
    }
    Ok(input)
}
