//! API credentials in a redacting wrapper: no `Debug`, `Display`, error or log line can show them.

use secrecy::{ExposeSecret, SecretString};

/// How requests authenticate.
#[derive(Clone)]
pub enum Credential {
    /// `x-api-key: <key>` (ANTHROPIC_API_KEY).
    ApiKey(SecretString),
    /// `Authorization: Bearer <token>` (ANTHROPIC_AUTH_TOKEN).
    Bearer(SecretString),
    /// `Authorization: Bearer <key>` from another variable (OPENAI_API_KEY, OPENROUTER_API_KEY).
    BearerFrom(SecretString, &'static str),
}

impl Credential {
    /// An `x-api-key` credential.
    pub fn api_key(key: impl Into<String>) -> Self {
        Self::ApiKey(SecretString::from(key.into()))
    }

    /// A bearer-token credential.
    pub fn bearer(token: impl Into<String>) -> Self {
        Self::Bearer(SecretString::from(token.into()))
    }

    /// A bearer credential read from the variable `source`.
    pub fn bearer_from(token: impl Into<String>, source: &'static str) -> Self {
        Self::BearerFrom(SecretString::from(token.into()), source)
    }

    /// Where the credential came from, as `system/init.apiKeySource` names it.
    pub fn source_name(&self) -> &'static str {
        match self {
            Self::ApiKey(_) => "ANTHROPIC_API_KEY",
            Self::Bearer(_) => "ANTHROPIC_AUTH_TOKEN",
            Self::BearerFrom(_, source) => source,
        }
    }

    /// The header name and value to send. The value is marked sensitive so that reqwest and
    /// hyper never print it.
    pub(crate) fn header(
        &self,
    ) -> Result<(reqwest::header::HeaderName, reqwest::header::HeaderValue), String> {
        let (name, value) = match self {
            Self::ApiKey(k) => ("x-api-key", k.expose_secret().to_owned()),
            Self::Bearer(t) | Self::BearerFrom(t, _) => {
                ("authorization", format!("Bearer {}", t.expose_secret()))
            }
        };
        let mut v = reqwest::header::HeaderValue::from_str(&value).map_err(|_| {
            format!(
                "the credential in {} contains characters not allowed in an HTTP header",
                self.source_name()
            )
        })?;
        v.set_sensitive(true);
        Ok((reqwest::header::HeaderName::from_static(name), v))
    }
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::ApiKey(_) => f.write_str("ApiKey([redacted])"),
            Self::Bearer(_) => f.write_str("Bearer([redacted])"),
            Self::BearerFrom(_, source) => write!(f, "Bearer([redacted] from {source})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_secret() {
        let secret = "sk-ant-test-SECRET-1234567890";
        for c in [Credential::api_key(secret), Credential::bearer(secret)] {
            let shown = format!("{c:?} {:#?}", c);
            assert!(
                !shown.contains(secret) && !shown.contains("SECRET"),
                "{shown}"
            );
            assert!(shown.contains("[redacted]"));
            let (_, v) = c.header().unwrap();
            assert!(v.is_sensitive());
            assert!(!format!("{v:?}").contains("SECRET"));
        }
    }

    #[test]
    fn header_with_newline_is_an_error_without_the_secret() {
        let err = Credential::api_key("sk-SECRET\nx").header().unwrap_err();
        assert!(!err.contains("SECRET"));
        assert!(err.contains("ANTHROPIC_API_KEY"));
    }
}
