//! Joining the divergence of parts of one kernel: several probe sites emulated apart, or the
//! probes of consecutive chunks of one grid.

use super::Divergence;
use crate::error::{Error, Result};

/// Joins the emulations of several sites of one kernel over the same threads: sites are
/// concatenated in order, per-warp divergent evaluations added, and a warp is divergent when
/// any site diverged in it. The per-warp efficiency is the lowest of the parts (the exact
/// joint value needs per-site lane counts the parts do not keep).
pub fn join_sites(parts: Vec<Divergence>) -> Result<Divergence> {
    let mut iter = parts.into_iter();
    let mut out = iter.next().ok_or_else(|| Error::invalid("divergence", "no sites to join"))?;
    for p in iter {
        if p.width != out.width || p.warps != out.warps {
            return Err(Error::invalid("divergence", "sites emulated over different warps"));
        }
        out.sites.extend(p.sites);
        for (w, d) in out.per_warp_divergent.iter_mut().zip(&p.per_warp_divergent) {
            *w += d;
        }
        for (w, e) in out.per_warp_efficiency.iter_mut().zip(&p.per_warp_efficiency) {
            *w = w.min(*e);
        }
    }
    out.divergent_warps = out.per_warp_divergent.iter().filter(|&&d| d > 0).count() as u64;
    Ok(out)
}

/// Joins the probes of consecutive chunks of one kernel's grid (the same sites over different
/// warps, e.g. dispatches split so that each chunk's records fit one binding): site counters
/// added, warps kept in order, as one probe over the whole grid would have counted them.
pub fn join_warps(parts: Vec<Divergence>) -> Result<Divergence> {
    let mut iter = parts.into_iter();
    let mut out = iter.next().ok_or_else(|| Error::invalid("divergence", "no chunks to join"))?;
    for p in iter {
        if p.width != out.width || p.sites.len() != out.sites.len() {
            return Err(Error::invalid("divergence", "chunks probed at different widths or sites"));
        }
        for (s, c) in out.sites.iter_mut().zip(&p.sites) {
            s.add(c);
        }
        out.per_warp_divergent.extend(p.per_warp_divergent);
        out.per_warp_efficiency.extend(p.per_warp_efficiency);
        out.divergent_warps += p.divergent_warps;
        out.warps += p.warps;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::divergence::{emulate_loops, emulate_paths};

    #[test]
    fn joined_sites_count_a_warp_divergent_when_any_site_is() {
        let paths = emulate_paths(&[0, 0, 0, 0, 1, 1, 1, 1], 1, 4).unwrap();
        let loops = emulate_loops(&[1, 2, 1, 1, 3, 3, 3, 3], 4).unwrap();
        let joined = join_sites(vec![paths.clone(), loops.clone()]).unwrap();
        assert_eq!(joined.sites.len(), paths.sites.len() + loops.sites.len());
        assert_eq!((joined.warps, joined.divergent_warps), (2, 1));
        assert!(join_sites(Vec::new()).is_err());
        assert!(join_sites(vec![paths, emulate_paths(&[0; 4], 1, 4).unwrap()]).is_err());
    }

    #[test]
    fn joined_chunks_equal_one_emulation_of_the_whole() {
        let trips = [1, 2, 1, 1, 3, 3, 3, 3, 5, 1, 5, 1];
        let whole = emulate_loops(&trips, 4).unwrap();
        let chunks = vec![emulate_loops(&trips[..4], 4).unwrap(), emulate_loops(&trips[4..], 4).unwrap()];
        assert_eq!(join_warps(chunks).unwrap(), whole);
    }
}
