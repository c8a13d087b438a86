//! A seeded random graph in compressed sparse rows and its breadth-first levels: the inputs
//! and CPU reference of the breadth-first search written against the public persistent-threads
//! module (`tests/fixtures/pt/bfs*.wgsl`, `benches/gpu_pt_user.sh`).

use crate::error::{Error, Result};
use crate::rng::Rng;

/// The level of a vertex no search reached.
pub const UNREACHED: u32 = u32::MAX;

/// A directed graph in compressed sparse rows: the edges of vertex `v` are
/// `edges[offsets[v]..offsets[v + 1]]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Graph {
    /// `vertices + 1` offsets into `edges`.
    pub offsets: Vec<u32>,
    /// The target of every edge.
    pub edges: Vec<u32>,
}

impl Graph {
    /// Vertices in the graph.
    pub fn vertices(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }
}

/// A random graph of `vertices` vertices whose out-degrees are uniform in
/// `1..=2 * mean_degree - 1` (uneven work per vertex) and whose targets are uniform.
pub fn random_graph(vertices: u32, mean_degree: u32, seed: u64) -> Result<Graph> {
    if vertices == 0 || mean_degree == 0 {
        return Err(Error::invalid("graph", format!("{vertices} vertices of mean degree {mean_degree}: both must be positive")));
    }
    let max_degree = 2 * mean_degree.min(1 << 20) - 1;
    let edges_bound = vertices as u64 * max_degree as u64;
    if edges_bound >= u32::MAX as u64 {
        return Err(Error::Limit {
            what: format!("a graph of {vertices} vertices with degrees up to {max_degree}"),
            requested: edges_bound,
            limit: u32::MAX as u64 - 1,
            hint: "edge offsets are u32: give fewer vertices or a smaller mean degree".into(),
        });
    }
    let mut rng = Rng::new(seed);
    let mut offsets = Vec::with_capacity(vertices as usize + 1);
    let mut edges = Vec::new();
    offsets.push(0);
    for _ in 0..vertices {
        let degree = rng.range_u32(1, max_degree);
        edges.extend((0..degree).map(|_| rng.range_u32(0, vertices - 1)));
        offsets.push(edges.len() as u32);
    }
    Ok(Graph { offsets, edges })
}

/// The breadth-first level of every vertex from `source` ([`UNREACHED`] where no path leads).
pub fn bfs_levels(graph: &Graph, source: u32) -> Vec<u32> {
    let mut level = vec![UNREACHED; graph.vertices()];
    let Some(first) = level.get_mut(source as usize) else { return level };
    *first = 0;
    let mut frontier = vec![source];
    let mut depth = 0;
    while !frontier.is_empty() {
        depth += 1;
        let mut next = Vec::new();
        for &v in &frontier {
            for &u in &graph.edges[graph.offsets[v as usize] as usize..graph.offsets[v as usize + 1] as usize] {
                if level[u as usize] == UNREACHED {
                    level[u as usize] = depth;
                    next.push(u);
                }
            }
        }
        frontier = next;
    }
    level
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_follow_the_edges() {
        // 0 -> 1 -> 2, 0 -> 3, 4 unreached
        let g = Graph { offsets: vec![0, 2, 3, 3, 3, 3], edges: vec![1, 3, 2] };
        assert_eq!(bfs_levels(&g, 0), [0, 1, 2, 1, UNREACHED]);
        let g = random_graph(1000, 4, 7).unwrap();
        assert_eq!(g.vertices(), 1000);
        assert!(g.edges.len() > 2000 && g.edges.iter().all(|&e| e < 1000));
        let levels = bfs_levels(&g, 0);
        assert!(levels.iter().filter(|&&l| l != UNREACHED).count() > 900 && levels.iter().max_by_key(|&&l| l % UNREACHED).unwrap() > &3);
        assert!(random_graph(0, 4, 1).is_err());
    }
}
