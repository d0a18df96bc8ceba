//! pitboss-audit: see FORMAT.md.
