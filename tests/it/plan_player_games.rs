//! (filled by the plans of this family)
