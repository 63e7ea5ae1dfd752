//! WebFetch's cache: pages fetched in the last 15 minutes, per process, keyed by the URL as
//! the model wrote it, at most 50 MB of text (the oldest go first), as Claude Code's.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long a page stays.
pub const TTL: Duration = Duration::from_secs(15 * 60);
/// Most text kept, in bytes.
pub const MAX_BYTES: usize = 50 * 1024 * 1024;

/// A fetched page, converted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// Size of the body as received, in bytes.
    pub bytes: usize,
    /// HTTP status.
    pub code: u16,
    /// Its reason phrase.
    pub code_text: String,
    /// The `content-type`.
    pub content_type: String,
    /// The text (Markdown for HTML).
    pub content: String,
}

/// A time-limited, size-limited map of pages.
#[derive(Debug)]
pub struct PageCache {
    ttl: Duration,
    max_bytes: usize,
    entries: HashMap<String, (Instant, Page)>,
    bytes: usize,
}

impl PageCache {
    /// An empty cache.
    pub fn new(ttl: Duration, max_bytes: usize) -> Self {
        Self {
            ttl,
            max_bytes,
            entries: HashMap::new(),
            bytes: 0,
        }
    }

    /// The page stored for `url` if it is younger than the TTL at `now`.
    pub fn get(&mut self, url: &str, now: Instant) -> Option<Page> {
        let fresh = self
            .entries
            .get(url)
            .map(|(at, _)| now.saturating_duration_since(*at) < self.ttl)?;
        if fresh {
            return self.entries.get(url).map(|(_, p)| p.clone());
        }
        self.remove(url);
        None
    }

    /// Store a page fetched at `now`; expired and then the oldest pages make room. A page
    /// larger than the whole cache is not kept.
    pub fn put(&mut self, url: &str, page: Page, now: Instant) {
        let size = page.content.len().max(1);
        if size > self.max_bytes {
            return;
        }
        self.remove(url);
        let ttl = self.ttl;
        let expired: Vec<String> = self
            .entries
            .iter()
            .filter(|(_, (at, _))| now.saturating_duration_since(*at) >= ttl)
            .map(|(k, _)| k.clone())
            .collect();
        for k in expired {
            self.remove(&k);
        }
        while self.bytes + size > self.max_bytes {
            let Some(oldest) = self
                .entries
                .iter()
                .min_by_key(|(_, (at, _))| *at)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            self.remove(&oldest);
        }
        self.bytes += size;
        self.entries.insert(url.to_owned(), (now, page));
    }

    fn remove(&mut self, url: &str) {
        if let Some((_, p)) = self.entries.remove(url) {
            self.bytes = self.bytes.saturating_sub(p.content.len().max(1));
        }
    }
}

/// The process's cache.
pub fn shared() -> &'static Mutex<PageCache> {
    static CACHE: OnceLock<Mutex<PageCache>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(PageCache::new(TTL, MAX_BYTES)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(text: &str) -> Page {
        Page {
            bytes: text.len(),
            code: 200,
            code_text: "OK".into(),
            content_type: "text/plain".into(),
            content: text.into(),
        }
    }

    #[test]
    fn pages_expire_after_the_ttl() {
        let t0 = Instant::now();
        let mut c = PageCache::new(TTL, MAX_BYTES);
        c.put("https://a.example/", page("a"), t0);
        assert_eq!(
            c.get("https://a.example/", t0 + Duration::from_secs(14 * 60)),
            Some(page("a"))
        );
        assert_eq!(c.get("https://a.example/", t0 + TTL), None);
        assert_eq!(
            c.get("https://a.example/", t0),
            None,
            "an expired page is gone"
        );
        assert_eq!(c.bytes, 0);
    }

    #[test]
    fn the_oldest_pages_make_room_and_oversized_pages_are_not_kept() {
        let t0 = Instant::now();
        let mut c = PageCache::new(TTL, 10);
        c.put("1", page("aaaa"), t0);
        c.put("2", page("bbbb"), t0 + Duration::from_secs(1));
        c.put("3", page("cccc"), t0 + Duration::from_secs(2));
        let now = t0 + Duration::from_secs(3);
        assert_eq!(c.get("1", now), None);
        assert!(c.get("2", now).is_some() && c.get("3", now).is_some());
        c.put("big", page("x".repeat(11).as_str()), now);
        assert_eq!(c.get("big", now), None);
        c.put("2", page("b"), now);
        assert_eq!(c.bytes, 5);
    }
}
