//! Column value generators: turn a [`Generator`] into [`Value`]s of the
//! column's type.

use rand::rngs::StdRng;
use rand::Rng;
use rowtree_types::{Timestamp, Type, Value};

use crate::workload::Generator;

/// The simulation's epoch: virtual time 0 is 2026-01-01T00:00:00Z.
pub const EPOCH_NANOS: i128 = 1_767_225_600 * 1_000_000_000;

/// A generator with its state (counters).
#[derive(Debug, Clone)]
pub struct ColumnGen {
    pub position: usize,
    pub ty: Type,
    pub gen: Generator,
    next: u64,
}

fn uuid_v4(rng: &mut StdRng) -> [u8; 16] {
    let mut b: [u8; 16] = rng.gen();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    b
}

fn uuid_text(b: &[u8; 16]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(36);
    for (i, byte) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        s.push(HEX[(byte >> 4) as usize] as char);
        s.push(HEX[(byte & 15) as usize] as char);
    }
    s
}

/// A Zipf(n, s) sample in [1, n] by inverting the continuous approximation
/// of the distribution's CDF (1 is the most frequent value).
fn zipf(rng: &mut StdRng, n: u64, s: f64) -> u64 {
    let u: f64 = rng.gen();
    let nf = n as f64 + 1.0;
    let x = if (s - 1.0).abs() < 1e-9 {
        nf.powf(u)
    } else {
        let a = 1.0 - s;
        ((nf.powf(a) - 1.0) * u + 1.0).powf(1.0 / a)
    };
    (x.floor() as u64).clamp(1, n)
}

fn int_value(ty: &Type, v: i64) -> Value {
    match ty {
        Type::String => Value::String(v.to_string()),
        Type::Bytes => Value::Bytes(v.to_be_bytes().to_vec()),
        Type::Float64 => Value::Float64(v as f64),
        _ => Value::Int64(v),
    }
}

fn toml_value(ty: &Type, v: &toml::Value) -> Value {
    match (ty, v) {
        (Type::Int64, toml::Value::Integer(i)) => Value::Int64(*i),
        (Type::Float64, toml::Value::Float(f)) => Value::Float64(*f),
        (Type::Float64, toml::Value::Integer(i)) => Value::Float64(*i as f64),
        (Type::Bool, toml::Value::Boolean(b)) => Value::Bool(*b),
        (Type::Bytes, toml::Value::String(s)) => Value::Bytes(s.as_bytes().to_vec()),
        (_, toml::Value::String(s)) => Value::String(s.clone()),
        (_, toml::Value::Integer(i)) => Value::String(i.to_string()),
        (_, other) => Value::String(other.to_string()),
    }
}

impl ColumnGen {
    /// A generator for the column at `position` of type `ty`.
    pub fn new(position: usize, ty: Type, gen: Generator) -> ColumnGen {
        let next = match &gen {
            Generator::Counter { start } | Generator::BitReversed { start } => *start,
            _ => 0,
        };
        ColumnGen {
            position,
            ty,
            gen,
            next,
        }
    }

    /// The next value at virtual time `now` (nanoseconds).
    pub fn next(&mut self, now: u64, rng: &mut StdRng) -> Value {
        match &self.gen {
            Generator::Timestamp => {
                // Microsecond precision, as Spanner stores timestamps.
                let nanos = EPOCH_NANOS + (now as i128 / 1000) * 1000;
                Value::Timestamp(Timestamp::from_nanos(nanos).expect("in range"))
            }
            Generator::Counter { .. } => {
                let c = self.next;
                self.next += 1;
                int_value(&self.ty, c as i64)
            }
            Generator::BitReversed { .. } => {
                let c = self.next;
                self.next += 1;
                int_value(&self.ty, rowtree_db::bit_reversed_positive(c))
            }
            Generator::Uuid => {
                let b = uuid_v4(rng);
                match self.ty {
                    Type::Bytes => Value::Bytes(b.to_vec()),
                    _ => Value::String(uuid_text(&b)),
                }
            }
            Generator::Uniform { min, max } => {
                let v = rng.gen_range(*min..=*max);
                int_value(&self.ty, v)
            }
            Generator::Zipf { n, s } => int_value(&self.ty, zipf(rng, *n, *s) as i64),
            Generator::Constant(v) => toml_value(&self.ty, v),
            Generator::Null => Value::Null,
        }
    }

    /// The value this column had when the row was last written before the
    /// run, for a row first updated during the run at `now`: for a
    /// timestamp, `now` minus an exponential age of mean `mean_age`
    /// nanoseconds (the steady state of rows updated at random); otherwise a
    /// freshly generated value.
    pub fn before(&mut self, now: u64, mean_age: f64, rng: &mut StdRng) -> Value {
        match &self.gen {
            Generator::Timestamp => {
                let u: f64 = rng.gen_range(f64::MIN_POSITIVE..1.0);
                let age = (-u.ln() * mean_age).min(30.0 * 86_400e9) as i128;
                let nanos = EPOCH_NANOS + now as i128 - age.max(1000);
                Value::Timestamp(Timestamp::from_nanos(nanos / 1000 * 1000).expect("in range"))
            }
            _ => self.next(now, rng),
        }
    }

    /// How many distinct values this generator produces, if bounded.
    pub fn cardinality(&self) -> Option<f64> {
        match &self.gen {
            Generator::Uniform { min, max } => Some((*max as f64 - *min as f64) + 1.0),
            Generator::Zipf { n, .. } => Some(*n as f64),
            Generator::Constant(_) | Generator::Null => Some(1.0),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn uuid_is_v4_text() {
        let mut rng = StdRng::seed_from_u64(1);
        let s = uuid_text(&uuid_v4(&mut rng));
        assert_eq!(s.len(), 36);
        assert_eq!(&s[14..15], "4");
    }

    #[test]
    fn zipf_prefers_small_ids() {
        let mut rng = StdRng::seed_from_u64(1);
        let ones = (0..10_000)
            .filter(|_| zipf(&mut rng, 1000, 1.2) == 1)
            .count();
        assert!(ones > 1000, "{ones}");
    }
}
