//! Replays every committed fuzz corpus (`fuzz/corpus/<target>/*`, minimised by
//! `cargo fuzz cmin`) through the targets' bodies: what the fuzzer found and kept
//! stays covered by every normal test run.

use std::path::Path;

#[test]
fn every_corpus_input_passes_its_target() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus");
    let mut total = 0;
    for &(name, run) in fuzzing::TARGETS {
        let dir = root.join(name);
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("no corpus for {name} at {}: {e}", dir.display()));
        let mut n = 0;
        for e in entries {
            let path = e.unwrap().path();
            let data = std::fs::read(&path).unwrap();
            run(&data);
            n += 1;
        }
        assert!(n > 0, "the corpus of {name} is empty");
        total += n;
    }
    assert!(total >= fuzzing::TARGETS.len());
}

#[test]
fn empty_and_tiny_inputs_pass_every_target() {
    for &(_, run) in fuzzing::TARGETS {
        for d in [&[][..], &[0], &[0xff; 3], &[0xfe, 0, 0xfe]] {
            run(d);
        }
    }
}
