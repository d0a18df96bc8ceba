//! The RFC 6962 Merkle tree: the compact frontier kept by the appender and the verifier, the
//! MTH, inclusion (PATH) and consistency (PROOF) algorithms of RFC 6962 §2.1, and their
//! verification as written in RFC 9162 §2.1.3.2 and §2.1.4.2.
//!
//! Written here rather than taken from `ct-merkle`: that crate keeps the whole tree in memory,
//! while the service needs a restorable O(log n) frontier and proofs computed from leaf hashes
//! it stores in its database. `ct-merkle` is used in the tests as an independent cross-check.

use crate::hash::{node_hash, sha256, Hash};
use serde::{Deserialize, Serialize};
use std::convert::Infallible;

/// Largest power of two strictly smaller than `n` (`n` ≥ 2): the RFC 6962 split point `k`.
fn split_point(n: u64) -> u64 {
    debug_assert!(n >= 2);
    1u64 << (63 - (n - 1).leading_zeros())
}

/// The roots of the perfect subtrees that make up a tree of `size` leaves, largest (leftmost)
/// first: one per set bit of `size`. It is all that is needed to append and to compute the root.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(try_from = "FrontierRepr", into = "FrontierRepr")]
pub struct Frontier {
    size: u64,
    nodes: Vec<Hash>,
}

#[derive(Serialize, Deserialize)]
struct FrontierRepr {
    size: u64,
    nodes: Vec<Hash>,
}

/// A frontier whose node count does not match its size.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("frontier of size {size} must have {expected} nodes, has {found}")]
pub struct FrontierError {
    pub size: u64,
    pub expected: u32,
    pub found: usize,
}

impl TryFrom<FrontierRepr> for Frontier {
    type Error = FrontierError;
    fn try_from(r: FrontierRepr) -> Result<Self, FrontierError> {
        Frontier::from_parts(r.size, r.nodes)
    }
}

impl From<Frontier> for FrontierRepr {
    fn from(f: Frontier) -> Self {
        FrontierRepr {
            size: f.size,
            nodes: f.nodes,
        }
    }
}

impl Frontier {
    /// The empty tree.
    pub fn new() -> Frontier {
        Frontier::default()
    }

    /// Rebuilds a frontier from stored parts, checking that they fit together.
    pub fn from_parts(size: u64, nodes: Vec<Hash>) -> Result<Frontier, FrontierError> {
        if nodes.len() != size.count_ones() as usize {
            return Err(FrontierError {
                size,
                expected: size.count_ones(),
                found: nodes.len(),
            });
        }
        Ok(Frontier { size, nodes })
    }

    /// Rebuilds a frontier by appending stored leaf hashes in order.
    pub fn from_leaves<'a>(leaves: impl IntoIterator<Item = &'a Hash>) -> Frontier {
        let mut f = Frontier::new();
        for l in leaves {
            f.push(*l);
        }
        f
    }

    /// Number of leaves.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The perfect-subtree roots, largest first.
    pub fn nodes(&self) -> &[Hash] {
        &self.nodes
    }

    /// Appends one leaf hash.
    pub fn push(&mut self, leaf: Hash) {
        let mut h = leaf;
        let mut s = self.size;
        // Each trailing one bit of the old size is a perfect subtree of the same height as `h`:
        // merge them, as binary addition carries.
        while s & 1 == 1 {
            let left = self
                .nodes
                .pop()
                .expect("a set bit of size always has its subtree in the frontier");
            h = node_hash(&left, &h);
            s >>= 1;
        }
        self.nodes.push(h);
        self.size += 1;
    }

    /// The RFC 6962 Merkle tree hash of the leaves so far (SHA-256 of nothing when empty).
    pub fn root(&self) -> Hash {
        let mut it = self.nodes.iter().rev();
        match it.next() {
            None => sha256(b""),
            Some(last) => it.fold(*last, |acc, left| node_hash(left, &acc)),
        }
    }
}

/// RFC 6962 MTH over a list of leaf hashes.
pub fn root_of(leaves: &[Hash]) -> Hash {
    Frontier::from_leaves(leaves).root()
}

/// Read access to stored leaf hashes, for computing proofs. The service implements this over
/// its database; slices of hashes implement it in memory.
pub trait LeafSource {
    type Error;

    /// Hash of leaf `index`.
    fn leaf_hash(&self, index: u64) -> Result<Hash, Self::Error>;

    /// MTH of leaves `[start, end)` (`start < end`). Proof algorithms only ask for subtrees of
    /// the tree's own decomposition, so an implementation may answer from cached nodes.
    fn range_hash(&self, start: u64, end: u64) -> Result<Hash, Self::Error> {
        let mut f = Frontier::new();
        for i in start..end {
            f.push(self.leaf_hash(i)?);
        }
        Ok(f.root())
    }
}

impl LeafSource for [Hash] {
    type Error = Infallible;
    fn leaf_hash(&self, index: u64) -> Result<Hash, Infallible> {
        Ok(self[index as usize])
    }
    fn range_hash(&self, start: u64, end: u64) -> Result<Hash, Infallible> {
        Ok(root_of(&self[start as usize..end as usize]))
    }
}

impl LeafSource for Vec<Hash> {
    type Error = Infallible;
    fn leaf_hash(&self, index: u64) -> Result<Hash, Infallible> {
        self.as_slice().leaf_hash(index)
    }
    fn range_hash(&self, start: u64, end: u64) -> Result<Hash, Infallible> {
        self.as_slice().range_hash(start, end)
    }
}

/// Why a proof could not be produced.
#[derive(Debug, thiserror::Error)]
pub enum ProveError<E> {
    #[error("leaf index {index} is not below tree size {size}")]
    IndexOutOfRange { index: u64, size: u64 },
    #[error("old size {old} is larger than new size {new}")]
    SizesOutOfOrder { old: u64, new: u64 },
    #[error("reading leaf hashes: {0}")]
    Source(E),
}

/// RFC 6962 §2.1.1 PATH(index, D[0:size]): the audit path, from the leaf's sibling upwards.
pub fn inclusion_proof<S: LeafSource + ?Sized>(
    src: &S,
    index: u64,
    size: u64,
) -> Result<Vec<Hash>, ProveError<S::Error>> {
    if index >= size {
        return Err(ProveError::IndexOutOfRange { index, size });
    }
    let mut out = Vec::new();
    path(src, index, 0, size, &mut out).map_err(ProveError::Source)?;
    Ok(out)
}

fn path<S: LeafSource + ?Sized>(
    src: &S,
    m: u64,
    lo: u64,
    hi: u64,
    out: &mut Vec<Hash>,
) -> Result<(), S::Error> {
    if hi - lo <= 1 {
        return Ok(());
    }
    let k = split_point(hi - lo);
    if m < lo + k {
        path(src, m, lo, lo + k, out)?;
        out.push(src.range_hash(lo + k, hi)?);
    } else {
        path(src, m, lo + k, hi, out)?;
        out.push(src.range_hash(lo, lo + k)?);
    }
    Ok(())
}

/// RFC 6962 §2.1.2 PROOF(old, D[0:new]): proves the tree of `old` leaves is a prefix of the tree
/// of `new` leaves. Empty when `old` is 0 or equals `new`.
pub fn consistency_proof<S: LeafSource + ?Sized>(
    src: &S,
    old: u64,
    new: u64,
) -> Result<Vec<Hash>, ProveError<S::Error>> {
    if old > new {
        return Err(ProveError::SizesOutOfOrder { old, new });
    }
    let mut out = Vec::new();
    if old == 0 || old == new {
        return Ok(out);
    }
    subproof(src, old, 0, new, true, &mut out).map_err(ProveError::Source)?;
    Ok(out)
}

fn subproof<S: LeafSource + ?Sized>(
    src: &S,
    m: u64,
    lo: u64,
    hi: u64,
    whole_old_tree: bool,
    out: &mut Vec<Hash>,
) -> Result<(), S::Error> {
    let n = hi - lo;
    if m == n {
        if !whole_old_tree {
            out.push(src.range_hash(lo, hi)?);
        }
        return Ok(());
    }
    let k = split_point(n);
    if m <= k {
        subproof(src, m, lo, lo + k, whole_old_tree, out)?;
        out.push(src.range_hash(lo + k, hi)?);
    } else {
        subproof(src, m - k, lo + k, hi, false, out)?;
        out.push(src.range_hash(lo, lo + k)?);
    }
    Ok(())
}

/// Why a proof did not verify.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProofError {
    #[error("leaf index {index} is not below tree size {size}")]
    IndexOutOfRange { index: u64, size: u64 },
    #[error("proof has the wrong length for these sizes")]
    WrongLength,
    #[error("old size {old} is larger than new size {new}")]
    SizesOutOfOrder { old: u64, new: u64 },
    #[error("computed root does not match")]
    RootMismatch,
}

/// Root implied by an inclusion proof (RFC 9162 §2.1.3.2 steps 1–4).
pub fn root_from_inclusion_proof(
    leaf: &Hash,
    index: u64,
    size: u64,
    proof: &[Hash],
) -> Result<Hash, ProofError> {
    if index >= size {
        return Err(ProofError::IndexOutOfRange { index, size });
    }
    let (mut f, mut s) = (index, size - 1);
    let mut r = *leaf;
    for p in proof {
        if s == 0 {
            return Err(ProofError::WrongLength);
        }
        if f & 1 == 1 || f == s {
            r = node_hash(p, &r);
            while f & 1 == 0 && f != 0 {
                f >>= 1;
                s >>= 1;
            }
        } else {
            r = node_hash(&r, p);
        }
        f >>= 1;
        s >>= 1;
    }
    if s != 0 {
        return Err(ProofError::WrongLength);
    }
    Ok(r)
}

/// RFC 9162 §2.1.3.2: checks that `leaf` is at `index` in the tree of `size` leaves with `root`.
pub fn verify_inclusion(
    leaf: &Hash,
    index: u64,
    size: u64,
    proof: &[Hash],
    root: &Hash,
) -> Result<(), ProofError> {
    if root_from_inclusion_proof(leaf, index, size, proof)? == *root {
        Ok(())
    } else {
        Err(ProofError::RootMismatch)
    }
}

/// RFC 9162 §2.1.4.2: checks that the tree (`old`, `old_root`) is a prefix of (`new`, `new_root`).
pub fn verify_consistency(
    old: u64,
    new: u64,
    old_root: &Hash,
    new_root: &Hash,
    proof: &[Hash],
) -> Result<(), ProofError> {
    if old > new {
        return Err(ProofError::SizesOutOfOrder { old, new });
    }
    if old == new {
        if !proof.is_empty() {
            return Err(ProofError::WrongLength);
        }
        return if old_root == new_root {
            Ok(())
        } else {
            Err(ProofError::RootMismatch)
        };
    }
    if old == 0 {
        // Every tree extends the empty tree; there is nothing to prove.
        return if proof.is_empty() {
            Ok(())
        } else {
            Err(ProofError::WrongLength)
        };
    }
    if proof.is_empty() {
        return Err(ProofError::WrongLength);
    }
    let mut path: Vec<Hash> = Vec::with_capacity(proof.len() + 1);
    if old.is_power_of_two() {
        path.push(*old_root);
    }
    path.extend_from_slice(proof);
    let (mut f, mut s) = (old - 1, new - 1);
    while f & 1 == 1 {
        f >>= 1;
        s >>= 1;
    }
    let mut fr = path[0];
    let mut sr = path[0];
    for c in &path[1..] {
        if s == 0 {
            return Err(ProofError::WrongLength);
        }
        if f & 1 == 1 || f == s {
            fr = node_hash(c, &fr);
            sr = node_hash(c, &sr);
            while f & 1 == 0 && f != 0 {
                f >>= 1;
                s >>= 1;
            }
        } else {
            sr = node_hash(&sr, c);
        }
        f >>= 1;
        s >>= 1;
    }
    if s != 0 {
        return Err(ProofError::WrongLength);
    }
    if fr == *old_root && sr == *new_root {
        Ok(())
    } else {
        Err(ProofError::RootMismatch)
    }
}
