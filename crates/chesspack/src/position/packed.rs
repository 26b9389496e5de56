use shakmaty::{CastlingMode, Chess, EnPassantMode, FromSetup, Position, packed::PackedSetup};

use super::PositionCodec;
use crate::{Bits, Error};

/// `packed`: shakmaty's `PackedSetup`, lichess's binary FEN — a 64-bit
/// occupancy mask, then a 4-bit code per occupied square (castling rooks,
/// the en-passant pawn and a black king to move have codes of their own);
/// the reference baseline. Clocks are not stored (they would be trailing
/// bytes), so every stream is whole bytes: 8 + 4·pieces/8 rounded up.
///
/// ```
/// use chesspack::position::{Packed, PositionCodec};
/// use shakmaty::Chess;
///
/// assert_eq!(Packed.encode(&Chess::default()).unwrap().len(), 64 + 32 * 4);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Packed;

impl PositionCodec for Packed {
    fn name(&self) -> &'static str {
        "packed"
    }

    fn description(&self) -> &'static str {
        "shakmaty's PackedSetup (lichess binary FEN), the reference baseline"
    }

    fn encode(&self, pos: &Chess) -> Result<Bits, Error> {
        let setup = pos.to_setup(EnPassantMode::Legal);
        let packed = PackedSetup::pack_standard_normalized(&setup)
            .map_err(|e| Error::Unrepresentable(e.to_string()))?;
        Ok(Bits::from_whole_bytes(packed.as_bytes().to_vec()))
    }

    fn decode(&self, bits: &Bits) -> Result<Chess, Error> {
        if !bits.len().is_multiple_of(8) {
            return Err(Error::InvalidData("packed setups are whole bytes".into()));
        }
        let packed = PackedSetup::try_from_bytes(bits.as_bytes())
            .map_err(|_| Error::InvalidData("packed setup too long".into()))?;
        let mut setup = packed
            .unpack_standard()
            .map_err(|e| Error::InvalidData(e.to_string()))?;
        setup.halfmoves = 0;
        setup.fullmoves = std::num::NonZeroU32::MIN;
        let ep = setup.ep_square;
        let pos = Chess::from_setup(setup, CastlingMode::Chess960)
            .map_err(|e| Error::InvalidPosition(e.to_string()))?;
        if ep.is_some() && pos.ep_square(EnPassantMode::Legal) != ep {
            return Err(Error::InvalidData(
                "en-passant square without a legal capture".into(),
            ));
        }
        Ok(pos)
    }
}
