//! A credential fetched over the network (an access token, temporary AWS keys), kept until
//! shortly before it expires: one fetch at a time, the others wait for its result.

use std::time::{Duration, SystemTime};

/// A value and when it stops being valid (`None`: it does not expire).
#[derive(Debug, Clone)]
pub(crate) struct Expiring<T> {
    /// The credential.
    pub(crate) value: T,
    /// When it expires.
    pub(crate) expires_at: Option<SystemTime>,
}

impl<T> Expiring<T> {
    /// Whether it is still good at `now`, with `margin` to spare.
    pub(crate) fn fresh_at(&self, now: SystemTime, margin: Duration) -> bool {
        self.expires_at.is_none_or(|at| now + margin < at)
    }
}

/// Refresh this long before the expiry (Google's and AWS's libraries use a few minutes).
pub(crate) const REFRESH_MARGIN: Duration = Duration::from_secs(300);

/// A cached credential with single-flight refresh.
pub(crate) struct TokenCache<T> {
    slot: tokio::sync::Mutex<Option<Expiring<T>>>,
}

impl<T> Default for TokenCache<T> {
    fn default() -> Self {
        Self {
            slot: tokio::sync::Mutex::new(None),
        }
    }
}

impl<T: Clone> TokenCache<T> {
    /// The cached value while fresh, else what `fetch` returns (then cached).
    pub(crate) async fn get<E, F>(&self, fetch: impl FnOnce() -> F) -> Result<T, E>
    where
        F: std::future::Future<Output = Result<Expiring<T>, E>>,
    {
        let mut slot = self.slot.lock().await;
        if let Some(c) = slot.as_ref()
            && c.fresh_at(SystemTime::now(), REFRESH_MARGIN)
        {
            return Ok(c.value.clone());
        }
        let fresh = fetch().await?;
        let value = fresh.value.clone();
        *slot = Some(fresh);
        Ok(value)
    }

    /// Forget the cached value (the server rejected it).
    pub(crate) async fn invalidate(&self) {
        *self.slot.lock().await = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[tokio::test]
    async fn cached_until_near_expiry_then_fetched_again() {
        let cache = TokenCache::<u32>::default();
        let fetches = AtomicU32::new(0);
        let fetch = |ttl: u64| {
            let n = fetches.fetch_add(1, Ordering::SeqCst) + 1;
            async move {
                Ok::<_, ()>(Expiring {
                    value: n,
                    expires_at: Some(SystemTime::now() + Duration::from_secs(ttl)),
                })
            }
        };
        assert_eq!(cache.get(|| fetch(3600)).await, Ok(1));
        assert_eq!(cache.get(|| fetch(3600)).await, Ok(1), "still fresh");
        cache.invalidate().await;
        // Expires within the margin: used once, refreshed on the next call.
        assert_eq!(cache.get(|| fetch(60)).await, Ok(2));
        assert_eq!(cache.get(|| fetch(3600)).await, Ok(3));
        assert_eq!(fetches.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn no_expiry_is_always_fresh() {
        let e = Expiring {
            value: (),
            expires_at: None,
        };
        assert!(e.fresh_at(SystemTime::now(), REFRESH_MARGIN));
    }
}
