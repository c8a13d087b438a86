//! The marching-cubes triangle table (Paul Bourke's, public domain), parsed from its only copy,
//! `assets/mcubes/tri_table.txt`; the vertex counts and the edge table are derived from it.

use crate::error::{Error, Result};
use std::sync::OnceLock;

/// The table file, embedded.
pub const TRI_TABLE_TEXT: &str = include_str!("../../../assets/mcubes/tri_table.txt");

/// 256 rows of 16 edge numbers (-1 padded), with per-row vertex counts.
#[derive(Clone, Debug)]
pub struct Tables {
    /// Per case, the edges of its triangles, three per triangle, -1 after the last.
    pub tri: Vec<[i32; 16]>,
    /// Per case, the vertices its triangles have.
    pub counts: Vec<u32>,
}

impl Tables {
    /// Parses the text format of `assets/mcubes/tri_table.txt` ('#' comments).
    pub fn parse(text: &str) -> Result<Tables> {
        let bad = |m: String| Error::File { path: "assets/mcubes/tri_table.txt".into(), message: m };
        let mut tri = Vec::with_capacity(256);
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let vals: Vec<i32> = line
                .split_whitespace()
                .map(|w| w.parse::<i32>().map_err(|e| bad(format!("line {}: {e}", n + 1))))
                .collect::<Result<_>>()?;
            let row: [i32; 16] = vals.try_into().map_err(|_| bad(format!("line {}: 16 entries expected", n + 1)))?;
            let count = row.iter().position(|&e| e < 0).unwrap_or(16);
            if count % 3 != 0 || row[count..].iter().any(|&e| e != -1) || row[..count].iter().any(|&e| !(0..12).contains(&e)) {
                return Err(bad(format!("line {}: edges 0..11 in triples, then -1", n + 1)));
            }
            tri.push(row);
        }
        if tri.len() != 256 {
            return Err(bad(format!("{} rows (256 expected)", tri.len())));
        }
        let counts = tri.iter().map(|r| r.iter().take_while(|&&e| e >= 0).count() as u32).collect();
        Ok(Tables { tri, counts })
    }

    /// The embedded table.
    pub fn get() -> &'static Tables {
        static T: OnceLock<Tables> = OnceLock::new();
        T.get_or_init(|| Tables::parse(TRI_TABLE_TEXT).expect("assets/mcubes/tri_table.txt is checked by the tests"))
    }

    pub(crate) fn vertex_count(&self, cube: u32) -> u32 {
        self.counts[cube as usize]
    }

    /// The edges of configuration `cube`, three per triangle.
    pub fn edges(&self, cube: u32) -> &[i32] {
        &self.tri[cube as usize][..self.counts[cube as usize] as usize]
    }

    /// Bitmask of the edges configuration `cube` uses (Bourke's edge table, derived).
    #[cfg(test)]
    fn edge_mask(&self, cube: u32) -> u32 {
        self.edges(cube).iter().fold(0, |m, &e| m | 1 << e)
    }

    /// The GPU layout: 256 × 16 entries, then the 256 vertex counts.
    pub fn gpu_words(&self) -> Vec<i32> {
        let mut w: Vec<i32> = self.tri.iter().flatten().copied().collect();
        w.extend(self.counts.iter().map(|&c| c as i32));
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::mcubes::cpu::edge_corners;

    #[test]
    fn table_uses_exactly_the_edges_that_cross_the_surface() {
        let t = Tables::get();
        for cube in 0..256u32 {
            let crossing = (0..12u32).fold(0, |m, e| {
                let [a, b] = edge_corners(e);
                m | ((((cube >> a) ^ (cube >> b)) & 1) << e)
            });
            assert_eq!(t.edge_mask(cube), crossing, "configuration {cube}");
        }
        // Bourke's edge table entries, spot-checked.
        assert_eq!(t.edge_mask(1), 0x109);
        assert_eq!(t.edge_mask(3), 0x30a);
        assert_eq!(t.counts.iter().max(), Some(&15));
        // complementary configurations use the same edges
        assert!((0..256u32).all(|c| t.edge_mask(c) == t.edge_mask(255 - c)));
    }

    #[test]
    fn bad_tables_are_errors() {
        assert!(Tables::parse("0 1 2").is_err());
        let row = "0 8 3 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\n";
        assert!(Tables::parse(&row.repeat(255)).is_err());
        assert!(Tables::parse(&"0 8 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\n".repeat(256)).is_err());
    }
}
