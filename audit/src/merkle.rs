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

/// The leaf ranges `[start, end)` whose tree hashes make up `PROOF(old, D[0:new])`, in proof
/// order. The ranges are disjoint, so a reader of the leaves in order can hash them in one pass
/// ([`RangeHasher`]) without holding the leaves.
pub fn consistency_proof_ranges(
    old: u64,
    new: u64,
) -> Result<Vec<(u64, u64)>, ProveError<Infallible>> {
    struct Recorder(std::cell::RefCell<Vec<(u64, u64)>>);
    impl LeafSource for Recorder {
        type Error = Infallible;
        fn leaf_hash(&self, index: u64) -> Result<Hash, Infallible> {
            self.0.borrow_mut().push((index, index + 1));
            Ok(Hash::ZERO)
        }
        fn range_hash(&self, start: u64, end: u64) -> Result<Hash, Infallible> {
            self.0.borrow_mut().push((start, end));
            Ok(Hash::ZERO)
        }
    }
    let rec = Recorder(std::cell::RefCell::new(Vec::new()));
    consistency_proof(&rec, old, new)?;
    Ok(rec.0.into_inner())
}

/// Hashes a list of disjoint leaf ranges from leaves read once, in order: O(log n) memory per
/// range being hashed, whatever the number of leaves.
#[derive(Debug, Clone)]
pub struct RangeHasher {
    ranges: Vec<(u64, u64)>,
    /// Indexes into `ranges`, by start.
    order: Vec<usize>,
    next: usize,
    current: Frontier,
    out: Vec<Option<Hash>>,
}

impl RangeHasher {
    /// `ranges` must be disjoint and non-empty (as [`consistency_proof_ranges`] returns them).
    pub fn new(ranges: Vec<(u64, u64)>) -> RangeHasher {
        let mut order: Vec<usize> = (0..ranges.len()).collect();
        order.sort_by_key(|&i| ranges[i].0);
        RangeHasher {
            out: vec![None; ranges.len()],
            ranges,
            order,
            next: 0,
            current: Frontier::new(),
        }
    }

    /// Takes leaf `index` (indexes must come in order from 0).
    pub fn push(&mut self, index: u64, leaf: Hash) {
        let Some(&i) = self.order.get(self.next) else {
            return;
        };
        let (start, end) = self.ranges[i];
        if index < start || index >= end {
            return;
        }
        self.current.push(leaf);
        if index + 1 == end {
            self.out[i] = Some(self.current.root());
            self.current = Frontier::new();
            self.next += 1;
        }
    }

    /// The hashes, in the order of the ranges given; `None` if leaves were missing.
    pub fn finish(self) -> Option<Vec<Hash>> {
        self.out.into_iter().collect()
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::leaf_hash;

    /// The leaves of the RFC 6962 reference test suite (CT `merkle_tree_test.cc`, reused by
    /// transparency-dev/merkle `testonly`).
    fn vector_leaves() -> Vec<Vec<u8>> {
        vec![
            vec![],
            vec![0x00],
            vec![0x10],
            vec![0x20, 0x21],
            vec![0x30, 0x31],
            vec![0x40, 0x41, 0x42, 0x43],
            vec![0x50, 0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57],
            (0x60..=0x6f).collect(),
        ]
    }

    fn h(s: &str) -> Hash {
        Hash::from_hex(s).expect("test vector is hex")
    }

    fn leaf_hashes() -> Vec<Hash> {
        vector_leaves().iter().map(|l| leaf_hash(l)).collect()
    }

    /// RFC 6962 §2.1 MTH written as the recursive definition, independent of [`Frontier`].
    fn naive_mth(leaves: &[Hash]) -> Hash {
        match leaves.len() {
            0 => sha256(b""),
            1 => leaves[0],
            n => {
                let k = (1usize..)
                    .map(|i| 1usize << i)
                    .take_while(|&p| p < n)
                    .last()
                    .unwrap_or(1);
                node_hash(&naive_mth(&leaves[..k]), &naive_mth(&leaves[k..]))
            }
        }
    }

    /// RFC 6962 §2.1.1 PATH, recursively over slices.
    fn naive_path(m: usize, d: &[Hash]) -> Vec<Hash> {
        let n = d.len();
        if n <= 1 {
            return vec![];
        }
        let k = (1usize..)
            .map(|i| 1usize << i)
            .take_while(|&p| p < n)
            .last()
            .unwrap_or(1);
        if m < k {
            let mut p = naive_path(m, &d[..k]);
            p.push(naive_mth(&d[k..]));
            p
        } else {
            let mut p = naive_path(m - k, &d[k..]);
            p.push(naive_mth(&d[..k]));
            p
        }
    }

    /// RFC 6962 §2.1.2 SUBPROOF, recursively over slices.
    fn naive_subproof(m: usize, d: &[Hash], b: bool) -> Vec<Hash> {
        let n = d.len();
        if m == n {
            return if b { vec![] } else { vec![naive_mth(d)] };
        }
        let k = (1usize..)
            .map(|i| 1usize << i)
            .take_while(|&p| p < n)
            .last()
            .unwrap_or(1);
        if m <= k {
            let mut p = naive_subproof(m, &d[..k], b);
            p.push(naive_mth(&d[k..]));
            p
        } else {
            let mut p = naive_subproof(m - k, &d[k..], false);
            p.push(naive_mth(&d[..k]));
            p
        }
    }

    #[test]
    fn leaf_hashes_match_published_vectors() {
        let expected = [
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "0298d122906dcfc10892cb53a73992fc5b9f493ea4c9badb27b791b4127a7fe7",
            "07506a85fd9dd2f120eb694f86011e5bb4662e5c415a62917033d4a9624487e7",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "4271a26be0d8a84f0bd54c8c302e7cb3a3b5d1fa6780a40bcce2873477dab658",
            "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
            "46f6ffadd3d06a09ff3c5860d2755c8b9819db7df44251788c7d8e3180de8eb1",
        ];
        assert_eq!(leaf_hashes(), expected.map(h).to_vec());
    }

    #[test]
    fn roots_of_sizes_0_to_8_match_published_vectors() {
        let expected = [
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
            "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
            "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
            "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
            "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
            "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
        ];
        let leaves = leaf_hashes();
        for (size, want) in expected.iter().enumerate() {
            assert_eq!(root_of(&leaves[..size]), h(want), "size {size}");
            assert_eq!(naive_mth(&leaves[..size]), h(want), "naive, size {size}");
        }
    }

    #[test]
    fn inclusion_proofs_match_published_vectors() {
        let leaves = leaf_hashes();
        let cases: &[(u64, u64, &[&str])] = &[
            (0, 1, &[]),
            (
                0,
                8,
                &[
                    "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
                    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                    "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
                ],
            ),
            (
                5,
                8,
                &[
                    "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
                    "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
                    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
                ],
            ),
            (
                2,
                3,
                &["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"],
            ),
            (
                1,
                5,
                &[
                    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
                    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                    "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
                ],
            ),
        ];
        for (index, size, path) in cases {
            let want: Vec<Hash> = path.iter().map(|s| h(s)).collect();
            let got = inclusion_proof(&leaves, *index, *size).expect("in range");
            assert_eq!(got, want, "leaf {index} size {size}");
            let root = root_of(&leaves[..*size as usize]);
            verify_inclusion(&leaves[*index as usize], *index, *size, &want, &root)
                .expect("published proof verifies");
        }
    }

    #[test]
    fn consistency_proofs_match_published_vectors() {
        let leaves = leaf_hashes();
        let cases: &[(u64, u64, &[&str])] = &[
            (1, 1, &[]),
            (
                1,
                8,
                &[
                    "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
                    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                    "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
                ],
            ),
            (
                6,
                8,
                &[
                    "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
                    "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
                    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
                ],
            ),
            (
                2,
                5,
                &[
                    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                    "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
                ],
            ),
        ];
        for (old, new, path) in cases {
            let want: Vec<Hash> = path.iter().map(|s| h(s)).collect();
            let got = consistency_proof(&leaves, *old, *new).expect("in order");
            assert_eq!(got, want, "{old} -> {new}");
            let r1 = root_of(&leaves[..*old as usize]);
            let r2 = root_of(&leaves[..*new as usize]);
            verify_consistency(*old, *new, &r1, &r2, &want).expect("published proof verifies");
        }
    }

    fn many_leaves(n: usize) -> Vec<Hash> {
        (0..n)
            .map(|i| leaf_hash(format!("leaf {i}").as_bytes()))
            .collect()
    }

    #[test]
    fn frontier_root_equals_recursive_mth_for_every_size_up_to_130() {
        let leaves = many_leaves(130);
        let mut f = Frontier::new();
        assert_eq!(f.root(), naive_mth(&[]));
        for (i, l) in leaves.iter().enumerate() {
            f.push(*l);
            assert_eq!(f.root(), naive_mth(&leaves[..=i]), "size {}", i + 1);
            assert_eq!(f.nodes().len(), (i + 1).count_ones() as usize);
        }
    }

    #[test]
    fn every_inclusion_proof_equals_recursive_path_and_verifies() {
        let leaves = many_leaves(40);
        for size in 1..=40u64 {
            let root = root_of(&leaves[..size as usize]);
            for index in 0..size {
                let p = inclusion_proof(&leaves, index, size).expect("in range");
                assert_eq!(p, naive_path(index as usize, &leaves[..size as usize]));
                verify_inclusion(&leaves[index as usize], index, size, &p, &root)
                    .expect("own proof verifies");
                // A proof for another leaf, another index or a shortened path must fail.
                let other = leaf_hash(b"not in the tree");
                assert!(verify_inclusion(&other, index, size, &p, &root).is_err());
                if size > 1 {
                    assert!(verify_inclusion(
                        &leaves[index as usize],
                        (index + 1) % size,
                        size,
                        &p,
                        &root
                    )
                    .is_err());
                    assert!(verify_inclusion(
                        &leaves[index as usize],
                        index,
                        size,
                        &p[..p.len() - 1],
                        &root
                    )
                    .is_err());
                }
            }
        }
    }

    #[test]
    fn every_consistency_proof_equals_recursive_subproof_and_verifies() {
        let leaves = many_leaves(40);
        for new in 1..=40u64 {
            let r2 = root_of(&leaves[..new as usize]);
            for old in 1..=new {
                let r1 = root_of(&leaves[..old as usize]);
                let p = consistency_proof(&leaves, old, new).expect("in order");
                let naive = if old == new {
                    vec![]
                } else {
                    naive_subproof(old as usize, &leaves[..new as usize], true)
                };
                assert_eq!(p, naive, "{old} -> {new}");
                verify_consistency(old, new, &r1, &r2, &p).expect("own proof verifies");
                if old < new {
                    let wrong = leaf_hash(b"forged");
                    assert!(verify_consistency(old, new, &wrong, &r2, &p).is_err());
                    assert!(verify_consistency(old, new, &r1, &wrong, &p).is_err());
                }
            }
        }
    }

    #[test]
    fn roots_and_proofs_agree_with_the_ct_merkle_crate() {
        use ct_merkle::mem_backed_tree::MemoryBackedTree;
        let mut tree = MemoryBackedTree::<sha2::Sha256, Vec<u8>>::new();
        let mut ours: Vec<Hash> = Vec::new();
        for i in 0..33u32 {
            let data = format!("entry {i}").into_bytes();
            ours.push(leaf_hash(&data));
            tree.push(data);
            let size = ours.len() as u64;
            assert_eq!(tree.root().as_bytes().as_slice(), &root_of(&ours).0[..]);
            for idx in 0..size {
                let theirs = tree.prove_inclusion(idx as usize);
                let mine: Vec<u8> = inclusion_proof(&ours, idx, size)
                    .expect("in range")
                    .iter()
                    .flat_map(|h| h.0)
                    .collect();
                assert_eq!(theirs.as_bytes(), &mine[..], "inclusion {idx} in {size}");
            }
            for old in 1..size {
                let theirs = tree.prove_consistency((size - old) as usize);
                let mine: Vec<u8> = consistency_proof(&ours, old, size)
                    .expect("in order")
                    .iter()
                    .flat_map(|h| h.0)
                    .collect();
                assert_eq!(theirs.as_bytes(), &mine[..], "consistency {old} -> {size}");
            }
        }
    }

    #[test]
    fn frontier_refuses_parts_that_do_not_fit_its_size() {
        assert!(Frontier::from_parts(3, vec![Hash::ZERO]).is_err());
        assert!(Frontier::from_parts(3, vec![Hash::ZERO, Hash::ZERO]).is_ok());
        let json = r#"{"size":4,"nodes":[]}"#;
        assert!(serde_json::from_str::<Frontier>(json).is_err());
    }
}
