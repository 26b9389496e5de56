//! The archive header: magic bytes, format version, the codec and the
//! hashes of the model and opening table it needs, checked by a CRC-32.

use super::*;

/// The format version, move codec and model of an archive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The format version the archive was written in.
    pub version: u8,
    /// The move codec's name.
    pub codec: String,
    /// The hash of the codec's model (tables, parameters).
    pub model_hash: u64,
    /// The hash of the opening tables the archive needs: lichess's table,
    /// the priors that code each game's opening, the `fast` weights that
    /// rank engine lines and the engine fields' prior.
    pub openings_hash: u64,
}

impl Header {
    pub(super) fn to_bytes(&self) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.push(self.version);
        out.push(self.codec.len() as u8);
        out.extend_from_slice(self.codec.as_bytes());
        out.extend_from_slice(&self.model_hash.to_le_bytes());
        out.extend_from_slice(&self.openings_hash.to_le_bytes());
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    pub(super) fn read(r: &mut impl Read) -> Result<(Header, u64), ArchiveError> {
        let mut magic = [0u8; 8];
        read_exact_or(r, &mut magic, ArchiveError::NotAnArchive)?;
        if &magic == POSITIONS_MAGIC {
            return Err(ArchiveError::NotGames("an archive of positions"));
        }
        if &magic == TRAINING_MAGIC {
            return Err(ArchiveError::NotGames("an archive of engine training data"));
        }
        if &magic != MAGIC {
            return Err(ArchiveError::NotAnArchive);
        }
        let mut head = [0u8; 2];
        read_exact_or(r, &mut head, ArchiveError::Header("truncated".into()))?;
        if head[0] != FORMAT_VERSION {
            return Err(ArchiveError::UnsupportedVersion(head[0]));
        }
        let hashes = 16;
        let mut rest = vec![0u8; usize::from(head[1]) + hashes + 4];
        read_exact_or(r, &mut rest, ArchiveError::Header("truncated".into()))?;
        let name_len = usize::from(head[1]);
        let mut all = magic.to_vec();
        all.extend_from_slice(&head);
        all.extend_from_slice(&rest[..name_len + hashes]);
        let crc = crate::le::u32_at(&rest, name_len + hashes);
        if crc32fast::hash(&all) != crc {
            return Err(ArchiveError::Header("checksum mismatch".into()));
        }
        let codec = String::from_utf8(rest[..name_len].to_vec())
            .map_err(|_| ArchiveError::Header("codec name is not utf-8".into()))?;
        let model_hash = crate::le::u64_at(&rest, name_len);
        let openings_hash = crate::le::u64_at(&rest, name_len + 8);
        Ok((
            Header {
                version: head[0],
                codec,
                model_hash,
                openings_hash,
            },
            all.len() as u64 + 4,
        ))
    }

    /// The codec this header names, if this library has it with the same
    /// model.
    ///
    /// # Errors
    ///
    /// [`ArchiveError::CodecMismatch`] naming what is missing.
    pub fn codec(&self) -> Result<Box<dyn GameCodec>, ArchiveError> {
        let have = pinned_openings_hash();
        if self.openings_hash != have {
            return Err(ArchiveError::OpeningTableMismatch {
                hash: self.openings_hash,
                have,
            });
        }
        let mismatch = |have: String| ArchiveError::CodecMismatch {
            name: self.codec.clone(),
            hash: self.model_hash,
            have,
        };
        match crate::game::codec_with_hash(&self.codec, self.model_hash) {
            Ok(Some(codec)) => Ok(codec),
            Ok(None) => Err(mismatch(format!(
                "; this chesspack has model {:016x}",
                crate::game::codec(&self.codec).map_or(0, |c| c.model_hash())
            ))),
            Err(_) => Err(mismatch(", which this chesspack does not have".into())),
        }
    }
}

pub(super) fn read_exact_or(
    r: &mut impl Read,
    buf: &mut [u8],
    err: ArchiveError,
) -> Result<(), ArchiveError> {
    match r.read_exact(buf) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Err(err),
        Err(e) => Err(e.into()),
    }
}
