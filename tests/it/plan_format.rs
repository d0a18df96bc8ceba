//! The plan format: malformed plans, hashing, diffs, the whole directory.
