//! Taillard's permutation flow-shop benchmark (EJOR 64, 1993): the portable random
//! generator, the table of the 120 instances ta001..ta120, and the text file format.

use std::fmt::Write as _;
use std::path::Path;

use super::Instance;
use crate::error::{Error, Result};

/// Lehmer generator constants (Park–Miller "minimal standard"), as in Taillard's code.
const MODULUS: i64 = 2_147_483_647;
const MULTIPLIER: i64 = 16_807;
/// Schrage's decomposition of the modulus: MODULUS = MULTIPLIER * SCHRAGE_Q + SCHRAGE_R.
const SCHRAGE_Q: i64 = 127_773;
const SCHRAGE_R: i64 = 2_836;

/// Taillard's `unif(seed, low, high)`: advances `seed` and returns an integer in `low..=high`.
fn unif(seed: &mut i64, low: u32, high: u32) -> u32 {
    let k = *seed / SCHRAGE_Q;
    *seed = MULTIPLIER * (*seed % SCHRAGE_Q) - k * SCHRAGE_R;
    if *seed < 0 {
        *seed += MODULUS;
    }
    let value_0_1 = *seed as f64 / MODULUS as f64;
    low + (value_0_1 * f64::from(high - low + 1)).floor() as u32
}

/// Processing times drawn by Taillard's generator, machine-major (`p[i * jobs + j]`),
/// uniform in 1..=99.
pub fn generate(jobs: usize, machines: usize, seed: u32) -> Result<Vec<u32>> {
    if seed == 0 || i64::from(seed) >= MODULUS {
        return Err(Error::invalid("seed", format!("{seed} is outside 1..={}", MODULUS - 1)));
    }
    super::check_size(jobs, machines)?;
    let mut state = i64::from(seed);
    let mut p = Vec::with_capacity(jobs * machines);
    for _machine in 0..machines {
        for _job in 0..jobs {
            p.push(unif(&mut state, 1, 99));
        }
    }
    Ok(p)
}

/// One row of Taillard's benchmark table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TaillardEntry {
    /// 1..=120 (ta001..ta120).
    pub number: usize,
    /// Jobs (n).
    pub jobs: usize,
    /// Machines (m).
    pub machines: usize,
    /// Taillard's generator seed.
    pub seed: u32,
    /// Upper bound printed in the header of Taillard's instance file (original release,
    /// as mirrored in chneau/go-taillard). `None` where no copy of that file was checked.
    pub file_upper_bound: Option<u32>,
    /// Lower bound printed in the header of Taillard's instance file.
    pub lower_bound: u32,
    /// Best makespan known (list used by the GPU B&B literature, Gmys et al.).
    pub best_known: u32,
    /// `best_known` is proven optimal.
    pub optimal: bool,
}

impl TaillardEntry {
    /// The instance's name, `ta001` .. `ta120`.
    pub fn name(&self) -> String {
        format!("ta{:03}", self.number)
    }
}

/// (jobs, machines) of each group of ten instances, in Taillard's numbering order.
const GROUPS: [(usize, usize); 12] =
    [(20, 5), (20, 10), (20, 20), (50, 5), (50, 10), (50, 20), (100, 5), (100, 10), (100, 20), (200, 10), (200, 20), (500, 20)];

/// Seeds from Taillard (1993); identical in Taillard's own generator, the Mattfeld–Vaessens
/// C port, and jangmys/pbb. Some seeds repeat across groups (e.g. ta014 and ta022): that is
/// in the original table.
#[rustfmt::skip]
const SEEDS: [u32; 120] = [
    873654221, 379008056, 1866992158, 216771124, 495070989, 402959317, 1369363414, 2021925980, 573109518, 88325120,
    587595453, 1401007982, 873136276, 268827376, 1634173168, 691823909, 73807235, 1273398721, 2065119309, 1672900551,
    479340445, 268827376, 1958948863, 918272953, 555010963, 2010851491, 1519833303, 1748670931, 1923497586, 1829909967,
    1328042058, 200382020, 496319842, 1203030903, 1730708564, 450926852, 1303135678, 1273398721, 587288402, 248421594,
    1958948863, 575633267, 655816003, 1977864101, 93805469, 1803345551, 49612559, 1899802599, 2013025619, 578962478,
    1539989115, 691823909, 655816003, 1315102446, 1949668355, 1923497586, 1805594913, 1861070898, 715643788, 464843328,
    896678084, 1179439976, 1122278347, 416756875, 267829958, 1835213917, 1328833962, 1418570761, 161033112, 304212574,
    1539989115, 655816003, 960914243, 1915696806, 2013025619, 1168140026, 1923497586, 167698528, 1528387973, 993794175,
    450926852, 1462772409, 1021685265, 83696007, 508154254, 1861070898, 26482542, 444956424, 2115448041, 118254244,
    471503978, 1215892992, 135346136, 1602504050, 160037322, 551454346, 519485142, 383947510, 1968171878, 540872513,
    2013025619, 475051709, 914834335, 810642687, 1019331795, 2056065863, 1342855162, 1325809384, 1988803007, 765656702,
    1368624604, 450181436, 1927888393, 1759567256, 606425239, 19268348, 1298201670, 2041736264, 379756761, 28837162,
];

/// Lower bounds of Taillard's instance files (checked against 81 file headers; the
/// 20-job ones also equal the root LB1, see `cpu::tests`).
#[rustfmt::skip]
const LOWER_BOUNDS: [u32; 120] = [
    1232, 1290, 1073, 1268, 1198, 1180, 1226, 1170, 1206, 1082,
    1448, 1479, 1407, 1308, 1325, 1290, 1388, 1363, 1472, 1356,
    1911, 1711, 1844, 1810, 1899, 1875, 1875, 1880, 1840, 1900,
    2712, 2808, 2596, 2740, 2837, 2793, 2689, 2667, 2527, 2776,
    2907, 2821, 2801, 2968, 2908, 2941, 3062, 2959, 2795, 3046,
    3480, 3424, 3351, 3336, 3313, 3460, 3427, 3383, 3457, 3438,
    5437, 5208, 5130, 4963, 5195, 5063, 5198, 5038, 5385, 5272,
    5759, 5345, 5623, 5732, 5431, 5246, 5523, 5556, 5779, 5830,
    5851, 6099, 6099, 6072, 6009, 6144, 5991, 6084, 5979, 6298,
    10816, 10422, 10886, 10794, 10437, 10255, 10761, 10663, 10348, 10616,
    10979, 10947, 11150, 11127, 11132, 11085, 11194, 11126, 10965, 11122,
    25922, 26353, 26320, 26424, 26181, 26401, 26300, 26429, 25891, 26315,
];

/// Upper bounds of Taillard's instance files (original release, e.g. ta005 1236 and
/// ta007 1239, since improved). 0 = no copy of that file was checked.
#[rustfmt::skip]
const FILE_UPPER_BOUNDS: [u32; 120] = [
    1278, 1359, 1081, 1293, 1236, 1195, 1239, 1206, 1230, 1108,
    1582, 1659, 1496, 1378, 1419, 1397, 1484, 1538, 1593, 1591,
    2297, 2100, 2326, 2223, 2291, 2226, 2273, 2200, 2237, 2178,
    0, 0, 0, 2751, 2863, 2829, 2725, 2683, 2552, 2782,
    3025, 2892, 2864, 3064, 2986, 3006, 3107, 3039, 2902, 3091,
    0, 3715, 3668, 3752, 3635, 3698, 3716, 3709, 3765, 3777,
    5493, 5268, 5175, 5014, 5250, 5135, 5246, 5106, 5454, 5328,
    5770, 5349, 5677, 5791, 5468, 5303, 5599, 5623, 5875, 5845,
    0, 0, 0, 6306, 6377, 6437, 6346, 6481, 6358, 6465,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    11294, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
];

/// Best makespans known. ta001–ta050 are proven optimal (the 50×10 ones, ta041–ta050, last:
/// Gmys et al., 2020; simtlab's search proves them too).
#[rustfmt::skip]
const BEST_KNOWN: [u32; 120] = [
    1278, 1359, 1081, 1293, 1235, 1195, 1234, 1206, 1230, 1108,
    1582, 1659, 1496, 1377, 1419, 1397, 1484, 1538, 1593, 1591,
    2297, 2099, 2326, 2223, 2291, 2226, 2273, 2200, 2237, 2178,
    2724, 2834, 2621, 2751, 2863, 2829, 2725, 2683, 2552, 2782,
    2991, 2867, 2839, 3063, 2976, 3006, 3093, 3037, 2897, 3065,
    3850, 3704, 3640, 3723, 3611, 3679, 3704, 3691, 3743, 3756,
    5493, 5268, 5175, 5014, 5250, 5135, 5246, 5094, 5448, 5322,
    5770, 5349, 5676, 5781, 5467, 5303, 5595, 5617, 5871, 5845,
    6202, 6183, 6271, 6269, 6314, 6364, 6268, 6401, 6275, 6434,
    10862, 10480, 10922, 10889, 10524, 10329, 10854, 10730, 10438, 10675,
    11195, 11203, 11281, 11275, 11259, 11176, 11360, 11334, 11192, 11284,
    26040, 26520, 26371, 26456, 26334, 26477, 26389, 26560, 26005, 26457,
];

const PROVEN_OPTIMAL_UP_TO: usize = 50;

/// Number of instances in Taillard's set.
pub const TAILLARD_COUNT: usize = 120;

/// The table row of instance `number` (1..=120).
pub fn taillard_entry(number: usize) -> Result<TaillardEntry> {
    if !(1..=TAILLARD_COUNT).contains(&number) {
        return Err(Error::invalid("Taillard instance", format!("ta{number:03} does not exist; use 1..=120 (ta001..ta120)")));
    }
    let index = number - 1;
    let (jobs, machines) = GROUPS[index / 10];
    let file_ub = FILE_UPPER_BOUNDS[index];
    Ok(TaillardEntry {
        number,
        jobs,
        machines,
        seed: SEEDS[index],
        file_upper_bound: (file_ub != 0).then_some(file_ub),
        lower_bound: LOWER_BOUNDS[index],
        best_known: BEST_KNOWN[index],
        optimal: number <= PROVEN_OPTIMAL_UP_TO,
    })
}

/// All 120 rows, ta001 first.
pub fn taillard_entries() -> impl Iterator<Item = TaillardEntry> {
    (1..=TAILLARD_COUNT).map(|n| taillard_entry(n).expect("numbers in range"))
}

/// Generates instance `number` (1..=120). `upper_bound` is the best makespan known,
/// `lower_bound` the lower bound of Taillard's file.
pub fn taillard(number: usize) -> Result<Instance> {
    let entry = taillard_entry(number)?;
    let p = generate(entry.jobs, entry.machines, entry.seed)?;
    Instance::new(entry.name(), entry.jobs, entry.machines, entry.seed, p, entry.best_known, entry.lower_bound)
}

/// Generates an instance by name: "ta001", "ta1", "TA056" or plain "56".
pub fn taillard_by_name(name: &str) -> Result<Instance> {
    let trimmed = name.trim();
    let digits =
        trimmed.strip_prefix("ta").or_else(|| trimmed.strip_prefix("TA")).or_else(|| trimmed.strip_prefix("Ta")).unwrap_or(trimmed);
    let number: usize =
        digits.parse().map_err(|_| Error::invalid("Taillard instance", format!("'{name}' is not of the form ta001..ta120")))?;
    taillard(number)
}

/// Reads every instance of a file in Taillard's format (one or several, as in `tai20_5.txt`).
pub fn read_instances(path: &Path) -> Result<Vec<Instance>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("instance");
    parse_instances(&text, stem).map_err(|message| Error::File { path: path.to_path_buf(), message })
}

/// Reads a file that must hold exactly one instance.
pub fn read_instance(path: &Path) -> Result<Instance> {
    let mut all = read_instances(path)?;
    if all.len() != 1 {
        return Err(Error::File {
            path: path.to_path_buf(),
            message: format!(
                "holds {} instances; the flowshop commands take a file with exactly one: \
                 put each instance in a file of its own",
                all.len()
            ),
        });
    }
    Ok(all.remove(0))
}

/// Parses Taillard's text format. Per instance:
///
/// ```text
/// number of jobs, number of machines, initial seed, upper bound and lower bound :
///           20           5   873654221        1278        1232
/// processing times :
///  54 83 15 71 ...            (machine 1, one column per job)
///  ...                        (m rows)
/// ```
///
/// The two label lines are optional; blank lines are ignored. Instances are named
/// `name` (one instance) or `name#1`, `name#2`, ... Errors name the line and what was
/// expected; the caller adds the path.
pub fn parse_instances(text: &str, name: &str) -> std::result::Result<Vec<Instance>, String> {
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).filter(|(_, l)| !l.is_empty()).peekable();
    let mut parsed = Vec::new();
    while lines.peek().is_some() {
        // Optional label line before the header numbers.
        if lines.peek().is_some_and(|&(_, line)| is_label(line)) {
            lines.next();
        }
        let Some((line_no, header)) = lines.next() else {
            return Err("file ends after a label line; expected the header 'n m seed UB LB'".into());
        };
        let values = parse_numbers(header, line_no, "the header 'n m seed UB LB'")?;
        if values.len() != 5 {
            return Err(format!("line {line_no}: expected the header 'n m seed UB LB' (5 integers), found {} values", values.len()));
        }
        let jobs = to_usize(values[0], line_no, "number of jobs")?;
        let machines = to_usize(values[1], line_no, "number of machines")?;
        super::check_size(jobs, machines).map_err(|e| format!("line {line_no}: {e}"))?;
        let seed = to_u32(values[2], line_no, "seed")?;
        let upper_bound = to_u32(values[3], line_no, "upper bound")?;
        let lower_bound = to_u32(values[4], line_no, "lower bound")?;

        if lines.peek().is_some_and(|&(_, line)| is_label(line)) {
            lines.next();
        }
        let mut p = Vec::with_capacity(jobs * machines);
        for machine in 0..machines {
            let what = format!("{jobs} processing times of machine {}", machine + 1);
            let Some((row_no, row)) = lines.next() else {
                return Err(format!(
                    "line {header_next}: file ends; expected {what} ({machines} rows after the header on line {line_no})",
                    header_next = line_no + 1 + machine
                ));
            };
            let row_values = parse_numbers(row, row_no, &what)?;
            if row_values.len() != jobs {
                return Err(format!("line {row_no}: expected {what}, found {} values", row_values.len()));
            }
            for v in row_values {
                p.push(to_u32(v, row_no, "processing time")?);
            }
        }
        parsed.push((seed, jobs, machines, p, upper_bound, lower_bound, line_no));
    }
    if parsed.is_empty() {
        return Err("no instance found; expected a header line 'n m seed UB LB'".into());
    }
    let count = parsed.len();
    parsed
        .into_iter()
        .enumerate()
        .map(|(i, (seed, jobs, machines, p, ub, lb, line_no))| {
            let instance_name = if count == 1 { name.to_string() } else { format!("{name}#{}", i + 1) };
            Instance::new(instance_name, jobs, machines, seed, p, ub, lb).map_err(|e| format!("instance starting at line {line_no}: {e}"))
        })
        .collect()
}

/// Writes an instance in Taillard's format (readable by [`parse_instances`]).
pub fn format_instance(instance: &Instance) -> String {
    let mut out = String::new();
    out.push_str("number of jobs, number of machines, initial seed, upper bound and lower bound :\n");
    let _ = writeln!(
        out,
        "{:>12}{:>12}{:>12}{:>12}{:>12}",
        instance.jobs, instance.machines, instance.seed, instance.upper_bound, instance.lower_bound
    );
    out.push_str("processing times :\n");
    for machine in 0..instance.machines {
        for job in 0..instance.jobs {
            let _ = write!(out, " {:>2}", instance.time(machine, job));
        }
        out.push('\n');
    }
    out
}

/// A label line ("processing times :") holds no integer at all; a line with any integer
/// is data, so a malformed row is reported instead of being skipped.
fn is_label(line: &str) -> bool {
    !line.split_whitespace().any(|t| t.parse::<i64>().is_ok())
}

fn parse_numbers(line: &str, line_no: usize, what: &str) -> std::result::Result<Vec<i64>, String> {
    line.split_whitespace()
        .map(|token| token.parse::<i64>().map_err(|_| format!("line {line_no}: expected {what} (integers), found '{token}'")))
        .collect()
}

fn to_u32(v: i64, line_no: usize, what: &str) -> std::result::Result<u32, String> {
    u32::try_from(v).map_err(|_| format!("line {line_no}: {what} {v} is outside 0..={}", u32::MAX))
}

fn to_usize(v: i64, line_no: usize, what: &str) -> std::result::Result<usize, String> {
    usize::try_from(v).map_err(|_| format!("line {line_no}: {what} {v} is negative"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generator_reproduces_taillard_files() {
        let ta001 = taillard(1).unwrap();
        let row1: Vec<u32> = (0..20).map(|j| ta001.time(0, j)).collect();
        assert_eq!(row1, [54, 83, 15, 71, 77, 36, 53, 38, 27, 87, 76, 91, 14, 29, 12, 77, 32, 87, 68, 94]);
        let row5: Vec<u32> = (0..20).map(|j| ta001.time(4, j)).collect();
        assert_eq!(row5, [58, 56, 20, 85, 53, 35, 53, 41, 69, 13, 86, 72, 8, 49, 47, 87, 58, 18, 68, 28]);
        // First values of other groups, from the published files.
        let firsts = [(2, [26, 38, 27, 88, 95]), (41, [46, 52, 79, 45, 97]), (71, [52, 95, 42, 75, 44]), (90, [50, 69, 14, 61, 88])];
        for (number, expected) in firsts {
            let instance = taillard(number).unwrap();
            let got: Vec<u32> = (0..5).map(|j| instance.time(0, j)).collect();
            assert_eq!(got, expected, "ta{number:03}");
        }
        // Last row of ta030 (20x20), last value.
        assert_eq!(taillard(30).unwrap().time(19, 19), 19);
    }

    #[test]
    fn table_is_consistent() {
        let entries: Vec<_> = taillard_entries().collect();
        assert_eq!(entries.len(), 120);
        let ta001 = entries[0];
        assert_eq!((ta001.jobs, ta001.machines, ta001.seed), (20, 5, 873654221));
        assert_eq!((ta001.file_upper_bound, ta001.lower_bound, ta001.best_known), (Some(1278), 1232, 1278));
        assert_eq!((entries[10].best_known, entries[20].best_known), (1582, 2297));
        assert_eq!((entries[119].jobs, entries[119].machines), (500, 20));
        for e in &entries {
            assert!(e.lower_bound <= e.best_known, "{}", e.name());
            if let Some(ub) = e.file_upper_bound {
                assert!(e.best_known <= ub, "{}", e.name());
            }
        }
        // the 50x10 instances are proven optimal, the 50x20 ones are open
        assert!(entries[40..50].iter().all(|e| e.optimal) && entries[50..60].iter().all(|e| !e.optimal));
        assert!(taillard_entry(0).is_err() && taillard_entry(121).is_err());
        assert_eq!(taillard_by_name("TA056").unwrap().name, "ta056");
        assert!(taillard_by_name("tax").is_err());
        assert!(generate(5, 5, 0).is_err());
    }

    #[test]
    fn format_round_trips() {
        let ta003 = taillard(3).unwrap();
        let text = format_instance(&ta003);
        let back = parse_instances(&text, "ta003").unwrap();
        assert_eq!(back, vec![ta003.clone()]);
        // Two instances back to back, bare (no label lines), as some mirrors store them.
        let bare = format!("20 5 1 2 3\n{}", text.lines().skip(3).collect::<Vec<_>>().join("\n"));
        let both = parse_instances(&format!("{text}\n{bare}\n"), "pair").unwrap();
        assert_eq!(both.len(), 2);
        assert_eq!(both[1].name, "pair#2");
        assert_eq!(both[1].p, ta003.p);
        assert_eq!((both[1].seed, both[1].upper_bound, both[1].lower_bound), (1, 2, 3));
    }

    #[test]
    fn malformed_files_give_clear_errors() {
        let cases: &[(&str, &str)] = &[
            ("", "no instance found"),
            ("2 2 1 10\n1 2\n3 4\n", "line 1: expected the header"),
            ("2 2 1 10 5\n1 2\n3\n", "line 3: expected 2 processing times of machine 2, found 1"),
            ("2 2 1 10 5\n1 x\n3 4\n", "line 2: expected 2 processing times of machine 1 (integers), found 'x'"),
            ("2 2 1 10 5\n1 2\n", "file ends; expected 2 processing times of machine 2"),
            ("0 2 1 10 5\n", "line 1: invalid instance size"),
            ("2 2 1 10 5\n1 -2\n3 4\n", "line 2: processing time -2 is outside"),
            ("2 2 -1 10 5\n1 2\n3 4\n", "line 1: seed -1 is outside"),
        ];
        for (text, expected) in cases {
            let err = parse_instances(text, "bad").unwrap_err();
            assert!(err.contains(expected), "{text:?}: got '{err}', expected '{expected}'");
        }
        let dir = std::env::temp_dir().join(format!("simtlab-flowshop-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("broken.txt");
        std::fs::write(&path, "2 2 1 10 5\n1 2\n").unwrap();
        match read_instance(&path) {
            Err(Error::File { path: p, message }) => {
                assert_eq!(p, path);
                assert!(message.contains("file ends"), "{message}");
            }
            other => panic!("expected Error::File, got {other:?}"),
        }
        assert!(matches!(read_instance(&dir.join("missing.txt")), Err(Error::Io { .. })));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
