//! `reproduce` end to end at tiny sizes: the report's structure, every CPU check, and shard merging.

mod common;

use simtlab::experiments::{self, Outcome, Scale, Shard};

/// Per point: experiment, key, and per record its variant, check and divergence.
type View = Vec<(String, String, Vec<(String, bool, Option<String>)>)>;

fn deterministic_view(outcomes: &[Outcome]) -> View {
    outcomes
        .iter()
        .map(|o| {
            let recs = o
                .records
                .iter()
                .map(|r| {
                    (r.variant.clone(), r.check.passed, r.divergence.map(|d| format!("{:.6} {:.6}", d.divergence_ratio, d.simt_efficiency)))
                })
                .collect();
            (o.point.experiment.clone(), o.point.key.clone(), recs)
        })
        .collect()
}

#[test]
fn tiny_reproduction_writes_a_complete_report_and_shards_merge_to_the_same_tables() {
    let gpu = common::gpu();
    let all = experiments::select("all").unwrap();
    let whole = experiments::run(&gpu, &all, Scale::Tiny, Shard::whole());
    let expected_points: usize = all.iter().map(|e| e.points(Scale::Tiny).len()).sum();
    assert_eq!(whole.len(), expected_points);
    for o in &whole {
        assert!(o.error.is_none(), "{} {}: {:?}", o.point.experiment, o.point.key, o.error);
        assert!(!o.records.is_empty());
        for r in &o.records {
            assert!(r.check.passed, "{} {} {}: {:?}", o.point.experiment, r.kernel, r.variant, r.check.first_mismatch);
            assert!(r.check.checked > 0);
        }
    }

    let dir = std::env::temp_dir().join(format!("simtlab-reproduce-{}", std::process::id()));
    experiments::write_report(&dir.join("whole"), &whole, &["test".into()]).unwrap();
    let report = std::fs::read_to_string(dir.join("whole/report.md")).unwrap();
    for e in &all {
        assert!(report.contains(&format!("(`{}`)", e.id())), "report lacks {}", e.id());
    }
    for paper in experiments::PAPERS {
        if all.iter().any(|e| e.paper() == paper) {
            let values = simtlab::report::PaperValues::of(paper).unwrap();
            assert!(report.contains(&format!("## {}", values.paper)), "no section for {paper}");
        }
    }
    let pngs = std::fs::read_dir(dir.join("whole")).unwrap().flatten().filter(|e| e.path().extension().is_some_and(|x| x == "png")).count();
    assert!(pngs >= 1, "figures are drawn");
    assert!(!report.contains("**failed**"));

    // two shards, merged (in the wrong order on purpose)
    let a = experiments::run(&gpu, &all, Scale::Tiny, "1/2".parse().unwrap());
    let b = experiments::run(&gpu, &all, Scale::Tiny, "2/2".parse().unwrap());
    assert_eq!(a.len() + b.len(), whole.len());
    experiments::write_report(&dir.join("a"), &a, &[]).unwrap();
    experiments::write_report(&dir.join("b"), &b, &[]).unwrap();
    let parts = vec![experiments::read_outcomes(&dir.join("b")).unwrap(), experiments::read_outcomes(&dir.join("a")).unwrap()];
    let merged = experiments::merge(parts);
    assert_eq!(deterministic_view(&merged), deterministic_view(&whole));
    // the rendered tables agree in every cell that does not vary run to run
    for e in &all {
        let pick = |v: &[Outcome]| -> Vec<Outcome> { v.iter().filter(|o| o.point.experiment == e.id()).cloned().collect() };
        let (m, w) = (pick(&merged), pick(&whole));
        let values = simtlab::report::PaperValues::of(e.paper()).unwrap();
        let sm = e.render(&m.iter().collect::<Vec<_>>(), &values);
        let sw = e.render(&w.iter().collect::<Vec<_>>(), &values);
        assert_eq!(sm.tables.len(), sw.tables.len());
        for (tm, tw) in sm.tables.iter().zip(&sw.tables) {
            assert_eq!(tm.columns, tw.columns);
            assert_eq!(tm.rows.len(), tw.rows.len(), "{}", e.id());
            for (rm, rw) in tm.rows.iter().zip(&tw.rows) {
                for (cm, cw) in rm.iter().zip(rw) {
                    let measured = matches!(cw, simtlab::report::Cell::Number { measured: true, .. });
                    if !measured {
                        assert_eq!(cm.render(), cw.render(), "{}", e.id());
                    }
                }
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
