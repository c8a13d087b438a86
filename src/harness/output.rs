//! JSON and CSV output of records.

use super::Record;
use crate::error::{Error, Result};
use std::path::Path;

/// Writes `bytes` to `path`; `-` is standard output. A regular file (or a new one) is replaced
/// through a temporary file beside it, so that a crash never leaves a truncated result behind;
/// a symbolic link is written through to its target (made if it does not exist yet), and
/// anything else that already exists (a FIFO, a device, `/dev/stdout`) is written directly,
/// never replaced.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    if path.as_os_str() == "-" {
        let mut out = std::io::stdout().lock();
        return out.write_all(bytes).and_then(|_| out.flush()).map_err(|e| Error::io(path, e));
    }
    let target = link_target(path)?;
    match std::fs::metadata(&target) {
        Ok(m) if !m.is_file() && !m.is_dir() => {
            let mut f = std::fs::OpenOptions::new().write(true).open(&target).map_err(|e| Error::io(path, e))?;
            f.write_all(bytes).and_then(|_| f.flush()).map_err(|e| Error::io(path, e))
        }
        _ => replace_file(&target, bytes).map_err(|e| match e {
            Error::Io { source, .. } => Error::io(path, source),
            other => other,
        }),
    }
}

/// Replaces `path` whole with `bytes` through a new temporary file beside it, never following
/// a link at `path` (a link there is replaced by the file): for the files simtlab names itself
/// inside a directory it writes (`reproduce`'s report, results and figures).
pub fn replace_file(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        return Err(Error::io(path, std::io::Error::new(std::io::ErrorKind::IsADirectory, "it is a directory; give a file path")));
    }
    if let Some(p) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(p).map_err(|e| Error::io(p, e))?;
    }
    let (tmp, file) = create_temporary(path)?;
    // closed before the rename
    let written = {
        let mut file = file;
        file.write_all(bytes).and_then(|_| file.sync_all())
    };
    written.and_then(|_| std::fs::rename(&tmp, path)).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path, e)
    })
}

/// A new file beside `path` with a name no other writer can predict or plant a link at:
/// created exclusively (`O_EXCL`) and never through a link (`O_NOFOLLOW`).
fn create_temporary(path: &Path) -> Result<(std::path::PathBuf, std::fs::File)> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let base = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
    let mut last = None;
    for _ in 0..16 {
        let nanos = web_time::SystemTime::now().duration_since(web_time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        let salt = nanos ^ COUNTER.fetch_add(1, Ordering::Relaxed).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let tmp = path.with_file_name(format!(".{base}.{}.{salt:016x}.tmp", std::process::id()));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NOFOLLOW);
        match options.open(&tmp) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(Error::io(&tmp, e)),
        }
    }
    Err(Error::io(path, last.unwrap_or_else(|| std::io::Error::other("no temporary file name was free"))))
}

/// An exclusive lock on the file `path` (made if missing, never through a link), held until
/// the returned file is dropped or the process ends, however it ends; `None` while another
/// process holds it.
pub fn try_lock(path: &Path) -> Result<Option<std::fs::File>> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).truncate(false).write(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NOFOLLOW);
    let file = options.open(path).map_err(|e| Error::io(path, e))?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(Error::io(path, e)),
    }
}

/// Where a write to `path` lands: `path` itself, or the end of the chain of links at `path`,
/// whether or not that file exists yet (a link's target is where its writes go).
fn link_target(path: &Path) -> Result<std::path::PathBuf> {
    let mut at = path.to_path_buf();
    // as many links as the kernel follows before it gives up (ELOOP)
    for _ in 0..40 {
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                let next = std::fs::read_link(&at).map_err(|e| Error::io(path, e))?;
                at = match at.parent() {
                    Some(dir) if next.is_relative() => dir.join(next),
                    _ => next,
                };
            }
            _ => return Ok(at),
        }
    }
    Err(Error::io(path, std::io::Error::other("too many levels of symbolic links; give a path that ends in a file")))
}

/// Records as a pretty JSON array: what [`write_json`] writes.
pub fn records_json(records: &[Record]) -> Result<String> {
    serde_json::to_string_pretty(records).map_err(|e| Error::invalid("record", e.to_string()))
}

/// Writes records as a pretty JSON array ([`write_file`]: `-` is standard output).
pub fn write_json(path: &Path, records: &[Record]) -> Result<()> {
    write_file(path, records_json(records)?.as_bytes())
}

/// The records in `text`, as [`records_json`] makes them; an error names `file` (where the
/// text came from) and says it is not a record file.
pub fn parse_records(text: &str, file: &Path) -> Result<Vec<Record>> {
    serde_json::from_str(text).map_err(|e| Error::File { path: file.into(), message: format!("not a simtlab record file: {e}") })
}

/// The records of a JSON file written by [`write_json`] (or `--json`).
pub fn read_json(path: &Path) -> Result<Vec<Record>> {
    parse_records(&std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?, path)
}

const CSV_HEADER: &str = "family,kernel,variant,seed,adapter,backend,subgroup_size,timing,median_s,min_s,max_s,mean_s,stddev_s,samples,check_passed,max_rel_error,simt_efficiency,divergence_ratio,throughput,throughput_unit,params";

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Writes records as CSV ([`write_file`]: `-` is standard output).
pub fn write_csv(path: &Path, records: &[Record]) -> Result<()> {
    write_file(path, records_csv(records).as_bytes())
}

/// Records as CSV, a header line and one line per record: what [`write_csv`] writes.
pub fn records_csv(records: &[Record]) -> String {
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    for r in records {
        let opt = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
        let row = [
            csv_field(&r.family),
            csv_field(&r.kernel),
            csv_field(&r.variant),
            r.seed.to_string(),
            csv_field(&r.environment.adapter),
            csv_field(&r.environment.backend),
            r.environment.subgroup_size.map(|s| s.to_string()).unwrap_or_default(),
            format!("{:?}", r.stats.source),
            r.stats.median.to_string(),
            r.stats.min.to_string(),
            r.stats.max.to_string(),
            r.stats.mean.to_string(),
            r.stats.stddev.to_string(),
            r.stats.samples.len().to_string(),
            r.check.passed.to_string(),
            r.check.max_rel_error.to_string(),
            opt(r.divergence.map(|d| d.simt_efficiency)),
            opt(r.divergence.map(|d| d.divergence_ratio)),
            opt(r.throughput.as_ref().map(|t| t.value)),
            r.throughput.as_ref().map(|t| csv_field(&t.unit)).unwrap_or_default(),
            csv_field(&r.params.to_string()),
        ];
        out += &row.join(",");
        out.push('\n');
    }
    out
}

/// A terminal table of records: what ran, time, throughput, divergence and the CPU check.
pub fn table(records: &[Record]) -> String {
    let mut rows = vec![[
        "kernel".to_string(),
        "variant".into(),
        "median".into(),
        "spread (min..max)".into(),
        "throughput".into(),
        "SIMT eff.".into(),
        "div. ratio".into(),
        "check".into(),
    ]];
    for r in records {
        let d = r.divergence;
        rows.push([
            r.kernel.clone(),
            r.variant.clone(),
            format_seconds(r.stats.median),
            format!("{}..{}", format_seconds(r.stats.min), format_seconds(r.stats.max)),
            r.throughput.as_ref().map(|t| format!("{:.3} {}", t.value, t.unit)).unwrap_or_default(),
            d.map(|d| format!("{:.1} %", 100.0 * d.simt_efficiency)).unwrap_or_default(),
            d.map(|d| format!("{:.3}", d.divergence_ratio)).unwrap_or_default(),
            if r.check.passed { "ok".into() } else { format!("FAILED ({} wrong)", r.check.mismatches) },
        ]);
    }
    let widths: Vec<usize> = (0..8).map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for (i, row) in rows.iter().enumerate() {
        let line: Vec<String> = row.iter().zip(&widths).map(|(s, w)| format!("{s:<w$}")).collect();
        out += line.join("  ").trim_end();
        out.push('\n');
        if i == 0 {
            out += &"-".repeat(widths.iter().sum::<usize>() + 2 * (widths.len() - 1));
            out.push('\n');
        }
    }
    out
}

/// Seconds with a unit that keeps 3-4 significant digits.
pub fn format_seconds(s: f64) -> String {
    let a = s.abs();
    if a >= 1.0 {
        format!("{s:.3} s")
    } else if a >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{:.2} us", s * 1e6)
    }
}

/// A number as people read it: `10 M` for 10 000 000, `4096` kept whole below 100 000,
/// three significant digits otherwise.
pub fn format_number(x: f64) -> String {
    let a = x.abs();
    for (scale, suffix) in [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")] {
        if a >= scale && a >= 1e5 {
            let v = x / scale;
            let digits = if v.abs() >= 100.0 {
                0
            } else if v.abs() >= 10.0 {
                1
            } else {
                2
            };
            let text = format!("{v:.digits$}");
            let text = if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_string() } else { text };
            return format!("{text} {suffix}");
        }
    }
    if x == x.round() {
        format!("{}", x as i64)
    } else if a >= 1.0 {
        format!("{x:.3}").trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{x:.3}")
    }
}

/// Three significant digits, with k/M/G beyond 100 000 (axis ticks and hover labels).
pub fn format_significant(y: f64) -> String {
    if y == 0.0 || !y.is_finite() {
        return format!("{y}");
    }
    if y.abs() >= 1e5 {
        return format_number(y);
    }
    let digits = (2 - y.abs().log10().floor() as i32).clamp(0, 12) as usize;
    format!("{y:.digits$}")
}

#[cfg(all(test, unix))]
mod tests {
    use super::write_file;

    fn temp_dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("simtlab-output-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_symbolic_link_is_written_through_and_stays_a_link() {
        let dir = temp_dir("link");
        let target = dir.join("target.json");
        std::fs::write(&target, "old").unwrap();
        let link = dir.join("link.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_file(&link, b"[1, 2]").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link was replaced by a file");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "[1, 2]");
        // no temporary file left beside either
        let names: Vec<String> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }

    #[test]
    fn a_dangling_link_is_written_through_to_a_new_target() {
        let dir = temp_dir("dangling");
        let link = dir.join("link.json");
        std::os::unix::fs::symlink("target.json", &link).unwrap();
        write_file(&link, b"[3]").unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("target.json")).unwrap(), "[3]");
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    }

    #[test]
    fn a_link_planted_where_the_temporary_file_used_to_go_is_left_alone() {
        let dir = temp_dir("planted");
        let victim = dir.join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let path = dir.join("out.json");
        // the names a writer could predict: `<name>.<pid>.tmp`, with and without a leading dot
        for name in [format!("out.json.{}.tmp", std::process::id()), format!(".out.json.{}.tmp", std::process::id())] {
            std::os::unix::fs::symlink(&victim, dir.join(name)).unwrap();
        }
        write_file(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert!(!std::fs::symlink_metadata(&path).unwrap().file_type().is_symlink());
    }

    #[test]
    fn a_file_simtlab_names_itself_replaces_a_link_instead_of_following_it() {
        let dir = temp_dir("owned");
        let victim = dir.join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let report = dir.join("report.md");
        std::os::unix::fs::symlink(&victim, &report).unwrap();
        super::replace_file(&report, b"# report").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert_eq!(std::fs::read_to_string(&report).unwrap(), "# report");
        assert!(!std::fs::symlink_metadata(&report).unwrap().file_type().is_symlink());
    }

    #[test]
    fn a_directory_is_refused_with_its_path() {
        let dir = temp_dir("directory");
        let err = write_file(&dir, b"x").unwrap_err().to_string();
        assert!(err.contains("directory"), "{err}");
        assert!(dir.is_dir());
    }

    #[test]
    fn a_fifo_is_written_to_not_replaced() {
        let dir = temp_dir("fifo");
        let fifo = dir.join("pipe");
        let status = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(status.success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        write_file(&fifo, b"{\"a\": 1}").unwrap();
        assert_eq!(reader.join().unwrap(), "{\"a\": 1}");
        assert!(std::os::unix::fs::FileTypeExt::is_fifo(&std::fs::symlink_metadata(&fifo).unwrap().file_type()), "the FIFO was replaced");
    }

    #[test]
    fn a_regular_file_is_replaced_whole_and_missing_parents_are_made() {
        let dir = temp_dir("regular");
        let path = dir.join("a/b/out.csv");
        write_file(&path, b"first, longer content").unwrap();
        write_file(&path, b"second").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "second");
        assert_eq!(std::fs::read_dir(dir.join("a/b")).unwrap().count(), 1);
    }
}

#[cfg(test)]
mod formatting {
    use super::{format_number, format_seconds, format_significant};

    #[test]
    fn seconds_keep_their_unit_readable() {
        assert_eq!(format_seconds(2.5), "2.500 s");
        assert_eq!(format_seconds(0.0025), "2.500 ms");
        assert_eq!(format_seconds(-0.0025), "-2.500 ms");
        assert_eq!(format_seconds(2.5e-5), "25.00 us");
    }

    #[test]
    fn numbers_read_as_people_write_them() {
        assert_eq!(format_number(10_000_000.0), "10 M");
        assert_eq!(format_number(16_777_216.0), "16.8 M");
        assert_eq!(format_number(4096.0), "4096");
        assert_eq!(format_number(262_144.0), "262 k");
        assert_eq!(format_number(0.25), "0.250");
        assert_eq!(format_number(1.5), "1.5");
    }

    #[test]
    fn three_significant_digits() {
        assert_eq!(format_significant(0.000123456), "0.000123");
        assert_eq!(format_significant(12.345), "12.3");
        assert_eq!(format_significant(2_000_000.0), "2 M");
    }
}
