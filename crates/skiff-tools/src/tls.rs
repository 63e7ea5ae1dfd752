//! rustls's crypto provider for the HTTP clients built outside skiff-llm (WebFetch, MCP over
//! HTTP): reqwest is built without a provider of its own, and ring is the one skiff links.

/// Make ring the process's rustls crypto provider, unless one is installed already (reqwest
/// refuses to build a client before). Cheap after the first call.
pub fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Losing a race to another thread installing it is fine: one is installed either way.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_client_builds_once_the_provider_is_installed() {
        super::install_crypto_provider();
        assert!(reqwest::Client::builder().build().is_ok());
    }
}
