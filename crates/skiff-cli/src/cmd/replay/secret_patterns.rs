//! Credential shapes that are secrets wherever they appear, whatever names them: the
//! prefixed-token rules of gitleaks' default configuration (`config/gitleaks.toml`, gitleaks
//! v8, MIT licensed; the rules that need no surrounding keyword), with minimum lengths lowered
//! a little so a token cut short, or a test token of the right shape, is still caught. Rules
//! that need a keyword (`heroku … = <uuid>`) are left to the name-based rules of
//! [`super::redact`].

/// `(gitleaks rule id, pattern)`; the pattern matches the whole token.
pub const TOKEN_PATTERNS: &[(&str, &str)] = &[
    // Anthropic, OpenAI (and compatible) keys.
    (
        "anthropic-api-key",
        r"\bsk-ant-[a-z]{2,6}\d{2}-[A-Za-z0-9_\-]{20,}",
    ),
    (
        "openai-api-key",
        r"\bsk-(?:proj-|svcacct-|admin-|or-|ant-)?[A-Za-z0-9_\-]{20,}",
    ),
    // GitHub.
    ("github-pat", r"\bgh[pousr]_[A-Za-z0-9]{20,}"),
    ("github-fine-grained-pat", r"\bgithub_pat_[A-Za-z0-9_]{20,}"),
    // GitLab.
    (
        "gitlab-token",
        r"\bgl(?:pat|dt|ffct|ft|imt|oas|ptt|rt|soat|cbt|agent)-[0-9A-Za-z_\-.]{15,}",
    ),
    ("gitlab-rrt", r"\bGR1348941[0-9A-Za-z_\-]{20}"),
    // Slack.
    ("slack-token", r"\bxox[abeoprs]-[0-9A-Za-z\-]{10,}"),
    ("slack-app-token", r"(?i)\bxapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+"),
    (
        "slack-webhook-url",
        r"(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{20,}",
    ),
    // Google Cloud API keys.
    ("gcp-api-key", r"\bAIza[0-9A-Za-z_\-]{30,}"),
    // AWS access key ids.
    (
        "aws-access-token",
        r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
    ),
    // Stripe.
    (
        "stripe-access-token",
        r"\b(?:sk|rk|pk)_(?:test|live|prod)_[0-9A-Za-z]{10,}",
    ),
    // npm, PyPI, RubyGems.
    ("npm-access-token", r"\bnpm_[A-Za-z0-9]{20,}"),
    (
        "pypi-upload-token",
        r"\bpypi-AgEIcHlwaS5vcmc[0-9A-Za-z_\-]{20,}",
    ),
    ("rubygems-api-token", r"\brubygems_[a-f0-9]{40,}"),
    // Hugging Face.
    ("huggingface-access-token", r"\bhf_[A-Za-z0-9]{20,}"),
    (
        "huggingface-organization-api-token",
        r"\bapi_org_[A-Za-z0-9]{20,}",
    ),
    // Others with their own prefix.
    ("digitalocean-token", r"\bdo[opr]_v1_[a-f0-9]{40,}"),
    (
        "sendgrid-api-token",
        r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}",
    ),
    ("shopify-token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    ("databricks-api-token", r"\bdapi[a-f0-9]{32}"),
    (
        "doppler-api-token",
        r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}",
    ),
    ("linear-api-key", r"\blin_api_[A-Za-z0-9]{40}"),
    ("postman-api-token", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
    ("pulumi-api-token", r"\bpul-[a-f0-9]{40}"),
    ("sentry-token", r"\bsntry[us]_[A-Za-z0-9+/=_]{40,}"),
    (
        "grafana-token",
        r"\b(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,3})",
    ),
    ("vault-token", r"\bhv[sbr]\.[0-9A-Za-z_\-]{90,}"),
    (
        "planetscale-token",
        r"\bpscale_(?:tkn|oauth|pw)_[0-9A-Za-z_=.\-]{32,64}",
    ),
    ("twilio-api-key", r"\bSK[0-9a-fA-F]{32}\b"),
    ("openshift-user-token", r"\bsha256~[0-9A-Za-z_\-]{43}"),
    ("perplexity-api-key", r"\bpplx-[A-Za-z0-9]{40,}"),
    ("flyio-access-token", r"\bfo1_[0-9A-Za-z_\-]{40,}"),
    (
        "1password-service-account-token",
        r"\bops_eyJ[A-Za-z0-9+/]{100,}={0,3}",
    ),
    (
        "age-secret-key",
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
    ),
    // JSON Web Tokens.
    (
        "jwt",
        r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    ),
    // Private keys.
    (
        "private-key",
        r"(?i)-----BEGIN[ A-Z0-9_\-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?-----END[ A-Z0-9_\-]{0,100}PRIVATE KEY(?: BLOCK)?-----",
    ),
];

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn every_pattern_compiles_and_catches_its_example() {
        let examples = [
            "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz012345",
            "ghp_0123456789abcdefghijABCDEFGHIJ012345",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
            "glpat-abcdefghij0123456789",
            "xoxb-123456789012-1234567890123-AbCdEfGhIjKl",
            "xoxp-1234567890-1234567890-1234567890-abcdef0123456789abcdef01234567",
            "AIzaSyA0123456789abcdefghijklmnopqrstu",
            "sk_live_0123456789abcdefABCDEF",
            "npm_0123456789abcdefghijABCDEFGHIJ012345",
            "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
            "AKIAABCDEFGHIJKLMNOP",
        ];
        let compiled: Vec<regex::Regex> = TOKEN_PATTERNS
            .iter()
            .map(|(id, p)| regex::Regex::new(p).unwrap_or_else(|e| panic!("{id}: {e}")))
            .collect();
        for ex in examples {
            let line = format!("token: \"{ex}\" and more");
            assert!(
                compiled
                    .iter()
                    .any(|r| r.find(&line).map(|m| m.as_str()) == Some(ex)),
                "{ex} is not caught whole"
            );
        }
    }
}
