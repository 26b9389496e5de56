//! Game codecs: the moves of one game, from a known start position, to bits
//! and back.
//!
//! The start position (standard, FEN or Chess960) is not part of the stream:
//! the caller keeps it (a PGN header does). Streams are decoded with their
//! exact bit length known, as a [`Bits`] carries it.

pub mod engine_codec;
mod index;
mod model_codec;
mod radix;
mod squares;

mod boxed {
    /// A boxed copy of a codec: what [`super::GameCodec::in_context`] gives
    /// for codecs that ignore the context. Every `Clone` codec has it.
    pub trait Boxed {
        /// A boxed copy of this codec.
        fn boxed(&self) -> Box<dyn super::GameCodec>;
    }

    impl<T: super::GameCodec + Clone + 'static> Boxed for T {
        fn boxed(&self) -> Box<dyn super::GameCodec> {
            Box::new(self.clone())
        }
    }
}

pub use engine_codec::EngineCodec;
pub use index::Index;
pub use model_codec::ModelCodec;
pub use radix::Radix;
pub use squares::Squares;

use shakmaty::{Chess, Move, Position, san::San, uci::UciMove};

use crate::{Bits, Error};

/// The most plies a decoder accepts from a ply count in a stream, so that
/// garbage cannot make it loop for long. Far above the longest legal game
/// under the 75-move rule (about 17,700 plies).
pub const MAX_PLIES: u64 = 20_000;

/// What one ply cost, for `chesspack explain`.
#[derive(Clone, Debug, PartialEq)]
pub struct PlyCost {
    /// The move in SAN.
    pub san: String,
    /// The number of legal moves in the position.
    pub legal: usize,
    /// The move's index or rank among them (0 is first), where the codec
    /// numbers moves.
    pub rank: Option<usize>,
    /// Bits spent on the move (fractional for codecs that code several moves
    /// as one number).
    pub bits: f64,
}

/// A codec for the moves of a game.
///
/// ```
/// use chesspack::game::{GameCodec, Index};
/// use shakmaty::{Chess, Position, san::San};
///
/// let start = Chess::default();
/// let mut pos = start.clone();
/// let mut moves = Vec::new();
/// for san in ["e4", "e5", "Nf3"] {
///     let m = san.parse::<San>().unwrap().to_move(&pos).unwrap();
///     pos.play_unchecked(m);
///     moves.push(m);
/// }
/// let bits = Index.encode(&start, &moves).unwrap();
/// assert_eq!(Index.decode(&start, &bits).unwrap(), moves);
/// ```
pub trait GameCodec: Send + Sync + boxed::Boxed {
    /// The codec's name, as the CLI takes it.
    fn name(&self) -> &'static str;
    /// One line saying what the codec does.
    fn description(&self) -> &'static str;
    /// Encodes `moves` played from `start`.
    ///
    /// # Errors
    ///
    /// [`Error::IllegalMove`] when a move is not legal where it is played.
    fn encode(&self, start: &Chess, moves: &[Move]) -> Result<Bits, Error>;
    /// Decodes moves played from `start`.
    ///
    /// # Errors
    ///
    /// Any error but a panic on data that is not a stream of this codec.
    fn decode(&self, start: &Chess, bits: &Bits) -> Result<Vec<Move>, Error>;
    /// What each ply costs.
    ///
    /// # Errors
    ///
    /// [`Error::IllegalMove`] when a move is not legal where it is played.
    fn explain(&self, start: &Chess, moves: &[Move]) -> Result<Vec<PlyCost>, Error>;
    /// Encodes `moves` for a reader that knows how many there are (the
    /// archive does), so that no end marker is needed. By default the same
    /// as [`GameCodec::encode`].
    ///
    /// # Errors
    ///
    /// As [`GameCodec::encode`].
    fn encode_counted(&self, start: &Chess, moves: &[Move]) -> Result<Bits, Error> {
        self.encode(start, moves)
    }
    /// Decodes `plies` moves written by [`GameCodec::encode_counted`].
    ///
    /// # Errors
    ///
    /// Any error but a panic on data that is not such a stream, and an
    /// error when the stream holds another number of moves.
    fn decode_counted(&self, start: &Chess, bits: &Bits, plies: usize) -> Result<Vec<Move>, Error> {
        let moves = self.decode(start, bits)?;
        if moves.len() != plies {
            return Err(Error::InvalidData(format!(
                "{} moves where {plies} were expected",
                moves.len()
            )));
        }
        Ok(moves)
    }
    /// The engine codec this is (`engine-huffman`, `engine-arith`: its
    /// coding and parameters), `None` for the others.
    ///
    /// ```
    /// let codec = chesspack::game::codec("engine-arith").unwrap();
    /// assert!(codec.as_engine().is_some());
    /// assert!(chesspack::game::codec("model").unwrap().as_engine().is_none());
    /// ```
    fn as_engine(&self) -> Option<&EngineCodec> {
        None
    }
    /// The first moves of a stream that [`GameCodec::decode`] reads
    /// (`counted` is `None`), or that [`GameCodec::decode_counted`] reads
    /// with `counted` moves: before each move, `more` is asked with the
    /// moves so far whether to go on, and the moves end where it says no
    /// (or where the game does). By default the whole stream is decoded and
    /// cut; `model` stops early, which is what it is for: the opening
    /// table's walk stops as soon as no later move can change the opening.
    ///
    /// # Errors
    ///
    /// As [`GameCodec::decode`] (a codec that stops early need not check
    /// the rest of the stream).
    fn decode_prefix(
        &self,
        start: &Chess,
        bits: &Bits,
        counted: Option<usize>,
        more: &mut dyn FnMut(&[Move]) -> bool,
    ) -> Result<Vec<Move>, Error> {
        let mut moves = match counted {
            None => self.decode(start, bits)?,
            Some(n) => self.decode_counted(start, bits, n)?,
        };
        let end = (0..=moves.len())
            .find(|&k| k == moves.len() || !more(&moves[..k]))
            .unwrap_or(moves.len());
        moves.truncate(end);
        Ok(moves)
    }
    /// A hash of everything besides the name that decides the codec's bits
    /// (tables, models, parameters), written into archives so that a
    /// decoder with a different model refuses them. 0 for codecs without
    /// one.
    fn model_hash(&self) -> u64 {
        0
    }
    /// Whether [`PlyCost::rank`] is a model's order of preference (0: the
    /// model's first choice), so that hit rates mean something.
    fn ranks_by_preference(&self) -> bool {
        false
    }
    /// This codec for the moves of a game played in `context` (ratings,
    /// time control, clocks): the codec whose model reads it (`model`) set
    /// to it, and every other codec as it is (it codes every game alike).
    /// A stream coded in a context decodes only in the same context.
    ///
    /// ```
    /// use chesspack::{game, pgn::GameReader};
    ///
    /// let game = GameReader::new(&b"[WhiteElo \"2400\"]\n\n1. e4 e5 2. Nf3 *\n"[..])
    ///     .next()
    ///     .unwrap()
    ///     .unwrap();
    /// for codec in game::codecs() {
    ///     let codec = codec.in_context(&game.context());
    ///     let bits = codec.encode(&game.start, &game.moves).unwrap();
    ///     assert_eq!(codec.decode(&game.start, &bits).unwrap(), game.moves);
    /// }
    /// ```
    fn in_context(&self, context: &crate::model::GameContext) -> Box<dyn GameCodec> {
        let _ = context;
        self.boxed()
    }
    /// This codec for a game's mainline from the standard start that
    /// reaches a position of opening `label` of `table`, one of the
    /// library's opening tables (as archives store it before the moves): until it has, moves that lead there are likelier. `None`
    /// for codecs that cannot (all but `model` and `fast`) and for a label
    /// the table does not have.
    fn aimed_at(
        &self,
        table: &'static crate::opening::OpeningTable,
        label: u32,
    ) -> Option<Box<dyn GameCodec>> {
        let _ = (table, label);
        None
    }
    /// A hash of the game context this codec codes in, for codecs whose
    /// model reads it ([`GameCodec::in_context`]); 0 for the others. Game
    /// records check it, so that a record decodes only in its context.
    fn context_hash(&self) -> u64 {
        0
    }
    /// Encodes, and for codecs that rank moves by preference also returns
    /// the rank of each move played (0: the model's first choice; forced
    /// moves rank 0), in one pass.
    ///
    /// # Errors
    ///
    /// As [`GameCodec::encode`].
    fn encode_ranked(
        &self,
        start: &Chess,
        moves: &[Move],
    ) -> Result<(Bits, Option<Vec<usize>>), Error> {
        Ok((self.encode(start, moves)?, None))
    }
}

/// Every game codec, in the order `chesspack codecs` lists them.
///
/// ```
/// let names: Vec<_> = chesspack::game::codecs().iter().map(|c| c.name()).collect();
/// assert_eq!(names, ["squares", "index", "radix", "engine-huffman", "engine-arith", "model", "fast", "brisk"]);
/// ```
pub fn codecs() -> Vec<Box<dyn GameCodec>> {
    vec![
        Box::new(Squares),
        Box::new(Index),
        Box::new(Radix),
        Box::new(EngineCodec::new(engine_codec::Coding::Huffman)),
        Box::new(EngineCodec::new(engine_codec::Coding::Arith)),
        Box::new(ModelCodec::new()),
        Box::new(ModelCodec::fast()),
        Box::new(ModelCodec::brisk()),
    ]
}

/// The game codec called `name`.
///
/// ```
/// assert_eq!(chesspack::game::codec("radix").unwrap().name(), "radix");
/// assert!(chesspack::game::codec("nope").is_err());
/// ```
pub fn codec(name: &str) -> Result<Box<dyn GameCodec>, Error> {
    codecs()
        .into_iter()
        .find(|c| c.name() == name)
        .ok_or_else(|| Error::UnknownCodec(crate::error::cut(name)))
}

/// The game codec called `name`, the engine codecs with `engine`'s
/// parameters: the one map from names to codecs that every front end uses.
///
/// ```
/// use chesspack::game::{self, engine_codec::EngineParams};
///
/// let params = EngineParams { depth: 0, ..EngineParams::default() };
/// let codec = game::codec_with("engine-arith", &params).unwrap();
/// let start = shakmaty::Chess::default();
/// let e4 = shakmaty::uci::UciMove::from_ascii(b"e2e4").unwrap().to_move(&start).unwrap();
/// // The depth is in the stream's header.
/// let default = game::codec("engine-arith").unwrap();
/// assert_ne!(codec.encode(&start, &[e4]).unwrap(), default.encode(&start, &[e4]).unwrap());
/// assert_eq!(game::codec_with("model", &params).unwrap().name(), "model");
/// ```
///
/// # Errors
///
/// [`Error::UnknownCodec`] when there is no codec of that name.
pub fn codec_with(
    name: &str,
    engine: &engine_codec::EngineParams,
) -> Result<Box<dyn GameCodec>, Error> {
    let coding = match name {
        "engine-huffman" => engine_codec::Coding::Huffman,
        "engine-arith" => engine_codec::Coding::Arith,
        _ => return codec(name),
    };
    Ok(Box::new(EngineCodec::with_params(coding, *engine)))
}

/// The game codec called `name` if its [`GameCodec::model_hash`] is
/// `hash`; `None` when the codec exists but not with that model.
///
/// # Errors
///
/// [`Error::UnknownCodec`] when there is no codec of that name.
pub(crate) fn codec_with_hash(name: &str, hash: u64) -> Result<Option<Box<dyn GameCodec>>, Error> {
    let codec = codec(name)?;
    Ok((codec.model_hash() == hash).then_some(codec))
}

/// Plays `moves` from `start`, checking each, and calls `f` with the position
/// before each move, the ply number and the move.
pub(crate) fn walk(
    start: &Chess,
    moves: &[Move],
    mut f: impl FnMut(&Chess, usize, Move),
) -> Result<(), Error> {
    let mut pos = start.clone();
    for (ply, &m) in moves.iter().enumerate() {
        if !pos.is_legal(m) {
            return Err(illegal(ply, m, &pos));
        }
        f(&pos, ply, m);
        pos.play_unchecked(m);
    }
    Ok(())
}

pub(crate) fn illegal(ply: usize, m: Move, pos: &Chess) -> Error {
    Error::IllegalMove {
        ply,
        uci: UciMove::from_move(m, pos.castles().mode()).to_string(),
    }
}

pub(crate) fn san(pos: &Chess, m: Move) -> String {
    San::from_move(pos, m).to_string()
}

/// Decodes a stream whose moves end where its bits do (`index`,
/// `engine-huffman`): after the count of trailing forced plies, each
/// unforced position reads one choice until the bits run out, then the
/// trailing forced plies are played.
///
/// `next(position, ply, reader)` gives the move played: it lists the legal
/// moves and hands them to [`pick`] with its way of reading a choice. The
/// list stays in `next`'s frame (returning a `MoveList` would copy 2 kB a
/// ply).
pub(crate) fn decode_to_end(
    start: &Chess,
    r: &mut crate::bits::BitReader<'_>,
    mut next: impl FnMut(&Chess, usize, &mut crate::bits::BitReader<'_>) -> Result<Move, Error>,
) -> Result<Vec<Move>, Error> {
    let mut forced_left = read_count(r)?;
    let mut pos = start.clone();
    // Most codecs spend a few bits a move: room for the moves at 4 bits.
    let mut moves = Vec::with_capacity((r.remaining() / 4).min(1024));
    loop {
        if r.remaining() == 0 {
            if forced_left == 0 {
                break;
            }
            forced_left -= 1;
        }
        if moves.len() as u64 > MAX_PLIES {
            return Err(Error::InvalidData("game too long".into()));
        }
        let m = next(&pos, moves.len(), r)?;
        pos.play_unchecked(m);
        moves.push(m);
    }
    Ok(moves)
}

/// The move played among `legal` at `ply` of a stream that [`decode_to_end`]
/// reads: the only one when one is legal, else the one whose index in
/// `legal` `read` returns (called only when more than one move is legal).
pub(crate) fn pick(
    legal: &[Move],
    ply: usize,
    r: &mut crate::bits::BitReader<'_>,
    read: impl FnOnce(&[Move], &mut crate::bits::BitReader<'_>) -> Result<usize, Error>,
) -> Result<Move, Error> {
    match legal.len() {
        0 => Err(Error::InvalidData(format!("no legal move at ply {ply}"))),
        1 => Ok(legal[0]),
        _ => {
            if r.remaining() == 0 {
                return Err(Error::InvalidData(
                    "trailing forced move is not forced".into(),
                ));
            }
            let index = read(legal, r)?;
            legal
                .get(index)
                .copied()
                .ok_or_else(|| Error::InvalidData(format!("move index {index} out of range")))
        }
    }
}

/// Reads a count of plies written as Elias gamma of `count + 1`.
pub(crate) fn read_count(r: &mut crate::bits::BitReader<'_>) -> Result<u64, Error> {
    let n = r.read_gamma()? - 1;
    if n > MAX_PLIES {
        return Err(Error::InvalidData(format!("ply count {n} too large")));
    }
    Ok(n)
}

/// The examples of crate-private items, run as unit tests.
#[cfg(test)]
mod examples {
    /// The strict PGN reader keeps verbatim what a decoder would refuse.
    #[test]
    fn the_strict_reader_stops_where_the_decoders_do() {
        assert_eq!(crate::pgn::strict::MAX_PLIES, super::MAX_PLIES);
    }

    #[test]
    fn example_codec_with_hash() {
        use crate::game;

        let model = game::codec("model").unwrap();
        assert!(
            game::codec_with_hash("model", model.model_hash())
                .unwrap()
                .is_some()
        );
        assert!(game::codec_with_hash("model", 7).unwrap().is_none());
        assert!(game::codec_with_hash("zip", 0).is_err());
    }
}
