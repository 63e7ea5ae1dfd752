//! UTC timestamps without a date library: SigV4's `YYYYMMDD'T'HHMMSS'Z'`, and the RFC 3339
//! expiry times credential endpoints answer with (`2025-01-02T03:04:05Z`, with fractions or an
//! offset).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Civil date (year, month, day) of a day number counted from 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Day number from 1970-01-01 of a civil date.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `(YYYYMMDDTHHMMSSZ, YYYYMMDD)` of `t` (SigV4's `X-Amz-Date` and credential-scope date).
pub(crate) fn amz_date(t: SystemTime) -> (String, String) {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs() as i64;
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    let date = format!("{y:04}{m:02}{d:02}");
    let stamp = format!("{date}T{:02}{:02}{:02}Z", s / 3600, s % 3600 / 60, s % 60);
    (stamp, date)
}

/// Seconds since the epoch of an RFC 3339 time (`2025-01-02T03:04:05Z`,
/// `2025-01-02T03:04:05.123+01:00`, or with a space for the `T`); `None` when it does not parse.
pub(crate) fn parse_rfc3339(text: &str) -> Option<SystemTime> {
    let t = text.trim();
    let num = |s: &str| -> Option<i64> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let (date, rest) = t.split_at_checked(10)?;
    let mut parts = date.split('-');
    let (y, mo, d) = (
        num(parts.next()?)?,
        num(parts.next()?)?,
        num(parts.next()?)?,
    );
    let rest = rest.strip_prefix(['T', 't', ' '])?;
    let (time, zone) = match rest.find(['Z', 'z', '+', '-']) {
        Some(i) => rest.split_at(i),
        None => (rest, "Z"),
    };
    let time = time.split('.').next()?;
    let mut hms = time.split(':');
    let (h, mi, s) = (num(hms.next()?)?, num(hms.next()?)?, num(hms.next()?)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let offset = match zone {
        "Z" | "z" => 0,
        z => {
            let sign = if z.starts_with('-') { -1 } else { 1 };
            let (oh, om) = z[1..].split_once(':').unwrap_or((&z[1..], "0"));
            sign * (num(oh)? * 3600 + num(om)? * 60)
        }
    };
    let secs = days_from_civil(y, mo as u32, d as u32) * 86_400 + h * 3600 + mi * 60 + s - offset;
    u64::try_from(secs)
        .ok()
        .map(|s| UNIX_EPOCH + Duration::from_secs(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amz_dates() {
        let t = UNIX_EPOCH + Duration::from_secs(1_440_938_160); // 2015-08-30T12:36:00Z
        assert_eq!(
            amz_date(t),
            ("20150830T123600Z".to_owned(), "20150830".to_owned())
        );
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29T00:00:00Z
        assert_eq!(amz_date(leap).0, "20000229T000000Z");
    }

    #[test]
    fn rfc3339_forms() {
        let at = |s| parse_rfc3339(s).map(|t| t.duration_since(UNIX_EPOCH).unwrap().as_secs());
        assert_eq!(at("2015-08-30T12:36:00Z"), Some(1_440_938_160));
        assert_eq!(at("2015-08-30T12:36:00.123456Z"), Some(1_440_938_160));
        assert_eq!(at("2015-08-30T14:36:00+02:00"), Some(1_440_938_160));
        assert_eq!(at("2015-08-30 12:36:00Z"), Some(1_440_938_160));
        assert_eq!(at("2000-02-29T00:00:00Z"), Some(951_782_400));
        for bad in [
            "",
            "soon",
            "2015-13-01T00:00:00Z",
            "2015-08-30",
            "2015-08-30Tab:00:00Z",
        ] {
            assert_eq!(at(bad), None, "{bad}");
        }
    }
}
