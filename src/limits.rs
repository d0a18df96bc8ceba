//! Quotas and throttling: what one operator (or one key, or one source of failed sign-ins)
//! may take of a service it shares with others. Rates are GCRA token buckets (`governor`);
//! counts (open tables, keys) are checked where the thing is created. Every limit is
//! configurable (`pitboss serve --help`), documented in README, and every refusal it causes
//! is counted in `/metrics`.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

/// The limits, as configured. A rate of 0 means no limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Requests per second one API key may send (any route that needs a key).
    pub key_requests_per_s: u32,
    /// Requests per second all keys of one operator may send together.
    pub operator_requests_per_s: u32,
    /// Tables one operator may have open at once.
    pub operator_open_tables: u32,
    /// API keys one operator may hold.
    pub operator_keys: u32,
    /// Bytes of refusal entries per second one operator may add to the log (a burst of
    /// sixty seconds' worth is allowed).
    pub operator_refusal_log_bytes_per_s: u32,
    /// Failed authentications per minute from one source address (IPv6: its /64).
    pub source_auth_failures_per_min: u32,
}

impl Default for Limits {
    /// Sized so that an operator's normal traffic never meets them (the load generator's
    /// 64 connections of one key stay below them), while one operator cannot take the
    /// service from the others.
    fn default() -> Limits {
        Limits {
            key_requests_per_s: 20_000,
            operator_requests_per_s: 40_000,
            operator_open_tables: 1_000,
            operator_keys: 100,
            operator_refusal_log_bytes_per_s: 64 * 1024,
            source_auth_failures_per_min: 60,
        }
    }
}

/// Most source addresses whose failed sign-ins are tracked one by one; past it (an attack
/// from many addresses), the rest share one bucket, so memory stays bounded.
pub const MAX_TRACKED_SOURCES: usize = 65_536;

/// A limit that was reached: which one, and when to retry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Throttled {
    pub code: &'static str,
    pub detail: String,
    pub retry_after: Duration,
}

impl Throttled {
    /// Whole seconds to wait, at least one (the `Retry-After` header has no fractions).
    pub fn retry_after_s(&self) -> u64 {
        self.retry_after.as_secs() + u64::from(self.retry_after.subsec_nanos() > 0)
    }
}

/// How many requests each limit has refused, for `/metrics`.
#[derive(Debug, Default)]
pub struct ThrottleCounters {
    pub key_requests: AtomicU64,
    pub operator_requests: AtomicU64,
    pub auth_failures: AtomicU64,
    pub open_tables: AtomicU64,
    pub keys: AtomicU64,
    pub refusal_log_bytes: AtomicU64,
}

impl ThrottleCounters {
    /// `(limit label, count)` for every limit.
    pub fn all(&self) -> [(&'static str, u64); 6] {
        let l = |a: &AtomicU64| a.load(Ordering::Relaxed);
        [
            ("key_requests_per_s", l(&self.key_requests)),
            ("operator_requests_per_s", l(&self.operator_requests)),
            ("source_auth_failures_per_min", l(&self.auth_failures)),
            ("operator_open_tables", l(&self.open_tables)),
            ("operator_keys", l(&self.keys)),
            (
                "operator_refusal_log_bytes_per_s",
                l(&self.refusal_log_bytes),
            ),
        ]
    }
}

/// A keyed rate limiter, or none when the rate is 0.
pub struct Rate<K: std::hash::Hash + Eq + Clone> {
    limiter: Option<DefaultKeyedRateLimiter<K>>,
    burst: u32,
}

impl<K: std::hash::Hash + Eq + Clone> Rate<K> {
    fn new(quota: Option<Quota>) -> Rate<K> {
        Rate {
            burst: quota.map_or(0, |q| q.burst_size().get()),
            limiter: quota.map(RateLimiter::keyed),
        }
    }

    /// `n` requests per second, with a burst of one second's worth.
    pub fn per_second(n: u32) -> Rate<K> {
        Rate::new(NonZeroU32::new(n).map(Quota::per_second))
    }

    /// `n` per minute, all of them allowed at once.
    pub fn per_minute(n: u32) -> Rate<K> {
        Rate::new(NonZeroU32::new(n).map(Quota::per_minute))
    }

    /// `n` units per second with a burst of `burst_s` seconds' worth.
    pub fn per_second_with_burst(n: u32, burst_s: u32) -> Rate<K> {
        Rate::new(NonZeroU32::new(n).map(|n| {
            let burst = NonZeroU32::new(n.get().saturating_mul(burst_s.max(1))).unwrap_or(n);
            Quota::per_second(n).allow_burst(burst)
        }))
    }

    /// Takes `cells` units for `key`; `Err(wait)` when the bucket lacks them (then nothing
    /// is taken). A request larger than the whole burst waits for the burst to refill.
    pub fn take(&self, key: &K, cells: u32) -> Result<(), Duration> {
        let Some(l) = &self.limiter else {
            return Ok(());
        };
        let cells = NonZeroU32::new(cells.min(self.burst)).unwrap_or(NonZeroU32::MIN);
        match l.check_key_n(key, cells) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(not_until)) => Err(not_until.wait_time_from(DefaultClock::default().now())),
            Err(_) => Err(Duration::from_secs(1)),
        }
    }

    /// Forgets keys whose buckets are full again; returns how many keys remain.
    pub fn forget_idle(&self) -> usize {
        match &self.limiter {
            Some(l) => {
                l.retain_recent();
                l.shrink_to_fit();
                l.len()
            }
            None => 0,
        }
    }

    pub fn tracked(&self) -> usize {
        self.limiter.as_ref().map_or(0, |l| l.len())
    }
}

/// The source a failed sign-in is counted against: the address, or an IPv6 address's /64
/// (one subscriber's block).
pub fn source_of(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => {
            let s = v6.segments();
            IpAddr::V6(std::net::Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
        }
    }
}

/// The request limits the HTTP layer applies.
pub struct RequestLimits {
    pub limits: Limits,
    pub per_key: Rate<String>,
    pub per_operator: Rate<String>,
    pub auth_failures: Rate<IpAddr>,
    pub counters: std::sync::Arc<ThrottleCounters>,
}

/// The bucket every source shares once [`MAX_TRACKED_SOURCES`] are tracked.
const OVERFLOW_SOURCE: IpAddr = IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED);

impl RequestLimits {
    pub fn new(limits: Limits, counters: std::sync::Arc<ThrottleCounters>) -> RequestLimits {
        RequestLimits {
            per_key: Rate::per_second(limits.key_requests_per_s),
            per_operator: Rate::per_second(limits.operator_requests_per_s),
            auth_failures: Rate::per_minute(limits.source_auth_failures_per_min),
            counters,
            limits,
        }
    }

    fn source_key(&self, ip: IpAddr) -> IpAddr {
        let s = source_of(ip);
        if self.auth_failures.tracked() >= MAX_TRACKED_SOURCES {
            OVERFLOW_SOURCE
        } else {
            s
        }
    }

    /// After a failed authentication from `ip`: the failure is counted against its source,
    /// and once the source's budget is used up the answer is 429 instead of 401. Valid keys
    /// from the same source keep working (a shared NAT must not lock out its honest
    /// clients); guessing a 256-bit secret is hopeless anyway, so what this bounds is the
    /// load and noise of failed attempts.
    pub fn on_auth_failure(&self, ip: Option<IpAddr>) -> Option<Throttled> {
        let ip = ip?;
        let wait = self.auth_failures.take(&self.source_key(ip), 1).err()?;
        self.counters.auth_failures.fetch_add(1, Ordering::Relaxed);
        Some(Throttled {
            code: "too_many_failed_authentications",
            detail: format!(
                "too many failed authentications from this address (at most {} a minute); wait before trying again",
                self.limits.source_auth_failures_per_min
            ),
            retry_after: wait,
        })
    }

    /// After an authenticated request: the key's and the operator's request rates.
    pub fn check_caller(&self, key_id: &str, operator: Option<&str>) -> Result<(), Throttled> {
        if let Err(wait) = self.per_key.take(&key_id.to_string(), 1) {
            self.counters.key_requests.fetch_add(1, Ordering::Relaxed);
            return Err(Throttled {
                code: "rate_limited",
                detail: format!(
                    "this API key sent more than {} requests a second; retry with the same Idempotency-Key",
                    self.limits.key_requests_per_s
                ),
                retry_after: wait,
            });
        }
        if let Some(op) = operator {
            if let Err(wait) = self.per_operator.take(&op.to_string(), 1) {
                self.counters
                    .operator_requests
                    .fetch_add(1, Ordering::Relaxed);
                return Err(Throttled {
                    code: "rate_limited",
                    detail: format!(
                        "operator {op} sent more than {} requests a second; retry with the same Idempotency-Key",
                        self.limits.operator_requests_per_s
                    ),
                    retry_after: wait,
                });
            }
        }
        Ok(())
    }

    /// Forgets idle buckets; the service calls this every few seconds.
    pub fn housekeeping(&self) {
        self.per_key.forget_idle();
        self.per_operator.forget_idle();
        self.auth_failures.forget_idle();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_refuses_past_its_burst_and_says_how_long_to_wait() {
        let r: Rate<String> = Rate::per_second(5);
        let k = "k".to_string();
        for _ in 0..5 {
            assert!(r.take(&k, 1).is_ok());
        }
        let wait = r
            .take(&k, 1)
            .expect_err("the sixth request in one instant is refused");
        assert!(
            wait > Duration::ZERO && wait <= Duration::from_secs(1),
            "{wait:?}"
        );
        // Another key has its own bucket.
        assert!(r.take(&"other".to_string(), 1).is_ok());
    }

    #[test]
    fn a_rate_of_zero_is_no_limit() {
        let r: Rate<String> = Rate::per_second(0);
        for _ in 0..10_000 {
            assert!(r.take(&"k".to_string(), 1).is_ok());
        }
    }

    #[test]
    fn failed_authentications_are_counted_per_ipv6_block() {
        let a: IpAddr = "2001:db8:1:2:3:4:5:6".parse().expect("ip");
        let b: IpAddr = "2001:db8:1:2:ffff::1".parse().expect("ip");
        assert_eq!(source_of(a), source_of(b));
        let v4: IpAddr = "192.0.2.7".parse().expect("ip");
        assert_eq!(source_of(v4), v4);
    }

    #[test]
    fn a_source_is_turned_away_once_its_failures_are_used_up() {
        let l = RequestLimits::new(
            Limits {
                source_auth_failures_per_min: 3,
                ..Limits::default()
            },
            Default::default(),
        );
        let ip: IpAddr = "192.0.2.1".parse().expect("ip");
        let throttled = (0..10)
            .filter(|_| l.on_auth_failure(Some(ip)).is_some())
            .count();
        assert_eq!(throttled, 7);
        assert!(l
            .on_auth_failure(Some("192.0.2.2".parse().expect("ip")))
            .is_none());
    }
}
