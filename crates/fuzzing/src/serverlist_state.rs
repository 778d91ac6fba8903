//! A state file's text as `lobby master --state` and `lobby master export` read it
//! (`master::state::SavedState::read`: a master's state, or a server list's
//! `state.json` as probe.py writes it), restored into a catalog and written back:
//! never panics, what is written back is read back the same way, and a restore holds
//! no more entries than the catalog's cap.

use serverlist::catalog::MAX_ENTRIES;
use serverlist::export::{restore_published, restore_state, state_json, state_kind};
use serverlist::Catalog;

/// The fuzz target's body: arbitrary bytes in (read as UTF-8, lossily).
pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok((saved, origin)) = master::state::SavedState::read(&text) else {
        return;
    };
    let Some(list) = saved.list else { return };
    // Every list state the master imported is one the export reads too (a master's
    // own `list` is whatever it saved: what is not understood there is skipped).
    if origin == master::state::StateOrigin::ListState {
        let kind = state_kind(&list);
        assert!(kind.is_ok(), "{kind:?}");
    }
    let mut c = Catalog::new();
    restore_state(&mut c, &list);
    assert!(c.entries().count() <= MAX_ENTRIES);
    let written = state_json(&c);
    let mut again = Catalog::new();
    restore_state(&mut again, &written);
    assert_eq!(again.entries().count(), c.entries().count(), "{written}");
    let mut published = Catalog::new();
    restore_published(&mut published, &list);
    let _ = published.published(0, 172_800);
}
