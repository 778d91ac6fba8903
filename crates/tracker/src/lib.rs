//! The fgms tracker protocol (placeholder: filled in by the tracker work).
