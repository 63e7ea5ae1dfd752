//! The AWS credential chain, as the AWS SDKs walk it: environment keys (with a session token),
//! the shared config and credentials files (`AWS_PROFILE`, else `default`: static keys,
//! `credential_process`, IAM Identity Center (SSO) with the token `aws sso login` cached,
//! `role_arn` assumed from a `source_profile`, a `credential_source` or a web identity), web
//! identity from the environment (EKS/IRSA), container credentials (ECS, EKS Pod Identity) and
//! the EC2 instance metadata service (IMDSv2).
//!
//! Which source applies is decided up front from variables and files alone (so `skiff config`
//! can say it); temporary credentials are fetched on first use and again before they expire.

use std::path::PathBuf;

use secrecy::{ExposeSecret, SecretString};

use super::aws_profile::{ProfileFiles, Section};
use super::vars::Vars;

/// AWS keys (temporary ones with a session token). `Debug` shows the key id only.
#[derive(Clone)]
pub(crate) struct AwsCredentials {
    /// Access key id (not secret).
    pub access_key_id: String,
    /// Secret access key.
    pub secret_access_key: SecretString,
    /// Session token of temporary credentials.
    pub session_token: Option<SecretString>,
}

impl std::fmt::Debug for AwsCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AwsCredentials")
            .field("access_key_id", &self.access_key_id)
            .finish_non_exhaustive()
    }
}

/// Where credentials come from.
#[derive(Debug, Clone)]
pub(crate) enum AwsSource {
    /// Keys known up front (environment, or a profile's static keys).
    Static {
        /// The keys.
        creds: AwsCredentials,
        /// Where they are set.
        origin: String,
    },
    /// A profile's `credential_process` command.
    Process {
        /// The command line.
        command: String,
        /// The profile.
        profile: String,
    },
    /// IAM Identity Center: the cached `aws sso login` token exchanged for role credentials.
    Sso {
        /// The profile.
        profile: String,
        /// The cached token file.
        cache_file: Option<PathBuf>,
        /// The SSO region.
        sso_region: String,
        /// Account id.
        account_id: String,
        /// Role name.
        role_name: String,
    },
    /// `sts:AssumeRole` with another source's credentials.
    AssumeRole {
        /// The role.
        role_arn: String,
        /// Session name.
        session_name: String,
        /// `external_id`.
        external_id: Option<String>,
        /// The credentials that assume it.
        source: Box<AwsSource>,
        /// The profile naming it.
        profile: String,
    },
    /// `sts:AssumeRoleWithWebIdentity` with a token file (EKS service accounts, CI OIDC).
    WebIdentity {
        /// The token file.
        token_file: PathBuf,
        /// The role.
        role_arn: String,
        /// Session name.
        session_name: String,
        /// Where it is configured.
        origin: String,
    },
    /// The container credentials endpoint (ECS task roles, EKS Pod Identity).
    Container {
        /// The full URL.
        url: String,
        /// `Authorization` header value (from a variable or a file).
        auth: Option<ContainerAuth>,
    },
    /// The EC2 instance metadata service (IMDSv2).
    Imds {
        /// Its base URL.
        endpoint: String,
    },
}

/// The container endpoint's authorization token.
#[derive(Debug, Clone)]
pub(crate) enum ContainerAuth {
    /// AWS_CONTAINER_AUTHORIZATION_TOKEN.
    Token(SecretString),
    /// AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE (read at each fetch: it is rotated).
    File(PathBuf),
}

impl AwsSource {
    /// What `skiff config`, the init frame and errors say about it (never a secret).
    pub(crate) fn describe(&self) -> String {
        match self {
            Self::Static { origin, .. } => origin.clone(),
            Self::Process { profile, .. } => {
                format!("credential_process of AWS profile `{profile}`")
            }
            Self::Sso {
                profile,
                account_id,
                role_name,
                ..
            } => format!(
                "IAM Identity Center (SSO) of AWS profile `{profile}` (account {account_id}, role {role_name})"
            ),
            Self::AssumeRole {
                role_arn,
                source,
                profile,
                ..
            } => format!(
                "role {role_arn} of AWS profile `{profile}`, assumed with {}",
                source.describe()
            ),
            Self::WebIdentity {
                role_arn, origin, ..
            } => format!("web identity ({origin}), role {role_arn}"),
            Self::Container { url, .. } => format!("container credentials ({url})"),
            Self::Imds { .. } => "EC2 instance metadata (IMDSv2)".to_owned(),
        }
    }
}

/// The variables the chain reads.
pub(crate) const VARS: &[&str] = &[
    "HOME",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
    "AWS_ROLE_SESSION_NAME",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
    "AWS_EC2_METADATA_DISABLED",
    "AWS_EC2_METADATA_SERVICE_ENDPOINT",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_STS",
    "AWS_ENDPOINT_URL_SSO",
];

/// The chain's decision and what it needs later.
#[derive(Debug, Clone)]
pub(crate) struct AwsChain {
    /// The source in use.
    pub source: AwsSource,
    /// The region (AWS_REGION, AWS_DEFAULT_REGION, the profile's `region`, else us-east-1).
    pub region: String,
    /// STS endpoint override (AWS_ENDPOINT_URL_STS / AWS_ENDPOINT_URL).
    pub sts_endpoint: Option<String>,
    /// SSO portal endpoint override (AWS_ENDPOINT_URL_SSO / AWS_ENDPOINT_URL).
    pub sso_endpoint: Option<String>,
}

/// Why no source could be chosen.
pub(crate) type ChainError = String;

/// Choose the source from variables and files (no network).
pub(crate) fn resolve(vars: &Vars) -> Result<AwsChain, ChainError> {
    let files = ProfileFiles::load(vars);
    let explicit_profile = vars
        .get("AWS_PROFILE")
        .or_else(|| vars.get("AWS_DEFAULT_PROFILE"));
    let profile_name = explicit_profile.unwrap_or("default").to_owned();
    let profile = files.profiles.get(&profile_name);
    let (region, _) = region_of(vars, &files);
    let endpoint = |var: &str| {
        vars.get(var)
            .or_else(|| vars.get("AWS_ENDPOINT_URL"))
            .map(|u| u.trim_end_matches('/').to_owned())
    };
    let chain = |source| AwsChain {
        source,
        region: region.clone(),
        sts_endpoint: endpoint("AWS_ENDPOINT_URL_STS"),
        sso_endpoint: endpoint("AWS_ENDPOINT_URL_SSO"),
    };
    if let (Some(id), Some(secret)) = (
        vars.get("AWS_ACCESS_KEY_ID"),
        vars.get("AWS_SECRET_ACCESS_KEY"),
    ) {
        let creds = AwsCredentials {
            access_key_id: id.to_owned(),
            secret_access_key: SecretString::from(secret.to_owned()),
            session_token: vars
                .get("AWS_SESSION_TOKEN")
                .map(|t| SecretString::from(t.to_owned())),
        };
        let origin = if creds.session_token.is_some() {
            "environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN)"
        } else {
            "environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)"
        };
        return Ok(chain(AwsSource::Static {
            creds,
            origin: origin.to_owned(),
        }));
    }
    match profile {
        Some(_) => return Ok(chain(profile_source(&files, &profile_name, vars, 0)?)),
        None if explicit_profile.is_some() => {
            return Err(format!(
                "the AWS profile `{profile_name}` (AWS_PROFILE) is not in {}",
                files.describe()
            ));
        }
        None => {}
    }
    if let (Some(file), Some(role)) = (
        vars.get("AWS_WEB_IDENTITY_TOKEN_FILE"),
        vars.get("AWS_ROLE_ARN"),
    ) {
        return Ok(chain(AwsSource::WebIdentity {
            token_file: PathBuf::from(file),
            role_arn: role.to_owned(),
            session_name: vars
                .get("AWS_ROLE_SESSION_NAME")
                .unwrap_or("skiff")
                .to_owned(),
            origin: "AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN".to_owned(),
        }));
    }
    if let Some(source) = container_source(vars) {
        return Ok(chain(source));
    }
    if vars.flag("AWS_EC2_METADATA_DISABLED") {
        return Err(format!(
            "no AWS credentials found: tried the environment (AWS_ACCESS_KEY_ID), profile \
             `default` in {}, web identity and container credentials (EC2 instance metadata is \
             disabled by AWS_EC2_METADATA_DISABLED). {HOW}",
            files.describe()
        ));
    }
    Ok(chain(imds_source(vars)))
}

/// The region: AWS_REGION, AWS_DEFAULT_REGION, the profile's `region`, else us-east-1; and
/// where it came from.
pub(crate) fn region_of(vars: &Vars, files: &ProfileFiles) -> (String, String) {
    let profile_name = vars
        .get("AWS_PROFILE")
        .or_else(|| vars.get("AWS_DEFAULT_PROFILE"))
        .unwrap_or("default");
    let from_profile = files
        .profiles
        .get(profile_name)
        .and_then(|p| p.get("region"))
        .filter(|r| !r.is_empty());
    if let Some(r) = vars.get("AWS_REGION") {
        (r.to_owned(), "AWS_REGION".to_owned())
    } else if let Some(r) = vars.get("AWS_DEFAULT_REGION") {
        (r.to_owned(), "AWS_DEFAULT_REGION".to_owned())
    } else if let Some(r) = from_profile {
        (r.clone(), format!("region of AWS profile `{profile_name}`"))
    } else {
        ("us-east-1".to_owned(), "default".to_owned())
    }
}

/// How to give credentials, for errors.
pub(crate) const HOW: &str = "Set AWS_PROFILE (after `aws configure` or `aws sso login`), \
    AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a Bedrock API key in AWS_BEARER_TOKEN_BEDROCK";

fn container_source(vars: &Vars) -> Option<AwsSource> {
    let url = match (
        vars.get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"),
        vars.get("AWS_CONTAINER_CREDENTIALS_FULL_URI"),
    ) {
        (Some(rel), _) => format!("http://169.254.170.2{rel}"),
        (None, Some(full)) => full.to_owned(),
        (None, None) => return None,
    };
    let auth = match (
        vars.get("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"),
        vars.get("AWS_CONTAINER_AUTHORIZATION_TOKEN"),
    ) {
        (Some(f), _) => Some(ContainerAuth::File(PathBuf::from(f))),
        (None, Some(t)) => Some(ContainerAuth::Token(SecretString::from(t.to_owned()))),
        (None, None) => None,
    };
    Some(AwsSource::Container { url, auth })
}

fn imds_source(vars: &Vars) -> AwsSource {
    AwsSource::Imds {
        endpoint: vars
            .get("AWS_EC2_METADATA_SERVICE_ENDPOINT")
            .unwrap_or("http://169.254.169.254")
            .trim_end_matches('/')
            .to_owned(),
    }
}

/// The source a profile describes (`depth`: `source_profile` hops so far).
fn profile_source(
    files: &ProfileFiles,
    name: &str,
    vars: &Vars,
    depth: usize,
) -> Result<AwsSource, ChainError> {
    let empty = Section::new();
    let p = files.profiles.get(name).unwrap_or(&empty);
    let get = |k: &str| p.get(k).map(String::as_str).filter(|v| !v.is_empty());
    if depth > 5 {
        return Err(format!(
            "AWS profile `{name}`: source_profile chain too long (a loop?)"
        ));
    }
    if let Some(role_arn) = get("role_arn") {
        let session_name = get("role_session_name").unwrap_or("skiff").to_owned();
        if let Some(token_file) = get("web_identity_token_file") {
            return Ok(AwsSource::WebIdentity {
                token_file: PathBuf::from(token_file),
                role_arn: role_arn.to_owned(),
                session_name,
                origin: format!("web_identity_token_file of AWS profile `{name}`"),
            });
        }
        let source = if let Some(src) = get("source_profile") {
            if src == name {
                // A profile that is its own source uses its static keys.
                static_keys(p, name, files).ok_or_else(|| {
                    format!("AWS profile `{name}` is its own source_profile but has no keys")
                })?
            } else if files.profiles.contains_key(src) {
                profile_source(files, src, vars, depth + 1)?
            } else {
                return Err(format!(
                    "AWS profile `{name}`: source_profile `{src}` is not in {}",
                    files.describe()
                ));
            }
        } else {
            match get("credential_source") {
                Some("Environment") => {
                    let (Some(id), Some(secret)) = (
                        vars.get("AWS_ACCESS_KEY_ID"),
                        vars.get("AWS_SECRET_ACCESS_KEY"),
                    ) else {
                        return Err(format!(
                            "AWS profile `{name}`: credential_source = Environment, but \
                             AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set"
                        ));
                    };
                    AwsSource::Static {
                        creds: AwsCredentials {
                            access_key_id: id.to_owned(),
                            secret_access_key: SecretString::from(secret.to_owned()),
                            session_token: vars
                                .get("AWS_SESSION_TOKEN")
                                .map(|t| SecretString::from(t.to_owned())),
                        },
                        origin: "environment (AWS_ACCESS_KEY_ID)".to_owned(),
                    }
                }
                Some("Ec2InstanceMetadata") => imds_source(vars),
                Some("EcsContainer") => container_source(vars).ok_or_else(|| {
                    format!(
                        "AWS profile `{name}`: credential_source = EcsContainer, but no \
                         AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or _FULL_URI is set"
                    )
                })?,
                Some(other) => {
                    return Err(format!(
                        "AWS profile `{name}`: unknown credential_source `{other}` (Environment, \
                         Ec2InstanceMetadata or EcsContainer)"
                    ));
                }
                None => {
                    return Err(format!(
                        "AWS profile `{name}` has role_arn but neither source_profile nor \
                         credential_source"
                    ));
                }
            }
        };
        return Ok(AwsSource::AssumeRole {
            role_arn: role_arn.to_owned(),
            session_name,
            external_id: get("external_id").map(str::to_owned),
            source: Box::new(source),
            profile: name.to_owned(),
        });
    }
    if get("sso_session").is_some() || get("sso_start_url").is_some() {
        return sso_source(files, name, p, vars);
    }
    if let Some(command) = get("credential_process") {
        return Ok(AwsSource::Process {
            command: command.to_owned(),
            profile: name.to_owned(),
        });
    }
    static_keys(p, name, files).ok_or_else(|| {
        format!(
            "AWS profile `{name}` in {} has no credentials (aws_access_key_id and \
             aws_secret_access_key, sso_session, credential_process or role_arn)",
            files.describe()
        )
    })
}

fn static_keys(p: &Section, name: &str, files: &ProfileFiles) -> Option<AwsSource> {
    let id = p.get("aws_access_key_id").filter(|v| !v.is_empty())?;
    let secret = p.get("aws_secret_access_key").filter(|v| !v.is_empty())?;
    Some(AwsSource::Static {
        creds: AwsCredentials {
            access_key_id: id.clone(),
            secret_access_key: SecretString::from(secret.clone()),
            session_token: p
                .get("aws_session_token")
                .filter(|v| !v.is_empty())
                .map(|t| SecretString::from(t.clone())),
        },
        origin: format!("AWS profile `{name}` ({})", files.describe()),
    })
}

fn sso_source(
    files: &ProfileFiles,
    name: &str,
    p: &Section,
    vars: &Vars,
) -> Result<AwsSource, ChainError> {
    let get = |k: &str| p.get(k).map(String::as_str).filter(|v| !v.is_empty());
    let (cache_key, sso_region) = match get("sso_session") {
        Some(session) => {
            let s = files.sso_sessions.get(session).ok_or_else(|| {
                format!("AWS profile `{name}`: sso-session `{session}` is not in the config file")
            })?;
            let region = s
                .get("sso_region")
                .cloned()
                .ok_or_else(|| format!("sso-session `{session}` has no sso_region"))?;
            (session.to_owned(), region)
        }
        None => (
            get("sso_start_url").unwrap_or_default().to_owned(),
            get("sso_region")
                .ok_or_else(|| format!("AWS profile `{name}` has sso_start_url but no sso_region"))?
                .to_owned(),
        ),
    };
    let (Some(account_id), Some(role_name)) = (get("sso_account_id"), get("sso_role_name")) else {
        return Err(format!(
            "AWS profile `{name}` needs sso_account_id and sso_role_name"
        ));
    };
    let digest = ring::digest::digest(
        &ring::digest::SHA1_FOR_LEGACY_USE_ONLY,
        cache_key.as_bytes(),
    );
    let cache_file = vars.home().map(|h| {
        h.join(".aws/sso/cache")
            .join(format!("{}.json", super::sigv4::hex(digest.as_ref())))
    });
    Ok(AwsSource::Sso {
        profile: name.to_owned(),
        cache_file,
        sso_region,
        account_id: account_id.to_owned(),
        role_name: role_name.to_owned(),
    })
}

/// The secret parts, for signing.
impl AwsCredentials {
    /// The secret access key.
    pub(crate) fn secret(&self) -> &str {
        self.secret_access_key.expose_secret()
    }

    /// The session token.
    pub(crate) fn token(&self) -> Option<&str> {
        self.session_token.as_ref().map(ExposeSecret::expose_secret)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "skiff-aws-chain-{}-{}",
            std::process::id(),
            fastrand::u64(..)
        ));
        std::fs::create_dir_all(d.join(".aws")).unwrap();
        d
    }

    #[test]
    fn environment_keys_win_and_the_region_is_found() {
        let v = Vars::from_pairs(&[
            ("AWS_ACCESS_KEY_ID", "AKID"),
            ("AWS_SECRET_ACCESS_KEY", "hunter2-value"),
            ("AWS_SESSION_TOKEN", "TOKEN"),
            ("AWS_DEFAULT_REGION", "eu-west-1"),
            ("HOME", "/nonexistent"),
        ]);
        let c = resolve(&v).unwrap();
        assert_eq!(c.region, "eu-west-1");
        assert!(c.source.describe().contains("AWS_SESSION_TOKEN"));
        assert!(!format!("{:?}", c.source).contains("hunter2"));
    }

    #[test]
    fn profiles_of_every_kind() {
        let home = dir();
        std::fs::write(
            home.join(".aws/config"),
            "[default]\nregion = ap-south-1\n\
             [profile sso]\nsso_session = corp\nsso_account_id = 111\nsso_role_name = Dev\n\
             [sso-session corp]\nsso_region = us-east-1\nsso_start_url = https://x.awsapps.com/start\n\
             [profile proc]\ncredential_process = echo {}\n\
             [profile admin]\nrole_arn = arn:aws:iam::1:role/Admin\nsource_profile = default\n\
             [profile loop]\nrole_arn = arn:aws:iam::1:role/L\nsource_profile = loop2\n\
             [profile loop2]\nrole_arn = arn:aws:iam::1:role/L\nsource_profile = loop\n",
        )
        .unwrap();
        std::fs::write(
            home.join(".aws/credentials"),
            "[default]\naws_access_key_id = AKDEF\naws_secret_access_key = S\n",
        )
        .unwrap();
        let h = home.to_str().unwrap();
        let with =
            |profile: &str| resolve(&Vars::from_pairs(&[("HOME", h), ("AWS_PROFILE", profile)]));
        let d = resolve(&Vars::from_pairs(&[("HOME", h)])).unwrap();
        assert_eq!(d.region, "ap-south-1");
        assert!(matches!(d.source, AwsSource::Static { .. }));
        let sso = with("sso").unwrap();
        let AwsSource::Sso { cache_file, .. } = &sso.source else {
            panic!("{:?}", sso.source)
        };
        // The cache file is named after the SHA-1 of the session name.
        assert!(
            cache_file
                .as_ref()
                .unwrap()
                .ends_with(".aws/sso/cache/ee0bfd2552fbd840c02cc48b6e823320543c450f.json"),
            "{cache_file:?}"
        );
        assert!(matches!(
            with("proc").unwrap().source,
            AwsSource::Process { .. }
        ));
        let admin = with("admin").unwrap();
        assert!(
            admin
                .source
                .describe()
                .contains("assumed with AWS profile `default`")
        );
        assert!(with("loop").unwrap_err().contains("too long"));
        assert!(with("missing").unwrap_err().contains("is not in"));
        let _ = std::fs::remove_dir_all(home);
    }

    #[test]
    fn web_identity_container_and_imds_follow() {
        let base = [("HOME", "/nonexistent")];
        let v = |extra: &[(&'static str, &'static str)]| {
            let mut all = base.to_vec();
            all.extend_from_slice(extra);
            resolve(&Vars::from_pairs(&all))
        };
        let w = v(&[
            ("AWS_WEB_IDENTITY_TOKEN_FILE", "/var/run/token"),
            ("AWS_ROLE_ARN", "arn:aws:iam::1:role/R"),
        ])
        .unwrap();
        assert!(matches!(w.source, AwsSource::WebIdentity { .. }));
        let c = v(&[("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/creds")]).unwrap();
        assert!(
            c.source
                .describe()
                .contains("http://169.254.170.2/v2/creds")
        );
        let i = v(&[]).unwrap();
        assert!(matches!(i.source, AwsSource::Imds { .. }));
        assert_eq!(i.region, "us-east-1");
        assert!(
            v(&[("AWS_EC2_METADATA_DISABLED", "true")])
                .unwrap_err()
                .contains("no AWS credentials found")
        );
    }
}
