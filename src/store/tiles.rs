//! The Merkle tree of the audit log, stored as 256-wide tiles (the layout of C2SP
//! tlog-tiles): the tile of level `L` and index `N` holds the hashes of the nodes of height
//! `8L` numbered `256N … 256N+255` (level 0: the leaf hashes). A node of any height `h` is the
//! root of `2^(h mod 8)` consecutive hashes of one tile of level `h / 8`, so an inclusion or
//! consistency proof reads O(log n) tiles, whatever the size of the log.
//!
//! The writer keeps only the right edge in memory (the partial tile of each level, at most
//! 255 hashes each) and writes every tile a batch changed in the batch's own transaction, so
//! the stored tiles always match the stored entries.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

use diesel::prelude::*;
use pitboss_audit::hash::Hash;
use pitboss_audit::merkle::{root_of, LeafSource};

use super::schema::merkle_tiles;
use super::{DbConnection, StoreError};

/// Hashes per tile.
pub const WIDTH: usize = 256;
/// log2 of [`WIDTH`]: a tile spans this many levels of the tree.
pub const TILE_HEIGHT: u32 = 8;

/// One stored tile, as a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TileRow {
    pub level: u32,
    pub idx: u64,
    pub hashes: Vec<Hash>,
}

/// The right edge of the tree: the partial tile of each level.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tiles {
    size: u64,
    /// `edge[L]`: the hashes of level `L`'s rightmost, incomplete tile.
    edge: Vec<Vec<Hash>>,
}

impl Tiles {
    /// The edge of an empty tree.
    pub fn new() -> Tiles {
        Tiles::default()
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// Appends leaves; returns every tile that changed, as it is now (complete tiles once,
    /// the partial tile of each touched level last). Persist them with the entries.
    pub fn append(&mut self, leaves: impl IntoIterator<Item = Hash>) -> Vec<TileRow> {
        let mut changed: Vec<TileRow> = Vec::new();
        let mut touched: Vec<bool> = Vec::new();
        for leaf in leaves {
            let mut level = 0usize;
            let mut hash = leaf;
            // The count of level-`level` nodes before this one.
            let mut count = self.size;
            loop {
                if self.edge.len() <= level {
                    self.edge.push(Vec::with_capacity(WIDTH));
                }
                if touched.len() <= level {
                    touched.push(false);
                }
                self.edge[level].push(hash);
                touched[level] = true;
                if self.edge[level].len() < WIDTH {
                    break;
                }
                // The tile is complete: written once, and its root is the next level's entry.
                let full = std::mem::replace(&mut self.edge[level], Vec::with_capacity(WIDTH));
                hash = root_of(&full);
                changed.push(TileRow {
                    level: level as u32,
                    idx: count / WIDTH as u64,
                    hashes: full,
                });
                count /= WIDTH as u64;
                level += 1;
            }
            self.size += 1;
        }
        for (level, t) in touched.iter().enumerate() {
            if *t && !self.edge[level].is_empty() {
                let count = self.size >> (TILE_HEIGHT * level as u32);
                changed.push(TileRow {
                    level: level as u32,
                    idx: count / WIDTH as u64,
                    hashes: self.edge[level].clone(),
                });
            }
        }
        changed
    }

    /// The edge of a stored tree of `size` leaves: the partial tile of each level, read back.
    pub fn load(conn: &mut DbConnection, size: u64) -> Result<Tiles, StoreError> {
        let mut edge = Vec::new();
        let mut level = 0u32;
        loop {
            let count = size >> (TILE_HEIGHT * level);
            if count == 0 {
                break;
            }
            let partial = (count % WIDTH as u64) as usize;
            let mut hashes = Vec::with_capacity(WIDTH);
            if partial > 0 {
                let idx = count / WIDTH as u64;
                let row = read_tile(conn, level, idx)?.ok_or_else(|| {
                    StoreError::Corrupt(format!("tile {level}/{idx} of the Merkle tree is missing"))
                })?;
                if row.len() < partial {
                    return Err(StoreError::Corrupt(format!(
                        "tile {level}/{idx} holds {} hashes, the log needs {partial}",
                        row.len()
                    )));
                }
                hashes.extend_from_slice(&row[..partial]);
            }
            edge.push(hashes);
            level += 1;
        }
        Ok(Tiles { size, edge })
    }
}

fn encode(hashes: &[Hash]) -> Vec<u8> {
    let mut out = Vec::with_capacity(hashes.len() * 32);
    for h in hashes {
        out.extend_from_slice(&h.0);
    }
    out
}

fn decode(bytes: &[u8]) -> Result<Vec<Hash>, StoreError> {
    if !bytes.len().is_multiple_of(32) || bytes.len() > WIDTH * 32 {
        return Err(StoreError::Corrupt(format!(
            "a tile of {} bytes",
            bytes.len()
        )));
    }
    Ok(bytes
        .chunks_exact(32)
        .map(|c| {
            let mut h = [0u8; 32];
            h.copy_from_slice(c);
            Hash(h)
        })
        .collect())
}

/// The rows `(level, idx, hashes)` to store for tile rows in the order they were made: the
/// last of each tile only (a later row of a tile holds every hash of the earlier ones).
pub fn stored_rows<'a>(rows: impl IntoIterator<Item = &'a TileRow>) -> Vec<(i32, i64, Vec<u8>)> {
    let last: BTreeMap<(u32, u64), &TileRow> =
        rows.into_iter().map(|r| ((r.level, r.idx), r)).collect();
    last.values()
        .map(|r| (r.level as i32, r.idx as i64, encode(&r.hashes)))
        .collect()
}

/// Writes tiles by multi-row upserts (`INSERT … ON CONFLICT DO UPDATE`; on SQLite by statements
/// of fixed shapes, prepared once: `fixed_insert`); of several rows for one tile (batches
/// written in one transaction), the last is stored.
pub fn write_tiles<'a>(
    conn: &mut DbConnection,
    rows: impl IntoIterator<Item = &'a TileRow>,
) -> Result<(), diesel::result::Error> {
    let encoded = stored_rows(rows);
    let pg = match conn {
        DbConnection::Sqlite(s) => return super::fixed_insert::insert(s, &encoded),
        DbConnection::Pg(pg) => pg,
    };
    for chunk in encoded.chunks(super::ROWS_PER_INSERT) {
        let values: Vec<_> = chunk
            .iter()
            .map(|(level, idx, bytes)| {
                (
                    merkle_tiles::level.eq(*level),
                    merkle_tiles::idx.eq(*idx),
                    merkle_tiles::hashes.eq(&bytes[..]),
                )
            })
            .collect();
        diesel::insert_into(merkle_tiles::table)
            .values(values)
            .on_conflict((merkle_tiles::level, merkle_tiles::idx))
            .do_update()
            .set(merkle_tiles::hashes.eq(diesel::upsert::excluded(merkle_tiles::hashes)))
            .execute(pg)?;
    }
    Ok(())
}

/// A tile's row (level, index, hashes), as the fixed-shape insert writes it on SQLite: a tile
/// grows until it is full, so each write replaces the stored one.
impl super::fixed_insert::Row for (i32, i64, Vec<u8>) {
    type Id = merkle_tiles::table;
    const INSERT: &'static str = "INSERT INTO merkle_tiles (level, idx, hashes) VALUES ";
    const SUFFIX: &'static str = " ON CONFLICT (level, idx) DO UPDATE SET hashes = excluded.hashes";
    fn bind<'b>(
        &'b self,
        pass: &mut diesel::query_builder::AstPass<'_, 'b, diesel::sqlite::Sqlite>,
    ) -> diesel::QueryResult<()> {
        use diesel::sql_types::{BigInt, Binary, Integer};
        super::fixed_insert::bind_all!(
            pass,
            (Integer, &self.0),
            (BigInt, &self.1),
            (Binary, &self.2[..])
        )
    }
}

pub fn read_tile(
    conn: &mut DbConnection,
    level: u32,
    idx: u64,
) -> Result<Option<Vec<Hash>>, StoreError> {
    let row: Option<Vec<u8>> = merkle_tiles::table
        .filter(merkle_tiles::level.eq(level as i32))
        .filter(merkle_tiles::idx.eq(idx as i64))
        .select(merkle_tiles::hashes)
        .first(conn)
        .optional()?;
    row.map(|b| decode(&b)).transpose()
}

/// Whatever reads tiles: the database, or a map in tests.
pub trait TileReader {
    fn tile(&self, level: u32, idx: u64) -> Result<Option<Vec<Hash>>, StoreError>;
}

/// Tiles read from a database connection.
pub struct DbTiles<'c>(pub RefCell<&'c mut DbConnection>);

impl TileReader for DbTiles<'_> {
    fn tile(&self, level: u32, idx: u64) -> Result<Option<Vec<Hash>>, StoreError> {
        read_tile(&mut self.0.borrow_mut(), level, idx)
    }
}

impl TileReader for HashMap<(u32, u64), Vec<Hash>> {
    fn tile(&self, level: u32, idx: u64) -> Result<Option<Vec<Hash>>, StoreError> {
        Ok(self.get(&(level, idx)).cloned())
    }
}

/// Leaf and subtree hashes for the audit crate's proof functions, read from tiles (each tile
/// read once per proof).
pub struct TileSource<R: TileReader> {
    reader: R,
    cache: RefCell<HashMap<(u32, u64), Vec<Hash>>>,
}

impl<'c> TileSource<DbTiles<'c>> {
    /// Tiles read through one database connection, for one proof.
    pub fn over(conn: &'c mut DbConnection) -> TileSource<DbTiles<'c>> {
        TileSource::new(DbTiles(RefCell::new(conn)))
    }
}

impl<R: TileReader> TileSource<R> {
    pub fn new(reader: R) -> TileSource<R> {
        TileSource {
            reader,
            cache: RefCell::new(HashMap::new()),
        }
    }

    fn entries(&self, level: u32, first: u64, count: u64) -> Result<Vec<Hash>, StoreError> {
        let idx = first / WIDTH as u64;
        let off = (first % WIDTH as u64) as usize;
        let mut cache = self.cache.borrow_mut();
        if let std::collections::hash_map::Entry::Vacant(e) = cache.entry((level, idx)) {
            let t = self.reader.tile(level, idx)?.ok_or_else(|| {
                StoreError::Corrupt(format!("tile {level}/{idx} of the Merkle tree is missing"))
            })?;
            e.insert(t);
        }
        let t = &cache[&(level, idx)];
        t.get(off..off + count as usize)
            .map(<[Hash]>::to_vec)
            .ok_or_else(|| {
                StoreError::Corrupt(format!(
                    "tile {level}/{idx} holds {} hashes, a proof needs {}",
                    t.len(),
                    off + count as usize
                ))
            })
    }

    /// The node of height `h` whose leftmost leaf is `h`-aligned `first`.
    fn node(&self, h: u32, first_leaf: u64) -> Result<Hash, StoreError> {
        let level = h / TILE_HEIGHT;
        let r = h % TILE_HEIGHT;
        let first = first_leaf >> (TILE_HEIGHT * level);
        let hashes = self.entries(level, first, 1 << r)?;
        Ok(root_of(&hashes))
    }

    /// RFC 6962 MTH of leaves `[a, b)`: perfect aligned subtrees from tiles, the rest split as
    /// the RFC splits.
    fn mth(&self, a: u64, b: u64) -> Result<Hash, StoreError> {
        let n = b - a;
        if n.is_power_of_two() && a.is_multiple_of(n) {
            return self.node(n.trailing_zeros(), a);
        }
        let k = 1u64 << (63 - (n - 1).leading_zeros());
        let left = self.mth(a, a + k)?;
        let right = self.mth(a + k, b)?;
        Ok(pitboss_audit::hash::node_hash(&left, &right))
    }
}

impl<R: TileReader> LeafSource for TileSource<R> {
    type Error = StoreError;

    fn leaf_hash(&self, index: u64) -> Result<Hash, StoreError> {
        Ok(self.entries(0, index, 1)?[0])
    }

    fn range_hash(&self, start: u64, end: u64) -> Result<Hash, StoreError> {
        self.mth(start, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pitboss_audit::merkle::{consistency_proof, inclusion_proof};

    /// Rows for one tile written together (batches sharing a transaction): the last is
    /// stored, in one statement, over a row already stored.
    #[test]
    fn of_several_rows_for_a_tile_the_last_is_stored() {
        let dir = tempfile::tempdir().expect("temp dir");
        let url =
            super::super::DatabaseUrl::Sqlite(dir.path().join("t.sqlite").display().to_string());
        super::super::migrate(&url).expect("migrate");
        let mut c = super::super::connect(&url).expect("connect");
        let row = |level, idx, n: u64| TileRow {
            level,
            idx,
            hashes: (0..n).map(leaf).collect(),
        };
        write_tiles(&mut c, &[row(0, 0, 1), row(0, 1, 1)]).expect("first");
        write_tiles(&mut c, &[row(0, 1, 2), row(1, 0, 1), row(0, 1, 3)]).expect("second");
        assert_eq!(read_tile(&mut c, 0, 0).unwrap(), Some(vec![leaf(0)]));
        assert_eq!(
            read_tile(&mut c, 0, 1).unwrap(),
            Some((0..3).map(leaf).collect())
        );
        assert_eq!(read_tile(&mut c, 1, 0).unwrap(), Some(vec![leaf(0)]));
        write_tiles(&mut c, &[]).expect("nothing");
    }

    fn leaf(i: u64) -> Hash {
        pitboss_audit::leaf_hash(&i.to_le_bytes())
    }

    /// Builds tiles by appending in uneven batches, as the writer does, and keeps every row
    /// written (later writes of a tile replace earlier ones).
    type Store = HashMap<(u32, u64), Vec<Hash>>;

    fn build(n: u64) -> (Tiles, Store, Vec<Hash>) {
        let leaves: Vec<Hash> = (0..n).map(leaf).collect();
        let mut t = Tiles::new();
        let mut store = HashMap::new();
        let mut i = 0usize;
        let mut step = 1usize;
        while i < leaves.len() {
            let end = (i + step).min(leaves.len());
            for r in t.append(leaves[i..end].iter().copied()) {
                store.insert((r.level, r.idx), r.hashes);
            }
            i = end;
            step = step % 700 + 37;
        }
        (t, store, leaves)
    }

    #[test]
    fn proofs_from_tiles_equal_proofs_from_every_leaf() {
        for n in [1u64, 2, 3, 255, 256, 257, 511, 512, 513, 1000] {
            let (t, store, leaves) = build(n);
            assert_eq!(t.size(), n);
            let src = TileSource::new(store);
            for i in [0, 1, n / 3, n / 2, n.saturating_sub(257), n - 1]
                .into_iter()
                .filter(|&i| i < n)
            {
                for size in [i + 1, n, (i + 1 + n) / 2] {
                    assert_eq!(
                        inclusion_proof(&src, i, size).expect("from tiles"),
                        inclusion_proof(&leaves[..], i, size).expect("from leaves"),
                        "n {n}, leaf {i}, size {size}"
                    );
                }
            }
            for old in [1, n / 2, n.saturating_sub(1), 256]
                .into_iter()
                .filter(|&o| o > 0 && o <= n)
            {
                assert_eq!(
                    consistency_proof(&src, old, n).expect("from tiles"),
                    consistency_proof(&leaves[..], old, n).expect("from leaves"),
                    "n {n}, old {old}"
                );
            }
            assert_eq!(src.range_hash(0, n).expect("root"), root_of(&leaves));
        }
    }

    /// Past 65,536 leaves the proofs read level-2 tiles; they verify against the roots the
    /// audit crate computes from every leaf.
    #[test]
    fn proofs_through_level_two_tiles_verify() {
        use pitboss_audit::merkle::{verify_consistency, verify_inclusion};
        let n = 65_537 + 300;
        let (_, store, leaves) = build(n);
        let src = TileSource::new(store);
        let root = root_of(&leaves);
        for i in [0, 65_535, 65_536, n - 1] {
            let p = inclusion_proof(&src, i, n).expect("proof");
            verify_inclusion(&leaves[i as usize], i, n, &p, &root).expect("verifies");
        }
        for old in [256, 65_536, 65_537] {
            let p = consistency_proof(&src, old, n).expect("proof");
            verify_consistency(old, n, &root_of(&leaves[..old as usize]), &root, &p)
                .expect("verifies");
        }
    }

    #[test]
    fn the_edge_read_back_continues_the_tree() {
        let (t, store, _) = build(70_000);
        // (Built without proofs: cheap.)
        // What `load` reads: the partial tile of each level.
        let mut edge = Vec::new();
        let mut level = 0u32;
        while 70_000u64 >> (TILE_HEIGHT * level) > 0 {
            let count = 70_000u64 >> (TILE_HEIGHT * level);
            let partial = (count % WIDTH as u64) as usize;
            let hashes = if partial > 0 {
                store[&(level, count / WIDTH as u64)][..partial].to_vec()
            } else {
                Vec::new()
            };
            edge.push(hashes);
            level += 1;
        }
        assert_eq!(Tiles { size: 70_000, edge }, t);
    }
}
