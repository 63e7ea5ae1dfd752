//! AWS Signature Version 4 for one request (header signing, `AWS4-HMAC-SHA256`), with the
//! HMAC-SHA256 and SHA-256 of ring (already linked for TLS) instead of the AWS SDK.
//!
//! What is signed: the method, the path as sent (each byte outside the unreserved set
//! percent-encoded once more, as every AWS service but S3 expects), the query sorted, the
//! headers given (names lowercased and sorted, values trimmed), and the SHA-256 of the body.

use std::time::SystemTime;

use ring::{digest, hmac};

use super::time::amz_date;

/// The credentials and scope of a signature.
pub(crate) struct SigningParams<'a> {
    /// Access key id.
    pub access_key_id: &'a str,
    /// Secret access key.
    pub secret_access_key: &'a str,
    /// Session token of temporary credentials (sent and signed as `x-amz-security-token`).
    pub session_token: Option<&'a str>,
    /// Region, e.g. `us-east-1`.
    pub region: &'a str,
    /// Service, e.g. `bedrock`.
    pub service: &'a str,
    /// The signing time.
    pub time: SystemTime,
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
    out
}

/// Hex SHA-256 of a body sent as `chunks`.
pub(crate) fn sha256_hex<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> String {
    let mut ctx = digest::Context::new(&digest::SHA256);
    for c in chunks {
        ctx.update(c);
    }
    hex(ctx.finish().as_ref())
}

fn hmac_sha256(key: &[u8], data: &[u8]) -> hmac::Tag {
    hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, key), data)
}

/// Percent-encode everything but RFC 3986's unreserved characters (and `/` when `keep_slash`).
fn uri_encode(text: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'.' | b'_' | b'~')
            || (keep_slash && b == b'/')
        {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The `Host` header value of `url` (the port only when it is not the scheme's default).
pub(crate) fn host_header(url: &reqwest::Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_owned(),
    }
}

/// The headers a signed request must carry: `x-amz-date`, `x-amz-security-token` (with a
/// session token) and `authorization`. `headers` are the other headers to sign (`host` is
/// added from the URL); `payload_sha256` is the body's hex SHA-256.
pub(crate) fn sign(
    method: &str,
    url: &reqwest::Url,
    headers: &[(&str, &str)],
    payload_sha256: &str,
    p: &SigningParams<'_>,
) -> Vec<(&'static str, String)> {
    let (amz_date, date) = amz_date(p.time);
    let mut signed: Vec<(String, String)> = headers
        .iter()
        .map(|(n, v)| (n.to_ascii_lowercase(), canonical_value(v)))
        .collect();
    signed.push(("host".to_owned(), host_header(url)));
    signed.push(("x-amz-date".to_owned(), amz_date.clone()));
    if let Some(t) = p.session_token {
        signed.push(("x-amz-security-token".to_owned(), canonical_value(t)));
    }
    signed.sort();
    let canonical_headers: String = signed.iter().map(|(n, v)| format!("{n}:{v}\n")).collect();
    let signed_headers = signed
        .iter()
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(";");
    let path = if url.path().is_empty() {
        "/"
    } else {
        url.path()
    };
    let mut query: Vec<(&str, &str)> = url
        .query()
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| p.split_once('=').unwrap_or((p, "")))
        .collect();
    query.sort();
    let canonical_query = query
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&");
    let canonical_request = format!(
        "{method}\n{}\n{canonical_query}\n{canonical_headers}\n{signed_headers}\n{payload_sha256}",
        uri_encode(path, true)
    );
    let scope = format!("{date}/{}/{}/aws4_request", p.region, p.service);
    let string_to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
        sha256_hex([canonical_request.as_bytes()])
    );
    let k_date = hmac_sha256(
        format!("AWS4{}", p.secret_access_key).as_bytes(),
        date.as_bytes(),
    );
    let k_region = hmac_sha256(k_date.as_ref(), p.region.as_bytes());
    let k_service = hmac_sha256(k_region.as_ref(), p.service.as_bytes());
    let k_signing = hmac_sha256(k_service.as_ref(), b"aws4_request");
    let signature = hex(hmac_sha256(k_signing.as_ref(), string_to_sign.as_bytes()).as_ref());
    let mut out = vec![("x-amz-date", amz_date)];
    if let Some(t) = p.session_token {
        out.push(("x-amz-security-token", t.to_owned()));
    }
    out.push((
        "authorization",
        format!(
            "AWS4-HMAC-SHA256 Credential={}/{scope}, SignedHeaders={signed_headers}, Signature={signature}",
            p.access_key_id
        ),
    ));
    out
}

/// A header value as signed: trimmed, inner runs of spaces collapsed to one.
fn canonical_value(v: &str) -> String {
    v.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    fn params(time: SystemTime) -> SigningParams<'static> {
        SigningParams {
            access_key_id: "AKIDEXAMPLE",
            secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            session_token: None,
            region: "us-east-1",
            service: "iam",
            time,
        }
    }

    /// The worked example of AWS's SigV4 documentation (IAM ListUsers).
    #[test]
    fn the_documented_example() {
        let url =
            reqwest::Url::parse("https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08")
                .unwrap();
        let t = UNIX_EPOCH + Duration::from_secs(1_440_938_160);
        let out = sign(
            "GET",
            &url,
            &[(
                "Content-Type",
                "application/x-www-form-urlencoded; charset=utf-8",
            )],
            &sha256_hex([&b""[..]]),
            &params(t),
        );
        assert_eq!(out[0], ("x-amz-date", "20150830T123600Z".to_owned()));
        assert_eq!(
            out[1].1,
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, \
             SignedHeaders=content-type;host;x-amz-date, \
             Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
        );
    }

    #[test]
    fn paths_are_encoded_once_more_and_tokens_signed() {
        assert_eq!(
            uri_encode("/model/us.anthropic.claude-v1:0/invoke", true),
            "/model/us.anthropic.claude-v1%3A0/invoke"
        );
        assert_eq!(
            uri_encode("/model/arn%3Ax%2Fy", true),
            "/model/arn%253Ax%252Fy"
        );
        let url = reqwest::Url::parse("http://127.0.0.1:8080/x").unwrap();
        assert_eq!(host_header(&url), "127.0.0.1:8080");
        let mut p = params(UNIX_EPOCH);
        p.session_token = Some("tok");
        let out = sign("POST", &url, &[], &sha256_hex([&b"{}"[..]]), &p);
        assert_eq!(out[1], ("x-amz-security-token", "tok".to_owned()));
        assert!(
            out[2]
                .1
                .contains("SignedHeaders=host;x-amz-date;x-amz-security-token,")
        );
        assert_eq!(hex(&[0, 0xab, 0xff]), "00abff");
    }
}
