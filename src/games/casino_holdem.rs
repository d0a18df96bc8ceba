//! (in progress: pure engine; see notes/next-steps.md)
