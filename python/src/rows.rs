//! Games as table rows: the PGN text an archive gives back, read into its
//! tags, mainline SAN moves and `%clk` clock readings, and a block of them
//! as an Arrow record batch (the Spark data source's rows).

use std::sync::Arc;

use arrow_array::{
    ArrayRef, RecordBatch,
    builder::{Int32Builder, Int64Builder, ListBuilder, MapBuilder, StringBuilder},
};
use arrow_schema::{ArrowError, DataType, Field, Schema};
use chesspack::archive::GameRow;
use shakmaty::san::SanPlus;

/// The tags that get a column of their own, in column order. Every other
/// tag goes to the `other_tags` map.
pub const TAG_COLUMNS: [&str; 21] = [
    "Event",
    "Site",
    "Date",
    "Round",
    "White",
    "Black",
    "Result",
    "UTCDate",
    "UTCTime",
    "WhiteElo",
    "BlackElo",
    "WhiteRatingDiff",
    "BlackRatingDiff",
    "WhiteTitle",
    "BlackTitle",
    "ECO",
    "Opening",
    "TimeControl",
    "Termination",
    "Variant",
    "FEN",
];

/// Tag columns holding integers (null when the tag is absent or not a
/// number, such as `?`).
fn is_int(tag: &str) -> bool {
    tag == "WhiteElo" || tag == "BlackElo"
}

/// One game read from its text.
#[derive(Default)]
pub struct Row {
    pub tags: Vec<(String, String)>,
    /// Mainline moves as written (SAN with check marks).
    pub moves: Vec<String>,
    /// The `%clk` reading after each mainline move, in milliseconds.
    pub clocks: Vec<Option<i64>>,
    pub has_clock: bool,
    /// The opening as lichess names it: ECO code, name and the ply of its
    /// position.
    pub opening: Option<(String, String, i32)>,
}

/// An opening of [`chesspack::opening::OpeningTable::classify`] as a row
/// holds it.
pub fn opening_of(o: Option<chesspack::opening::Named<'_>>) -> Option<(String, String, i32)> {
    o.map(|o| (o.eco.to_owned(), o.name.to_owned(), o.ply as i32))
}

impl Row {
    /// The row of a game's tags alone.
    pub fn of_tags(tags: Vec<(Vec<u8>, Vec<u8>)>) -> Row {
        let text = |b: &[u8]| chesspack::pgn::text(b).into_owned();
        Row {
            tags: tags.iter().map(|(k, v)| (text(k), text(v))).collect(),
            ..Row::default()
        }
    }

    /// The row of a game decoded straight from an archive (a verbatim
    /// game's text is read leniently): the same row as its text gives.
    pub fn of(row: GameRow) -> Row {
        let record = match row {
            GameRow::Record(r) => r,
            GameRow::Text(text) => return read(&text),
        };
        let opening = opening_of(
            chesspack::opening::OpeningTable::lichess().classify(&record.start, &record.moves),
        );
        let mut pos = record.start;
        let moves = record
            .moves
            .iter()
            .map(|&m| SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string())
            .collect();
        Row {
            moves,
            has_clock: record.clocks.iter().any(Option::is_some),
            clocks: record
                .clocks
                .iter()
                .map(|c| c.map(|ms| ms as i64))
                .collect(),
            opening,
            ..Row::of_tags(record.tags)
        }
    }
}

/// Reads a game's text (canonical or verbatim) into a row, as the library
/// reads a game's text leniently ([`chesspack::pgn::read_written`]): text
/// that does not read as PGN gives what was read before it.
pub fn read(text: &[u8]) -> Row {
    let game = chesspack::pgn::read_written(text, true);
    let name = |b: &[u8]| chesspack::pgn::text(b).into_owned();
    Row {
        tags: game.tags.iter().map(|(k, v)| (name(k), name(v))).collect(),
        has_clock: game.clocks.iter().any(Option::is_some),
        clocks: game.clocks.iter().map(|c| c.map(|ms| ms as i64)).collect(),
        moves: game.moves,
        opening: opening_of(chesspack::opening::OpeningTable::lichess().classify_text(text)),
    }
}

/// The schema of [`batch`]: `game`, the tag columns, `other_tags`,
/// `moves`, `clocks`, and `pgn` when asked for.
pub fn schema(pgn: bool) -> Schema {
    let mut fields = vec![Field::new("game", DataType::Int64, false)];
    for t in TAG_COLUMNS {
        let ty = if is_int(t) {
            DataType::Int32
        } else {
            DataType::Utf8
        };
        fields.push(Field::new(t, ty, true));
    }
    fields.push(Field::new(
        "other_tags",
        DataType::Map(
            Arc::new(Field::new(
                "entries",
                DataType::Struct(
                    vec![
                        Field::new("keys", DataType::Utf8, false),
                        Field::new("values", DataType::Utf8, true),
                    ]
                    .into(),
                ),
                false,
            )),
            false,
        ),
        true,
    ));
    fields.push(Field::new(
        "moves",
        DataType::List(Arc::new(Field::new_list_field(DataType::Utf8, true))),
        true,
    ));
    fields.push(Field::new(
        "clocks",
        DataType::List(Arc::new(Field::new_list_field(DataType::Int64, true))),
        true,
    ));
    // The opening as lichess names it, from the moves, whether or not the
    // game has the tags.
    fields.push(Field::new("opening_eco", DataType::Utf8, true));
    fields.push(Field::new("opening_name", DataType::Utf8, true));
    fields.push(Field::new("opening_ply", DataType::Int32, true));
    if pgn {
        fields.push(Field::new("pgn", DataType::Utf8, true));
    }
    Schema::new(fields)
}

/// The rows of games numbered from `first` (1-based), with their texts
/// when `texts` are given (the `pgn` column).
pub fn batch(
    first: u64,
    rows: &[Row],
    texts: Option<&[Vec<u8>]>,
) -> Result<RecordBatch, ArrowError> {
    let pgn = texts.is_some();
    let n = rows.len();
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(TAG_COLUMNS.len() + 5);
    let mut game = Int64Builder::with_capacity(n);
    for i in 0..n {
        game.append_value(first as i64 + i as i64);
    }
    columns.push(Arc::new(game.finish()));
    for t in TAG_COLUMNS {
        let value = |r: &Row| r.tags.iter().find(|(k, _)| k == t).map(|(_, v)| v.clone());
        if is_int(t) {
            let mut b = Int32Builder::with_capacity(n);
            for r in rows {
                b.append_option(value(r).and_then(|v| v.trim().parse::<i32>().ok()));
            }
            columns.push(Arc::new(b.finish()));
        } else {
            let mut b = StringBuilder::new();
            for r in rows {
                b.append_option(value(r));
            }
            columns.push(Arc::new(b.finish()));
        }
    }
    let mut other = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
    for r in rows {
        for (k, v) in &r.tags {
            if !TAG_COLUMNS.contains(&k.as_str()) {
                other.keys().append_value(k);
                other.values().append_value(v);
            }
        }
        other.append(true)?;
    }
    columns.push(Arc::new(other.finish()));
    let mut moves = ListBuilder::new(StringBuilder::new());
    let mut clocks = ListBuilder::new(Int64Builder::new());
    for r in rows {
        for m in &r.moves {
            moves.values().append_value(m);
        }
        moves.append(true);
        if r.has_clock {
            for c in &r.clocks {
                clocks.values().append_option(*c);
            }
            clocks.append(true);
        } else {
            clocks.append(false);
        }
    }
    columns.push(Arc::new(moves.finish()));
    columns.push(Arc::new(clocks.finish()));
    let mut eco = StringBuilder::new();
    let mut name = StringBuilder::new();
    let mut ply = Int32Builder::with_capacity(n);
    for r in rows {
        eco.append_option(r.opening.as_ref().map(|o| &o.0));
        name.append_option(r.opening.as_ref().map(|o| &o.1));
        ply.append_option(r.opening.as_ref().map(|o| o.2));
    }
    columns.push(Arc::new(eco.finish()));
    columns.push(Arc::new(name.finish()));
    columns.push(Arc::new(ply.finish()));
    if let Some(texts) = texts {
        let mut b = StringBuilder::new();
        for t in texts {
            b.append_value(chesspack::pgn::text(t));
        }
        columns.push(Arc::new(b.finish()));
    }
    // The map's entry fields are the builder's; every other field is as
    // `schema` says.
    let fields: Vec<Field> = schema(pgn)
        .fields()
        .iter()
        .zip(&columns)
        .map(|(f, c)| Field::new(f.name(), c.data_type().clone(), f.is_nullable()))
        .collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
}
