//! Money, currencies, payout ratios and rounding.
//!
//! Money is always an integer count of minor units (haléře for CZK): no floating point ever
//! touches an amount. A payout ratio is an exact fraction of profit per unit staked, parsed from
//! the document's own notation (`35:1`, `0.95:1`, `3:2`).

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An ISO 4217 currency that pitboss knows the minor-unit exponent of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Currency {
    code: [u8; 3],
    exponent: u8,
}

/// The currencies pitboss accepts, with their ISO 4217 minor-unit exponents. A plan in a
/// currency outside this list is refused rather than guessed at.
const KNOWN_CURRENCIES: &[(&str, u8)] = &[
    ("CZK", 2),
    ("EUR", 2),
    ("USD", 2),
    ("GBP", 2),
    ("PLN", 2),
    ("HUF", 2),
    ("CHF", 2),
];

impl Currency {
    pub const CZK: Currency = Currency {
        code: *b"CZK",
        exponent: 2,
    };

    pub fn code(&self) -> &str {
        std::str::from_utf8(&self.code).expect("currency codes are ASCII by construction")
    }

    /// Number of decimal digits of the minor unit (2 for CZK: 1 Kč = 100 haléřů).
    pub fn exponent(&self) -> u8 {
        self.exponent
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CurrencyError {
    #[error("'{0}' is not an ISO 4217 code (three upper-case letters)")]
    Malformed(String),
    #[error("currency '{0}' is not supported (supported: CZK, EUR, USD, GBP, PLN, HUF, CHF)")]
    Unsupported(String),
}

impl FromStr for Currency {
    type Err = CurrencyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.len() != 3 || !s.bytes().all(|b| b.is_ascii_uppercase()) {
            return Err(CurrencyError::Malformed(s.to_string()));
        }
        KNOWN_CURRENCIES
            .iter()
            .find(|(code, _)| *code == s)
            .map(|(code, exponent)| Currency {
                code: code.as_bytes().try_into().expect("three bytes"),
                exponent: *exponent,
            })
            .ok_or_else(|| CurrencyError::Unsupported(s.to_string()))
    }
}

impl fmt::Display for Currency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl Serialize for Currency {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.code())
    }
}

impl<'de> Deserialize<'de> for Currency {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for Currency {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Currency".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let codes: Vec<&str> = KNOWN_CURRENCIES.iter().map(|(c, _)| *c).collect();
        schemars::json_schema!({
            "type": "string",
            "description": "ISO 4217 currency code; amounts are integers in its minor unit",
            "enum": codes,
        })
    }
}

/// An amount of money in integer minor units of one currency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Money {
    pub minor: i64,
    pub currency: Currency,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoneyError {
    #[error("cannot combine {0} with {1}")]
    CurrencyMismatch(Currency, Currency),
    #[error("amount overflows i64 minor units")]
    Overflow,
}

impl Money {
    pub fn new(minor: i64, currency: Currency) -> Self {
        Money { minor, currency }
    }

    pub fn checked_add(self, other: Money) -> Result<Money, MoneyError> {
        if self.currency != other.currency {
            return Err(MoneyError::CurrencyMismatch(self.currency, other.currency));
        }
        self.minor
            .checked_add(other.minor)
            .map(|minor| Money::new(minor, self.currency))
            .ok_or(MoneyError::Overflow)
    }

    pub fn checked_sub(self, other: Money) -> Result<Money, MoneyError> {
        if self.currency != other.currency {
            return Err(MoneyError::CurrencyMismatch(self.currency, other.currency));
        }
        self.minor
            .checked_sub(other.minor)
            .map(|minor| Money::new(minor, self.currency))
            .ok_or(MoneyError::Overflow)
    }
}

impl fmt::Display for Money {
    /// Formats as the documents write amounts: `200 000,00 CZK`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_minor(self.minor, self.currency.exponent()))?;
        write!(f, " {}", self.currency)
    }
}

/// Formats minor units the Czech way: thin groups of three with a space, decimal comma.
pub fn format_minor(minor: i64, exponent: u8) -> String {
    let negative = minor < 0;
    let abs = minor.unsigned_abs();
    let scale = 10u64.pow(u32::from(exponent));
    let (whole, frac) = (abs / scale, abs % scale);
    let digits = whole.to_string();
    let mut grouped = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(' ');
        }
        grouped.push(ch);
    }
    let sign = if negative { "-" } else { "" };
    if exponent == 0 {
        format!("{sign}{grouped}")
    } else {
        format!(
            "{sign}{grouped},{frac:0width$}",
            width = usize::from(exponent)
        )
    }
}

/// An amount as the documents write it in their text: `120 000 Kč`, `2,50 Kč` (decimals only
/// when the amount has any), with the currency's symbol after the number as Czech does
/// (`Kč`, `€`), or its ISO code where the documents use no symbol.
pub fn format_amount(minor: i64, currency: Currency) -> String {
    let exponent = currency.exponent();
    let scale = 10i64.pow(u32::from(exponent));
    let number = if minor % scale == 0 {
        format_minor(minor / scale, 0)
    } else {
        format_minor(minor, exponent)
    };
    let unit = match currency.code() {
        "CZK" => "Kč",
        "EUR" => "€",
        other => other,
    };
    format!("{number} {unit}")
}

/// How a fractional minor unit is resolved when a ratio does not divide a stake exactly.
/// The documents never say; every plan states its rule and records it as an assumption.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Rounding {
    /// Truncate toward zero: the fraction of a minor unit is not paid.
    Down,
    /// Round half away from zero.
    HalfUp,
    /// Round half to even (banker's rounding).
    HalfEven,
}

impl Rounding {
    /// `numerator / denominator` rounded by this rule; `denominator` must be positive.
    pub fn divide(self, numerator: i128, denominator: i128) -> i128 {
        debug_assert!(denominator > 0, "denominators are positive by construction");
        let q = numerator / denominator;
        let r = numerator % denominator;
        if r == 0 {
            return q;
        }
        let sign = if numerator < 0 { -1 } else { 1 };
        let twice_r = 2 * r.abs();
        match self {
            Rounding::Down => q,
            Rounding::HalfUp => {
                if twice_r >= denominator {
                    q + sign
                } else {
                    q
                }
            }
            Rounding::HalfEven => {
                if twice_r > denominator || (twice_r == denominator && q % 2 != 0) {
                    q + sign
                } else {
                    q
                }
            }
        }
    }
}

/// An exact, reduced, positive fraction `numerator / denominator`.
///
/// As a payout ratio it is the profit per unit staked (`35:1` pays 35 on top of the returned
/// stake; `0.95:1` is 19/20). As a refund it is the share of the stake returned (`1/2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ratio {
    numerator: u64,
    denominator: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RatioError {
    #[error("'{0}' is not a ratio: write it as the document does, e.g. '35:1', '0.95:1', '3:2' or '1/2'")]
    Malformed(String),
    #[error("'{0}' must be greater than zero")]
    NotPositive(String),
    #[error("'{0}' has too many digits")]
    TooLarge(String),
}

impl Ratio {
    pub fn new(numerator: u64, denominator: u64) -> Option<Ratio> {
        if numerator == 0 || denominator == 0 {
            return None;
        }
        let g = gcd(numerator, denominator);
        Some(Ratio {
            numerator: numerator / g,
            denominator: denominator / g,
        })
    }

    pub const ONE: Ratio = Ratio {
        numerator: 1,
        denominator: 1,
    };

    pub fn numerator(&self) -> u64 {
        self.numerator
    }

    pub fn denominator(&self) -> u64 {
        self.denominator
    }

    /// `stake × ratio` in minor units, rounded by `rounding`; `None` on overflow.
    pub fn apply(&self, stake_minor: i64, rounding: Rounding) -> Option<i64> {
        let product = i128::from(stake_minor).checked_mul(i128::from(self.numerator))?;
        i64::try_from(rounding.divide(product, i128::from(self.denominator))).ok()
    }

    /// `a × b` of two ratios (used to compare ratios and for limit arithmetic).
    pub fn cmp_value(&self, other: &Ratio) -> std::cmp::Ordering {
        (u128::from(self.numerator) * u128::from(other.denominator))
            .cmp(&(u128::from(other.numerator) * u128::from(self.denominator)))
    }
}

impl PartialOrd for Ratio {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ratio {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.cmp_value(other)
            .then_with(|| self.numerator.cmp(&other.numerator))
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Parses a non-negative decimal with at most 6 fractional digits ("0.95", "1,5", "35") into
/// an exact fraction.
fn parse_decimal(s: &str, whole: &str) -> Result<(u64, u64), RatioError> {
    let s = s.trim();
    let (int_part, frac_part) = match s.split_once(['.', ',']) {
        Some((i, f)) => (i, f),
        None => (s, ""),
    };
    let malformed = || RatioError::Malformed(whole.to_string());
    if int_part.is_empty() && frac_part.is_empty() {
        return Err(malformed());
    }
    if !int_part.bytes().all(|b| b.is_ascii_digit())
        || !frac_part.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(malformed());
    }
    if int_part.len() > 12 || frac_part.len() > 6 {
        return Err(RatioError::TooLarge(whole.to_string()));
    }
    let den = 10u64.pow(frac_part.len() as u32);
    let int_value: u64 = if int_part.is_empty() {
        0
    } else {
        int_part.parse().map_err(|_| malformed())?
    };
    let frac_value: u64 = if frac_part.is_empty() {
        0
    } else {
        frac_part.parse().map_err(|_| malformed())?
    };
    Ok((int_value * den + frac_value, den))
}

impl FromStr for Ratio {
    type Err = RatioError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (a, b) = s
            .split_once([':', '/'])
            .ok_or_else(|| RatioError::Malformed(s.to_string()))?;
        let (an, ad) = parse_decimal(a, s)?;
        let (bn, bd) = parse_decimal(b, s)?;
        // (an/ad) : (bn/bd) = (an·bd) / (ad·bn)
        let num = an
            .checked_mul(bd)
            .ok_or_else(|| RatioError::TooLarge(s.to_string()))?;
        let den = ad
            .checked_mul(bn)
            .ok_or_else(|| RatioError::TooLarge(s.to_string()))?;
        Ratio::new(num, den).ok_or_else(|| RatioError::NotPositive(s.to_string()))
    }
}

impl fmt::Display for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.numerator, self.denominator)
    }
}

impl Serialize for Ratio {
    /// The normalised form: `{"numerator": 19, "denominator": 20}`.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Ratio", 2)?;
        st.serialize_field("numerator", &self.numerator)?;
        st.serialize_field("denominator", &self.denominator)?;
        st.end()
    }
}

impl<'de> Deserialize<'de> for Ratio {
    /// Accepts the document's notation (`"0.95:1"`) or the normalised object.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Repr {
            Text(String),
            Parts { numerator: u64, denominator: u64 },
        }
        match Repr::deserialize(d)? {
            Repr::Text(t) => t.parse().map_err(serde::de::Error::custom),
            Repr::Parts {
                numerator,
                denominator,
            } => Ratio::new(numerator, denominator).ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "'{numerator}/{denominator}' must be greater than zero"
                ))
            }),
        }
    }
}

impl JsonSchema for Ratio {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Ratio".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "An exact positive fraction in the document's notation: '35:1', '0.95:1' (= 19/20), '3:2', '1/2'",
            "type": "string",
            "pattern": r"^\s*[0-9]*([.,][0-9]+)?\s*[:/]\s*[0-9]*([.,][0-9]+)?\s*$",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(s: &str) -> Ratio {
        s.parse().unwrap()
    }

    #[test]
    fn decimal_ratios_become_exact_fractions() {
        assert_eq!(r("0.95:1"), Ratio::new(19, 20).unwrap());
        assert_eq!(r("0,95 : 1"), Ratio::new(19, 20).unwrap());
        assert_eq!(r("0.54:1"), Ratio::new(27, 50).unwrap());
        assert_eq!(r("1.5:1"), Ratio::new(3, 2).unwrap());
        assert_eq!(r("3:2"), Ratio::new(3, 2).unwrap());
        assert_eq!(r("35:1"), Ratio::new(35, 1).unwrap());
        assert_eq!(r("1/2"), Ratio::new(1, 2).unwrap());
    }

    #[test]
    fn zero_negative_and_garbage_ratios_are_refused() {
        assert!(matches!(
            "0:1".parse::<Ratio>(),
            Err(RatioError::NotPositive(_))
        ));
        assert!(matches!(
            "1:0".parse::<Ratio>(),
            Err(RatioError::NotPositive(_))
        ));
        assert!(matches!(
            "-1:1".parse::<Ratio>(),
            Err(RatioError::Malformed(_))
        ));
        assert!(matches!(
            "35".parse::<Ratio>(),
            Err(RatioError::Malformed(_))
        ));
        assert!(matches!(
            "a:b".parse::<Ratio>(),
            Err(RatioError::Malformed(_))
        ));
        assert!(matches!(
            ":".parse::<Ratio>(),
            Err(RatioError::Malformed(_))
        ));
    }

    #[test]
    fn banker_commission_rounds_by_the_plans_rule() {
        let banker = r("0.95:1");
        // 1,01 Kč × 0.95 = 0,9595 Kč = 95.95 haléřů
        assert_eq!(banker.apply(101, Rounding::Down), Some(95));
        assert_eq!(banker.apply(101, Rounding::HalfUp), Some(96));
        // 10 haléřů × 0.95 = 9.5 haléřů: half-even picks the even neighbour, 10
        assert_eq!(banker.apply(10, Rounding::HalfEven), Some(10));
        assert_eq!(banker.apply(30, Rounding::HalfEven), Some(28)); // 28.5 → 28
        assert_eq!(banker.apply(10, Rounding::Down), Some(9));
        assert_eq!(banker.apply(10, Rounding::HalfUp), Some(10));
    }

    #[test]
    fn exact_products_are_not_rounded() {
        assert_eq!(r("35:1").apply(1_000_000, Rounding::Down), Some(35_000_000));
        assert_eq!(r("3:2").apply(20_000_000, Rounding::Down), Some(30_000_000));
    }

    #[test]
    fn overflow_is_reported_not_wrapped() {
        assert_eq!(r("250:1").apply(i64::MAX, Rounding::Down), None);
    }

    #[test]
    fn ratios_order_by_value() {
        assert!(r("3:2") > r("1:1"));
        assert!(r("0.95:1") < r("1:1"));
        assert!(r("35:1") > r("17:1"));
    }

    #[test]
    fn ratio_serialises_as_numerator_and_denominator() {
        let json = serde_json::to_string(&r("0.95:1")).unwrap();
        assert_eq!(json, r#"{"numerator":19,"denominator":20}"#);
        let back: Ratio = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r("0.95:1"));
    }

    #[test]
    fn currency_codes_are_checked() {
        assert_eq!("CZK".parse::<Currency>().unwrap(), Currency::CZK);
        assert!(matches!(
            "czk".parse::<Currency>(),
            Err(CurrencyError::Malformed(_))
        ));
        assert!(matches!(
            "Kč".parse::<Currency>(),
            Err(CurrencyError::Malformed(_))
        ));
        assert!(matches!(
            "XYZ".parse::<Currency>(),
            Err(CurrencyError::Unsupported(_))
        ));
    }

    #[test]
    fn money_of_different_currencies_does_not_mix() {
        let eur: Currency = "EUR".parse().unwrap();
        let a = Money::new(100, Currency::CZK);
        let b = Money::new(100, eur);
        assert_eq!(
            a.checked_add(b),
            Err(MoneyError::CurrencyMismatch(Currency::CZK, eur))
        );
        assert_eq!(a.checked_add(a).unwrap().minor, 200);
    }

    #[test]
    fn amounts_print_as_the_document_writes_them() {
        assert_eq!(
            Money::new(20_000_000, Currency::CZK).to_string(),
            "200 000,00 CZK"
        );
        assert_eq!(format_minor(36_000_000, 2), "360 000,00");
        assert_eq!(format_minor(5, 2), "0,05");
        assert_eq!(format_minor(-150, 2), "-1,50");
        assert_eq!(format_amount(12_000_000, Currency::CZK), "120 000 Kč");
        assert_eq!(format_amount(250, Currency::CZK), "2,50 Kč");
        assert_eq!(format_amount(-5, Currency::CZK), "-0,05 Kč");
        let eur: Currency = "EUR".parse().unwrap();
        assert_eq!(format_amount(100_000, eur), "1 000 €");
    }

    #[test]
    fn rounding_handles_negative_numerators_symmetrically() {
        assert_eq!(Rounding::Down.divide(-19, 2), -9);
        assert_eq!(Rounding::HalfUp.divide(-19, 2), -10);
        assert_eq!(Rounding::HalfEven.divide(-19, 2), -10);
        assert_eq!(Rounding::HalfEven.divide(-17, 2), -8);
    }
}
