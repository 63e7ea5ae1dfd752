//! The RS256-signed JWT a Google service account exchanges for an access token (RFC 7523),
//! signed with ring from the key file's PKCS#8 PEM.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use ring::rand::SystemRandom;
use ring::signature::{RSA_PKCS1_SHA256, RsaKeyPair};

/// base64url without padding.
pub(crate) fn b64url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// The DER of a PEM `PRIVATE KEY` block.
pub(crate) fn pem_to_der(pem: &str) -> Result<Vec<u8>, String> {
    let body: String = pem
        .lines()
        .map(str::trim)
        .skip_while(|l| !l.starts_with("-----BEGIN"))
        .skip(1)
        .take_while(|l| !l.starts_with("-----END"))
        .collect();
    if body.is_empty() {
        return Err("private_key is not a PEM block".to_owned());
    }
    base64::engine::general_purpose::STANDARD
        .decode(body)
        .map_err(|e| format!("private_key is not valid base64: {e}"))
}

/// A service account's signing key.
pub(crate) struct SigningKey {
    key: RsaKeyPair,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SigningKey([redacted])")
    }
}

impl SigningKey {
    /// The key of a PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
    pub(crate) fn from_pem(pem: &str) -> Result<Self, String> {
        let der = pem_to_der(pem)?;
        let key = RsaKeyPair::from_pkcs8(&der)
            .map_err(|e| format!("private_key is not a PKCS#8 RSA key ({e})"))?;
        Ok(Self { key })
    }

    /// `header.claims.signature` with RS256.
    pub(crate) fn sign(
        &self,
        header: &serde_json::Value,
        claims: &serde_json::Value,
    ) -> Result<String, String> {
        let input = format!(
            "{}.{}",
            b64url(header.to_string().as_bytes()),
            b64url(claims.to_string().as_bytes())
        );
        let mut sig = vec![0; self.key.public().modulus_len()];
        self.key
            .sign(
                &RSA_PKCS1_SHA256,
                &SystemRandom::new(),
                input.as_bytes(),
                &mut sig,
            )
            .map_err(|_| "could not sign the service account's JWT".to_owned())?;
        Ok(format!("{input}.{}", b64url(&sig)))
    }
}

/// The grant assertion of a service account: `iss` its email, `aud` the token URI, `scope`,
/// valid for an hour from now.
pub(crate) fn assertion(
    key: &SigningKey,
    key_id: Option<&str>,
    email: &str,
    token_uri: &str,
    scope: &str,
    now: SystemTime,
) -> Result<String, String> {
    let iat = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let mut header = serde_json::json!({"alg": "RS256", "typ": "JWT"});
    if let Some(kid) = key_id {
        header["kid"] = kid.into();
    }
    let claims = serde_json::json!({
        "iss": email,
        "scope": scope,
        "aud": token_uri,
        "iat": iat,
        "exp": iat + 3600,
    });
    key.sign(&header, &claims)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{KeyPair, RSA_PKCS1_2048_8192_SHA256, UnparsedPublicKey};

    const KEY: &str = include_str!("../../../skiff-testkit/fixtures/cloud/service-account-key.pem");

    #[test]
    fn the_assertion_verifies_with_the_public_key() {
        let key = SigningKey::from_pem(KEY).unwrap();
        let public = key.key.public_key().as_ref().to_vec();
        let now = UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
        let jwt = assertion(
            &key,
            Some("kid1"),
            "sa@p.iam.gserviceaccount.com",
            "http://t/token",
            "s",
            now,
        )
        .unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let sig = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(parts[2])
            .unwrap();
        UnparsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, &public)
            .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &sig)
            .unwrap();
        let claims: serde_json::Value = serde_json::from_slice(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(parts[1])
                .unwrap(),
        )
        .unwrap();
        assert_eq!(claims["aud"], "http://t/token");
        assert_eq!(claims["exp"], 1_700_003_600);
        let header: serde_json::Value = serde_json::from_slice(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(parts[0])
                .unwrap(),
        )
        .unwrap();
        assert_eq!(header["kid"], "kid1");
        assert_eq!(header["alg"], "RS256");
    }

    #[test]
    fn bad_keys_are_named_errors() {
        assert!(SigningKey::from_pem("nope").unwrap_err().contains("PEM"));
        assert!(
            SigningKey::from_pem("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----")
                .unwrap_err()
                .contains("PKCS#8")
        );
    }
}
