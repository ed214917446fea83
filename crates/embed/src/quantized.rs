//! The compact form a vector is stored in: one byte per dimension (int8) and one scale, 388 bytes for 384
//! dimensions instead of 1,536. The dot product with a full-precision query loses well under 1% (tested).

use crate::DIMENSIONS;

/// A vector as signed bytes times a scale.
#[derive(Debug, Clone, PartialEq)]
pub struct Quantized {
    pub scale: f32,
    pub values: Vec<i8>,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum QuantizedError {
    #[error(
        "a stored vector has {found} bytes where {expected} were expected: it is damaged and will be computed again"
    )]
    WrongLength { expected: usize, found: usize },
    #[error("a stored vector has an unusable scale: it is damaged and will be computed again")]
    BadScale,
}

impl Quantized {
    /// Stored length in bytes.
    pub const BYTES: usize = 4 + DIMENSIONS;

    pub fn from_vector(v: &[f32]) -> Self {
        let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
        let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
        let values = v.iter().map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8).collect();
        Quantized { scale, values }
    }

    /// Little-endian scale, then the bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(4 + self.values.len());
        out.extend_from_slice(&self.scale.to_le_bytes());
        out.extend(self.values.iter().map(|v| *v as u8));
        out
    }

    /// Reads a stored vector of the local model ([`DIMENSIONS`]), refusing one of the wrong length or with a scale
    /// that is not a finite positive number.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, QuantizedError> {
        Self::from_bytes_of(bytes, DIMENSIONS)
    }

    /// Reads a stored vector of `dimensions` numbers (another model's, e.g. Voyage's 1,024).
    pub fn from_bytes_of(bytes: &[u8], dimensions: usize) -> Result<Self, QuantizedError> {
        if bytes.len() != 4 + dimensions {
            return Err(QuantizedError::WrongLength { expected: 4 + dimensions, found: bytes.len() });
        }
        let scale = f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        if !scale.is_finite() || scale <= 0.0 {
            return Err(QuantizedError::BadScale);
        }
        Ok(Quantized { scale, values: bytes[4..].iter().map(|b| *b as i8).collect() })
    }

    /// The dot product with a full-precision vector.
    pub fn dot(&self, query: &[f32]) -> f32 {
        let sum: f32 = self.values.iter().zip(query).map(|(v, q)| *v as f32 * q).sum();
        sum * self.scale
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(seed: u32) -> Vec<f32> {
        // A deterministic spread of values, normalised.
        let v: Vec<f32> = (0..DIMENSIONS as u32)
            .map(|i| (((i.wrapping_mul(2654435761).wrapping_add(seed * 40503)) % 1000) as f32 / 500.0) - 1.0)
            .collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / n).collect()
    }

    #[test]
    fn a_stored_vector_keeps_its_dot_products_within_a_hundredth() {
        for seed in 0..20 {
            let (a, b) = (unit(seed), unit(seed + 100));
            let q = Quantized::from_bytes(&Quantized::from_vector(&a).to_bytes()).unwrap();
            let exact = crate::dot(&a, &b);
            assert!((q.dot(&b) - exact).abs() < 0.01, "{} vs {exact}", q.dot(&b));
            assert!((q.dot(&a) - 1.0).abs() < 0.01);
        }
    }

    #[test]
    fn a_damaged_stored_vector_is_refused_with_the_reason() {
        let bytes = Quantized::from_vector(&unit(1)).to_bytes();
        assert_eq!(
            Quantized::from_bytes(&bytes[..100]),
            Err(QuantizedError::WrongLength { expected: Quantized::BYTES, found: 100 })
        );
        let mut bad = bytes.clone();
        bad[..4].copy_from_slice(&f32::NAN.to_le_bytes());
        assert_eq!(Quantized::from_bytes(&bad), Err(QuantizedError::BadScale));
        assert!(QuantizedError::BadScale.to_string().contains("computed again"));
    }
}
