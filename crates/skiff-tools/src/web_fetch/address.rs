//! Which addresses WebFetch may connect to: public unicast only, unless the host is allowed as
//! private by a `WebFetch(domain:…)` allow rule or `skiff.webFetch.allowPrivateHosts`. The
//! check runs on every address a name resolves to, and the connection goes to those checked
//! addresses ([`GuardedResolver`]), so a DNS answer that changes between check and connect
//! (rebinding) cannot reach a private address.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Why an address is not public, in words (`loopback`, `private`, `link-local`…); `None` for
/// a public unicast address.
pub fn non_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => non_public_v4(v4),
        IpAddr::V6(v6) => non_public_v6(v6),
    }
}

fn non_public_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    let kind = match (a, b, c) {
        (0, _, _) => "unspecified (0.0.0.0/8)",
        (10, _, _) => "private",
        (100, 64..=127, _) => "shared (carrier-grade NAT)",
        (127, _, _) => "loopback",
        (169, 254, _) => "link-local (cloud metadata)",
        (172, 16..=31, _) => "private",
        (192, 0, 0) => "reserved (IETF protocol assignments)",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "reserved (documentation)",
        (192, 88, 99) => "reserved (6to4 relay)",
        (192, 168, _) => "private",
        (198, 18..=19, _) => "reserved (benchmarking)",
        (224..=239, _, _) => "multicast",
        (240..=255, _, _) => "reserved",
        _ => return None,
    };
    Some(kind)
}

fn non_public_v6(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        // ::ffff:a.b.c.d reaches a.b.c.d.
        return non_public_v4(v4);
    }
    let s = ip.segments();
    if ip.is_unspecified() {
        return Some("unspecified");
    }
    if ip.is_loopback() {
        return Some("loopback");
    }
    let embedded = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    match s[0] {
        // ::a.b.c.d (IPv4-compatible, deprecated) and the rest of ::/96.
        0 if s[1..6].iter().all(|x| *x == 0) => Some("reserved (IPv4-compatible)"),
        // NAT64 (64:ff9b::/96) reaches the embedded IPv4 address.
        0x64 if s[1] == 0xff9b && s[2..6].iter().all(|x| *x == 0) => {
            non_public_v4(embedded(s[6], s[7]))
        }
        0x64 if s[1] == 0xff9b && s[2] == 1 => Some("reserved (local NAT64)"),
        0x100 if s[1..4].iter().all(|x| *x == 0) => Some("reserved (discard)"),
        // 6to4 (2002::/16) reaches the IPv4 address in bits 16–48.
        0x2002 => non_public_v4(embedded(s[1], s[2])),
        0x2001 if s[1] == 0xdb8 => Some("reserved (documentation)"),
        // 2001::/23: IETF protocol assignments, Teredo (2001::/32) among them.
        0x2001 if s[1] < 0x200 => Some("reserved (IETF protocol assignments)"),
        x if x & 0xfe00 == 0xfc00 => Some("private (unique local)"),
        x if x & 0xffc0 == 0xfe80 => Some("link-local"),
        x if x & 0xffc0 == 0xfec0 => Some("site-local"),
        x if x & 0xff00 == 0xff00 => Some("multicast"),
        // Only global unicast (2000::/3) is public.
        x if x & 0xe000 != 0x2000 => Some("reserved"),
        _ => None,
    }
}

/// Whether `host` (as a URL gives it: lowercase, IPv6 in brackets) is covered by one of the
/// `patterns`: an exact host (`localhost`, `127.0.0.1`, `[::1]` or `::1`) or `*.suffix` for
/// the hosts below a domain. A bare `*` covers nothing here: private addresses are allowed by
/// name only.
pub fn host_allowed(host: &str, patterns: &[String]) -> bool {
    let host = normalize(host);
    patterns.iter().any(|p| {
        let p = normalize(p);
        match p.strip_prefix("*.") {
            Some(base) if !base.is_empty() => host.ends_with(&format!(".{base}")),
            _ => p != "*" && !p.is_empty() && host == p,
        }
    })
}

fn normalize(host: &str) -> String {
    host.trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

/// A refused connection: the name resolved to an address that is not public.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{host} resolves to {addr}, a {kind} address")]
pub struct Blocked {
    /// The host name.
    pub host: String,
    /// The address it resolved to.
    pub addr: IpAddr,
    /// What kind of address that is.
    pub kind: &'static str,
}

/// The DNS resolver of WebFetch's client: resolves with the system resolver and refuses the
/// name when any of its addresses is not public (unless private hosts are allowed for this
/// call). The client connects only to the addresses returned here.
#[derive(Debug, Clone, Copy)]
pub struct GuardedResolver {
    /// The host is allowed as private: no address is refused.
    pub allow_private: bool,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if !allow_private {
                for a in &addrs {
                    if let Some(kind) = non_public(a.ip()) {
                        return Err(Box::new(Blocked {
                            host: host.clone(),
                            addr: a.ip(),
                            kind,
                        })
                            as Box<dyn std::error::Error + Send + Sync>);
                    }
                }
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(s: &str) -> Option<&'static str> {
        non_public(s.parse().unwrap())
    }

    #[test]
    fn ipv4_private_loopback_link_local_and_reserved_are_refused() {
        for (addr, why) in [
            ("0.0.0.0", "unspecified"),
            ("0.1.2.3", "unspecified"),
            ("10.0.0.1", "private"),
            ("100.64.0.1", "shared"),
            ("127.0.0.1", "loopback"),
            ("127.255.255.254", "loopback"),
            ("169.254.169.254", "link-local"),
            ("172.16.0.1", "private"),
            ("172.31.255.255", "private"),
            ("192.168.1.1", "private"),
            ("192.0.2.10", "documentation"),
            ("198.18.0.1", "benchmarking"),
            ("224.0.0.1", "multicast"),
            ("255.255.255.255", "reserved"),
        ] {
            let k = kind(addr).unwrap_or_else(|| panic!("{addr} passed as public"));
            assert!(k.contains(why), "{addr}: {k}");
        }
        for public in [
            "8.8.8.8",
            "1.1.1.1",
            "172.32.0.1",
            "100.128.0.1",
            "93.184.216.34",
        ] {
            assert_eq!(kind(public), None, "{public}");
        }
    }

    #[test]
    fn ipv6_forms_of_private_addresses_are_refused() {
        for (addr, why) in [
            ("::", "unspecified"),
            ("::1", "loopback"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:169.254.169.254", "link-local"),
            ("::ffff:10.1.2.3", "private"),
            ("::127.0.0.1", "IPv4-compatible"),
            ("64:ff9b::a9fe:a9fe", "link-local"),
            ("64:ff9b::7f00:1", "loopback"),
            ("2002:7f00:1::1", "loopback"),
            ("2002:a9fe:a9fe::", "link-local"),
            ("2001:db8::1", "documentation"),
            ("2001::1", "IETF"),
            ("fc00::1", "unique local"),
            ("fd00:ec2::254", "unique local"),
            ("fe80::1", "link-local"),
            ("fec0::1", "site-local"),
            ("ff02::1", "multicast"),
            ("4000::1", "reserved"),
        ] {
            let k = kind(addr).unwrap_or_else(|| panic!("{addr} passed as public"));
            assert!(k.contains(why), "{addr}: {k}");
        }
        for public in [
            "2606:4700:4700::1111",
            "2a00:1450:4001:82a::200e",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
            assert_eq!(kind(public), None, "{public}");
        }
    }

    #[test]
    fn private_host_patterns_match_by_name_only() {
        let p = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert!(host_allowed("localhost", &p(&["LocalHost"])));
        assert!(host_allowed("127.0.0.1", &p(&["127.0.0.1"])));
        assert!(host_allowed("[::1]", &p(&["::1"])));
        assert!(host_allowed("[::1]", &p(&["[::1]"])));
        assert!(host_allowed("wiki.corp.example", &p(&["*.corp.example"])));
        assert!(!host_allowed("corp.example", &p(&["*.corp.example"])));
        assert!(!host_allowed("evilcorp.example", &p(&["*.corp.example"])));
        assert!(!host_allowed("localhost.evil.io", &p(&["localhost"])));
        assert!(!host_allowed("127.0.0.1", &p(&["*"])));
        assert!(!host_allowed("anything", &p(&["", "*."])));
        assert!(host_allowed("intranet.", &p(&["intranet"])));
    }

    #[tokio::test]
    async fn the_resolver_refuses_names_of_loopback_addresses() {
        let r = GuardedResolver {
            allow_private: false,
        };
        let err = match r.resolve("localhost".parse().unwrap()).await {
            Ok(_) => panic!("localhost resolved"),
            Err(e) => e,
        };
        let blocked = err.downcast_ref::<Blocked>().expect("a Blocked error");
        assert_eq!(blocked.host, "localhost");
        assert!(blocked.addr.is_loopback());
        let open = GuardedResolver {
            allow_private: true,
        };
        let addrs: Vec<_> = match open.resolve("localhost".parse().unwrap()).await {
            Ok(a) => a.collect(),
            Err(e) => panic!("{e}"),
        };
        assert!(addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
    }
}
